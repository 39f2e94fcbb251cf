//! OIDC bearer tokens from senders: Idem's own ID tokens, Cloud Scheduler's
//! and Cloud Tasks' (Google's issuer), or any OpenID Provider's.
//!
//! [`OidcVerifier`] requires `Authorization: Bearer <ID token>` signed
//! (RS256 or ES256) by a key of the configured issuer, with that `iss`, one
//! of the configured audiences as `aud`, `exp` in the future and `nbf` (when
//! present) in the past, each within a small leeway, and, when allow-lists
//! are given, an allowed `sub` or (verified) `email`. The issuer's discovery
//! document names its JWKS; both are fetched when first needed and cached.
//! A token whose `kid` is not among the cached keys makes the verifier fetch
//! them again (a rotation), at most once per [`OidcVerifier::with_refetch_interval`],
//! so that tokens with made-up key IDs cannot turn it into a fetching loop.
//!
//! Only headers are read: put [`VerifyOidcLayer`] outside the guard so that
//! an unauthenticated request claims nothing.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use http::header::AUTHORIZATION;
use http::{HeaderMap, Request, Response};
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tower::{Layer, Service};

use crate::response;

/// Leeway on `exp` and `nbf` for clocks that disagree a little.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// Least time between two fetches of the issuer's keys for an unknown `kid`.
pub const DEFAULT_REFETCH_INTERVAL: Duration = Duration::from_secs(30);

/// Cached keys older than this are fetched again before use, so that a key
/// the issuer withdrew stops being accepted.
const MAX_KEY_AGE: Duration = Duration::from_secs(60 * 60);

/// Largest discovery document or JWKS read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// Why a request's token was refused.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// No `Authorization: Bearer …` header.
    #[error("send Authorization: Bearer <OIDC ID token>")]
    Missing,
    /// The token is not a JWT this verifier can check.
    #[error("the bearer token is not a usable ID token: {0}")]
    Malformed(String),
    /// No key of the issuer has the token's `kid`.
    #[error("no key of the issuer has ID {0:?}")]
    UnknownKey(String),
    /// Signature, issuer, audience or time checks failed.
    #[error("the ID token is invalid: {0}")]
    Invalid(String),
    /// A valid token of a subject or email that is not allowed.
    #[error("the ID token's subject is not allowed here")]
    NotAllowed,
    /// The issuer's keys could not be fetched; the request may be retried.
    #[error("the issuer's keys could not be fetched: {0}")]
    Unavailable(String),
}

impl OidcError {
    /// The answer: 401 with a problem document, or 503 when the keys could
    /// not be fetched (the sender should retry, not give up).
    pub fn response(&self) -> Response<Body> {
        match self {
            OidcError::Unavailable(_) => response::store_unavailable(&self.to_string()),
            _ => response::unauthenticated(&self.to_string()),
        }
    }
}

/// What a verified token says of its sender; the layer puts it in the
/// request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    /// `sub`.
    pub subject: Option<String>,
    /// `email`, when the token has one.
    pub email: Option<String>,
    /// `idem_run`: the run key of the delivery an Idem token was minted
    /// for. A token without it (Google's, most issuers') does not say which
    /// run it is for.
    pub idem_run: Option<String>,
    /// `exp`.
    pub expires_at: jiff::Timestamp,
    /// Lowercase hex SHA-256 of the token's signed part (header and
    /// claims). The signature is left out: an ECDSA signature can be
    /// re-encoded into another valid one, and that must not make the same
    /// token look new.
    pub digest: String,
}

#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    email: Option<String>,
    email_verified: Option<bool>,
    exp: i64,
    idem_run: Option<String>,
}

#[derive(Deserialize)]
struct Discovery {
    issuer: String,
    jwks_uri: String,
}

struct Keys {
    by_kid: HashMap<String, (DecodingKey, Algorithm)>,
    fetched_at: Option<Instant>,
}

/// What the verifier is configured with.
#[derive(Clone)]
struct Settings {
    issuer: String,
    audiences: Vec<String>,
    subjects: Vec<String>,
    emails: Vec<String>,
    leeway: Duration,
    refetch_interval: Duration,
    client: reqwest::Client,
}

struct Inner {
    settings: Settings,
    keys: tokio::sync::RwLock<Keys>,
    /// One fetch at a time; a request that waited on it looks again first.
    fetching: tokio::sync::Mutex<()>,
}

impl Inner {
    fn new(settings: Settings) -> Inner {
        Inner {
            settings,
            keys: tokio::sync::RwLock::new(Keys {
                by_kid: HashMap::new(),
                fetched_at: None,
            }),
            fetching: tokio::sync::Mutex::new(()),
        }
    }
}

/// Checks OIDC ID tokens of one issuer; cheap to clone (the key cache is
/// shared).
#[derive(Clone)]
pub struct OidcVerifier {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OidcVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.inner.settings;
        f.debug_struct("OidcVerifier")
            .field("issuer", &s.issuer)
            .field("audiences", &s.audiences)
            .field("subjects", &s.subjects)
            .field("emails", &s.emails)
            .finish_non_exhaustive()
    }
}

impl OidcVerifier {
    /// Tokens of `issuer` (its URL exactly as the tokens' `iss` has it) for
    /// one of `audiences`, from any subject until
    /// [`OidcVerifier::with_subjects`] or [`OidcVerifier::with_emails`]
    /// narrows it.
    pub fn new(issuer: impl Into<String>, audiences: Vec<String>) -> Self {
        // In a workspace build reqwest carries rustls without a crypto
        // provider of its own, and a client built before one is installed
        // fails: ring, as the Redis store does.
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        OidcVerifier {
            inner: Arc::new(Inner::new(Settings {
                issuer: issuer.into(),
                audiences,
                subjects: Vec::new(),
                emails: Vec::new(),
                leeway: DEFAULT_LEEWAY,
                refetch_interval: DEFAULT_REFETCH_INTERVAL,
                client,
            })),
        }
    }

    /// A verifier with changed settings and keys of its own to fetch.
    fn configure(self, f: impl FnOnce(&mut Settings)) -> Self {
        let mut settings = self.inner.settings.clone();
        f(&mut settings);
        OidcVerifier {
            inner: Arc::new(Inner::new(settings)),
        }
    }

    /// Accepts only these `sub` values (or an email of
    /// [`OidcVerifier::with_emails`]).
    pub fn with_subjects(self, subjects: Vec<String>) -> Self {
        self.configure(|i| i.subjects = subjects)
    }

    /// Accepts only tokens whose verified `email` is one of these (or a
    /// subject of [`OidcVerifier::with_subjects`]).
    pub fn with_emails(self, emails: Vec<String>) -> Self {
        self.configure(|i| i.emails = emails)
    }

    /// Sets the leeway on `exp` and `nbf` ([`DEFAULT_LEEWAY`]).
    pub fn with_leeway(self, leeway: Duration) -> Self {
        self.configure(|i| i.leeway = leeway)
    }

    /// Sets the least time between fetches for an unknown `kid`
    /// ([`DEFAULT_REFETCH_INTERVAL`]).
    pub fn with_refetch_interval(self, every: Duration) -> Self {
        self.configure(|i| i.refetch_interval = every)
    }

    /// Uses this client to fetch the discovery document and the JWKS (for
    /// a private CA, or a proxy).
    pub fn with_client(self, client: reqwest::Client) -> Self {
        self.configure(|i| i.client = client)
    }

    /// The configured issuer.
    pub fn issuer(&self) -> &str {
        &self.inner.settings.issuer
    }

    /// Whether only some subjects or emails are accepted
    /// ([`OidcVerifier::with_subjects`], [`OidcVerifier::with_emails`]),
    /// rather than every token of the issuer.
    pub fn narrows_senders(&self) -> bool {
        let s = &self.inner.settings;
        !s.subjects.is_empty() || !s.emails.is_empty()
    }

    /// The leeway on `exp` and `nbf`: a token is accepted until its `exp`
    /// plus this.
    pub fn leeway(&self) -> Duration {
        self.inner.settings.leeway
    }

    /// Checks the bearer token of a request's headers.
    pub async fn verify(&self, headers: &HeaderMap) -> Result<VerifiedToken, OidcError> {
        let token = bearer(headers).ok_or(OidcError::Missing)?;
        self.verify_token(token).await
    }

    /// Checks one token.
    pub async fn verify_token(&self, token: &str) -> Result<VerifiedToken, OidcError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| OidcError::Malformed(e.to_string()))?;
        if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
            return Err(OidcError::Malformed(format!(
                "algorithm {:?} is not RS256 or ES256",
                header.alg
            )));
        }
        let kid = header
            .kid
            .ok_or_else(|| OidcError::Malformed("the token names no key (kid)".into()))?;
        let (key, alg) = self.key(&kid).await?;
        let inner = &self.inner.settings;
        // The key's algorithm, not the token's: a token cannot choose how
        // it is checked.
        let mut validation = Validation::new(alg);
        validation.leeway = inner.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&inner.issuer]);
        validation.set_audience(&inner.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let claims = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map_err(|e| OidcError::Invalid(e.to_string()))?
            .claims;
        let allowed = (inner.subjects.is_empty() && inner.emails.is_empty())
            || claims
                .sub
                .as_ref()
                .is_some_and(|s| inner.subjects.contains(s))
            || (claims.email_verified != Some(false)
                && claims
                    .email
                    .as_ref()
                    .is_some_and(|e| inner.emails.iter().any(|a| a.eq_ignore_ascii_case(e))));
        if !allowed {
            return Err(OidcError::NotAllowed);
        }
        if claims.idem_run.as_deref().is_some_and(str::is_empty) {
            return Err(OidcError::Invalid("idem_run is empty".into()));
        }
        let expires_at = jiff::Timestamp::from_second(claims.exp)
            .map_err(|_| OidcError::Invalid(format!("exp {} is out of range", claims.exp)))?;
        let signed = token.rsplit_once('.').map_or(token, |(signed, _)| signed);
        Ok(VerifiedToken {
            subject: claims.sub,
            email: claims.email,
            idem_run: claims.idem_run,
            expires_at,
            digest: hex::encode(Sha256::digest(signed.as_bytes())),
        })
    }

    async fn key(&self, kid: &str) -> Result<(DecodingKey, Algorithm), OidcError> {
        let inner = &self.inner;
        let known = {
            let keys = inner.keys.read().await;
            let fresh = keys.fetched_at.is_some_and(|at| at.elapsed() < MAX_KEY_AGE);
            match keys.by_kid.get(kid) {
                Some(found) if fresh => return Ok(found.clone()),
                found => found.cloned(),
            }
        };
        let _fetching = inner.fetching.lock().await;
        {
            // A fetch that ended while this request waited, or one too
            // recent to repeat, answers.
            let keys = inner.keys.read().await;
            if keys
                .fetched_at
                .is_some_and(|at| at.elapsed() < inner.settings.refetch_interval)
            {
                return keys
                    .by_kid
                    .get(kid)
                    .cloned()
                    .ok_or_else(|| OidcError::UnknownKey(kid.to_string()));
            }
        }
        match self.fetch().await {
            Ok(by_kid) => {
                let found = by_kid.get(kid).cloned();
                *inner.keys.write().await = Keys {
                    by_kid,
                    fetched_at: Some(Instant::now()),
                };
                found.ok_or_else(|| OidcError::UnknownKey(kid.to_string()))
            }
            // Keys fetched before still hold while the issuer is away.
            Err(error) => match known {
                Some(found) => {
                    tracing::warn!(%error, "refreshing the OIDC issuer's keys failed");
                    Ok(found)
                }
                None => Err(error),
            },
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, (DecodingKey, Algorithm)>, OidcError> {
        let inner = &self.inner.settings;
        let url = format!(
            "{}/.well-known/openid-configuration",
            inner.issuer.trim_end_matches('/')
        );
        let discovery: Discovery = self.get_json(&url).await?;
        // OpenID Connect Discovery 1.0 §4.3: the document must name the
        // issuer it was fetched for.
        if discovery.issuer != inner.issuer {
            return Err(OidcError::Unavailable(format!(
                "the discovery document names issuer {:?}, not {:?}",
                discovery.issuer, inner.issuer
            )));
        }
        #[derive(Deserialize)]
        struct Set {
            keys: Vec<serde_json::Value>,
        }
        let set: Set = self.get_json(&discovery.jwks_uri).await?;
        let mut by_kid = HashMap::new();
        // A key of a type or algorithm this verifier does not use is
        // skipped, not a reason to refuse the others.
        for value in set.keys {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
                continue;
            };
            let (Some(kid), Some(alg)) = (jwk.common.key_id.clone(), algorithm_of(&jwk)) else {
                continue;
            };
            if let Ok(key) = DecodingKey::from_jwk(&jwk) {
                by_kid.insert(kid, (key, alg));
            }
        }
        Ok(by_kid)
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, OidcError> {
        let unavailable = |e: String| OidcError::Unavailable(format!("{url}: {e}"));
        let response = self
            .inner
            .settings
            .client
            .get(url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| unavailable(e.to_string()))?;
        if response
            .content_length()
            .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(unavailable("the document is too large".into()));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if bytes.len() > MAX_DOCUMENT_BYTES {
            return Err(unavailable("the document is too large".into()));
        }
        serde_json::from_slice(&bytes).map_err(|e| unavailable(e.to_string()))
    }

    /// A tower layer that answers 401 unless the request carries a valid
    /// token, and hands the handler its [`VerifiedToken`] as an extension.
    pub fn layer(self) -> VerifyOidcLayer {
        VerifyOidcLayer { verifier: self }
    }
}

/// The key's algorithm: the one its JWK names, or ES256 for a P-256 key and
/// RS256 for an RSA key. Any other key is not used.
fn algorithm_of(jwk: &Jwk) -> Option<Algorithm> {
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => Algorithm::ES256,
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        _ => return None,
    };
    match jwk.common.key_algorithm {
        None => Some(by_type),
        Some(KeyAlgorithm::ES256) if by_type == Algorithm::ES256 => Some(by_type),
        Some(KeyAlgorithm::RS256) if by_type == Algorithm::RS256 => Some(by_type),
        Some(_) => None,
    }
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Layer that refuses requests without a valid OIDC token with 401 before
/// the wrapped service runs.
#[derive(Debug, Clone)]
pub struct VerifyOidcLayer {
    verifier: OidcVerifier,
}

impl<S> Layer<S> for VerifyOidcLayer {
    type Service = VerifyOidcService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        VerifyOidcService {
            verifier: self.verifier.clone(),
            inner,
        }
    }
}

/// The service of [`VerifyOidcLayer`].
#[derive(Debug, Clone)]
pub struct VerifyOidcService<S> {
    verifier: OidcVerifier,
    inner: S,
}

impl<S, ReqBody> Service<Request<ReqBody>> for VerifyOidcService<S>
where
    S: Service<Request<ReqBody>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    ReqBody: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<ReqBody>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let verifier = self.verifier.clone();
        Box::pin(async move {
            match verifier.verify(request.headers()).await {
                Ok(token) => {
                    request.extensions_mut().insert(token);
                    inner.call(request).await
                }
                // As the guard's own problems: with the request's ID and path.
                Err(error) => Ok(crate::response::stamped(
                    request.uri().path(),
                    error.response(),
                )),
            }
        })
    }
}
