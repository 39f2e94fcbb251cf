//! `/v1/queues`: create, read, update, delete, pause, resume, purge.

use super::extract::{Json, ListParams};
use super::idempotency::Keyed;
use super::problem::{ApiResult, Problem};
use super::views;
use super::{Created, NoContent, location};
use crate::App;
use crate::auth::{Admin, Auth, Reader};
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use idem_api::{CreateQueue, Group, List, Purged, Queue};
use idem_core::FieldErrors;
use idem_core::names::check_queue_name;
use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState};
use std::sync::Arc;

pub async fn create(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Json(req): Json<CreateQueue>,
) -> ApiResult<Created<Queue>> {
    let mut errors = FieldErrors::new();
    if let Err(e) = check_queue_name("name", &req.name) {
        errors.0.push(e);
    }
    let patch = req.config();
    check_callback_addresses(&app, &patch, &mut errors);
    let config = match QueueConfig::new(&patch) {
        Ok(c) => Some(c),
        Err(e) => {
            errors.0.extend(e.0);
            None
        }
    };
    errors.into_result().map_err(Problem::fields)?;
    let queue = app
        .store
        .queue_create(
            &auth.caller.org,
            &req.name,
            &config.expect("validated"),
            keyed.completion(&app, &auth.caller, StatusCode::CREATED, "queue", &req.name),
        )
        .await?;
    Ok(Created(
        location(&["queues", &queue.name]),
        view(&app, &auth.caller.org, queue).await?,
    ))
}

/// Callbacks are targets: a literal address the target policy refuses is a
/// bad field, as in a task.
fn check_callback_addresses(app: &App, patch: &QueueConfigPatch, errors: &mut FieldErrors) {
    for (field, spec) in [
        ("on_success.url", &patch.on_success),
        ("on_failure.url", &patch.on_failure),
    ] {
        if let Some(Some(spec)) = spec {
            app.options
                .target_policy
                .check_target_url(field, &spec.url, errors);
        }
    }
}

/// The queue as the API shows it, with its statistics read now (after the
/// write that returned it, outside its transaction: statistics are a
/// reading, not part of the change).
pub(crate) async fn view(app: &App, org: &str, queue: idem_store::Queue) -> ApiResult<Queue> {
    let stats = app.store.queue_stats(org, &queue.name).await?;
    Ok(views::queue(queue, stats))
}

pub async fn list(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<Queue>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app.store.queue_list(&auth.caller.org, &params.page).await?;
    let mut stats = Vec::with_capacity(page.items.len());
    for queue in &page.items {
        stats.push(app.store.queue_stats(&auth.caller.org, &queue.name).await?);
    }
    let mut stats = stats.into_iter();
    Ok(axum::Json(views::list(page, |queue| {
        views::queue(queue, stats.next().unwrap_or_default())
    })))
}

/// `GET /v1/queues/{queue}/groups`: the groups with live tasks, by name,
/// `?id_prefix=` those whose name starts with it.
pub async fn groups(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path(queue): Path<String>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<Group>>> {
    let mut params = ListParams::parse(query.as_deref())?;
    let prefix = params.rest.remove("id_prefix");
    if let Some(prefix) = &prefix {
        // A prefix of a valid group is a valid group itself; an empty one
        // is none.
        idem_core::names::check_group("id_prefix", prefix)
            .map_err(|e| Problem::field(&e.field, e.message))?;
    }
    let prefix = prefix.unwrap_or_default();
    let page = app
        .store
        .queue_groups(&auth.caller.org, &queue, &prefix, &params.page)
        .await?;
    Ok(axum::Json(views::list(page, |g| Group {
        group: g.group,
        running: g.running,
        due: g.due,
        scheduled: g.scheduled,
    })))
}

pub async fn get(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<Queue>> {
    let (queue, stats) = tokio::try_join!(
        app.store.queue_get(&auth.caller.org, &name),
        app.store.queue_stats(&auth.caller.org, &name),
    )?;
    Ok(axum::Json(views::queue(queue, stats)))
}

pub async fn update(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
    Json(patch): Json<QueueConfigPatch>,
) -> ApiResult<axum::Json<Queue>> {
    let mut errors = FieldErrors::new();
    check_callback_addresses(&app, &patch, &mut errors);
    errors.into_result().map_err(Problem::fields)?;
    let done = keyed.completion(&app, &auth.caller, StatusCode::OK, "queue", &name);
    let queue = app
        .store
        .queue_update(&auth.caller.org, &name, &patch, done)
        .await?;
    Ok(axum::Json(view(&app, &auth.caller.org, queue).await?))
}

pub async fn delete(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path(name): Path<String>,
) -> ApiResult<NoContent> {
    app.store.queue_delete(&auth.caller.org, &name).await?;
    Ok(NoContent)
}

async fn set_state(
    app: &App,
    auth: &Auth<Admin>,
    keyed: &Keyed,
    name: &str,
    state: QueueState,
) -> ApiResult<axum::Json<Queue>> {
    let done = keyed.completion(app, &auth.caller, StatusCode::OK, "queue", name);
    let queue = app
        .store
        .queue_set_state(&auth.caller.org, name, state, done)
        .await?;
    Ok(axum::Json(view(app, &auth.caller.org, queue).await?))
}

pub async fn pause(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<Queue>> {
    set_state(&app, &auth, &keyed, &name, QueueState::Paused).await
}

pub async fn resume(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<Queue>> {
    let queue = set_state(&app, &auth, &keyed, &name, QueueState::Running).await?;
    // Its due tasks woke no dispatcher while it was paused.
    app.dispatch.work_available();
    Ok(queue)
}

pub async fn purge(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<Purged>> {
    let done = keyed.completion(&app, &auth.caller, StatusCode::OK, "queue", &name);
    let cancelled = app.store.queue_purge(&auth.caller.org, &name, done).await?;
    Ok(axum::Json(Purged { cancelled }))
}
