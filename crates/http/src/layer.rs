//! The tower layer: parse the key, fingerprint the request, take the lock,
//! run the handler once, and answer retries from the record.

use crate::fingerprint::{BodyError, Fingerprint, Version};
use crate::key::{IdempotencyKey, KeyError};
use crate::record::{Begin, BeginRequest, CompletedRecord, RecordStore, Scope, StoredResponse};
use async_trait::async_trait;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::request::Parts;
use http::{HeaderName, HeaderValue, Request, StatusCode, header};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::{Layer, Service};

/// `Idempotent-Replayed: true` marks an answer that repeats an earlier one.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// How the record's completion relates to the handler's effect. There is no
/// default: an application picks one with [`IdempotencyLayer::atomic`] or
/// [`IdempotencyLayer::non_atomic`], because only it knows whether its
/// handlers can share a transaction with the record store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The handler completes the record in the same transaction as its
    /// effect, using the [`IdempotencyContext`] in the request's
    /// extensions; the layer only releases the lock on failure. A crash can
    /// leave neither an effect without its record nor a record without its
    /// effect.
    Atomic,
    /// The layer stores the handler's successful response after it returns.
    /// A crash between the handler's effect and that write leaves the effect
    /// unrecorded, and a retry repeats it: use only where the handler cannot
    /// share a transaction with the record store.
    NonAtomic,
}

/// Settings of the layer.
#[derive(Debug, Clone)]
pub struct Config {
    /// Refuse keyable requests that carry no key (`IDEMPOTENCY_KEY_MISSING`).
    pub required: bool,
    /// How long an in-progress lock outlives a crashed holder.
    pub lock_for: Duration,
    /// How long completed records are kept.
    pub retain_for: Duration,
    /// Largest body the layer reads to fingerprint.
    pub max_body_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            required: false,
            lock_for: Duration::from_secs(60),
            retain_for: Duration::from_secs(24 * 3600),
            max_body_bytes: 1 << 20,
        }
    }
}

/// Handed to the handler (as a request extension) when its request holds a
/// key's lock; in the atomic mode the handler completes the record with it.
#[derive(Debug, Clone)]
pub struct IdempotencyContext {
    /// Whose key.
    pub scope: Scope,
    /// The key.
    pub key: String,
    /// Proof of holding the lock.
    pub token: String,
    /// The request's fingerprint.
    pub fingerprint: Fingerprint,
    /// The layer took no lock (a route of [`IdempotencyLayer::claiming`]):
    /// the handler's write claims the key in its own transaction, under
    /// `token`, and tells the layer what it found with a [`Claim`] in its
    /// response.
    pub claim: bool,
}

/// What the write of a claiming route ([`IdempotencyLayer::claiming`])
/// found of its key; the handler puts it in its response's extensions.
#[derive(Debug, Clone)]
pub enum Claim {
    /// A live record of another request held the key ([`Begin::InProgress`]
    /// or [`Begin::Completed`]) and nothing was written: the layer answers
    /// as it would have, had it found that record before the handler ran
    /// (a replay, 422 or 409), whatever the handler's own response.
    Held(Box<Begin>),
    /// The write saw the key free: the handler's response stands, and a
    /// failure left no record.
    Free,
}

/// Why the layer answered instead of the handler.
#[derive(Debug)]
pub enum Rejection {
    /// 400 `IDEMPOTENCY_KEY_INVALID`.
    KeyInvalid(KeyError),
    /// 400 `IDEMPOTENCY_KEY_MISSING`.
    KeyMissing,
    /// 400 `INVALID_ARGUMENT`: the body cannot be fingerprinted (malformed
    /// JSON, duplicate object keys, a broken multipart body).
    InvalidBody(BodyError),
    /// 413 `PAYLOAD_TOO_LARGE`.
    TooLarge(usize),
    /// 422 `IDEMPOTENCY_KEY_MISMATCH`: the key was used for another request.
    Mismatch(Vec<&'static str>),
    /// 409 `IDEMPOTENCY_KEY_IN_PROGRESS`, with `Retry-After: 1`.
    InProgress,
    /// 503 `UNAVAILABLE`: the record store failed.
    Unavailable(String),
    /// 500 `INTERNAL`: the handler panicked (a bug); its lock is released,
    /// so a retry runs afresh.
    Panicked,
}

impl Rejection {
    /// Status, problem type and a sentence of detail.
    pub fn describe(&self) -> (StatusCode, &'static str, String) {
        match self {
            Rejection::KeyInvalid(e) => (
                StatusCode::BAD_REQUEST,
                "IDEMPOTENCY_KEY_INVALID",
                format!("invalid Idempotency-Key: {e}"),
            ),
            Rejection::KeyMissing => (
                StatusCode::BAD_REQUEST,
                "IDEMPOTENCY_KEY_MISSING",
                "this operation requires an Idempotency-Key header".into(),
            ),
            Rejection::InvalidBody(e) => (
                StatusCode::BAD_REQUEST,
                "INVALID_ARGUMENT",
                format!("invalid request body: {e}"),
            ),
            Rejection::TooLarge(limit) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                format!("request body exceeds the limit of {limit} bytes"),
            ),
            Rejection::Mismatch(differs) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "IDEMPOTENCY_KEY_MISMATCH",
                format!(
                    "this Idempotency-Key was used for a different request ({} differ)",
                    differs.join(", ")
                ),
            ),
            Rejection::InProgress => (
                StatusCode::CONFLICT,
                "IDEMPOTENCY_KEY_IN_PROGRESS",
                "a request with this Idempotency-Key is still running; retry shortly".into(),
            ),
            Rejection::Unavailable(msg) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "UNAVAILABLE",
                format!("idempotency records unavailable: {msg}"),
            ),
            Rejection::Panicked => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "the request failed on an internal error".into(),
            ),
        }
    }

    /// `extensions` of the problem document, where the code defines one.
    pub fn extensions(&self) -> Option<serde_json::Value> {
        match self {
            Rejection::Mismatch(differs) => Some(serde_json::json!({
                "idempotency": {"differs": differs}
            })),
            _ => None,
        }
    }

    /// A plain RFC 9457 rendering, the default.
    pub fn into_problem(self) -> Response {
        let (status, code, detail) = self.describe();
        let mut body = serde_json::json!({
            "type": code,
            "title": status.canonical_reason().unwrap_or("Error"),
            "status": status.as_u16(),
            "detail": detail,
        });
        if let Some(ext) = self.extensions() {
            body["extensions"] = ext;
        }
        let mut r = (status, body.to_string()).into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if matches!(self, Rejection::InProgress | Rejection::Unavailable(_)) {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

/// What a failed handler task said: a panic's message, or why it ended.
fn join_error_message(e: tokio::task::JoinError) -> String {
    if e.is_panic() {
        panic_message(&*e.into_panic())
    } else {
        e.to_string()
    }
}

/// A panic's message, when it was given one (`panic!` with a literal or a
/// formatted string); empty otherwise.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Builds the answer to a replayed request from its record.
#[async_trait]
pub trait Replayer: Send + Sync + 'static {
    /// The response to send again; the layer adds `Idempotent-Replayed`.
    async fn replay(&self, request: &Parts, record: &CompletedRecord) -> Response;
}

/// Replays the stored response (the non-atomic mode's natural partner).
pub struct StoredReplayer;

#[async_trait]
impl Replayer for StoredReplayer {
    async fn replay(&self, _: &Parts, record: &CompletedRecord) -> Response {
        let Some(stored) = &record.response else {
            return StatusCode::from_u16(record.status)
                .unwrap_or(StatusCode::OK)
                .into_response();
        };
        let mut r = Response::new(Body::from(stored.body.clone()));
        *r.status_mut() = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
        for (k, v) in &stored.headers {
            if let (Ok(k), Ok(v)) = (HeaderName::try_from(k.as_str()), HeaderValue::from_str(v)) {
                r.headers_mut().insert(k, v);
            }
        }
        r
    }
}

type ScopeFn = dyn Fn(&Parts) -> Option<Scope> + Send + Sync;
type RenderFn = dyn Fn(Rejection) -> Response + Send + Sync;

struct Shared {
    store: Arc<dyn RecordStore>,
    replayer: Arc<dyn Replayer>,
    mode: Mode,
    config: Config,
    scope: Box<ScopeFn>,
    render: Box<RenderFn>,
}

/// Applies the Idempotency-Key protocol to the services it wraps. Wrap only
/// the operations that honour keys; on others the header is simply ignored
/// by not wrapping them.
#[derive(Clone)]
pub struct IdempotencyLayer {
    shared: Arc<Shared>,
    claim: bool,
}

impl IdempotencyLayer {
    /// The safe mode, [`Mode::Atomic`]: each handler completes the record in
    /// the transaction of its own effect, with the [`IdempotencyContext`] it
    /// finds in the request's extensions, so a crash can never separate the
    /// two. A replay answers what `replayer` builds from the record —
    /// typically the resource as it is now, re-read by the identity the
    /// handler recorded.
    ///
    /// `scope` names whose key a request uses (a request without one —
    /// typically unauthenticated — passes through untouched, for the handler
    /// to refuse).
    pub fn atomic(
        store: Arc<dyn RecordStore>,
        config: Config,
        scope: impl Fn(&Parts) -> Option<Scope> + Send + Sync + 'static,
        replayer: Arc<dyn Replayer>,
    ) -> Self {
        Self::with_mode(Mode::Atomic, store, config, scope, replayer)
    }

    /// [`Mode::NonAtomic`]: the layer stores the handler's successful
    /// response after the handler returns, and replays that stored copy. A
    /// crash between the handler's effect and that write lets a retry run the
    /// handler again; use it only for handlers that cannot share a
    /// transaction with the record store, and prefer [`Self::atomic`].
    pub fn non_atomic(
        store: Arc<dyn RecordStore>,
        config: Config,
        scope: impl Fn(&Parts) -> Option<Scope> + Send + Sync + 'static,
    ) -> Self {
        Self::with_mode(
            Mode::NonAtomic,
            store,
            config,
            scope,
            Arc::new(StoredReplayer),
        )
    }

    fn with_mode(
        mode: Mode,
        store: Arc<dyn RecordStore>,
        config: Config,
        scope: impl Fn(&Parts) -> Option<Scope> + Send + Sync + 'static,
        replayer: Arc<dyn Replayer>,
    ) -> Self {
        IdempotencyLayer {
            shared: Arc::new(Shared {
                store,
                replayer,
                mode,
                config,
                scope: Box::new(scope),
                render: Box::new(Rejection::into_problem),
            }),
            claim: false,
        }
    }

    /// The same layer for routes whose handler's write claims the key
    /// itself, in the transaction of its effect, instead of the layer taking
    /// a lock first: the record is then inserted with the effect, and a
    /// conflict on the key decides replay, mismatch or in-progress, so a
    /// keyed request costs the store no write and no round trip of its own.
    /// Atomic mode only. The handler finds `claim` set in the
    /// [`IdempotencyContext`] and answers with a [`Claim`] in its response's
    /// extensions; a failure without one (refused before its write looked
    /// at the key) is checked against [`RecordStore::peek`], so that a key
    /// in use answers as it would have on the locking path.
    pub fn claiming(&self) -> Self {
        assert_eq!(
            self.shared.mode,
            Mode::Atomic,
            "only a handler's own transaction can claim a key"
        );
        IdempotencyLayer {
            shared: self.shared.clone(),
            claim: true,
        }
    }

    /// Renders the layer's own refusals with `render`.
    pub fn with_renderer(
        self,
        render: impl Fn(Rejection) -> Response + Send + Sync + 'static,
    ) -> Self {
        self.map(|s| s.render = Box::new(render))
    }

    fn map(self, f: impl FnOnce(&mut Shared)) -> Self {
        let mut shared = Arc::try_unwrap(self.shared)
            .unwrap_or_else(|_| panic!("configure the layer before cloning it"));
        f(&mut shared);
        IdempotencyLayer {
            shared: Arc::new(shared),
            claim: self.claim,
        }
    }
}

impl<S> Layer<S> for IdempotencyLayer {
    type Service = IdempotencyService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        IdempotencyService {
            inner,
            shared: self.shared.clone(),
            claim: self.claim,
        }
    }
}

/// The service [`IdempotencyLayer`] produces.
#[derive(Clone)]
pub struct IdempotencyService<S> {
    inner: S,
    shared: Arc<Shared>,
    claim: bool,
}

impl<S> Service<Request<Body>> for IdempotencyService<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        // The ready clone serves this call; a fresh clone waits for the next.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let shared = self.shared.clone();
        let claim = self.claim;
        Box::pin(async move { Ok(handle(shared, claim, inner, req).await) })
    }
}

async fn handle<S>(shared: Arc<Shared>, claim: bool, inner: S, req: Request<Body>) -> Response
where
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    let reject = |r: Rejection| (shared.render)(r);
    let key = match IdempotencyKey::from_headers(req.headers()) {
        Err(e) => return reject(Rejection::KeyInvalid(e)),
        Ok(Some(k)) => k,
        Ok(None) if shared.config.required => return reject(Rejection::KeyMissing),
        Ok(None) => return call(inner, req).await,
    };
    let (parts, body) = req.into_parts();
    let Some(scope) = (shared.scope)(&parts) else {
        return call(inner, Request::from_parts(parts, body)).await;
    };
    let limit = shared.config.max_body_bytes;
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return reject(Rejection::TooLarge(limit));
    };
    let content_type = parts.headers.get(header::CONTENT_TYPE);
    let fingerprint = match Fingerprint::of_request_bytes(
        Version::CURRENT,
        &parts.method,
        &parts.uri,
        content_type,
        bytes.clone(),
    )
    .await
    {
        Ok(f) => f,
        Err(e) if e.is_invalid_body() => return reject(Rejection::InvalidBody(e)),
        Err(e) => return reject(Rejection::Unavailable(e.to_string())),
    };
    let token = if claim {
        uuid::Uuid::new_v4().simple().to_string()
    } else {
        let begin = shared
            .store
            .begin(BeginRequest {
                scope: scope.clone(),
                key: key.as_str().to_string(),
                fingerprint,
                lock_for: shared.config.lock_for,
                retain_for: shared.config.retain_for,
            })
            .await;
        match begin {
            Err(e) => return reject(Rejection::Unavailable(e.0)),
            Ok(Begin::Started { token }) => token,
            Ok(found) => {
                return settle(&shared, &parts, &bytes, found)
                    .await
                    .expect("a record holds the key");
            }
        }
    };
    let context = IdempotencyContext {
        scope: scope.clone(),
        key: key.as_str().to_string(),
        token: token.clone(),
        fingerprint,
        claim,
    };
    let mut parts = parts;
    parts.extensions.insert(context);
    // A claiming request may still be answered from a record, which needs
    // the request's head.
    let head = claim.then(|| parts.clone());
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    // A client that gives up must not cancel the work it started: the
    // handler runs to its end on its own task, and its outcome is recorded.
    // It keeps the request's span, so its log lines still name the request.
    let running = tokio::spawn(tracing::Instrument::instrument(
        async move { call(inner, request).await },
        tracing::Span::current(),
    ));
    let mut response = match running.await {
        Ok(response) => response,
        Err(e) => {
            tracing::error!(panic = %join_error_message(e), "the handler panicked");
            (shared.render)(Rejection::Panicked)
        }
    };
    if let Some(head) = head {
        let found = match response.extensions_mut().remove::<Claim>() {
            Some(Claim::Held(found)) => Some(*found),
            Some(Claim::Free) => None,
            None if response.status().is_success() => None,
            // Refused before its write looked at the key (a body that does
            // not validate, a role too weak): a record holding the key
            // answers as it would have had the layer looked first.
            None => match shared.store.peek(&scope, key.as_str()).await {
                Ok(found) => found,
                Err(e) => {
                    tracing::warn!(error = %e, "idempotency record not read");
                    None
                }
            },
        };
        return match found {
            Some(found) => settle(&shared, &head, &bytes, found)
                .await
                .unwrap_or(response),
            None => response,
        };
    }
    let store = shared.store.clone();
    if !response.status().is_success() {
        if let Err(e) = store.release(&scope, key.as_str(), &token).await {
            tracing_release_failure(&e);
        }
        return response;
    }
    if shared.mode == Mode::Atomic {
        return response;
    }
    let (head, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(_) => {
            let _ = store.release(&scope, key.as_str(), &token).await;
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    let kept = [header::CONTENT_TYPE, header::LOCATION];
    let completed = CompletedRecord {
        fingerprint,
        status: head.status.as_u16(),
        resource: None,
        completed_at: None,
        response: Some(StoredResponse {
            status: head.status.as_u16(),
            headers: kept
                .iter()
                .filter_map(|h| {
                    Some((
                        h.to_string(),
                        head.headers.get(h)?.to_str().ok()?.to_string(),
                    ))
                })
                .collect(),
            body: body.clone(),
        }),
    };
    if let Err(e) = store
        .complete(&scope, key.as_str(), &token, completed)
        .await
    {
        tracing_release_failure(&e);
    }
    Response::from_parts(head, Body::from(body))
}

/// The answer a record holding the key gives this request: a replay of a
/// completed one with the same fingerprint, 422 for another fingerprint,
/// 409 while in progress; `None` for [`Begin::Started`], which holds
/// nothing.
async fn settle(shared: &Shared, parts: &Parts, body: &Bytes, found: Begin) -> Option<Response> {
    let reject = |r: Rejection| (shared.render)(r);
    match found {
        Begin::Started { .. } => None,
        Begin::InProgress { fingerprint: held } => {
            let differs = compare(&held, parts, body).await;
            Some(reject(if differs.is_empty() {
                Rejection::InProgress
            } else {
                Rejection::Mismatch(differs)
            }))
        }
        Begin::Completed(record) => {
            let differs = compare(&record.fingerprint, parts, body).await;
            if !differs.is_empty() {
                return Some(reject(Rejection::Mismatch(differs)));
            }
            let mut response = shared.replayer.replay(parts, &record).await;
            if response.status().is_success() {
                response
                    .headers_mut()
                    .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
            }
            Some(response)
        }
    }
}

async fn call<S>(mut inner: S, req: Request<Body>) -> Response
where
    S: Service<Request<Body>, Response = Response, Error = Infallible>,
{
    match inner.call(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// What differs between a stored fingerprint and this request, computed
/// under the stored fingerprint's canonicalization version so that a
/// release that changes canonicalization cannot turn retries in flight
/// into mismatches.
async fn compare(stored: &Fingerprint, parts: &Parts, body: &Bytes) -> Vec<&'static str> {
    let Ok(version) = Version::try_from(stored.version) else {
        return Fingerprint::PARTS.to_vec();
    };
    match Fingerprint::of_request_bytes(
        version,
        &parts.method,
        &parts.uri,
        parts.headers.get(header::CONTENT_TYPE),
        body.clone(),
    )
    .await
    {
        Ok(now) => stored.differs(&now),
        Err(_) => vec!["body"],
    }
}

fn tracing_release_failure(e: &crate::record::StoreError) {
    // The lock expires on its own; a retry waits at most `lock_for`.
    tracing::warn!(error = %e, "idempotency record not updated");
}
