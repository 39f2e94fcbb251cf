//! `/v1/webhooks`: an organization's event webhooks (admin). Each receives
//! the events it names (`task.failed`, `job.run_failed`) as a signed `POST`,
//! delivered and retried by the dispatcher like a task.

use super::extract::{Json, ListParams};
use super::idempotency::Keyed;
use super::problem::{ApiResult, Problem};
use super::views;
use super::{Created, NoContent, location};
use crate::App;
use crate::auth::{Admin, Auth};
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use idem_api::{CreateWebhook, List, Webhook};
use idem_core::FieldErrors;
use idem_core::task::TargetSpec;
use std::sync::Arc;

pub async fn create(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Json(req): Json<CreateWebhook>,
) -> ApiResult<Created<Webhook>> {
    let mut errors = FieldErrors::new();
    // The URL is checked as a target's is: it is one.
    TargetSpec {
        url: req.url.clone(),
        ..TargetSpec::default()
    }
    .resolve("webhook", &mut errors);
    for e in &mut errors.0 {
        e.field = e.field.replacen("webhook.", "", 1);
    }
    app.options
        .target_policy
        .check_target_url("url", &req.url, &mut errors);
    let mut events = req.events.clone();
    events.sort();
    events.dedup();
    if events.is_empty() {
        errors.push("events", "name at least one of task.failed, job.run_failed");
    }
    if let Some(e) = events.iter().find(|e| !e.is_webhook_event()) {
        errors.push(
            "events",
            format!(
                "{} goes to a queue's or task's on_success callback; \
                 webhooks receive task.failed and job.run_failed",
                e.as_str()
            ),
        );
    }
    errors.into_result().map_err(Problem::fields)?;
    // The store fills in the new webhook's ID.
    let done = keyed.completion(&app, &auth.caller, StatusCode::CREATED, "webhook", "");
    let hook = app
        .store
        .webhook_create(&auth.caller.org, &req.url, &events, done)
        .await?;
    Ok(Created(
        location(&["webhooks", &hook.id]),
        views::webhook(hook),
    ))
}

pub async fn list(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<Webhook>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app
        .store
        .webhook_list(&auth.caller.org, &params.page)
        .await?;
    Ok(axum::Json(views::list(page, views::webhook)))
}

pub async fn get(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<Webhook>> {
    let hook = app.store.webhook_get(&auth.caller.org, &id).await?;
    Ok(axum::Json(views::webhook(hook)))
}

pub async fn delete(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path(id): Path<String>,
) -> ApiResult<NoContent> {
    app.store.webhook_delete(&auth.caller.org, &id).await?;
    Ok(NoContent)
}
