//! Pull queues (API.md §11): claiming due tasks, with a long poll, and the
//! actions on a claimed task. None honours `Idempotency-Key`: a retried
//! claim that had gone through answers 409 `WORK_ALREADY_CLAIMED`, and the
//! task's GET tells the worker the lease is its own.

use super::extract::{Json, OptionalJson};
use super::problem::{ApiResult, Problem};
use super::views;
use crate::App;
use crate::auth::{Admin, Auth, Writer};
use axum::extract::{Path, State};
use idem_api::work::{
    DEFAULT_LEASE_S, MAX_CLAIM_TASKS, MAX_CLAIM_WAIT_MS, MAX_END_TASKS, MAX_LEASE_S,
    MAX_RESULT_BYTES,
};
use idem_api::{
    AssignTask, BatchResult, BatchResults, ClaimTask, ClaimTasks, ClaimedTasks, CompleteTask,
    EndTasks, FailTask, Heartbeat, ReassignTask, ReleaseTask, Task,
};
use idem_core::FieldErrors;
use idem_core::names::{check_principal_name, check_task_id};
use idem_core::tenancy::{PrincipalKind, Role};
use idem_store::{Caller, WorkAction, WorkClaim};
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Duration;

/// What `tasks:end` answers: a batch create's shape, with the statuses of
/// a complete's or a fail's answer, and so its own schema.
#[derive(serde::Serialize)]
#[serde(transparent)]
pub struct EndedTasks(pub BatchResults);

/// Longest a waiting claim sleeps before it looks again by itself: a task
/// whose schedule time comes, or whose lease is recovered, sends no
/// wake-up.
const RECHECK: Duration = Duration::from_millis(250);

fn lease_s(given: Option<u32>, errors: &mut FieldErrors) -> u32 {
    let s = given.unwrap_or(DEFAULT_LEASE_S);
    errors.range("lease_s", s, 1, MAX_LEASE_S);
    s
}

fn principal(name: &str, errors: &mut FieldErrors) {
    if let Err(e) = check_principal_name("principal", name) {
        errors.0.push(e);
    }
}

fn checked(errors: FieldErrors) -> ApiResult<()> {
    errors.into_result().map_err(Problem::fields)
}

/// `POST /v1/queues/{queue}/tasks:claim`.
pub async fn claim_many(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path(queue): Path<String>,
    OptionalJson(body): OptionalJson<ClaimTasks>,
) -> ApiResult<axum::Json<ClaimedTasks>> {
    let mut errors = FieldErrors::new();
    let max_tasks = body.max_tasks.unwrap_or(1);
    errors.range("max_tasks", max_tasks, 1, MAX_CLAIM_TASKS);
    let wait_ms = body.wait_ms.unwrap_or(0);
    errors.range("wait_ms", wait_ms, 0, MAX_CLAIM_WAIT_MS);
    let lease_s = lease_s(body.lease_s, &mut errors);
    if let Some(tag) = &body.tag
        && let Err(e) = idem_core::names::check_identifier("tag", tag, 100)
    {
        errors.0.push(e);
    }
    checked(errors)?;
    let claim = WorkClaim {
        org: auth.caller.org.clone(),
        queue,
        claimant: auth.caller.principal.clone(),
        max_tasks,
        lease_s,
        tag: body.tag,
        attempts_kept: app.options.max_attempts_kept,
    };
    let deadline = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
    loop {
        // Enabled before the look, so a create in between still wakes it.
        let woken = app.dispatch.pull_work();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let claimed = app.store.work_claim(claim.clone()).await?;
        let now = tokio::time::Instant::now();
        if !claimed.is_empty() || now >= deadline {
            let at = app.clock.now();
            let tasks = claimed
                .into_iter()
                .map(|t| views::task_seen_by(t, at, &auth.caller))
                .collect();
            return Ok(axum::Json(ClaimedTasks { tasks }));
        }
        let sleep = deadline.min(now + RECHECK);
        tokio::select! {
            () = woken => {}
            () = tokio::time::sleep_until(sleep) => {}
        }
    }
}

/// Runs one action and announces the final state it reached, if any.
async fn act(
    app: &App,
    caller: &Caller,
    queue: &str,
    task_id: &str,
    action: WorkAction,
) -> ApiResult<Acted> {
    let done = app
        .store
        .work_act(&caller.org, queue, task_id, action)
        .await?;
    if let Some(finished) = done.finished {
        app.dispatch.publish(finished);
    }
    Ok(Acted {
        task: views::task_seen_by(done.task, app.clock.now(), caller),
        replayed: done.replayed,
    })
}

/// [`act`] for the actions that never replay: the task alone.
async fn act_on(
    app: &App,
    caller: &Caller,
    queue: &str,
    task_id: &str,
    action: WorkAction,
) -> ApiResult<axum::Json<Task>> {
    Ok(axum::Json(
        act(app, caller, queue, task_id, action).await?.task,
    ))
}

/// The task an action left, and whether the action was the holder's
/// repeated end of an attempt that had already ended so
/// (`Idempotent-Replayed: true`).
pub struct Acted {
    pub task: Task,
    pub replayed: bool,
}

impl axum::response::IntoResponse for Acted {
    fn into_response(self) -> axum::response::Response {
        let mut answer = axum::Json(self.task).into_response();
        if self.replayed {
            answer.headers_mut().insert(
                idem_http::IDEMPOTENT_REPLAYED,
                axum::http::HeaderValue::from_static("true"),
            );
        }
        answer
    }
}

/// The principal a lease must belong to for the caller to act on it: the
/// caller, unless an admin.
fn holder(caller: &Caller) -> Option<String> {
    (caller.role < Role::Admin).then(|| caller.principal.clone())
}

/// `POST …/tasks/{task_id}/claim`.
pub async fn claim(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    OptionalJson(body): OptionalJson<ClaimTask>,
) -> ApiResult<axum::Json<Task>> {
    let mut errors = FieldErrors::new();
    let lease_s = lease_s(body.lease_s, &mut errors);
    checked(errors)?;
    let action = WorkAction::Claim {
        claimant: auth.caller.principal.clone(),
        lease_s,
        attempts_kept: app.options.max_attempts_kept,
    };
    act_on(&app, &auth.caller, &queue, &task_id, action).await
}

/// `POST …/tasks/{task_id}/heartbeat`.
pub async fn heartbeat(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<Heartbeat>,
) -> ApiResult<axum::Json<Task>> {
    let mut errors = FieldErrors::new();
    let lease_s = lease_s(body.lease_s, &mut errors);
    checked(errors)?;
    let action = WorkAction::Heartbeat {
        attempt_id: body.attempt_id,
        lease_s,
        holder: holder(&auth.caller),
    };
    act_on(&app, &auth.caller, &queue, &task_id, action).await
}

/// A completion's `result` as stored: at most [`MAX_RESULT_BYTES`] of JSON.
fn result_text(
    result: Option<Box<RawValue>>,
    field: &str,
    errors: &mut FieldErrors,
) -> Option<String> {
    let result = result.map(|r| r.get().to_string());
    if result.as_ref().is_some_and(|r| r.len() > MAX_RESULT_BYTES) {
        errors.push(
            field,
            format!("may be at most {MAX_RESULT_BYTES} bytes of JSON"),
        );
    }
    result
}

/// A failure's `error`: at most 4,096 characters (as the document's
/// maxLength counts them), and no U+0000, which PostgreSQL's text cannot
/// hold: refusing it on every store keeps the contract one.
fn check_error(error: &str, field: &str, errors: &mut FieldErrors) {
    const MAX_ERROR_CHARS: usize = 4096;
    if error.chars().count() > MAX_ERROR_CHARS {
        errors.push(
            field,
            format!("may be at most {MAX_ERROR_CHARS} characters"),
        );
    } else if error.contains('\0') {
        errors.push(field, "may not contain the character U+0000");
    }
}

fn is_person(auth: &Auth<Writer>) -> bool {
    auth.caller.kind == PrincipalKind::Person
}

/// `POST …/tasks/{task_id}/complete`: person-only on a `person_only` queue.
pub async fn complete(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<CompleteTask>,
) -> ApiResult<Acted> {
    let mut errors = FieldErrors::new();
    let result = result_text(body.result, "result", &mut errors);
    checked(errors)?;
    let action = WorkAction::Complete {
        attempt_id: body.attempt_id,
        result,
        person: is_person(&auth),
        holder: holder(&auth.caller),
    };
    act(&app, &auth.caller, &queue, &task_id, action).await
}

/// `POST …/tasks/{task_id}/fail`: person-only on a `person_only` queue.
pub async fn fail(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<FailTask>,
) -> ApiResult<Acted> {
    let mut errors = FieldErrors::new();
    check_error(&body.error, "error", &mut errors);
    checked(errors)?;
    let action = WorkAction::Fail {
        attempt_id: body.attempt_id,
        error: body.error,
        person: is_person(&auth),
        holder: holder(&auth.caller),
    };
    act(&app, &auth.caller, &queue, &task_id, action).await
}

/// `POST /v1/queues/{queue}/tasks:end`: many completions and failures in
/// one call, each as its own route would take it, answered item by item in
/// request order. A worker that finishes a claimed batch reports it with
/// one request instead of one per task; the ends still commit together
/// (the stores' group commit), each held to its own lease.
///
/// The call as a whole is refused, and nothing changes, when an item is
/// malformed, or the queue is missing, a push queue, or person-only and
/// the key a service's. What remains is per item: 200 with the task, or
/// the problem its own route would answer (409 `LEASE_LOST`, 404).
pub async fn end_many(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path(queue): Path<String>,
    Json(body): Json<EndTasks>,
) -> ApiResult<axum::Json<EndedTasks>> {
    let mut errors = FieldErrors::new();
    let n = body.ends.len();
    if n == 0 || n > MAX_END_TASKS {
        errors.push(
            "ends",
            format!("must hold 1 to {MAX_END_TASKS} ends, got {n}"),
        );
    }
    let person = is_person(&auth);
    let mut ends = Vec::with_capacity(n);
    for (i, end) in body.ends.into_iter().enumerate() {
        let field = |name: &str| format!("ends[{i}].{name}");
        if let Err(e) = check_task_id(&field("task_id"), &end.task_id) {
            errors.0.push(e);
        }
        let action = match end.error {
            Some(error) => {
                if end.result.is_some() {
                    errors.push(
                        field("result"),
                        "an end completes (result) or fails (error), not both",
                    );
                }
                check_error(&error, &field("error"), &mut errors);
                WorkAction::Fail {
                    attempt_id: end.attempt_id,
                    error,
                    person,
                    holder: holder(&auth.caller),
                }
            }
            None => WorkAction::Complete {
                attempt_id: end.attempt_id,
                result: result_text(end.result, &field("result"), &mut errors),
                person,
                holder: holder(&auth.caller),
            },
        };
        ends.push((end.task_id, action));
    }
    checked(errors)?;
    let outcomes = app
        .store
        .work_end_many(&auth.caller.org, &queue, ends)
        .await?;
    let now = app.clock.now();
    let results = outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Ok(done) => {
                if let Some(finished) = done.finished {
                    app.dispatch.publish(finished);
                }
                BatchResult {
                    status: 200,
                    task: Some(views::task_seen_by(done.task, now, &auth.caller)),
                    problem: None,
                    replayed: done.replayed,
                }
            }
            Err(e) => {
                let problem = Problem::from(e);
                BatchResult {
                    status: problem.status.as_u16(),
                    task: None,
                    problem: Some(problem.document()),
                    replayed: false,
                }
            }
        })
        .collect();
    Ok(axum::Json(EndedTasks(BatchResults { results })))
}

/// `POST …/tasks/{task_id}/release`.
pub async fn release(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<ReleaseTask>,
) -> ApiResult<axum::Json<Task>> {
    let action = WorkAction::Release {
        attempt_id: body.attempt_id,
        holder: holder(&auth.caller),
    };
    let answer = act_on(&app, &auth.caller, &queue, &task_id, action).await?;
    // Due again now: a waiting claim may take it.
    app.dispatch.work_available();
    Ok(answer)
}

/// `POST …/tasks/{task_id}/reassign`: the lease's holder, or an admin.
pub async fn reassign(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<ReassignTask>,
) -> ApiResult<axum::Json<Task>> {
    let mut errors = FieldErrors::new();
    principal(&body.principal, &mut errors);
    let lease_s = lease_s(body.lease_s, &mut errors);
    checked(errors)?;
    let action = WorkAction::Reassign {
        attempt_id: body.attempt_id,
        principal: body.principal,
        holder: holder(&auth.caller),
        lease_s,
    };
    act_on(&app, &auth.caller, &queue, &task_id, action).await
}

/// `POST …/tasks/{task_id}/assign`.
pub async fn assign(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<AssignTask>,
) -> ApiResult<axum::Json<Task>> {
    let mut errors = FieldErrors::new();
    principal(&body.principal, &mut errors);
    let lease_s = lease_s(body.lease_s, &mut errors);
    checked(errors)?;
    let action = WorkAction::Assign {
        principal: body.principal,
        lease_s,
        attempts_kept: app.options.max_attempts_kept,
    };
    act_on(&app, &auth.caller, &queue, &task_id, action).await
}
