//! `/v1/queues/{queue}/tasks`: create (JSON or multipart), read, list,
//! attempts, cancel, run now.

use super::extract::{ListParams, is_json, media_type, parse_json, read_body};
use super::idempotency::Keyed;
use super::problem::{ApiResult, Problem};
use super::views::{List, TaskView};
use super::{Created, location};
use crate::App;
use crate::auth::{Auth, Reader, Writer};
use axum::body::Bytes;
use axum::extract::{FromRequest, Path, RawQuery, Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use idem_core::FieldErrors;
use idem_core::names::check_task_id;
use idem_core::task::{CreateTask, TaskState};
use idem_store::{TaskCreate, TaskFilter};
use std::sync::Arc;

/// Where a task ID may come from when the body names none, in order.
/// `X-Request-Id` last: a client's request ID is a weak identity, but using
/// it beats generating one that dedups nothing.
const TASK_ID_HEADERS: &[&str] = &[
    "idem-task-id",
    "x-fc-stateful-async-invocation-id",
    "x-request-id",
];

/// The task ID a create request names, or a fresh UUIDv7.
fn task_id(body: Option<String>, headers: &HeaderMap) -> (String, &'static str) {
    if let Some(id) = body {
        return (id, "task_id");
    }
    for name in TASK_ID_HEADERS {
        if let Some(v) = headers.get(*name).and_then(|v| v.to_str().ok()) {
            return (v.trim().to_string(), name);
        }
    }
    (uuid::Uuid::now_v7().to_string(), "task_id")
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
            other => {
                return Err(Problem::field(
                    other,
                    "unknown part; send a 'task' part and optionally a 'body' part",
                ));
            }
        }
    }
    let mut task = task.ok_or_else(|| Problem::field("task", "the 'task' part is missing"))?;
    if let Some((bytes, content_type)) = body {
        let t = &task.target;
        if t.body.is_some() || t.body_base64.is_some() || t.json.is_some() {
            return Err(Problem::field(
                "target.body",
                "give the body either in the 'body' part or in the task, not both",
            ));
        }
        use base64::Engine;
        task.target.body_base64 = Some(base64::engine::general_purpose::STANDARD.encode(&bytes));
        if let Some(ct) = content_type {
            task.target
                .headers
                .retain(|k, _| !k.eq_ignore_ascii_case("content-type"));
            task.target.headers.insert("Content-Type".into(), ct);
        }
    }
    Ok(task)
}

pub async fn create(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path(queue): Path<String>,
    RawQuery(query): RawQuery,
    req: Request,
) -> ApiResult<Response> {
    let wait = wait_ms(query.as_deref())?;
    let headers = req.headers().clone();
    let mut body = read_create(&app, req).await?;
    let (task_id, source) = task_id(body.task_id.take(), &headers);
    let mut errors = FieldErrors::new();
    if let Err(mut e) = check_task_id("task_id", &task_id) {
        if source != "task_id" {
            e.message = format!("(from header {source}) {}", e.message);
        }
        errors.0.push(e);
    }
    body.validate_deadline(&mut errors);
    let target = std::mem::take(&mut body.target).resolve("target", &mut errors);
    errors.into_result().map_err(Problem::fields)?;
    let target = target.expect("validated");
    // A waiting create's replay answers by the task's state at that time.
    let status = if wait.is_some() {
        StatusCode::ACCEPTED
    } else {
        StatusCode::CREATED
    };
    let queue_name = queue.clone();
    let done = keyed.completion(
        &app,
        &auth.caller,
        status,
        "task",
        format!("{queue}/{task_id}"),
    );
    let created = app
        .store
        .task_create(TaskCreate {
            org: auth.caller.org.clone(),
            queue,
            task_id,
            completion: done,
            target,
            schedule_time: body.schedule_time,
            dispatch_deadline_s: body.dispatch_deadline_s,
            retry_config: body.retry_config.unwrap_or_default(),
        })
        .await;
    let task = match created {
        Err(idem_store::Error::TaskExists(existing)) => {
            metrics::counter!("idem_tasks_deduplicated_total", "queue" => queue_name, "reason" => "task_id")
                .increment(1);
            return Err(idem_store::Error::TaskExists(existing).into());
        }
        other => other?,
    };
    // Only a task due now needs the dispatcher at once; a scheduled one is
    // found by its periodic look, and waking it per create would cost a
    // claim per request.
    if task.next_attempt_at <= app.clock.now() {
        app.dispatch.work_available();
    }
    metrics::counter!("idem_tasks_created_total", "queue" => task.queue.clone()).increment(1);
    let loc = location(&["queues", &task.queue, "tasks", &task.task_id]);
    let Some(wait) = wait else {
        return Ok(Created(loc, TaskView::new(task, app.clock.now())).into_response());
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
    let view = TaskView::new(task, app.clock.now());
    let status = if view.state.is_final() {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    let mut response = (status, axum::Json(view)).into_response();
    if let Ok(v) = http::HeaderValue::from_str(&loc) {
        response.headers_mut().insert(http::header::LOCATION, v);
    }
    Ok(response)
}

/// `?wait_ms=N` (1–30000): how long a create waits for a final state.
fn wait_ms(query: Option<&str>) -> ApiResult<Option<std::time::Duration>> {
    let Some(raw) = query
        .unwrap_or("")
        .split('&')
        .find_map(|p| p.strip_prefix("wait_ms="))
    else {
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
) -> ApiResult<axum::Json<List<TaskView>>> {
    let mut params = ListParams::parse(query.as_deref())?;
    let state = match params.rest.remove("state") {
        None => None,
        Some(s) => Some(TaskState::parse(&s).ok_or_else(|| {
            Problem::field(
                "state",
                "must be one of scheduled, queued, running, succeeded, failed, cancelled",
            )
        })?),
    };
    let page = app
        .store
        .task_list(&auth.caller.org, &queue, TaskFilter { state }, &params.page)
        .await?;
    let now = app.clock.now();
    Ok(axum::Json(List::from_page(page, |t| TaskView::new(t, now))))
}

pub async fn get(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<TaskView>> {
    let task = app
        .store
        .task_get(&auth.caller.org, &queue, &task_id)
        .await?;
    Ok(axum::Json(TaskView::new(task, app.clock.now())))
}

pub async fn attempts(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<List<idem_core::task::Attempt>>> {
    let items = app
        .store
        .task_attempts(&auth.caller.org, &queue, &task_id)
        .await?;
    Ok(axum::Json(List {
        items,
        next_page_token: None,
    }))
}

pub async fn cancel(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<TaskView>> {
    let task = app
        .store
        .task_cancel(&auth.caller.org, &queue, &task_id)
        .await?;
    Ok(axum::Json(TaskView::new(task, app.clock.now())))
}

pub async fn run(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path((queue, task_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<TaskView>> {
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
    Ok(axum::Json(TaskView::new(task, app.clock.now())))
}
