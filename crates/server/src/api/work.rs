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
    DEFAULT_LEASE_S, MAX_CLAIM_TASKS, MAX_CLAIM_WAIT_MS, MAX_LEASE_S, MAX_RESULT_BYTES,
};
use idem_api::{
    AssignTask, ClaimTask, ClaimTasks, ClaimedTasks, CompleteTask, FailTask, Heartbeat,
    ReassignTask, ReleaseTask, Task,
};
use idem_core::FieldErrors;
use idem_core::names::check_principal_name;
use idem_core::tenancy::{PrincipalKind, Role};
use idem_store::{WorkAction, WorkClaim};
use std::sync::Arc;
use std::time::Duration;

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
            let tasks = claimed.into_iter().map(|t| views::task(t, at)).collect();
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
    org: &str,
    queue: &str,
    task_id: &str,
    action: WorkAction,
) -> ApiResult<axum::Json<Task>> {
    let (task, finished) = app.store.work_act(org, queue, task_id, action).await?;
    if let Some(finished) = finished {
        app.dispatch.publish(finished);
    }
    Ok(axum::Json(views::task(task, app.clock.now())))
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
    act(&app, &auth.caller.org, &queue, &task_id, action).await
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
    };
    act(&app, &auth.caller.org, &queue, &task_id, action).await
}

/// `POST …/tasks/{task_id}/complete`: person-only on a `person_only` queue.
pub async fn complete(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<CompleteTask>,
) -> ApiResult<axum::Json<Task>> {
    let result = body.result.map(|r| r.get().to_string());
    if result.as_ref().is_some_and(|r| r.len() > MAX_RESULT_BYTES) {
        return Err(Problem::field(
            "result",
            format!("may be at most {MAX_RESULT_BYTES} bytes of JSON"),
        ));
    }
    let action = WorkAction::Complete {
        attempt_id: body.attempt_id,
        result,
        person: auth.caller.kind == PrincipalKind::Person,
    };
    act(&app, &auth.caller.org, &queue, &task_id, action).await
}

/// `POST …/tasks/{task_id}/fail`: person-only on a `person_only` queue.
pub async fn fail(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path((queue, task_id)): Path<(String, String)>,
    Json(body): Json<FailTask>,
) -> ApiResult<axum::Json<Task>> {
    // Characters, as the document's maxLength counts them.
    const MAX_ERROR_CHARS: usize = 4096;
    if body.error.chars().count() > MAX_ERROR_CHARS {
        return Err(Problem::field(
            "error",
            format!("may be at most {MAX_ERROR_CHARS} characters"),
        ));
    }
    // PostgreSQL's text cannot hold U+0000; refusing it on every store keeps
    // the contract one.
    if body.error.contains('\0') {
        return Err(Problem::field(
            "error",
            "may not contain the character U+0000",
        ));
    }
    let action = WorkAction::Fail {
        attempt_id: body.attempt_id,
        error: body.error,
        person: auth.caller.kind == PrincipalKind::Person,
    };
    act(&app, &auth.caller.org, &queue, &task_id, action).await
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
    };
    let answer = act(&app, &auth.caller.org, &queue, &task_id, action).await?;
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
    let holder = (auth.caller.role < Role::Admin).then(|| auth.caller.principal.clone());
    let action = WorkAction::Reassign {
        attempt_id: body.attempt_id,
        principal: body.principal,
        holder,
        lease_s,
    };
    act(&app, &auth.caller.org, &queue, &task_id, action).await
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
    act(&app, &auth.caller.org, &queue, &task_id, action).await
}
