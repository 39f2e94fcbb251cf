//! `/v1/queues/{queue}/tasks`.

use idem_core::job::HeaderStyle;
use idem_core::queue::{RetryConfig, RetryConfigPatch};
use idem_core::task::{Attempt, PayloadSpec, TargetSpec, TaskState};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// `POST /v1/queues/{queue}/tasks` (the JSON body, or the `task` part of a
/// multipart one).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Where a push queue's task is delivered; required there, refused by
    /// a pull queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetSpec>,
    /// A pull queue's task: the work the worker that claims it reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<PayloadSpec>,
    /// A pull queue's task: a name claims may filter on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 100, pattern = "^[A-Za-z0-9_-]+$")
    )]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub schedule_time: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_deadline_s: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_config: Option<RetryConfigPatch>,
    /// Receives the `task.succeeded` event instead of the queue's
    /// `on_success`; absent or `null` uses the queue's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_success: Option<TargetSpec>,
    /// Receives the `task.failed` event instead of the queue's
    /// `on_failure`; absent or `null` uses the queue's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<TargetSpec>,
    /// `idem` or `cloud_tasks`: the compatibility headers its deliveries
    /// carry; absent takes the queue's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_style: Option<HeaderStyle>,
    /// The group it takes turns and counts its queue's
    /// `group_concurrency` in (a customer, an account, a domain); absent:
    /// the queue's ungrouped tasks, one group for fairness, with no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = "^[A-Za-z0-9_.:@-]+$")
    )]
    pub group: Option<String>,
    /// −100…100, default 0: higher runs first within its group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = -100, maximum = 100))]
    pub priority: Option<i32>,
}

/// `POST /v1/queues/{queue}/tasks:batch` as JSON: 1–1000 creates, each as
/// `POST /v1/queues/{queue}/tasks` takes it, committed together.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateTasks {
    pub tasks: Vec<CreateTask>,
    /// All or nothing: the first item that cannot be created is the
    /// answer, and no task is created.
    #[serde(default)]
    pub atomic: bool,
}

/// The answer to a batch create: one result per item, in request order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchResults {
    pub results: Vec<BatchResult>,
}

/// One item's result: 201 with the task created, 409 with the task that
/// holds its ID, or 400 with the problem naming the item's fields.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchResult {
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Task>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<crate::Problem>,
    /// `true` on an end of `tasks:end` that repeated, by the holder, the
    /// end its attempt already had: nothing changed (as
    /// `Idempotent-Replayed: true` on a single complete or fail).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// A target as the API shows it, its body in the form it was given.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TargetView))]
pub struct Target {
    /// The URL delivered to.
    pub url: String,
    /// The HTTP method.
    pub method: String,
    /// Headers sent as given, except that the value of a secret one
    /// (`Authorization`, `Cookie`, `Proxy-Authorization` and those named in
    /// `secret_headers`) is shown as `"<redacted>"`.
    pub headers: BTreeMap<String, String>,
    /// The target's own secret headers, lowercase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_headers: Vec<String>,
    /// A text body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A binary body, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
    /// A JSON body, with its numbers spelled as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub json: Option<Box<RawValue>>,
    /// The audience of the ID token each delivery carries, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<idem_core::task::Oidc>,
}

// `RawValue` has no `PartialEq`: a JSON body compares by its text.
impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
            && self.method == other.method
            && self.headers == other.headers
            && self.body == other.body
            && self.body_base64 == other.body_base64
            && self.json.as_ref().map(|j| j.get()) == other.json.as_ref().map(|j| j.get())
            && self.oidc == other.oidc
            && self.secret_headers == other.secret_headers
    }
}

impl From<idem_core::task::Target> for Target {
    /// The body in the form it was given; bytes that no longer fit that
    /// form (a row edited by hand) are shown as base64.
    fn from(t: idem_core::task::Target) -> Target {
        use base64::Engine;
        use base64::engine::general_purpose::STANDARD;
        use idem_core::task::BodyForm;
        // Secrets are written once and never read back: whoever may read
        // a task (a reader included) sees that a header is there, not its
        // value.
        let mut headers = t.headers;
        for (name, value) in headers.iter_mut() {
            if idem_core::task::is_secret_header(&t.secret_headers, name) {
                *value = idem_core::task::REDACTED.to_owned();
            }
        }
        let mut view = Target {
            url: t.url,
            method: t.method,
            headers,
            secret_headers: t.secret_headers,
            body: None,
            body_base64: None,
            json: None,
            oidc: t.oidc,
        };
        match t.body {
            Some((BodyForm::Text, bytes)) => match String::from_utf8(bytes) {
                Ok(text) => view.body = Some(text),
                Err(e) => view.body_base64 = Some(STANDARD.encode(e.into_bytes())),
            },
            Some((BodyForm::Json, bytes)) => match std::str::from_utf8(&bytes)
                .ok()
                .and_then(|s| RawValue::from_string(s.to_string()).ok())
            {
                Some(raw) => view.json = Some(raw),
                None => view.body_base64 = Some(STANDARD.encode(bytes)),
            },
            Some((BodyForm::Base64, bytes)) => view.body_base64 = Some(STANDARD.encode(bytes)),
            None => {}
        }
        view
    }
}

/// A task as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TaskView))]
pub struct Task {
    /// Unique per queue.
    pub task_id: String,
    /// The queue's name.
    pub queue: String,
    /// Where the task is in its life.
    pub state: TaskState,
    /// What it delivers; null for a pull queue's task.
    pub target: Option<Target>,
    /// A pull queue's task: its work, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// A pull queue's task: its tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Its group; null when it has none.
    #[serde(default)]
    pub group: Option<String>,
    /// Higher runs first within its group.
    #[serde(default)]
    pub priority: i32,
    /// A pull queue's task: the worker's lease while it is running, else
    /// null (always present, so a client reads "not leased" rather than
    /// guessing at a missing member).
    #[serde(default)]
    pub lease: Option<Lease>,
    /// A pull queue's task: what its worker reported on completing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<Box<RawValue>>,
    /// When it is (or was) due.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub schedule_time: Timestamp,
    /// How long the target has to answer, in seconds.
    pub dispatch_deadline_s: u32,
    /// How failed deliveries are retried.
    pub retry_config: RetryConfig,
    /// Attempts made so far.
    pub attempt_count: u32,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When it reached a final state.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub finished_at: Option<Timestamp>,
    /// The latest attempt.
    pub last_attempt: Option<Attempt>,
    /// The task's own `on_success` callback; null uses its queue's.
    #[serde(default)]
    pub on_success: Option<Target>,
    /// The task's own `on_failure` callback; null uses its queue's.
    #[serde(default)]
    pub on_failure: Option<Target>,
    /// The compatibility headers its deliveries carry (its own, or its
    /// queue's when it was created): `idem` or `cloud_tasks`.
    #[serde(default)]
    pub header_style: HeaderStyle,
}

/// A pull task's payload as the API shows it, in the form it was given.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PayloadView))]
pub struct Payload {
    /// Text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Bytes, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
    /// A JSON value, with its numbers spelled as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub json: Option<Box<RawValue>>,
}

impl From<Target> for Payload {
    fn from(t: Target) -> Payload {
        Payload {
            body: t.body,
            body_base64: t.body_base64,
            json: t.json,
        }
    }
}

/// A worker's lease on a pull task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Lease {
    /// The lease's token: heartbeat, complete, fail, release and reassign
    /// name it. Shown only to the lease's holder and to admins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_id: Option<String>,
    /// The principal holding the task.
    pub claimant: String,
    /// When the task goes back to the queue unless the lease is extended.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub lease_expires_at: Timestamp,
}
