//! `POST /v1/queues/{queue}/tasks:batch`: up to 1,000 creates, each as
//! `POST /v1/queues/{queue}/tasks` takes it, committed together and
//! answered item by item in request order.
//!
//! The body is JSON (`{"tasks": [...], "atomic": false}`) or NDJSON (one
//! task per line, `?atomic=`). Items are parsed one by one from their own
//! text, so that a bad item is that item's 400 and not the batch's, and a
//! `target.json` keeps each number's spelling as a single create does.
//! Fields are named under `tasks[i]` (0-based) in the store and in the
//! Idempotency-Key record; an NDJSON answer names them `line[n]` (1-based)
//! instead, which is what a person fixing the file looks for.

use super::extract::{is_json, media_type, parse_json, query_param, read_body};
use super::idempotency::Keyed;
use super::problem::{ApiResult, Problem};
use super::signature::{OrNdjson, Unparsed};
use super::tasks::resolve_create;
use super::views;
use crate::App;
use crate::auth::{Auth, Writer};
use crate::traces::Traced;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use idem_api::{BatchResult, BatchResults, CreateTask, CreateTasks, ProblemCode};
use idem_core::{FieldError, FieldErrors};
use idem_store::{BatchItem, BatchRecord, MAX_BATCH_TASKS, Task, TaskBatch, TaskSummary};
use jiff::Timestamp;
use serde_json::json;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::Arc;

/// The media type of a body of one JSON task per line.
pub const NDJSON: &str = "application/x-ndjson";

pub async fn create(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Traced(trace): Traced,
    Path(queue): Path<String>,
    RawQuery(query): RawQuery,
    body: Unparsed<CreateTasks, OrNdjson<CreateTask>>,
) -> ApiResult<axum::Json<BatchResults>> {
    let req = body.request;
    let media = media_type(&req).unwrap_or_default();
    let ndjson = media == NDJSON;
    let bytes = read_body(req, app.options.max_body_bytes).await?;
    // `?atomic=` serves both bodies; a JSON batch may also say it in its
    // body, and is atomic when either asks.
    let in_query = match query_param(query.as_deref(), "atomic").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(Problem::field("atomic", "must be true or false")),
    };
    let (items, atomic) = if is_json(&media) {
        let (items, in_body) = json_items(&bytes)?;
        (items, in_body || in_query)
    } else if ndjson {
        (ndjson_items(&bytes)?, in_query)
    } else {
        return Err(Problem::unsupported_media_type(format!(
            "expected application/json or {NDJSON}, got {}",
            if media.is_empty() {
                "no Content-Type"
            } else {
                &media
            }
        )));
    };
    if items.is_empty() || items.len() > MAX_BATCH_TASKS {
        return Err(lines(
            Problem::field(
                "tasks",
                format!(
                    "must hold 1 to {MAX_BATCH_TASKS} tasks, got {}",
                    items.len()
                ),
            ),
            ndjson,
        ));
    }
    let org = auth.caller.org.clone();
    let mut tasks = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let task = item
            .clone()
            .and_then(parse_item)
            .and_then(|body| resolve_create(&app, &org, &queue, body))
            .map(|mut task| {
                task.target.trace = trace.clone();
                task
            })
            .map_err(|e| e.under(&format!("tasks[{index}]")));
        if atomic && let Err(errors) = &task {
            return Err(lines(
                Problem::from(idem_store::Error::BatchItem {
                    index,
                    error: Box::new(idem_store::Error::Invalid(errors.clone())),
                }),
                ndjson,
            ));
        }
        tasks.push(task);
    }
    // A replay re-reads each item's task (`replay`), as the record of the
    // batch lists them.
    let completion = keyed.completion(&app, &auth.caller, StatusCode::OK, "task_batch", &queue);
    let created = app
        .store
        .task_create_batch(TaskBatch {
            org: org.clone(),
            queue: queue.clone(),
            tasks,
            atomic,
            completion,
        })
        .await
        .map_err(|e| lines(Problem::from(e), ndjson))?;
    let now = app.clock.now();
    let earliest = created
        .items
        .iter()
        .filter_map(|i| match i {
            BatchItem::Created(t) => Some(t.next_attempt_at),
            _ => None,
        })
        .min();
    app.dispatch
        .tasks_created(created.queue_paused, earliest, now);
    let count =
        |wanted: fn(&BatchItem) -> bool| created.items.iter().filter(|i| wanted(i)).count() as u64;
    let made = count(|i| matches!(i, BatchItem::Created(_)));
    let taken = count(|i| matches!(i, BatchItem::Exists(_)));
    if made > 0 {
        app.metrics
            .count("idem_tasks_created_total", &org, &queue, None, made);
    }
    if taken > 0 {
        app.metrics.count(
            "idem_tasks_deduplicated_total",
            &org,
            &queue,
            Some(("reason", "task_id")),
            taken,
        );
    }
    let results = created
        .items
        .into_iter()
        .map(|item| match item {
            BatchItem::Created(t) => created_result(*t, now),
            BatchItem::Exists(t) => exists_result(*t, now, ndjson),
            BatchItem::Invalid(errors) => invalid_result(errors, ndjson),
            BatchItem::Refused(why) => refused_result(why),
        })
        .collect();
    Ok(axum::Json(BatchResults { results }))
}

/// The items of a JSON batch, each its own text, and `atomic`. Read as a
/// map of raw members, so that each bad member is named.
fn json_items(bytes: &[u8]) -> ApiResult<(Vec<Result<&str, FieldErrors>>, bool)> {
    let members: HashMap<&str, &RawValue> = match serde_json::from_slice(bytes) {
        Ok(m) => m,
        Err(e) if e.is_syntax() || e.is_eof() => {
            return Err(Problem::invalid(format!("malformed JSON body: {e}")));
        }
        Err(_) => {
            return Err(Problem::field(
                "body",
                "must be an object: {\"tasks\": [...], \"atomic\": false}",
            ));
        }
    };
    let mut errors = FieldErrors::new();
    let mut items = None;
    let mut atomic = false;
    for (name, value) in &members {
        match *name {
            "tasks" => match serde_json::from_str::<Vec<&RawValue>>(value.get()) {
                Ok(list) => items = Some(list),
                Err(_) => errors.push("tasks", "must be an array of tasks"),
            },
            "atomic" => match serde_json::from_str::<bool>(value.get()) {
                Ok(a) => atomic = a,
                Err(_) => errors.push("atomic", "must be true or false"),
            },
            other => errors.push(other, "unknown field; expected tasks or atomic"),
        }
    }
    if items.is_none() && !members.contains_key("tasks") {
        errors.push("tasks", "missing field `tasks`");
    }
    errors.into_result().map_err(Problem::fields)?;
    let items = items
        .unwrap_or_default()
        .into_iter()
        .map(|raw| Ok(raw.get()))
        .collect();
    Ok((items, atomic))
}

/// The lines of an NDJSON batch, each one item; line breaks at the end are
/// not items, an empty line between two tasks is a bad one.
fn ndjson_items(bytes: &[u8]) -> ApiResult<Vec<Result<&str, FieldErrors>>> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Problem::field("body", "NDJSON must be UTF-8"))?
        .trim_end();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    Ok(text
        .split('\n')
        .map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() {
                let mut errors = FieldErrors::new();
                errors.push("", "an empty line; each line must hold one task");
                Err(errors)
            } else {
                Ok(line)
            }
        })
        .collect())
}

/// One item, parsed as a single create's body is; its errors name fields
/// relative to the item.
fn parse_item(text: &str) -> Result<CreateTask, FieldErrors> {
    parse_json::<CreateTask>(text.as_bytes()).map_err(|p| {
        let named = p
            .extensions
            .as_ref()
            .and_then(|e| e.get("errors"))
            .and_then(|e| serde_json::from_value::<Vec<FieldError>>(e.clone()).ok());
        match named {
            Some(errors) => FieldErrors(errors),
            None => {
                let mut errors = FieldErrors::new();
                errors.push("", p.detail);
                errors
            }
        }
    })
}

fn created_result(task: Task, now: Timestamp) -> BatchResult {
    BatchResult {
        status: 201,
        task: Some(views::task(task, now)),
        problem: None,
        replayed: false,
    }
}

/// 409 with the task that holds the ID, as a single create's problem shows
/// it and in full beside it.
fn exists_result(task: Task, now: Timestamp, ndjson: bool) -> BatchResult {
    let summary = TaskSummary {
        task_id: task.task_id.clone(),
        state: task.state(now),
        created_at: task.created_at,
        finished_at: task.finished_at,
    };
    let problem = Problem::from(idem_store::Error::TaskExists(Box::new(summary)));
    BatchResult {
        status: 409,
        task: Some(views::task(task, now)),
        problem: Some(lines(problem, ndjson).document()),
        replayed: false,
    }
}

/// 409 for a task the queue does not take (the other kind than its mode),
/// as a single create answers it.
fn refused_result(why: String) -> BatchResult {
    BatchResult {
        status: 409,
        task: None,
        problem: Some(Problem::new(ProblemCode::FailedPrecondition, why).document()),
        replayed: false,
    }
}

fn invalid_result(errors: FieldErrors, ndjson: bool) -> BatchResult {
    BatchResult {
        status: 400,
        task: None,
        problem: Some(lines(Problem::fields(errors), ndjson).document()),
        replayed: false,
    }
}

/// For an NDJSON batch, `tasks[i]` becomes `line[i+1]` in what the problem
/// says.
fn lines(mut problem: Problem, ndjson: bool) -> Problem {
    if !ndjson {
        return problem;
    }
    problem.detail = item_to_line(&problem.detail);
    if let Some(errors) = problem
        .extensions
        .as_mut()
        .and_then(|e| e.get_mut("errors"))
        .and_then(|e| e.as_array_mut())
    {
        for e in errors {
            if let Some(field) = e.get("field").and_then(|f| f.as_str()) {
                e["field"] = json!(item_to_line(field));
            }
        }
    }
    if let Some(index) = problem
        .extensions
        .as_ref()
        .and_then(|e| e.get("index"))
        .and_then(|i| i.as_u64())
    {
        problem.extensions.as_mut().expect("read above")["line"] = json!(index + 1);
    }
    problem
}

/// Every `tasks[i]` in `text` as `line[i+1]`.
fn item_to_line(text: &str) -> String {
    const ITEM: &str = "tasks[";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(ITEM) {
        out.push_str(&rest[..at]);
        let after = &rest[at + ITEM.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match (
            after[..digits].parse::<usize>(),
            after[digits..].starts_with(']'),
        ) {
            (Ok(i), true) => {
                out.push_str(&format!("line[{}]", i + 1));
                rest = &after[digits + 1..];
            }
            _ => {
                out.push_str(ITEM);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A completed batch's answer again: each item's status as recorded, with
/// its task as it is now. An item whose task is gone since, or was
/// replaced by a newer one of the same ID, is answered 410
/// `IDEMPOTENT_RESOURCE_GONE`, as a single create's replay would be.
pub(super) async fn replay(
    app: &App,
    org: &str,
    queue: &str,
    body: &[u8],
    ndjson: bool,
) -> Result<Response, idem_store::Error> {
    let records: Vec<BatchRecord> = serde_json::from_slice(body)
        .map_err(|e| idem_store::Error::Internal(format!("unreadable batch record: {e}")))?;
    let mut results = Vec::with_capacity(records.len());
    for r in records {
        let now = app.clock.now();
        let current = match &r.task_id {
            Some(id) => match app.store.task_get(org, queue, id).await {
                Ok(t) => Some(t),
                Err(idem_store::Error::NotFound { .. }) => None,
                Err(e) => return Err(e),
            },
            None => None,
        };
        let result = match (r.status, current, r.refused) {
            (409, _, Some(why)) => refused_result(why),
            (201, Some(t), _) if r.uid.as_deref() == Some(t.uid.as_str()) => created_result(t, now),
            (409, Some(t), _) => exists_result(t, now, ndjson),
            (400, _, _) => invalid_result(FieldErrors(r.errors), ndjson),
            _ => {
                let id = r.task_id.unwrap_or_default();
                BatchResult {
                    status: ProblemCode::IdempotentResourceGone.status().as_u16(),
                    task: None,
                    problem: Some(
                        Problem::new(
                            ProblemCode::IdempotentResourceGone,
                            format!("task '{id}', which this batch met, is gone"),
                        )
                        .with_extensions(json!({"task": {"id": id}}))
                        .document(),
                    ),
                    replayed: false,
                }
            }
        };
        results.push(result);
    }
    Ok(axum::Json(BatchResults { results }).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_names_become_line_numbers() {
        assert_eq!(
            item_to_line("tasks[0].target.url: bad; tasks[12]: empty"),
            "line[1].target.url: bad; line[13]: empty"
        );
        assert_eq!(item_to_line("tasks[x] tasks"), "tasks[x] tasks");
    }

    #[test]
    fn blank_lines_at_the_end_are_not_items() {
        let items = ndjson_items(b"{\"a\":1}\r\n\n{\"b\":2}\n\n").unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0], Ok("{\"a\":1}"));
        assert!(items[1].is_err());
        assert_eq!(items[2], Ok("{\"b\":2}"));
    }
}
