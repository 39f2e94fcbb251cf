//! Bearer API keys: who is calling, and may they.
//!
//! Keys are looked up by their SHA-256. A valid key's caller is cached for a
//! short time so that a busy client costs no store read per request; the
//! cache is cleared on this node whenever a key is revoked or a role
//! changes, and other nodes see such a change within the cache lifetime.

use crate::App;
use crate::api::problem::{ApiResult, Problem};
use axum::extract::FromRequestParts;
use http::header;
use http::request::Parts;
use idem_core::tenancy::{PrincipalKind, Role, hash_api_key};
use idem_store::Caller;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a key's last use may go unrecorded; bounds the writes that
/// `last_used_at` costs.
const TOUCH_INTERVAL: Duration = Duration::from_secs(60);
/// Entries kept at most; the cache is cleared when full.
const MAX_ENTRIES: usize = 10_000;

struct Entry {
    caller: Caller,
    fetched: Instant,
    touched: Option<Instant>,
}

pub struct AuthCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, Entry>>,
}

impl AuthCache {
    pub fn new(ttl: Duration) -> Self {
        AuthCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets every cached caller; after revocations and role changes.
    pub fn clear(&self) {
        self.entries.lock().expect("auth cache").clear();
    }

    /// Resolves a bearer key, recording its use at most once a minute.
    pub(crate) async fn authenticate(&self, app: &Arc<App>, key: &str) -> ApiResult<Caller> {
        let hash = hash_api_key(key);
        let now = Instant::now();
        let cached = {
            let mut entries = self.entries.lock().expect("auth cache");
            match entries.get_mut(&hash) {
                Some(e) if now.duration_since(e.fetched) < self.ttl => {
                    let touch = e
                        .touched
                        .is_none_or(|t| now.duration_since(t) >= TOUCH_INTERVAL);
                    if touch {
                        e.touched = Some(now);
                    }
                    Some((e.caller.clone(), touch))
                }
                _ => None,
            }
        };
        let (caller, touch) = match cached {
            Some(hit) => hit,
            None => {
                let caller = app
                    .store
                    .api_key_authenticate(&hash)
                    .await?
                    .ok_or_else(|| Problem::unauthenticated("unknown or revoked API key"))?;
                let mut entries = self.entries.lock().expect("auth cache");
                if entries.len() >= MAX_ENTRIES {
                    entries.clear();
                }
                let touched = entries.get(&hash).and_then(|e| e.touched);
                let touch = touched.is_none_or(|t| now.duration_since(t) >= TOUCH_INTERVAL);
                entries.insert(
                    hash,
                    Entry {
                        caller: caller.clone(),
                        fetched: now,
                        touched: if touch { Some(now) } else { touched },
                    },
                );
                (caller, touch)
            }
        };
        if touch {
            let store = app.store.clone();
            let id = caller.key_id.clone();
            tokio::spawn(async move {
                if let Err(e) = store.api_key_touch(&id).await {
                    tracing::debug!(error = %e, "recording key use");
                }
            });
        }
        Ok(caller)
    }
}

/// The least role an operation needs.
pub trait MinRole: Send + Sync + 'static {
    const ROLE: Role;
}

pub struct Reader;
pub struct Writer;
pub struct Admin;

impl MinRole for Reader {
    const ROLE: Role = Role::Reader;
}
impl MinRole for Writer {
    const ROLE: Role = Role::Writer;
}
impl MinRole for Admin {
    const ROLE: Role = Role::Admin;
}

/// An authenticated caller holding at least role `R`. As an extractor it
/// runs before the body is read, so a weak role is told 403 before any
/// validation. [`authenticate`] must have run.
pub struct Auth<R: MinRole> {
    pub caller: Caller,
    _role: PhantomData<R>,
}

/// Middleware for every `/v1` route: resolves the bearer key to its caller
/// (401 otherwise) and leaves it in the request's extensions, so that the
/// Idempotency-Key layer knows whose key it sees and handlers need not look
/// the key up again. A path parameter the store cannot hold is then refused
/// here too, before any handler reads it.
pub async fn authenticate(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    params: Result<axum::extract::RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let key = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, key) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
        })
        .filter(|k| !k.is_empty());
    let Some(key) = key else {
        return Problem::unauthenticated("send Authorization: Bearer <API key>").into_response();
    };
    match app.auth.authenticate(&app, key).await {
        Ok(caller) => {
            if let Some(refused) = crate::api::refuse_path_params(&params) {
                return refused;
            }
            name_in_logs(&caller, &params);
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(p) => p.into_response(),
    }
}

/// Names the request's organization, queue and task in its span, so that
/// every line it logs carries them.
fn name_in_logs(
    caller: &Caller,
    params: &Result<axum::extract::RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
) {
    let span = tracing::Span::current();
    span.record("org", caller.org.as_str());
    if let Ok(params) = params {
        for (name, value) in params {
            if matches!(name, "queue" | "task_id") {
                span.record(name, value);
            }
        }
    }
}

/// Refuses a service principal an operation only a person may take, with
/// 403 `USER_IDENTITY_REQUIRED` whatever its role: a leaked or misused
/// service key must not be able to mint admins, change roles or replace
/// the secrets that targets trust.
pub fn require_person(caller: &Caller, what: &str) -> ApiResult<()> {
    match caller.kind {
        PrincipalKind::Person => Ok(()),
        PrincipalKind::Service => Err(Problem::user_identity_required(format!(
            "{what} must be done by a person; principal '{}' is a service",
            caller.principal
        ))),
    }
}

/// Marks a request for an operation the operation table marks
/// `person_only`; [`Auth`] then refuses a service principal once its role
/// has been checked, so a caller without the role is told about the role
/// first, as everywhere.
#[derive(Clone, Copy)]
pub struct PersonOnly;

/// Route layer of every `person_only` operation.
pub async fn mark_person_only(
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    req.extensions_mut().insert(PersonOnly);
    next.run(req).await
}

impl<R: MinRole> FromRequestParts<Arc<App>> for Auth<R> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &Arc<App>) -> ApiResult<Self> {
        let caller = parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| Problem::unauthenticated("send Authorization: Bearer <API key>"))?;
        if caller.role < R::ROLE {
            return Err(Problem::permission_denied(format!(
                "this operation needs the {} role; principal '{}' has {}",
                R::ROLE.as_str(),
                caller.principal,
                caller.role.as_str()
            )));
        }
        if parts.extensions.get::<PersonOnly>().is_some() {
            require_person(&caller, "this operation")?;
        }
        Ok(Auth {
            caller,
            _role: PhantomData,
        })
    }
}
