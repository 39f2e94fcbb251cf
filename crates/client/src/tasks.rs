//! `/v1/queues/{queue}/tasks` (API.md §3, "Tasks").

use crate::client::{Call, Client, Payload, Response, Upload};
use crate::error::Error;
use crate::list::ListOptions;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use idem_api::{
    Attempt, BatchResults, CreateTask, CreateTasks, List, PayloadSpec, RedriveTasks, Redriven,
    RetryConfigPatch, TargetSpec, Task, TaskState,
};
use jiff::Timestamp;
use reqwest::Method;
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::time::Duration;

/// A task to create.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// 1–500 of `[A-Za-z0-9_-]`, unique per queue; the server generates one
    /// (which deduplicates nothing) when unset.
    pub task_id: Option<String>,
    /// What to deliver: set for a push queue's task, unset for a pull
    /// queue's ([`NewTask::work`]).
    pub target: Option<NewTarget>,
    /// A pull queue's task: the work its worker reads.
    pub payload: Option<Body>,
    /// A pull queue's task: a name claims may filter on.
    pub tag: Option<String>,
    /// When to deliver; now when unset.
    pub schedule_time: Option<Timestamp>,
    /// 1–1800 seconds; the queue's when unset.
    pub dispatch_deadline_s: Option<u32>,
    /// Overrides of the queue's retry policy.
    pub retry_config: Option<RetryConfigPatch>,
    /// Receives the `task.succeeded` event instead of the queue's
    /// `on_success` (a target without a body: the event is the body).
    pub on_success: Option<NewTarget>,
    /// Receives the `task.failed` event instead of the queue's
    /// `on_failure`.
    pub on_failure: Option<NewTarget>,
    /// `Idem` or `CloudTasks`: the compatibility headers its deliveries
    /// carry; the queue's when unset.
    pub header_style: Option<idem_api::HeaderStyle>,
    /// The group it takes turns and counts its queue's group limit in
    /// (1–200 of `[A-Za-z0-9_.:@-]`); the queue's ungrouped tasks when
    /// unset.
    pub group: Option<String>,
    /// −100…100: higher runs first within its group; 0 when unset.
    pub priority: Option<i32>,
}

impl NewTask {
    /// A task delivering `target` now, with a generated ID.
    pub fn new(target: NewTarget) -> Self {
        NewTask {
            target: Some(target),
            ..NewTask::work(None)
        }
    }

    /// A task for a pull queue, carrying `payload` (if any), due now, with
    /// a generated ID: workers claim it.
    pub fn work(payload: Option<Body>) -> Self {
        NewTask {
            task_id: None,
            target: None,
            payload,
            tag: None,
            schedule_time: None,
            dispatch_deadline_s: None,
            retry_config: None,
            on_success: None,
            on_failure: None,
            header_style: None,
            group: None,
            priority: None,
        }
    }

    /// Tags a pull queue's task, for claims that filter on it.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    /// Puts the task in `group` of its queue: the group takes turns with
    /// the others and counts the queue's `group_concurrency`.
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.group = Some(group.into());
        self
    }

    /// Orders the task within its group: higher first (−100…100).
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Sets the task ID: the same ID twice within the dedup window is
    /// refused with 409 `TASK_ALREADY_EXISTS`.
    pub fn task_id(mut self, id: impl Into<String>) -> Self {
        self.task_id = Some(id.into());
        self
    }

    /// Sends the `task.succeeded` event to `target` instead of the queue's
    /// `on_success`.
    pub fn on_success(mut self, target: NewTarget) -> Self {
        self.on_success = Some(target);
        self
    }

    /// Sends the `task.failed` event to `target` instead of the queue's
    /// `on_failure`.
    pub fn on_failure(mut self, target: NewTarget) -> Self {
        self.on_failure = Some(target);
        self
    }

    /// Delivers at `time` instead of now.
    pub fn schedule_time(mut self, time: Timestamp) -> Self {
        self.schedule_time = Some(time);
        self
    }
}

/// The HTTP request a task delivers.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTarget {
    /// An absolute http or https URL.
    pub url: String,
    /// The method; POST when unset.
    pub method: Option<String>,
    /// Headers to send (Idem's own identity and signature headers are
    /// reserved).
    pub headers: BTreeMap<String, String>,
    /// The body, if any.
    pub body: Option<Body>,
    /// Whether each delivery carries an OIDC ID token signed by the
    /// organization, and for which audience.
    pub oidc: Option<idem_api::OidcSpec>,
    /// Headers whose values the API never shows again (beside
    /// `Authorization`, `Cookie` and `Proxy-Authorization`, which it never
    /// does).
    pub secret_headers: Vec<String>,
}

impl NewTarget {
    /// A POST to `url` without a body.
    pub fn new(url: impl Into<String>) -> Self {
        NewTarget {
            url: url.into(),
            method: None,
            headers: BTreeMap::new(),
            body: None,
            oidc: None,
            secret_headers: Vec::new(),
        }
    }

    /// Sends an OIDC ID token with each delivery, for `audience` (`None`:
    /// the URL's origin).
    pub fn oidc(mut self, audience: Option<String>) -> Self {
        self.oidc = Some(idem_api::OidcSpec { audience });
        self
    }

    /// Sets the method.
    pub fn method(mut self, method: impl Into<String>) -> Self {
        self.method = Some(method.into());
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Adds a header whose value is a secret: sent with every delivery,
    /// shown by the API only as `"<redacted>"`.
    pub fn secret_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.secret_headers.push(name.clone());
        self.headers.insert(name, value.into());
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: Body) -> Self {
        self.body = Some(body);
        self
    }
}

/// A target's body, in one of the forms the API takes.
#[derive(Debug, Clone)]
pub enum Body {
    /// UTF-8 text (`target.body`).
    Text(String),
    /// Bytes, sent base64-encoded in the JSON request (`target.body_base64`).
    Bytes(Vec<u8>),
    /// A JSON value, delivered as `application/json` (`target.json`). Kept
    /// as text so that numbers reach the target spelled as given.
    Json(Box<RawValue>),
    /// A file sent as the `body` part of a `multipart/form-data` create: no
    /// base64 inflation, and its content type becomes the delivery's.
    Upload(Upload),
}

impl PartialEq for Body {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Body::Text(a), Body::Text(b)) => a == b,
            (Body::Bytes(a), Body::Bytes(b)) => a == b,
            (Body::Json(a), Body::Json(b)) => a.get() == b.get(),
            (Body::Upload(a), Body::Upload(b)) => a == b,
            _ => false,
        }
    }
}

impl Body {
    /// A JSON body from any serializable value.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Body, Error> {
        serde_json::value::to_raw_value(value)
            .map(Body::Json)
            .map_err(|e| Error::InvalidRequest(format!("encoding the JSON body: {e}")))
    }

    /// A JSON body from its text, checked to be JSON and kept as written.
    pub fn json_text(text: impl Into<String>) -> Result<Body, Error> {
        RawValue::from_string(text.into())
            .map(Body::Json)
            .map_err(|e| Error::InvalidRequest(format!("the JSON body is not JSON: {e}")))
    }

    /// A file upload of `bytes` with an optional content type.
    pub fn upload(bytes: impl Into<bytes::Bytes>, content_type: Option<&str>) -> Body {
        Body::Upload(Upload {
            bytes: bytes.into(),
            content_type: content_type.map(str::to_string),
            file_name: None,
        })
    }
}

/// How to create a task beyond its content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateOptions {
    /// The idempotency key to send instead of a fresh one: reuse the key of
    /// an earlier call whose answer was lost to get that call's result.
    pub idempotency_key: Option<String>,
    /// Wait up to this long (1 ms–30 s) for the task to reach a final state
    /// (`?wait_ms=`): 200 if it did, 202 if not.
    pub wait: Option<Duration>,
}

/// Which tasks to list; the filters combine. With a creation-time bound
/// the list goes by creation time, otherwise by task ID.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose ID starts with this.
    pub id_prefix: Option<String>,
    /// Only tasks created at or after this instant.
    pub created_after: Option<Timestamp>,
    /// Only tasks created before this instant.
    pub created_before: Option<Timestamp>,
}

/// Which ended tasks a bulk redrive runs again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedriveOptions {
    /// [`TaskState::Failed`] (the default) or [`TaskState::Cancelled`].
    pub state: Option<TaskState>,
    /// Only tasks that ended at or after this instant.
    pub finished_after: Option<Timestamp>,
    /// Only tasks that ended before this instant.
    pub finished_before: Option<Timestamp>,
    /// Only tasks whose ID starts with it.
    pub id_prefix: Option<String>,
    /// Only tasks created at or after this instant.
    pub created_after: Option<Timestamp>,
    /// Only tasks created before this instant.
    pub created_before: Option<Timestamp>,
    /// Count the matching tasks (`matching` in the answer) and redrive none.
    pub dry_run: bool,
    /// The idempotency key to send instead of a fresh one.
    pub idempotency_key: Option<String>,
}

/// How a batch create runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchOptions {
    /// All or nothing: the first item that cannot be created fails the
    /// call with its problem, and no task is created.
    pub atomic: bool,
    /// The idempotency key to send instead of a fresh one.
    pub idempotency_key: Option<String>,
}

impl NewTarget {
    /// The target's JSON form, and the upload to send beside it when its
    /// body is a [`Body::Upload`] (whose content type is checked here).
    pub(crate) fn wire(&self) -> Result<(TargetSpec, Option<&Upload>), Error> {
        let mut target = TargetSpec {
            url: self.url.clone(),
            method: self.method.clone(),
            headers: self.headers.clone(),
            oidc: self.oidc.clone(),
            secret_headers: self.secret_headers.clone(),
            ..TargetSpec::default()
        };
        let mut upload = None;
        match &self.body {
            None => {}
            Some(Body::Text(s)) => target.body = Some(s.clone()),
            Some(Body::Bytes(b)) => target.body_base64 = Some(STANDARD.encode(b)),
            Some(Body::Json(raw)) => target.json = Some(raw.clone()),
            Some(Body::Upload(u)) => {
                if let Some(ct) = &u.content_type {
                    ct.parse::<reqwest::header::HeaderValue>()
                        .ok()
                        .filter(|_| ct.contains('/'))
                        .ok_or_else(|| {
                            Error::InvalidRequest(format!("{ct:?} is not a media type"))
                        })?;
                }
                upload = Some(u);
            }
        }
        Ok((target, upload))
    }

    /// The target's JSON form with an upload carried inline, for routes
    /// that take JSON only: its bytes as `body_base64`, its content type as
    /// the `Content-Type` header unless one is set already.
    pub(crate) fn wire_inline(&self) -> Result<TargetSpec, Error> {
        let (mut target, upload) = self.wire()?;
        if let Some(upload) = upload {
            target.body_base64 = Some(STANDARD.encode(&upload.bytes));
            if let Some(ct) = &upload.content_type
                && !target
                    .headers
                    .keys()
                    .any(|k| k.eq_ignore_ascii_case("content-type"))
            {
                target.headers.insert("Content-Type".into(), ct.clone());
            }
        }
        Ok(target)
    }
}

impl NewTask {
    /// The request body: JSON, or multipart when the body is an upload.
    /// The task as a batch item carries it: a body to upload is sent
    /// inline, base64.
    pub fn to_wire(&self) -> Result<CreateTask, Error> {
        let payload = self.payload.as_ref().map(|body| {
            let mut p = PayloadSpec::default();
            match body {
                Body::Text(s) => p.body = Some(s.clone()),
                Body::Bytes(b) => p.body_base64 = Some(STANDARD.encode(b)),
                Body::Json(raw) => p.json = Some(raw.clone()),
                Body::Upload(u) => p.body_base64 = Some(STANDARD.encode(&u.bytes)),
            }
            p
        });
        Ok(CreateTask {
            target: self
                .target
                .as_ref()
                .map(NewTarget::wire_inline)
                .transpose()?,
            payload,
            ..self.wire_without_target()?
        })
    }

    fn wire_without_target(&self) -> Result<CreateTask, Error> {
        Ok(CreateTask {
            task_id: self.task_id.clone(),
            target: None,
            payload: None,
            tag: self.tag.clone(),
            schedule_time: self.schedule_time,
            dispatch_deadline_s: self.dispatch_deadline_s,
            retry_config: self.retry_config,
            on_success: self
                .on_success
                .as_ref()
                .map(NewTarget::wire_inline)
                .transpose()?,
            on_failure: self
                .on_failure
                .as_ref()
                .map(NewTarget::wire_inline)
                .transpose()?,
            header_style: self.header_style,
            group: self.group.clone(),
            priority: self.priority,
        })
    }

    fn payload(&self) -> Result<Payload, Error> {
        let (target, upload) = match &self.target {
            Some(t) => {
                let (spec, upload) = t.wire()?;
                (Some(spec), upload)
            }
            None => (None, None),
        };
        let (payload, upload) = match (&self.payload, upload) {
            (None, upload) => (None, upload),
            (Some(body), _) => {
                let mut p = PayloadSpec::default();
                let mut upload = None;
                match body {
                    Body::Text(s) => p.body = Some(s.clone()),
                    Body::Bytes(b) => p.body_base64 = Some(STANDARD.encode(b)),
                    Body::Json(raw) => p.json = Some(raw.clone()),
                    Body::Upload(u) => upload = Some(u),
                }
                (Some(p), upload)
            }
        };
        let wire = CreateTask {
            target,
            payload,
            ..self.wire_without_target()?
        };
        let json = Payload::json(&wire)?;
        Ok(match (json, upload) {
            (Payload::Json(task), Some(body)) => Payload::Multipart {
                task,
                body: body.clone(),
            },
            (json, _) => json,
        })
    }
}

/// Task operations.
impl Client {
    /// `POST /v1/queues/{queue}/tasks` (writer): 201 with the task, or 409
    /// `TASK_ALREADY_EXISTS` when its ID is taken. An [`Body::Upload`] is
    /// sent as `multipart/form-data`.
    pub async fn create_task(&self, queue: &str, task: &NewTask) -> Result<Response<Task>, Error> {
        self.create_task_with(queue, task, &CreateOptions::default())
            .await
    }

    /// [`Client::create_task`] with an idempotency key of the caller's, or
    /// waiting for the task to finish.
    pub async fn create_task_with(
        &self,
        queue: &str,
        task: &NewTask,
        options: &CreateOptions,
    ) -> Result<Response<Task>, Error> {
        let wait_ms = options.wait.map(|w| w.as_millis().max(1));
        let mut call = Call::new(Method::POST, ["queues", queue, "tasks"])
            .query("wait_ms", wait_ms)
            .payload(task.payload()?);
        call.idempotency_key = options.idempotency_key.clone();
        call.extra_time = options.wait.unwrap_or_default();
        self.execute(call).await
    }

    /// `POST /v1/queues/{queue}/tasks:batch` (writer): up to 1000 tasks
    /// with one commit, answered item by item in order (201 with the task,
    /// 409 with the task holding the ID, 400 naming `tasks[i]`'s fields).
    /// The whole batch is retried under one idempotency key, so a retry
    /// after a lost answer gets the same results.
    pub async fn create_tasks_batch(
        &self,
        queue: &str,
        tasks: &[NewTask],
        options: &BatchOptions,
    ) -> Result<Response<BatchResults>, Error> {
        let tasks = tasks
            .iter()
            .map(NewTask::to_wire)
            .collect::<Result<Vec<_>, _>>()?;
        self.create_tasks_batch_wire(queue, tasks, options).await
    }

    /// [`Client::create_tasks_batch`] with the tasks in their wire form,
    /// as read from a file.
    pub async fn create_tasks_batch_wire(
        &self,
        queue: &str,
        tasks: Vec<CreateTask>,
        options: &BatchOptions,
    ) -> Result<Response<BatchResults>, Error> {
        let body = CreateTasks {
            tasks,
            atomic: options.atomic,
        };
        let mut call = Call::new(Method::POST, ["queues", queue, "tasks"])
            .verb("batch")
            .payload(Payload::json(&body)?);
        call.idempotency_key = options.idempotency_key.clone();
        self.execute(call).await
    }

    /// `GET /v1/queues/{queue}/tasks`: one page of tasks.
    pub async fn list_tasks(
        &self,
        queue: &str,
        filter: &TaskFilter,
        page: &ListOptions,
    ) -> Result<Response<List<Task>>, Error> {
        let call = Call::new(Method::GET, ["queues", queue, "tasks"])
            .query("state", filter.state.map(TaskState::as_str))
            .query("id_prefix", filter.id_prefix.as_deref())
            .query("created_after", filter.created_after)
            .query("created_before", filter.created_before);
        self.execute(page.apply(call)).await
    }

    /// `GET /v1/queues/{queue}/tasks/{task_id}`.
    pub async fn get_task(&self, queue: &str, task_id: &str) -> Result<Response<Task>, Error> {
        self.execute(Call::new(Method::GET, ["queues", queue, "tasks", task_id]))
            .await
    }

    /// `GET /v1/queues/{queue}/tasks/{task_id}/attempts`: one page of the
    /// attempts kept, oldest first.
    pub async fn task_attempts(
        &self,
        queue: &str,
        task_id: &str,
        page: &ListOptions,
    ) -> Result<Response<List<Attempt>>, Error> {
        let call = Call::new(Method::GET, ["queues", queue, "tasks", task_id, "attempts"]);
        self.execute(page.apply(call)).await
    }

    /// `DELETE /v1/queues/{queue}/tasks/{task_id}` (writer): cancels a task
    /// that has not finished, aborting a running attempt (the target sees
    /// its connection closed); its ID stays taken for the dedup window.
    pub async fn cancel_task(&self, queue: &str, task_id: &str) -> Result<Response<Task>, Error> {
        self.execute(Call::new(
            Method::DELETE,
            ["queues", queue, "tasks", task_id],
        ))
        .await
    }

    /// `POST /v1/queues/{queue}/tasks/{task_id}/run` (writer): dispatches a
    /// scheduled or backing-off task now.
    pub async fn run_task(&self, queue: &str, task_id: &str) -> Result<Response<Task>, Error> {
        self.execute(Call::new(
            Method::POST,
            ["queues", queue, "tasks", task_id, "run"],
        ))
        .await
    }

    /// `POST /v1/queues/{queue}/tasks/{task_id}/redrive` (writer): runs a
    /// failed or cancelled task again, with the same ID and run key and a
    /// fresh retry budget; 409 `FAILED_PRECONDITION` for any other state.
    pub async fn redrive_task(&self, queue: &str, task_id: &str) -> Result<Response<Task>, Error> {
        self.execute(Call::new(
            Method::POST,
            ["queues", queue, "tasks", task_id, "redrive"],
        ))
        .await
    }

    /// `POST /v1/queues/{queue}/tasks:redrive` (writer): redrives every
    /// task of the queue that `options` match, as one operation.
    pub async fn redrive_tasks(
        &self,
        queue: &str,
        options: &RedriveOptions,
    ) -> Result<Response<Redriven>, Error> {
        let body = RedriveTasks {
            state: options.state,
            finished_after: options.finished_after,
            finished_before: options.finished_before,
            id_prefix: options.id_prefix.clone(),
            created_after: options.created_after,
            created_before: options.created_before,
            dry_run: options.dry_run,
        };
        let mut call = Call::new(Method::POST, ["queues", queue, "tasks"])
            .verb("redrive")
            .payload(Payload::json(&body)?);
        call.idempotency_key = options.idempotency_key.clone();
        self.execute(call).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(task: &NewTask) -> serde_json::Value {
        match task.payload().unwrap() {
            Payload::Json(b) => serde_json::from_slice(&b).unwrap(),
            _ => panic!("expected JSON"),
        }
    }

    #[test]
    fn bodies_map_to_the_api_fields() {
        let t =
            NewTask::new(NewTarget::new("http://h/x").body(Body::Text("hi".into()))).task_id("a");
        assert_eq!(
            json_of(&t),
            serde_json::json!({"task_id": "a", "target": {"url": "http://h/x", "body": "hi"}})
        );
        let t = NewTask::new(NewTarget::new("http://h/x").body(Body::Bytes(vec![0, 255])));
        assert_eq!(json_of(&t)["target"]["body_base64"], "AP8=");
        let t = NewTask::new(
            NewTarget::new("http://h/x").body(Body::json_text(r#"{"n": 1.0}"#).unwrap()),
        );
        match t.payload().unwrap() {
            Payload::Json(b) => assert!(
                std::str::from_utf8(&b)
                    .unwrap()
                    .contains(r#""json":{"n": 1.0}"#),
                "number spelling kept"
            ),
            _ => panic!("expected JSON"),
        }
    }

    #[test]
    fn uploads_become_multipart_with_the_body_outside_the_task_part() {
        let t = NewTask::new(
            NewTarget::new("http://h/x").body(Body::upload(vec![1, 2, 3], Some("image/png"))),
        );
        match t.payload().unwrap() {
            Payload::Multipart { task, body } => {
                let task: serde_json::Value = serde_json::from_slice(&task).unwrap();
                assert_eq!(task, serde_json::json!({"target": {"url": "http://h/x"}}));
                assert_eq!(&body.bytes[..], &[1, 2, 3]);
            }
            _ => panic!("expected multipart"),
        }
        let bad = NewTask::new(
            NewTarget::new("http://h/x").body(Body::upload(vec![1], Some("not a type"))),
        );
        assert!(matches!(bad.payload(), Err(Error::InvalidRequest(_))));
        assert!(Body::json_text("{nope").is_err());
    }
}
