//! `/v1/queues/{queue}/tasks`: create (JSON or multipart), read, list,
//! attempts, cancel, run now, redrive (one task, or a queue's ended tasks).

use super::extract::{ListParams, OptionalJson, is_json, media_type, parse_json, read_body};
use super::idempotency::Keyed;
use super::problem::{ApiResult, Problem};
use super::signature::{OrMultipart, Unparsed};
use super::views;
use super::{Created, MayWait, location};
use crate::App;
use crate::auth::{Auth, Reader, Writer};
use crate::traces::Traced;
use axum::body::Bytes;
use axum::extract::{FromRequest, Path, RawQuery, Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderName, StatusCode};
use idem_api::{CreateTask, List, RedriveTasks, Redriven, Task};
use idem_core::FieldErrors;
use idem_core::event::{Callbacks, resolve_callback};
use idem_core::names::check_task_id;
use idem_core::task::{TargetSpec, TaskState, validate_dispatch_deadline};
use idem_store::{RedriveFilter, TaskCreate, TaskFilter};
use std::sync::Arc;

/// Headers a client sets to name a task, tried in order when the body names
/// none. A value that is not a valid task ID is the client's error.
const TASK_ID_HEADERS: &[&str] = &["idem-task-id", "x-fc-stateful-async-invocation-id"];

/// The task ID a create's headers name, if its body names none: an explicit
/// task-ID header, else the request-ID header when its value is a valid
/// task ID (a request ID is a weak identity, and one that cannot be a task
/// ID is ignored, never an error).
fn header_task_id(
    headers: &HeaderMap,
    request_id_header: &HeaderName,
) -> ApiResult<Option<String>> {
    // Each header given must be a task ID, the ones the first outranks
    // too: a malformed header is the client's mistake however it ranks.
    let mut first = None;
    for name in TASK_ID_HEADERS {
        if let Some(value) = headers.get(*name) {
            let value = value.to_str().unwrap_or("\u{fffd}").trim();
            if let Err(mut e) = check_task_id("task_id", value) {
                e.message = format!("(from header {name}) {}", e.message);
                return Err(Problem::fields(FieldErrors(vec![e])));
            }
            first.get_or_insert_with(|| value.to_string());
        }
    }
    if first.is_some() {
        return Ok(first);
    }
    Ok(headers
        .get(request_id_header)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| check_task_id("task_id", v).is_ok())
        .map(str::to_string))
}

/// Moves a header-given task ID into the create's body before anything
/// reads the body — the Idempotency-Key fingerprint included. The ID a
/// header gave is then part of the request as if it had been in the body:
/// the same key sent with another `Idem-Task-Id` is a different request
/// (422), and a header that was not used (the body names its own ID)
/// changes nothing.
///
/// A JSON body gets a `task_id` member, inserted as text so that every
/// other byte (and each number's spelling) is kept; a multipart body gets
/// a `task_id` part. A body that cannot be read as either is left for the
/// handler to refuse.
pub async fn task_id_into_body(
    State(app): State<Arc<App>>,
    req: Request,
    next: axum::middleware::Next,
) -> Response {
    let task_id = match header_task_id(req.headers(), &app.options.request_id_header) {
        Ok(Some(id)) => id,
        Ok(None) => return next.run(req).await,
        Err(problem) => return problem.into_response(),
    };
    let media = media_type(&req).unwrap_or_default();
    let (parts, body) = req.into_parts();
    let bytes = match read_body(Request::new(body), app.options.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(problem) => return problem.into_response(),
    };
    let bytes = if is_json(&media) {
        json_with_task_id(&bytes, &task_id).unwrap_or(bytes)
    } else if media == "multipart/form-data" {
        let content_type = parts
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        multipart_with_task_id(content_type, &bytes, &task_id)
            .await
            .unwrap_or(bytes)
    } else {
        bytes
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// The JSON object with `"task_id"` added first, or `None` when the body is
/// not an object or already names a task ID.
fn json_with_task_id(body: &[u8], task_id: &str) -> Option<Bytes> {
    let object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body).ok()?;
    if object.contains_key("task_id") {
        return None;
    }
    let open = body.iter().position(|b| *b == b'{')?;
    // Task IDs are `[A-Za-z0-9_-]`: nothing to escape.
    let member = if object.is_empty() {
        format!("\"task_id\":\"{task_id}\"")
    } else {
        format!("\"task_id\":\"{task_id}\",")
    };
    let mut out = Vec::with_capacity(body.len() + member.len());
    out.extend_from_slice(&body[..=open]);
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(&body[open + 1..]);
    Some(Bytes::from(out))
}

/// The multipart body with a `task_id` part added before its closing
/// delimiter, or `None` when its `task` part already names an ID, or the
/// body is not well-formed multipart.
async fn multipart_with_task_id(content_type: &str, body: &Bytes, task_id: &str) -> Option<Bytes> {
    #[derive(serde::Deserialize)]
    struct Named {
        task_id: Option<serde_json::Value>,
    }
    let boundary = multer::parse_boundary(content_type).ok()?;
    let stream = futures_util::stream::once({
        let body = body.clone();
        async move { Ok::<_, std::convert::Infallible>(body) }
    });
    let mut multipart = multer::Multipart::new(stream, boundary.clone());
    while let Some(field) = multipart.next_field().await.ok()? {
        if field.name() == Some("task") {
            let named: Named = serde_json::from_slice(&field.bytes().await.ok()?).ok()?;
            if named.task_id.is_some() {
                return None;
            }
        }
    }
    let close = format!("\r\n--{boundary}--");
    let at = body
        .windows(close.len())
        .rposition(|w| w == close.as_bytes())?;
    let part = format!(
        "\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"task_id\"\r\n\r\n{task_id}"
    );
    let mut out = Vec::with_capacity(body.len() + part.len());
    out.extend_from_slice(&body[..at]);
    out.extend_from_slice(part.as_bytes());
    out.extend_from_slice(&body[at..]);
    Some(Bytes::from(out))
}

/// A create request's body: JSON, or multipart with a `task` part and a
/// `body` file part whose bytes and content type the target sends.
async fn read_create(app: &App, req: Request) -> ApiResult<CreateTask> {
    let media = media_type(&req).unwrap_or_default();
    if is_json(&media) {
        let bytes = read_body(req, app.options.max_body_bytes).await?;
        return parse_json(&bytes);
    }
    if media != "multipart/form-data" {
        return Err(Problem::unsupported_media_type(format!(
            "expected application/json or multipart/form-data, got {}",
            if media.is_empty() {
                "no Content-Type"
            } else {
                &media
            }
        )));
    }
    let limit = app.options.max_body_bytes;
    let mut multipart = axum::extract::Multipart::from_request(req, &())
        .await
        .map_err(|e| Problem::invalid(format!("malformed multipart body: {e}")))?;
    let mut task: Option<CreateTask> = None;
    let mut body: Option<(Bytes, Option<String>)> = None;
    // Put there by `task_id_into_body` from a header.
    let mut task_id_part: Option<String> = None;
    let mut total = 0usize;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| Problem::invalid(format!("malformed multipart body: {e}")))?
    {
        let name = field.name().unwrap_or_default().to_string();
        let content_type = field.content_type().map(str::to_string);
        let bytes = field.bytes().await.map_err(|e| {
            if e.status() == http::StatusCode::PAYLOAD_TOO_LARGE {
                Problem::payload_too_large(limit)
            } else {
                Problem::invalid(format!("malformed multipart body: {e}"))
            }
        })?;
        total += bytes.len();
        if total > limit {
            return Err(Problem::payload_too_large(limit));
        }
        match name.as_str() {
            "task" => task = Some(parse_json(&bytes)?),
            "body" => body = Some((bytes, content_type)),
            "task_id" => task_id_part = Some(String::from_utf8_lossy(&bytes).into_owned()),
            other => {
                return Err(Problem::field(
                    other,
                    "unknown part; send a 'task' part and optionally a 'body' part",
                ));
            }
        }
    }
    let mut task = task.ok_or_else(|| Problem::field("task", "the 'task' part is missing"))?;
    if task.task_id.is_none() {
        task.task_id = task_id_part;
    }
    if let Some((bytes, content_type)) = body {
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
        match &mut task.target {
            Some(target) => {
                if target.body.is_some() || target.body_base64.is_some() || target.json.is_some() {
                    return Err(Problem::field(
                        "target.body",
                        "give the body either in the 'body' part or in the task, not both",
                    ));
                }
                target.body_base64 = Some(encoded);
                if let Some(ct) = content_type {
                    target
                        .headers
                        .retain(|k, _| !k.eq_ignore_ascii_case("content-type"));
                    target.headers.insert("Content-Type".into(), ct);
                }
            }
            // A pull task: the part is its payload.
            None => {
                let payload = task.payload.get_or_insert_default();
                if payload.body.is_some() || payload.body_base64.is_some() || payload.json.is_some()
                {
                    return Err(Problem::field(
                        "payload.body",
                        "give the payload either in the 'body' part or in the task, not both",
                    ));
                }
                payload.body_base64 = Some(encoded);
            }
        }
    }
    Ok(task)
}

/// A create's body checked as far as it can be before the store, as the
/// store's request (without its Idempotency-Key completion); every bad
/// field is named at once.
pub(super) fn resolve_create(
    app: &App,
    org: &str,
    queue: &str,
    mut body: CreateTask,
) -> Result<TaskCreate, FieldErrors> {
    let task_id = body
        .task_id
        .take()
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let mut errors = FieldErrors::new();
    if let Err(e) = check_task_id("task_id", &task_id) {
        errors.0.push(e);
    }
    validate_dispatch_deadline(body.dispatch_deadline_s, &mut errors);
    body.schedule_time = idem_core::task::resolve_schedule_time(body.schedule_time, &mut errors);
    // No target makes a pull queue's task, which carries a payload and may
    // carry a tag; the store checks the queue's mode agrees.
    let pull = body.target.is_none();
    let target = match body.target.take() {
        Some(spec) => {
            app.options
                .target_policy
                .check_target_url("target.url", &spec.url, &mut errors);
            for (field, given) in [
                ("payload", body.payload.is_some()),
                ("tag", body.tag.is_some()),
            ] {
                if given {
                    errors.push(
                        field,
                        "only a pull queue's task carries one; a push task's body is in its target",
                    );
                }
            }
            spec.resolve("target", &mut errors)
        }
        None => {
            if let Some(tag) = &body.tag
                && let Err(e) = idem_core::names::check_identifier("tag", tag, 100)
            {
                errors.0.push(e);
            }
            let payload = body
                .payload
                .take()
                .and_then(|p| p.resolve("payload", &mut errors));
            Some(idem_core::task::Target::payload(payload))
        }
    };
    let mut callback = |spec: Option<TargetSpec>, field: &str| {
        let spec = spec?;
        app.options
            .target_policy
            .check_target_url(&format!("{field}.url"), &spec.url, &mut errors);
        resolve_callback(spec, field, &mut errors)
    };
    let callbacks = Callbacks {
        on_success: callback(body.on_success.take(), "on_success"),
        on_failure: callback(body.on_failure.take(), "on_failure"),
    };
    if let Some(style) = body.header_style
        && let Err(e) = idem_core::queue::check_task_header_style("header_style", style)
    {
        errors.0.push(e);
    }
    if let Some(group) = &body.group
        && let Err(e) = idem_core::names::check_group("group", group)
    {
        errors.0.push(e);
    }
    let priority = body.priority.unwrap_or(0);
    errors.range(
        "priority",
        priority,
        idem_core::queue::MIN_PRIORITY,
        idem_core::queue::MAX_PRIORITY,
    );
    errors.into_result()?;
    Ok(TaskCreate {
        org: org.to_string(),
        queue: queue.to_string(),
        task_id,
        completion: None,
        target: target.expect("validated"),
        schedule_time: body.schedule_time,
        dispatch_deadline_s: body.dispatch_deadline_s,
        retry_config: body.retry_config.unwrap_or_default(),
        callbacks,
        header_style: body.header_style,
        pull,
        tag: body.tag.take(),
        group: body.group.take(),
        priority,
    })
}

pub async fn create(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Traced(trace): Traced,
    Path(queue): Path<String>,
    RawQuery(query): RawQuery,
    body: Unparsed<CreateTask, OrMultipart>,
) -> ApiResult<MayWait<Task>> {
    let wait = wait_ms(query.as_deref())?;
    let body = read_create(&app, body.request).await?;
    // A header-given ID is in the body by now (`task_id_into_body`).
    let mut params =
        resolve_create(&app, &auth.caller.org, &queue, body).map_err(Problem::fields)?;
    params.target.trace = trace;
    // A waiting create's replay answers by the task's state at that time.
    let status = if wait.is_some() {
        StatusCode::ACCEPTED
    } else {
        StatusCode::CREATED
    };
    let queue_name = queue.clone();
    params.completion = keyed.completion(
        &app,
        &auth.caller,
        status,
        "task",
        format!("{queue}/{}", params.task_id),
    );
    let task = match app.store.task_create(params).await {
        Ok(task) => task,
        Err(e) => {
            if matches!(e, idem_store::Error::TaskExists(_)) {
                app.metrics.count(
                    "idem_tasks_deduplicated_total",
                    &auth.caller.org,
                    &queue_name,
                    Some(("reason", "task_id")),
                    1,
                );
            }
            return Ok(MayWait::Claimed(super::idempotency::claim_failed(e)));
        }
    };
    app.dispatch.tasks_created(
        app.store.queue_paused_hint(&auth.caller.org, &task.queue),
        Some(task.next_attempt_at),
        app.clock.now(),
    );
    app.metrics.count(
        "idem_tasks_created_total",
        &auth.caller.org,
        &task.queue,
        None,
        1,
    );
    let loc = location(&["queues", &task.queue, "tasks", &task.task_id]);
    let Some(wait) = wait else {
        return Ok(MayWait::Created(Created(
            loc,
            views::task_seen_by(task, app.clock.now(), &auth.caller),
        )));
    };
    let task = app
        .dispatch
        .wait_final(
            app.store.as_ref(),
            &auth.caller.org,
            &task.queue,
            &task.task_id,
            wait,
        )
        .await?;
    let view = views::task_seen_by(task, app.clock.now(), &auth.caller);
    Ok(MayWait::Waited {
        settled: view.state.is_final(),
        created: Created(loc, view),
    })
}

/// `?wait_ms=N` (1–30000): how long a create waits for a final state.
fn wait_ms(query: Option<&str>) -> ApiResult<Option<std::time::Duration>> {
    let Some(raw) = super::extract::query_param(query, "wait_ms") else {
        return Ok(None);
    };
    raw.parse::<u64>()
        .ok()
        .filter(|ms| (1..=30_000).contains(ms))
        .map(|ms| Some(std::time::Duration::from_millis(ms)))
        .ok_or_else(|| Problem::field("wait_ms", "must be an integer from 1 to 30000"))
}

pub async fn list(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path(queue): Path<String>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<Task>>> {
    let mut params = ListParams::parse(query.as_deref())?;
    let filter = task_filter(&mut params.rest)?;
    let page = app
        .store
        .task_list(&auth.caller.org, &queue, filter, &params.page)
        .await?;
    let now = app.clock.now();
    Ok(axum::Json(views::list(page, |t| {
        views::task_seen_by(t, now, &auth.caller)
    })))
}

/// `?state=`, `?id_prefix=`, `?created_after=`, `?created_before=`; every
/// bad one is named at once.
fn task_filter(rest: &mut std::collections::HashMap<String, String>) -> ApiResult<TaskFilter> {
    let mut errors = FieldErrors::new();
    let state = rest.remove("state").and_then(|s| {
        let state = TaskState::parse(&s);
        if state.is_none() {
            errors.push(
                "state",
                "must be one of scheduled, queued, running, succeeded, failed, cancelled",
            );
        }
        state
    });
    let id_prefix = rest.remove("id_prefix").filter(|p| {
        // A prefix of a valid ID is a valid ID itself.
        let valid = check_task_id("id_prefix", p).is_ok();
        if !valid {
            errors.push("id_prefix", "must be 1–500 of [A-Za-z0-9_-]");
        }
        valid
    });
    let mut time = |name: &str| {
        rest.remove(name).and_then(|v| {
            let t = v.parse::<jiff::Timestamp>().ok();
            if t.is_none() {
                errors.push(
                    name,
                    "must be an RFC 3339 time, such as 2026-10-16T12:00:00Z",
                );
            }
            t
        })
    };
    let created_after = time("created_after");
    let created_before = time("created_before");
    errors.into_result().map_err(Problem::fields)?;
    Ok(TaskFilter {
        state,
        id_prefix,
        created_after,
        created_before,
    })
}

pub async fn get(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<Task>> {
    let task = app
        .store
        .task_get(&auth.caller.org, &queue, &task_id)
        .await?;
    Ok(axum::Json(views::task_seen_by(
        task,
        app.clock.now(),
        &auth.caller,
    )))
}

pub async fn attempts(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path((queue, task_id)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<idem_core::task::Attempt>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app
        .store
        .task_attempts(&auth.caller.org, &queue, &task_id, &params.page)
        .await?;
    Ok(axum::Json(views::list(page, |a| a)))
}

pub async fn cancel(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<Task>> {
    let task = app
        .store
        .task_cancel(&auth.caller.org, &queue, &task_id)
        .await?;
    app.dispatch.cancelled(&auth.caller.org, &task);
    Ok(axum::Json(views::task_seen_by(
        task,
        app.clock.now(),
        &auth.caller,
    )))
}

pub async fn run(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<Task>> {
    let done = keyed.completion(
        &app,
        &auth.caller,
        StatusCode::OK,
        "task",
        format!("{queue}/{task_id}"),
    );
    let task = app
        .store
        .task_run_now(&auth.caller.org, &queue, &task_id, done)
        .await?;
    app.dispatch.work_available();
    Ok(axum::Json(views::task_seen_by(
        task,
        app.clock.now(),
        &auth.caller,
    )))
}

pub async fn redrive(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<Task>> {
    let done = keyed.completion(
        &app,
        &auth.caller,
        StatusCode::OK,
        "task",
        format!("{queue}/{task_id}"),
    );
    let task = app
        .store
        .task_redrive(&auth.caller.org, &queue, &task_id, done)
        .await?;
    app.dispatch.work_available();
    Ok(axum::Json(views::task_seen_by(
        task,
        app.clock.now(),
        &auth.caller,
    )))
}

pub async fn redrive_many(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path(queue): Path<String>,
    OptionalJson(body): OptionalJson<RedriveTasks>,
) -> ApiResult<axum::Json<Redriven>> {
    let mut errors = FieldErrors::new();
    let status = match body.state.unwrap_or(TaskState::Failed) {
        TaskState::Failed => Some(idem_store::Status::Failed),
        TaskState::Cancelled => Some(idem_store::Status::Cancelled),
        _ => {
            errors.push("state", "must be failed or cancelled");
            None
        }
    };
    if body.id_prefix.as_deref() == Some("") {
        errors.push("id_prefix", "must not be empty");
    }
    errors.into_result().map_err(Problem::fields)?;
    let filter = RedriveFilter {
        status: status.expect("validated"),
        finished_after: body.finished_after,
        finished_before: body.finished_before,
        id_prefix: body.id_prefix,
        created_after: body.created_after,
        created_before: body.created_before,
        dry_run: body.dry_run,
    };
    let dry_run = filter.dry_run;
    // A replay answers with the stored count, as a purge does.
    let done = keyed.completion(&app, &auth.caller, StatusCode::OK, "queue", &queue);
    let redriven = app
        .store
        .task_redrive_many(&auth.caller.org, &queue, filter, done)
        .await?;
    if dry_run {
        return Ok(axum::Json(Redriven {
            redriven: 0,
            matching: Some(redriven.count),
        }));
    }
    if redriven.count > 0 {
        app.dispatch.work_available();
    }
    Ok(axum::Json(Redriven {
        redriven: redriven.count,
        matching: None,
    }))
}
