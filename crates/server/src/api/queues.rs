//! `/v1/queues`: create, read, update, delete, pause, resume, purge.

use super::extract::{Json, ListParams};
use super::idempotency::Keyed;
use super::problem::{ApiResult, Problem};
use super::views::{List, PurgeView, QueueView};
use super::{Created, location};
use crate::App;
use crate::auth::{Admin, Auth, Reader};
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use idem_core::FieldErrors;
use idem_core::names::check_queue_name;
use idem_core::queue::{
    QueueConfig, QueueConfigPatch, QueueState, RateLimitsPatch, RetryConfigPatch,
};
use serde::Deserialize;
use std::sync::Arc;
use utoipa::ToSchema;

/// `POST /v1/queues`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateQueue {
    pub name: String,
    #[serde(default)]
    pub rate_limits: Option<RateLimitsPatch>,
    #[serde(default)]
    pub retry_config: Option<RetryConfigPatch>,
    #[serde(default)]
    pub dispatch_deadline_s: Option<u32>,
    #[serde(default)]
    pub dedup_window_s: Option<u64>,
}

pub async fn create(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Json(req): Json<CreateQueue>,
) -> ApiResult<Created<QueueView>> {
    let mut errors = FieldErrors::new();
    if let Err(e) = check_queue_name("name", &req.name) {
        errors.0.push(e);
    }
    let patch = QueueConfigPatch {
        rate_limits: req.rate_limits,
        retry_config: req.retry_config,
        dispatch_deadline_s: req.dispatch_deadline_s,
        dedup_window_s: req.dedup_window_s,
    };
    let config = match QueueConfig::default().apply(&patch) {
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
    Ok(Created(location(&["queues", &queue.name]), queue.into()))
}

pub async fn list(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<QueueView>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app.store.queue_list(&auth.caller.org, &params.page).await?;
    Ok(axum::Json(List::from_page(page, QueueView::from)))
}

pub async fn get(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<QueueView>> {
    let queue = app.store.queue_get(&auth.caller.org, &name).await?;
    Ok(axum::Json(queue.into()))
}

pub async fn update(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
    Json(patch): Json<QueueConfigPatch>,
) -> ApiResult<axum::Json<QueueView>> {
    let done = keyed.completion(&app, &auth.caller, StatusCode::OK, "queue", &name);
    let queue = app
        .store
        .queue_update(&auth.caller.org, &name, &patch, done)
        .await?;
    Ok(axum::Json(queue.into()))
}

pub async fn delete(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    app.store.queue_delete(&auth.caller.org, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn set_state(
    app: &App,
    auth: &Auth<Admin>,
    keyed: &Keyed,
    name: &str,
    state: QueueState,
) -> ApiResult<axum::Json<QueueView>> {
    let done = keyed.completion(app, &auth.caller, StatusCode::OK, "queue", name);
    let queue = app
        .store
        .queue_set_state(&auth.caller.org, name, state, done)
        .await?;
    Ok(axum::Json(queue.into()))
}

pub async fn pause(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<QueueView>> {
    set_state(&app, &auth, &keyed, &name, QueueState::Paused).await
}

pub async fn resume(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<QueueView>> {
    set_state(&app, &auth, &keyed, &name, QueueState::Running).await
}

pub async fn purge(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
) -> ApiResult<axum::Json<PurgeView>> {
    let done = keyed.completion(&app, &auth.caller, StatusCode::OK, "queue", &name);
    let cancelled = app.store.queue_purge(&auth.caller.org, &name, done).await?;
    Ok(axum::Json(PurgeView { cancelled }))
}
