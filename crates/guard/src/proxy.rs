//! `idem proxy`: a reverse proxy that puts a guard in front of a service
//! that cannot deduplicate on its own.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::request::Parts;
use http::{Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::guard::{Attempt, Guard};
use crate::key::{IDEMPOTENCY_KEY, IdentitySource, KeyConfig, RunKey, Scope, inject_run_key_json};
use crate::oidc::{OidcVerifier, VerifiedToken};
use crate::response;
use crate::signature::{DEFAULT_TOLERANCE, SigningSecret, check_signature_head, read_body};
use crate::store::{Claim, ClaimOutcome, GuardStore, HandlerOutcome, StoreError};
use crate::upstream_auth::{Credentials, UpstreamAuth, UpstreamAuthError};

/// The fencing number of the claim, sent upstream so that its own store can
/// refuse writes from an attempt older than one it has seen.
pub const IDEM_FENCE: HeaderName = HeaderName::from_static("idem-fence");

/// How long the upstream is given by default: the longest attempt deadline
/// Idem, Cloud Tasks or Cloud Scheduler sets, so that no sender is still
/// waiting for an answer the proxy has given up on.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Everything `idem proxy` is configured with.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Base URL requests are forwarded to; the request path is appended to
    /// its path, and the request query replaces its query.
    pub upstream: reqwest::Url,
    /// Where claims are kept (see [`crate::open_store`]).
    pub store: Arc<dyn GuardStore>,
    /// When non-empty, a valid signature by one of these is mandatory.
    pub signing_secrets: Vec<SigningSecret>,
    /// When set, a valid OIDC bearer token of its issuer is mandatory (and
    /// a signature too when [`ProxyConfig::signing_secrets`] are given).
    pub oidc: Option<OidcVerifier>,
    /// Lets an [`ProxyConfig::oidc`] verifier that accepts every subject of
    /// its issuer start: an issuer such as Google's or a shared Idem signs
    /// tokens for many senders, any of which could then reach the upstream.
    pub oidc_any_subject: bool,
    /// Lets the proxy start with no way to authenticate senders (no signing
    /// secret, no OIDC issuer). Anyone who can reach it can then make the upstream run a
    /// new key's work: meant for trying the proxy out, never for a network
    /// that others share.
    pub insecure_no_auth: bool,
    /// How long a claim survives a proxy that died. While the upstream
    /// works, the proxy renews the lease every `lease / 3`, so this does not
    /// bound the upstream's time; it is how long a run stays blocked after
    /// the proxy holding it stopped (a crash, a lost network).
    pub lease: Duration,
    /// How long the upstream is given to answer, body included; past it
    /// the proxy answers 504 and releases the run.
    pub upstream_timeout: Duration,
    /// How long a record is honoured.
    pub retention: Duration,
    /// Headers carrying a delivery's identity (such as `X-Idempotency-Key`),
    /// tried in order before `Idempotency-Key` and the Cloud Scheduler and
    /// Cloud Tasks headers.
    pub identity_headers: Vec<HeaderName>,
    /// What joins the run key besides the identity (project, region,
    /// tenant): headers, path segments, query parameters.
    pub scopes: Vec<Scope>,
    /// When set, the run key is also added to a JSON object body at this
    /// dotted path ([`crate::key::inject_run_key_json`]), for upstreams
    /// that read only their payload; a body that cannot take it without
    /// losing what the sender wrote is refused with 400.
    pub run_key_json_field: Option<String>,
    /// Largest request body accepted (413 above it).
    pub max_body_bytes: usize,
    /// How often expired records are swept.
    pub sweep_interval: Duration,
    /// Header-read and idle timeouts of connections, and how many there may
    /// be at once.
    pub connections: idem_edge::Limits,
    /// Longest a sender may take to send a request's body (408 after it);
    /// the upstream's own time is bounded by
    /// [`ProxyConfig::upstream_timeout`].
    pub request_timeout: Duration,
    /// What the upstream is sent in place of the sender's credential.
    pub upstream_auth: UpstreamAuth,
    /// Refuses (401) a signed delivery without an `Idem-Target-Signature`
    /// of its method, path and query; without it the header is checked
    /// when present.
    pub require_target_signature: bool,
    /// Carries trace context across the proxy when spans are exported:
    /// each request's span continues the sender's trace, and the upstream
    /// is sent the `traceparent` of the proxy's upstream call. Without it
    /// the sender's `traceparent` goes upstream unchanged.
    pub tracing: Option<Arc<dyn ProxyTracing>>,
}

/// Trace context across the proxy, from the binary that exports spans (the
/// guard depends on no tracing backend).
pub trait ProxyTracing: Send + Sync + std::fmt::Debug {
    /// Makes `span`, not yet entered, continue the trace `headers` carry
    /// (or start one).
    fn continue_from(&self, span: &tracing::Span, headers: &HeaderMap);
    /// Sets the `traceparent` and `tracestate` of `headers` to `span`'s.
    fn inject(&self, span: &tracing::Span, headers: &mut HeaderMap);
}

impl ProxyConfig {
    /// Defaults of `idem proxy`: 5-minute lease, 30 minutes for the
    /// upstream (the longest attempt deadline Idem, Cloud Tasks or Cloud
    /// Scheduler sets), 24-hour retention, no scope, 10 MiB bodies, a sweep
    /// every minute. No signing secret is set,
    /// and [`serve`] refuses to start until one is (or until
    /// [`ProxyConfig::insecure_no_auth`] says to accept anyone).
    pub fn new(upstream: reqwest::Url, store: Arc<dyn GuardStore>) -> Self {
        Self {
            upstream,
            store,
            signing_secrets: Vec::new(),
            oidc: None,
            oidc_any_subject: false,
            insecure_no_auth: false,
            lease: Duration::from_secs(5 * 60),
            upstream_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            retention: Duration::from_secs(24 * 60 * 60),
            identity_headers: Vec::new(),
            scopes: Vec::new(),
            run_key_json_field: None,
            max_body_bytes: crate::signature::DEFAULT_MAX_BODY_BYTES,
            sweep_interval: Duration::from_secs(60),
            connections: idem_edge::Limits::default(),
            request_timeout: Duration::from_secs(60),
            upstream_auth: UpstreamAuth::default(),
            require_target_signature: false,
            tracing: None,
        }
    }
}

impl ProxyConfig {
    /// Every check of the configuration that needs no store or socket.
    /// [`serve`] runs it first; a command line can run it before opening
    /// anything.
    pub fn check(&self) -> Result<(), ProxyError> {
        if let Some(path) = &self.run_key_json_field
            && !crate::key::valid_json_path(path)
        {
            return Err(ProxyError::InvalidJsonPath(path.clone()));
        }
        self.upstream_auth.check()?;
        self.check_authentication()
    }

    /// Whether senders are authenticated as the proxy requires: a signing
    /// secret (and then no unsigned key parts), or an explicit
    /// [`ProxyConfig::insecure_no_auth`].
    pub fn check_authentication(&self) -> Result<(), ProxyError> {
        if let Some(oidc) = &self.oidc
            && !oidc.narrows_senders()
            && !self.oidc_any_subject
        {
            return Err(ProxyError::OidcAnySubject);
        }
        if self.signing_secrets.is_empty() {
            return match self.insecure_no_auth || self.oidc.is_some() {
                true => Ok(()),
                false => Err(ProxyError::NoAuthentication),
            };
        }
        if self.identity_headers.is_empty() && self.scopes.is_empty() {
            Ok(())
        } else {
            Err(ProxyError::UnsignedKeyParts)
        }
    }
}

/// Why the proxy could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// `run_key_json_field` is not a dotted path of non-empty members.
    #[error(
        "--run-key-json-field {0:?} must be a dotted path of member names (argument.idempotency_key)"
    )]
    InvalidJsonPath(String),
    /// The upstream URL is not an http(s) URL that paths can be appended to.
    #[error("upstream {0:?} must be an http:// or https:// URL")]
    InvalidUpstream(String),
    /// Identity headers or scopes were configured together with signing
    /// secrets. A signed message is keyed by its signed `webhook-id` alone;
    /// unsigned parts of the request cannot be allowed to change its key.
    #[error(
        "identity headers and scopes (--identity-header, --scope-*) cannot be combined with \
         --signing-secret: a signed message is keyed by its signed webhook-id alone, and \
         unsigned headers, path or query must not give it a second run"
    )]
    UnsignedKeyParts,
    /// No way to authenticate senders was configured, and running without
    /// one was not asked for.
    #[error(
        "senders cannot be authenticated: give a signing secret \
         (--signing-secret whsec_…) or an OIDC issuer (--oidc-issuer URL \
         --oidc-audience AUD), or start with --insecure-no-auth to accept \
         requests from anyone who can reach the proxy"
    )]
    NoAuthentication,
    /// An OIDC issuer was given without saying whose tokens it accepts.
    #[error(
        "--oidc-issuer accepts every subject of the issuer: name the senders with \
         --oidc-subject (Idem's are org/<organization>) or --oidc-email, or give \
         --oidc-any-subject to accept any token the issuer signs for the audience"
    )]
    OidcAnySubject,
    /// The HTTP client could not be built.
    #[error("building the upstream client: {0}")]
    Client(#[from] reqwest::Error),
    /// Serving failed.
    #[error("serving: {0}")]
    Io(#[from] std::io::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The upstream credentials cannot be used.
    #[error(transparent)]
    UpstreamAuth(#[from] UpstreamAuthError),
}

struct ProxyState {
    guard: Guard,
    client: reqwest::Client,
    upstream: reqwest::Url,
    secrets: Vec<SigningSecret>,
    oidc: Option<OidcVerifier>,
    run_key_json_field: Option<String>,
    max_body_bytes: usize,
    upstream_timeout: Duration,
    request_timeout: Duration,
    credentials: Credentials,
    require_target_signature: bool,
    tracing: Option<Arc<dyn ProxyTracing>>,
    /// Never sent on: `serve` waits for every clone of the state (the
    /// router's, and each forwarding task's) to be dropped.
    _in_flight: mpsc::Sender<()>,
}

/// Serves the proxy on `listener` until `shutdown` completes, then waits for
/// attempts already forwarded to finish and be recorded.
pub async fn serve(
    config: ProxyConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ProxyError> {
    if !matches!(config.upstream.scheme(), "http" | "https") || config.upstream.cannot_be_a_base() {
        return Err(ProxyError::InvalidUpstream(config.upstream.to_string()));
    }
    config.check()?;
    if config.signing_secrets.is_empty() && config.oidc.is_none() {
        tracing::warn!(
            "INSECURE: no signing secret; anyone who can reach this proxy can make the \
             upstream run work under a key of their choosing"
        );
    }
    if config.oidc.as_ref().is_some_and(|o| !o.narrows_senders()) {
        tracing::warn!(
            "every subject of the OIDC issuer is accepted (--oidc-any-subject): anyone the \
             issuer signs a token for with this audience can reach the upstream"
        );
    }
    let client = reqwest::Client::builder()
        // A redirect is the upstream's answer, to be passed back; following
        // it would re-send a non-idempotent request elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let credentials = Credentials::load(config.upstream_auth)?;
    let keys = key_config(&config.identity_headers, &config.scopes);
    let guard = Guard::new(Arc::clone(&config.store))
        .with_keys(keys)
        .with_lease(config.lease)
        .with_retention(config.retention);
    let (in_flight, mut all_done) = mpsc::channel::<()>(1);
    let state = Arc::new(ProxyState {
        guard: guard.clone(),
        client,
        upstream: config.upstream,
        secrets: config.signing_secrets,
        oidc: config.oidc,
        run_key_json_field: config.run_key_json_field,
        max_body_bytes: config.max_body_bytes,
        upstream_timeout: config.upstream_timeout,
        request_timeout: config.request_timeout,
        credentials,
        require_target_signature: config.require_target_signature,
        tracing: config.tracing,
        _in_flight: in_flight,
    });
    let sweeper = tokio::spawn({
        let guard = guard.clone();
        let every = config.sweep_interval;
        async move { guard.run_sweeper(every, 1000).await }
    });
    let app = Router::new().fallback(handle).with_state(state);
    let served = idem_edge::serve(listener, app, config.connections, shutdown).await;
    sweeper.abort();
    // The router (and with it the last sender outside forwarding tasks) is
    // gone once serving returns, so this ends when every attempt is recorded.
    let _ = all_done.recv().await;
    served?;
    Ok(())
}

const SIGNED_ID: &str = "Idempotency-Key differs from the signed Webhook-Id";
const TOKEN_RUN: &str = "Idempotency-Key differs from the ID token's idem_run";

/// The run key of a request whose run is named by what authenticated it:
/// the signed `webhook-id` of a verified message, or the `idem_run` of a
/// verified Idem token, whatever unsigned headers say. A sender that also
/// sends `Idempotency-Key` (Idem sends its run key as both) must send the
/// same value: a different one marks a captured delivery replayed under a
/// new key, and is refused (with `differs`) rather than silently keyed by
/// the authenticated ID.
fn named_run_key(
    headers: &HeaderMap,
    id: &str,
    differs: &'static str,
) -> Result<RunKey, &'static str> {
    let mut keys = headers.get_all(IDEMPOTENCY_KEY).iter();
    match (keys.next(), keys.next()) {
        (None, _) => {}
        (Some(key), None) if key.as_bytes().trim_ascii() == id.as_bytes() => {}
        _ => return Err(differs),
    }
    Ok(RunKey::of_signed_message(id.as_bytes()))
}

/// The identity headers first, then the library's default sources; every
/// scope in order.
fn key_config(identity_headers: &[HeaderName], scopes: &[Scope]) -> KeyConfig {
    let defaults = [
        IdentitySource::IdempotencyKey,
        IdentitySource::CloudScheduler,
        IdentitySource::CloudTasks,
    ];
    let sources = identity_headers
        .iter()
        .cloned()
        .map(IdentitySource::Header)
        .chain(defaults)
        .collect();
    scopes.iter().cloned().fold(
        KeyConfig::new().with_sources(sources),
        KeyConfig::with_scope,
    )
}

/// Headers that describe one connection, not the message (RFC 9110 7.6.1),
/// plus those the client recomputes.
fn is_hop_by_hop(name: &HeaderName, connection_listed: &[HeaderName]) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    ) || connection_listed.contains(name)
}

fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let listed: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if !is_hop_by_hop(name, &listed) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

fn upstream_url(base: &reqwest::Url, parts: &Parts) -> reqwest::Url {
    let mut url = base.clone();
    let path = format!("{}{}", base.path().trim_end_matches('/'), parts.uri.path());
    url.set_path(&path);
    url.set_query(parts.uri.query());
    url
}

async fn handle(State(state): State<Arc<ProxyState>>, request: Request) -> Response<Body> {
    let path = request.uri().path().to_owned();
    // Every line logged for the request, and its trace's spans (claim,
    // upstream, finish), are under this one.
    let span = tracing::info_span!(
        "proxy",
        otel.kind = "server",
        http.request.method = %request.method(),
        url.path = %path,
        trace_id = tracing::field::Empty,
        span_id = tracing::field::Empty,
    );
    if let Some(tracing) = &state.tracing {
        tracing.continue_from(&span, request.headers());
    }
    response::stamped(&path, respond(state, request).instrument(span).await)
}

async fn respond(state: Arc<ProxyState>, request: Request) -> Response<Body> {
    let (parts, body) = request.into_parts();
    // The token first: it is checked from the headers alone, so a request
    // without one costs no body read, signature or claim.
    let token = match &state.oidc {
        Some(oidc) => match oidc.verify(&parts.headers).await {
            Ok(token) => Some(token),
            Err(error) => return error.response(),
        },
        None => None,
    };
    if state.secrets.is_empty() {
        let key = match token.as_ref().and_then(|t| t.idem_run.as_deref()) {
            // An Idem token names its run, as a signature does: the key is
            // derived as a signed message's, so a delivery has one guard key
            // however it is authenticated.
            Some(run) => match named_run_key(&parts.headers, run, TOKEN_RUN) {
                Ok(key) => key,
                Err(detail) => return response::unauthenticated(detail),
            },
            None => match state.guard.run_key(&parts) {
                Ok(key) => key,
                Err(error) => return response::missing_identity(&error.to_string()),
            },
        };
        if let Err(response) = bind_token(&state, token.as_ref(), &key).await {
            return response;
        }
        let body = match read_body_in_time(&state, body).await {
            Ok(body) => body,
            Err(response) => return response,
        };
        return run(state, parts, body, key).await;
    }
    // The headers are checked before the body is read: a request that
    // cannot be validly signed costs neither the read nor an HMAC.
    let head = match check_signature_head(&parts.headers, jiff::Timestamp::now(), DEFAULT_TOLERANCE)
    {
        Ok(head) => head,
        Err(error) => return response::unauthenticated(&error.to_string()),
    };
    let body = match read_body_in_time(&state, body).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    if let Err(error) = head.verify_body(&state.secrets, &body) {
        return response::unauthenticated(&error.to_string());
    }
    if let Err(error) = head.verify_target(
        &state.secrets,
        &parts,
        &body,
        state.require_target_signature,
    ) {
        return response::unauthenticated(&error.to_string());
    }
    let key = match named_run_key(&parts.headers, head.id(), SIGNED_ID) {
        Ok(key) => key,
        Err(detail) => return response::unauthenticated(detail),
    };
    if let Some(run) = token.as_ref().and_then(|t| t.idem_run.as_deref())
        && run != head.id()
    {
        return response::unauthenticated(
            "the ID token's idem_run differs from the signed Webhook-Id",
        );
    }
    if let Err(response) = bind_token(&state, token.as_ref(), &key).await {
        return response;
    }
    run(state, parts, body, key).await
}

/// A token that names no run (`idem_run`) opens the first run it is sent
/// with, and no other while it is accepted: a captured token sent again
/// under a new key is refused, as a signature sent with another message
/// would be. Idem's tokens name their run and need no binding.
async fn bind_token(
    state: &ProxyState,
    token: Option<&VerifiedToken>,
    key: &RunKey,
) -> Result<(), Response<Body>> {
    let (Some(token), Some(oidc)) = (token, &state.oidc) else {
        return Ok(());
    };
    if token.idem_run.is_some() {
        return Ok(());
    }
    // Until the verifier stops accepting the token, its leeway included;
    // the floor keeps a token at its very edge bound for a moment at least.
    let accepted_until = token.expires_at + oidc.leeway();
    let ttl = Duration::try_from(jiff::Timestamp::now().duration_until(accepted_until))
        .unwrap_or_default()
        .max(Duration::from_secs(1));
    match state
        .guard
        .store()
        .bind_token(&token.digest, key, ttl)
        .await
    {
        Ok(bound) if &bound == key => Ok(()),
        Ok(_) => Err(response::unauthenticated(
            "this ID token already opened another run: a token without idem_run \
             opens one run, until it expires",
        )),
        Err(error) => {
            tracing::error!(run_key = %key, %error, "guard store unavailable");
            Err(response::store_unavailable(
                "the guard store is unavailable",
            ))
        }
    }
}

/// The body within the size limit and the request timeout: a sender that
/// trickles its body would otherwise hold the connection for as long as it
/// likes.
async fn read_body_in_time(state: &ProxyState, body: Body) -> Result<Bytes, Response<Body>> {
    match tokio::time::timeout(state.request_timeout, read_body(body, state.max_body_bytes)).await {
        Ok(read) => read,
        Err(_) => Err(response::problem(
            StatusCode::REQUEST_TIMEOUT,
            "REQUEST_TIMEOUT",
            &format!(
                "the request body did not arrive within {} ms",
                state.request_timeout.as_millis()
            ),
        )),
    }
}

/// Claims `key` and forwards the request under it.
async fn run(state: Arc<ProxyState>, parts: Parts, body: Bytes, key: RunKey) -> Response<Body> {
    // Checked before the claim: a body that cannot carry the key is the
    // sender's error, and must not hold the run while it is answered.
    let body = match &state.run_key_json_field {
        Some(field) => match inject_run_key_json(&body, field, &key) {
            Ok(body) => Bytes::from(body),
            Err(error) => {
                return response::problem(
                    StatusCode::BAD_REQUEST,
                    "INVALID_ARGUMENT",
                    &error.to_string(),
                );
            }
        },
        None => body,
    };
    let claimed_at = tokio::time::Instant::now();
    let claim = match state
        .guard
        .claim(&key)
        .instrument(tracing::info_span!("claim"))
        .await
    {
        Ok(ClaimOutcome::Claimed(claim)) => claim,
        Ok(ClaimOutcome::Completed) => return response::duplicate(&key),
        Ok(ClaimOutcome::InProgress) => return response::in_progress(&key),
        Err(error) => {
            tracing::error!(run_key = %key, %error, "guard store unavailable");
            return response::store_unavailable("the guard store is unavailable");
        }
    };
    // The attempt runs in its own task: a sender that gives up must not
    // cancel work it already claimed, or the claim would sit until its lease
    // ran out and the upstream could be left half-done.
    let work = forward(Arc::clone(&state), parts, body, claim.clone());
    let answer = state
        .guard
        .run_claimed(
            claim,
            claimed_at,
            work,
            |answer: &Result<Upstream, StatusCode>| match answer {
                Ok(upstream) if upstream.status.is_success() => HandlerOutcome::Success,
                _ => HandlerOutcome::Failure,
            },
        )
        .await;
    match answer {
        Attempt::Done(Ok(upstream)) => {
            let mut response = Response::new(Body::from(upstream.body));
            *response.status_mut() = upstream.status;
            *response.headers_mut() = upstream.headers;
            response
        }
        Attempt::Done(Err(status)) => response::problem(
            status,
            "UPSTREAM_UNAVAILABLE",
            "the upstream gave no answer; the run was released",
        ),
        Attempt::Panicked => response::internal("forwarding failed; the run was released"),
        Attempt::LeaseLost(lost) => response::lease_lost(&key, lost),
    }
}

struct Upstream {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

/// Forwards the request and reads the whole answer, so that the outcome is
/// recorded only once the upstream is done.
async fn forward(
    state: Arc<ProxyState>,
    parts: Parts,
    body: Bytes,
    claim: Claim,
) -> Result<Upstream, StatusCode> {
    let mut headers = end_to_end(&parts.headers);
    state.credentials.apply(&mut headers);
    // The downstream sees the same run key the guard used, so it can
    // deduplicate too; the sender's own key was hashed into it.
    let key = HeaderValue::from_str(claim.key.as_str())
        .unwrap_or_else(|_| unreachable!("run keys are hex"));
    headers.insert(IDEMPOTENCY_KEY, key);
    headers.insert(IDEM_FENCE, HeaderValue::from(claim.fence.0));
    let url = upstream_url(&state.upstream, &parts);
    let span = tracing::info_span!(
        "upstream",
        otel.kind = "client",
        http.response.status_code = tracing::field::Empty,
    );
    if let Some(tracing) = &state.tracing {
        tracing.inject(&span, &mut headers);
    }
    let answered = async {
        let sent = state
            .client
            .request(parts.method.clone(), url)
            .headers(headers)
            .body(body)
            // Counts to the end of the body, which `bytes` below reads.
            .timeout(state.upstream_timeout)
            .send()
            .await;
        if let Ok(answer) = &sent {
            tracing::Span::current().record("http.response.status_code", answer.status().as_u16());
        }
        sent
    };
    let sent = answered.instrument(span).await;
    let answer = match sent {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(run_key = %claim.key, %error, "upstream request failed");
            return Err(if error.is_timeout() {
                StatusCode::GATEWAY_TIMEOUT
            } else {
                StatusCode::BAD_GATEWAY
            });
        }
    };
    let status = answer.status();
    let headers = end_to_end(answer.headers());
    match answer.bytes().await {
        Ok(body) => Ok(Upstream {
            status,
            headers,
            body,
        }),
        Err(error) => {
            tracing::warn!(run_key = %claim.key, %error, "reading the upstream answer failed");
            Err(if error.is_timeout() {
                StatusCode::GATEWAY_TIMEOUT
            } else {
                StatusCode::BAD_GATEWAY
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Request;

    #[test]
    fn upstream_url_keeps_base_path_and_request_query() {
        let base = reqwest::Url::parse("http://127.0.0.1:9000/base/").unwrap();
        let parts = Request::builder()
            .uri("/jobs/run?x=1&y=%20")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        assert_eq!(
            upstream_url(&base, &parts).as_str(),
            "http://127.0.0.1:9000/base/jobs/run?x=1&y=%20"
        );
        let root = reqwest::Url::parse("http://127.0.0.1:9000").unwrap();
        assert_eq!(
            upstream_url(&root, &parts).as_str(),
            "http://127.0.0.1:9000/jobs/run?x=1&y=%20"
        );
    }

    #[test]
    fn hop_by_hop_headers_and_connection_listed_ones_are_dropped() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", HeaderValue::from_static("close, x-trace"));
        headers.insert("x-trace", HeaderValue::from_static("1"));
        headers.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        headers.insert("x-kept", HeaderValue::from_static("yes"));
        headers.append("x-multi", HeaderValue::from_static("a"));
        headers.append("x-multi", HeaderValue::from_static("b"));
        let kept = end_to_end(&headers);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept.get_all("x-multi").iter().count(), 2);
        assert!(kept.contains_key("x-kept"));
    }
}
