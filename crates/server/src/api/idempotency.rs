//! Idempotency-Key on Idem's own API (API.md §2), in the atomic mode of
//! `idem_http`: the layer takes the key's lock, each handler passes a
//! [`KeyCompletion`] to its store operation so the record completes in the
//! effect's transaction, and replays re-read the resource as it is now.
//! Task creates, the hot path, take no lock first: their write claims the
//! key with the effect ([`claim_failed`] tells the layer what it found).

use super::Created;
use super::location;
use super::problem::{ApiResult, Problem};
use super::views;
use crate::App;
use crate::auth::{Auth, Reader};
use async_trait::async_trait;
use axum::extract::{FromRequestParts, Path, State};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};
use idem_api::{IdempotencyKey, NewApiKey, Organization, ProblemCode, Resource};
use idem_core::tenancy::Role;
use idem_http::record::{Begin, BeginRequest, CompletedRecord, ResourceRef, StoreError};
use idem_http::{Claim, Fingerprint, IdempotencyContext, IdempotencyLayer, RecordStore, Rejection};
use idem_store::idempotency::KeyCompletion;
use idem_store::idempotency::{IdempotencyBegin, IdempotencyRecord, LockOutcome, RecordState};
use idem_store::{Caller, Error as StoreErr};
use serde::Serialize;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;

/// Settings of Idempotency-Key handling.
#[derive(Debug, Clone)]
pub struct IdempotencyOptions {
    /// Refuse x-idempotent operations without a key.
    pub required: bool,
    /// How long completed records are kept.
    pub ttl: std::time::Duration,
    /// How long a crashed request's lock lasts.
    pub lock: std::time::Duration,
}

impl Default for IdempotencyOptions {
    fn default() -> Self {
        IdempotencyOptions {
            required: false,
            ttl: std::time::Duration::from_secs(24 * 3600),
            lock: std::time::Duration::from_secs(60),
        }
    }
}

/// The layer for Idem's x-idempotent operations.
pub fn layer(app: &Arc<App>) -> IdempotencyLayer {
    let opts = &app.options.idempotency;
    let config = idem_http::Config {
        required: opts.required,
        lock_for: opts.lock,
        retain_for: opts.ttl,
        max_body_bytes: app.options.max_body_bytes,
    };
    let store = Arc::new(Records(app.clone()));
    IdempotencyLayer::atomic(
        store,
        config,
        |parts| {
            let caller = parts.extensions.get::<Caller>()?;
            Some(format!("{}/{}", caller.org, caller.principal))
        },
        Arc::new(Replays(app.clone())),
    )
    .with_renderer(render)
}

fn render(rejection: Rejection) -> Response {
    let outcome = match rejection {
        Rejection::Mismatch(_) => Some("mismatch"),
        Rejection::InProgress => Some("in_progress"),
        _ => None,
    };
    if let Some(outcome) = outcome {
        metrics::counter!("idem_idempotency_total", "outcome" => outcome).increment(1);
    }
    let (status, code, detail) = rejection.describe();
    let detail = match &rejection {
        // The cause is the store's own text: for the log, not the client.
        Rejection::Unavailable(cause) => {
            tracing::warn!(error = %cause, "idempotency records unavailable");
            "idempotency records are unreachable or busy; retry shortly".to_string()
        }
        _ => detail,
    };
    let mut problem = Problem::new(problem_code(code), detail).with_status(status);
    problem.extensions = rejection.extensions();
    if matches!(rejection, Rejection::InProgress | Rejection::Unavailable(_)) {
        problem.retry_after = Some(1);
    }
    problem.into_response()
}

/// The catalogue's entry for a code of `idem_http`'s; each of its codes has
/// one (a test checks).
fn problem_code(code: &str) -> ProblemCode {
    ProblemCode::parse(code).unwrap_or(ProblemCode::Internal)
}

fn split_scope(scope: &str) -> (&str, &str) {
    // Organization names cannot contain '/', so the first one splits.
    scope.split_once('/').unwrap_or((scope, ""))
}

/// `idem_http::RecordStore` over Idem's store.
struct Records(Arc<App>);

#[async_trait]
impl RecordStore for Records {
    async fn begin(&self, r: BeginRequest) -> Result<Begin, StoreError> {
        let (org, principal) = split_scope(&r.scope);
        let begun = self
            .0
            .store
            .idempotency_begin(&IdempotencyBegin {
                org: org.into(),
                principal: principal.into(),
                key: r.key.clone(),
                fingerprint: r.fingerprint.to_string(),
                lock_for: r.lock_for,
                retain_for: r.retain_for,
            })
            .await
            .map_err(|e| StoreError(e.to_string()))?;
        match begun {
            LockOutcome::Started(token) => Ok(Begin::Started { token }),
            LockOutcome::Existing(record) => found(record),
        }
    }

    async fn complete(
        &self,
        _: &str,
        _: &str,
        _: &str,
        _: CompletedRecord,
    ) -> Result<(), StoreError> {
        // Atomic mode: handlers complete records in their own transactions.
        Ok(())
    }

    async fn release(&self, scope: &str, key: &str, token: &str) -> Result<(), StoreError> {
        let (org, principal) = split_scope(scope);
        self.0
            .store
            .idempotency_release(org, principal, key, token)
            .await
            .map_err(|e| StoreError(e.to_string()))
    }

    async fn peek(&self, scope: &str, key: &str) -> Result<Option<Begin>, StoreError> {
        let (org, principal) = split_scope(scope);
        let record = self
            .0
            .store
            .idempotency_get(org, principal, key)
            .await
            .map_err(|e| StoreError(e.to_string()))?;
        record.map(found).transpose()
    }
}

/// What a live record holding a key tells the layer.
fn found(record: IdempotencyRecord) -> Result<Begin, StoreError> {
    let fingerprint: Fingerprint = record
        .fingerprint
        .parse()
        .map_err(|_| StoreError(format!("unreadable fingerprint of key '{}'", record.key)))?;
    Ok(match record.state {
        RecordState::InProgress => Begin::InProgress { fingerprint },
        RecordState::Completed => Begin::Completed(CompletedRecord {
            fingerprint,
            status: record.status.unwrap_or(200),
            resource: record
                .resource_kind
                .zip(record.resource_id)
                .map(|(kind, id)| ResourceRef { kind, id }),
            response: record.body.map(|body| idem_http::StoredResponse {
                status: record.status.unwrap_or(200),
                headers: vec![("content-type".into(), "application/json".into())],
                body: body.into(),
            }),
            completed_at: record.completed_at.map(Into::into),
        }),
    })
}

/// The answer of a write that claimed its key ([`KeyCompletion::claim`])
/// and failed: from the record that held the key, which the layer turns
/// into a replay, 422 or 409; or the failure itself, which then left no
/// record.
pub fn claim_failed(e: StoreErr) -> Response {
    let record = match e {
        StoreErr::KeyHeld(record) => *record,
        // A taken ID is found only once the key was seen free. Any other
        // failure the layer checks against the key's record.
        e @ StoreErr::TaskExists(_) => {
            let mut response = Problem::from(e).into_response();
            response.extensions_mut().insert(Claim::Free);
            return response;
        }
        e => return Problem::from(e).into_response(),
    };
    match found(record) {
        Ok(held) => {
            let mut response = StatusCode::CONFLICT.into_response();
            response
                .extensions_mut()
                .insert(Claim::Held(Box::new(held)));
            response
        }
        Err(e) => Problem::internal(e).into_response(),
    }
}

/// A handler's view of the key its request holds, if any.
pub struct Keyed(Option<IdempotencyContext>);

impl<S: Send + Sync> FromRequestParts<S> for Keyed {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Keyed(parts.extensions.get::<IdempotencyContext>().cloned()))
    }
}

impl Keyed {
    /// The completion to commit with the effect: answered `status`, about
    /// the resource `kind`/`id`.
    pub fn completion(
        &self,
        app: &App,
        caller: &Caller,
        status: StatusCode,
        kind: &'static str,
        id: impl Into<String>,
    ) -> Option<KeyCompletion> {
        let ctx = self.0.as_ref()?;
        Some(KeyCompletion {
            org: caller.org.clone(),
            principal: caller.principal.clone(),
            key: ctx.key.clone(),
            token: ctx.token.clone(),
            fingerprint: ctx.fingerprint.to_string(),
            status: status.as_u16(),
            resource_kind: kind,
            resource_id: id.into(),
            body: None,
            retain_for: app.options.idempotency.ttl,
            claim: ctx.claim,
        })
    }
}

/// Rebuilds a completed request's answer from the resource as it is now.
struct Replays(Arc<App>);

fn gone(kind: &str, id: &str) -> Response {
    Problem::new(
        ProblemCode::IdempotentResourceGone,
        format!(
            "the {} this key created or changed is gone",
            kind.replace('_', " ")
        ),
    )
    .with_extensions(json!({"idempotency": {"resource_kind": kind, "resource_id": id}}))
    .into_response()
}

fn answer<T: Serialize>(status: u16, loc: Option<String>, body: T) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    match loc {
        Some(l) if status == StatusCode::CREATED => Created(l, body).into_response(),
        Some(l) => {
            let mut r = (status, axum::Json(body)).into_response();
            if let Ok(v) = HeaderValue::from_str(&l) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            r
        }
        None => (status, axum::Json(body)).into_response(),
    }
}

#[async_trait]
impl idem_http::Replayer for Replays {
    async fn replay(&self, parts: &Parts, record: &CompletedRecord) -> Response {
        metrics::counter!("idem_idempotency_total", "outcome" => "replayed").increment(1);
        let app = &self.0;
        let Some(caller) = parts.extensions.get::<Caller>() else {
            return Problem::unauthenticated("no caller").into_response();
        };
        let Some(resource) = &record.resource else {
            return StatusCode::from_u16(record.status)
                .unwrap_or(StatusCode::OK)
                .into_response();
        };
        let (kind, id) = (resource.kind.as_str(), resource.id.as_str());
        let org = caller.org.as_str();
        let admin = caller.role >= Role::Admin;
        // A resource made after the record is not the one this request
        // made: it was deleted and made again under the same name. It is
        // answered as the gone resource it replaced.
        let ours = |created_at: jiff::Timestamp| match record.completed_at {
            Some(done) if std::time::SystemTime::from(created_at) > done => {
                Err(StoreErr::NotFound {
                    kind: "resource",
                    id: id.to_string(),
                })
            }
            _ => Ok(()),
        };
        let reread: Result<Response, StoreErr> = async {
            Ok(match kind {
                "queue" => {
                    let queue = app.store.queue_get(org, id).await?;
                    ours(queue.created_at)?;
                    match &record.response {
                        // A purge answers with its count, not the queue.
                        Some(stored) => (
                            StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK),
                            [(header::CONTENT_TYPE, "application/json")],
                            stored.body.clone(),
                        )
                            .into_response(),
                        None => {
                            let stats = app.store.queue_stats(org, &queue.name).await?;
                            answer(
                                record.status,
                                Some(location(&["queues", &queue.name])),
                                views::queue(queue, stats),
                            )
                        }
                    }
                }
                "task" => {
                    let (queue, task_id) = id.split_once('/').unwrap_or(("", id));
                    let task = app.store.task_get(org, queue, task_id).await?;
                    ours(task.created_at)?;
                    let now = app.clock.now();
                    let view = views::task_seen_by(task, now, caller);
                    // A create that waited answered by outcome; so does its
                    // replay (the same fingerprint means the same query),
                    // without waiting again.
                    let status = if waited(parts) {
                        if view.state.is_final() { 200 } else { 202 }
                    } else {
                        record.status
                    };
                    answer(
                        status,
                        Some(location(&["queues", queue, "tasks", task_id])),
                        view,
                    )
                }
                "task_batch" => {
                    let Some(stored) = &record.response else {
                        return Ok(gone(kind, id));
                    };
                    let ndjson = parts
                        .headers
                        .get(header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|v| v.starts_with(super::batch::NDJSON));
                    super::batch::replay(app, org, id, &stored.body, ndjson).await?
                }
                "job" => {
                    let job = app.store.job_get(org, id).await?;
                    ours(job.created_at)?;
                    answer(
                        record.status,
                        Some(location(&["jobs", &job.name])),
                        views::job(job, app.clock.now()),
                    )
                }
                "run" => {
                    let (job, run_id) = id.split_once('/').unwrap_or(("", id));
                    let run = app.store.job_run_get(org, job, run_id).await?;
                    ours(run.created_at)?;
                    answer(
                        record.status,
                        Some(location(&["jobs", job, "runs", run_id])),
                        views::run(run, app.clock.now()),
                    )
                }
                "principal" if admin => {
                    let p = app.store.principal_get(org, id).await?;
                    ours(p.created_at)?;
                    answer(
                        record.status,
                        Some(location(&["principals", &p.name])),
                        views::principal(p),
                    )
                }
                "api_key" if admin => {
                    let (principal, key_id) = id.split_once('/').unwrap_or(("", id));
                    let k = app.store.api_key_get(org, principal, key_id).await?;
                    // The key itself is kept with the record, for the
                    // record's lifetime only, so that a lost answer can be
                    // recovered with the same key and request.
                    let Some(secret) = stashed(record, "key") else {
                        return Ok(gone(kind, id));
                    };
                    answer(
                        record.status,
                        Some(location(&["principals", principal, "keys", &k.id])),
                        NewApiKey {
                            id: k.id,
                            key: secret,
                            principal: k.principal,
                            created_at: k.created_at,
                        },
                    )
                }
                "signing_secret" if admin => {
                    let secrets = app.store.signing_secret_list(org).await?;
                    match secrets.into_iter().find(|s| s.id == id) {
                        Some(s) => answer(
                            record.status,
                            Some(location(&["signing-secrets", &s.id])),
                            views::signing_secret(s),
                        ),
                        None => gone(kind, id),
                    }
                }
                "webhook" if admin => match app.store.webhook_get(org, id).await {
                    Ok(w) => answer(
                        record.status,
                        Some(location(&["webhooks", &w.id])),
                        views::webhook(w),
                    ),
                    Err(idem_store::Error::NotFound { .. }) => gone(kind, id),
                    Err(e) => return Err(e),
                },
                // Organizations are never deleted; their first admin key is
                // kept with the record, as an API key's is.
                "organization" if admin => match stashed(record, "admin_key") {
                    Some(admin_key) => answer(
                        record.status,
                        None,
                        Organization {
                            name: id.to_string(),
                            admin_key,
                        },
                    ),
                    None => gone(kind, id),
                },
                _ => gone(kind, id),
            })
        }
        .await;
        match reread {
            Ok(r) => r,
            Err(StoreErr::NotFound { .. }) => gone(kind, id),
            Err(e) => Problem::from(e).into_response(),
        }
    }
}

/// A secret a creation kept with its record (`{"<field>": "…"}`).
fn stashed(record: &CompletedRecord, field: &str) -> Option<String> {
    let body = &record.response.as_ref()?.body;
    let stash: serde_json::Value = serde_json::from_slice(body).ok()?;
    stash.get(field)?.as_str().map(str::to_string)
}

/// What a secret-bearing creation keeps with its Idempotency-Key record:
/// the secret, so that the same caller retrying the same request within
/// the record's lifetime gets it again. Nothing else reads it, and it goes
/// with the record when the record expires.
pub fn stash_secret(done: &mut Option<KeyCompletion>, field: &str, secret: &str) {
    if let Some(done) = done {
        done.body = Some(json!({ field: secret }).to_string());
    }
}

fn waited(parts: &Parts) -> bool {
    super::extract::query_param(parts.uri.query(), "wait_ms").is_some()
}

pub async fn get(
    State(app): State<Arc<App>>,
    auth: Auth<Reader>,
    Path(key): Path<String>,
) -> ApiResult<axum::Json<IdempotencyKey>> {
    let record = app
        .store
        .idempotency_get(&auth.caller.org, &auth.caller.principal, &key)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no record for Idempotency-Key '{key}'")))?;
    let fingerprint = record
        .fingerprint
        .parse::<Fingerprint>()
        .map(|f| f.digest().to_string())
        .unwrap_or(record.fingerprint);
    Ok(axum::Json(IdempotencyKey {
        key: record.key,
        state: record.state.as_str().into(),
        fingerprint,
        status: record.status,
        resource: record
            .resource_kind
            .zip(record.resource_id)
            .map(|(kind, id)| Resource { kind, id }),
        created_at: record.created_at,
        expires_at: record.expires_at,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rejection_has_its_code_in_the_catalogue() {
        for rejection in [
            Rejection::KeyInvalid(idem_http::KeyError::Empty),
            Rejection::KeyMissing,
            Rejection::TooLarge(1),
            Rejection::Mismatch(vec!["body"]),
            Rejection::InProgress,
            Rejection::Unavailable("down".into()),
            Rejection::Panicked,
        ] {
            let (status, code, _) = rejection.describe();
            let known = ProblemCode::parse(code).unwrap_or_else(|| panic!("{code}"));
            assert_eq!(known.status(), status, "{code}");
        }
    }

    #[tokio::test]
    async fn an_unavailable_store_s_own_words_stay_out_of_the_answer() {
        let cause = "connection to postgres://idem:hunter2@db refused";
        let response = render(Rejection::Unavailable(cause.into()));
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let body = String::from_utf8_lossy(&body);
        assert!(body.contains("UNAVAILABLE"), "{body}");
        assert!(
            !body.contains("hunter2") && !body.contains("postgres"),
            "{body}"
        );
    }
}
