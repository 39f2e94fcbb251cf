//! `/v1/jobs`: cron jobs and their runs; `/v1/schedules/preview`.

use super::extract::{Json, ListParams};
use super::idempotency::Keyed;
use super::problem::{ApiResult, Problem};
use super::views;
use super::{Created, NoContent, location};
use crate::App;
use crate::auth::{Auth, Reader, Writer};
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use idem_api::{CreateJob, Job, List, Preview, PreviewRequest, Run, TargetSpec, UpdateJob};
use idem_core::FieldErrors;
use idem_core::job::DEFAULT_TIME_ZONE;
use idem_core::job::JobState;
use idem_core::schedule::{MAX_PREVIEW, Schedule};
use std::sync::Arc;

pub async fn create(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Json(req): Json<CreateJob>,
) -> ApiResult<Created<Job>> {
    let name = req.name.clone();
    let paused = req.paused.unwrap_or(false);
    let refused = refused_target(&app, Some(&req.target));
    let config = with_refusal(req.resolve(), refused).map_err(Problem::fields)?;
    let job = app
        .store
        .job_create(
            &auth.caller.org,
            &name,
            &config,
            paused,
            keyed.completion(&app, &auth.caller, StatusCode::CREATED, "job", &name),
        )
        .await?;
    app.scheduler.jobs_changed();
    Ok(Created(
        location(&["jobs", &job.name]),
        views::job(job, app.clock.now()),
    ))
}

pub async fn list(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<Job>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app.store.job_list(&auth.caller.org, &params.page).await?;
    let now = app.clock.now();
    Ok(axum::Json(views::list(page, |j| views::job(j, now))))
}

pub async fn get(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<Job>> {
    let job = app.store.job_get(&auth.caller.org, &name).await?;
    Ok(axum::Json(views::job(job, app.clock.now())))
}

pub async fn update(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path(name): Path<String>,
    Json(req): Json<UpdateJob>,
) -> ApiResult<axum::Json<Job>> {
    let refused = refused_target(&app, req.target.as_ref());
    let patch = with_refusal(req.into_patch(), refused).map_err(Problem::fields)?;
    let done = keyed.completion(&app, &auth.caller, StatusCode::OK, "job", &name);
    let job = app
        .store
        .job_update(&auth.caller.org, &name, &patch, done)
        .await?;
    app.scheduler.jobs_changed();
    Ok(axum::Json(views::job(job, app.clock.now())))
}

pub async fn delete(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    Path(name): Path<String>,
) -> ApiResult<NoContent> {
    app.store.job_delete(&auth.caller.org, &name).await?;
    Ok(NoContent)
}

async fn set_state(
    app: &App,
    auth: &Auth<Writer>,
    keyed: &Keyed,
    name: &str,
    state: JobState,
) -> ApiResult<axum::Json<Job>> {
    let done = keyed.completion(app, &auth.caller, StatusCode::OK, "job", name);
    let job = app
        .store
        .job_set_state(&auth.caller.org, name, state, done)
        .await?;
    app.scheduler.jobs_changed();
    Ok(axum::Json(views::job(job, app.clock.now())))
}

pub async fn pause(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<Job>> {
    set_state(&app, &auth, &keyed, &name, JobState::Paused).await
}

pub async fn resume(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<Job>> {
    set_state(&app, &auth, &keyed, &name, JobState::Enabled).await
}

pub async fn run(
    State(app): State<Arc<App>>,
    auth: Auth<Writer>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<Created<Run>> {
    // The run's ID is known only inside the store's transaction, which
    // fills it into the completion.
    let done = keyed.completion(&app, &auth.caller, StatusCode::CREATED, "run", "");
    let run = app.store.job_run_now(&auth.caller.org, &name, done).await?;
    app.dispatch.work_available();
    let view = views::run(run, app.clock.now());
    Ok(Created(
        location(&["jobs", &view.job, "runs", &view.run_id]),
        view,
    ))
}

pub async fn runs(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<Run>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app
        .store
        .job_runs(&auth.caller.org, &name, &params.page)
        .await?;
    let now = app.clock.now();
    Ok(axum::Json(views::list(page, |t| views::run(t, now))))
}

pub async fn get_run(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path((name, run_id)): Path<(String, String)>,
) -> ApiResult<axum::Json<Run>> {
    let run = app
        .store
        .job_run_get(&auth.caller.org, &name, &run_id)
        .await?;
    Ok(axum::Json(views::run(run, app.clock.now())))
}

pub async fn run_attempts(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path((name, run_id)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<idem_core::task::Attempt>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app
        .store
        .job_run_attempts(&auth.caller.org, &name, &run_id, &params.page)
        .await?;
    Ok(axum::Json(views::list(page, |a| a)))
}

/// The error of a target whose IP literal the target policy refuses.
fn refused_target(app: &App, target: Option<&TargetSpec>) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if let Some(t) = target {
        app.options
            .target_policy
            .check_target_url("target.url", &t.url, &mut errors);
    }
    errors
}

/// Reports the refusal with the request's other errors, all at once.
fn with_refusal<T>(
    resolved: Result<T, FieldErrors>,
    refused: FieldErrors,
) -> Result<T, FieldErrors> {
    match resolved {
        Err(mut errors) => {
            errors.0.extend(refused.0);
            Err(errors)
        }
        Ok(_) if !refused.is_empty() => Err(refused),
        Ok(v) => Ok(v),
    }
}

/// Instants a preview lists when the request does not say.
const DEFAULT_PREVIEW_COUNT: usize = 10;

pub async fn preview(
    State(app): State<Arc<App>>,
    _auth: Auth<Reader>,
    Json(req): Json<PreviewRequest>,
) -> ApiResult<axum::Json<Preview>> {
    let mut errors = FieldErrors::new();
    let count = req.count.unwrap_or(DEFAULT_PREVIEW_COUNT);
    errors.range("count", count, 1, MAX_PREVIEW);
    let zone = req.time_zone.as_deref().unwrap_or(DEFAULT_TIME_ZONE);
    let schedule = Schedule::parse(&req.schedule, zone)
        .map_err(|e| errors.push(e.field(), e.message()))
        .ok();
    errors.into_result().map_err(Problem::fields)?;
    let after = req.after.unwrap_or_else(|| app.clock.now());
    let times = schedule.expect("validated").preview(after, count);
    Ok(axum::Json(Preview { times }))
}
