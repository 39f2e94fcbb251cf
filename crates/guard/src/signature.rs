//! Standard Webhooks signature verification over HTTP.
//!
//! A signed request carries `Webhook-Id`, `Webhook-Timestamp` (Unix seconds)
//! and `Webhook-Signature`, a space-separated list of
//! `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. Run identity headers are
//! never authentication; the signature is. The scheme itself (secrets,
//! signing, checking) is `idem-webhooks`, the code Idem signs its deliveries
//! with; this module reads it from headers and bodies.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use http::header::{HeaderMap, HeaderName};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use idem_webhooks::{Checked, Verifier, VerifyError};
use jiff::Timestamp;
use tower::{Layer, Service, ServiceExt};

use crate::clock::{Clock, SystemClock};
use crate::response;

pub use idem_webhooks::{DEFAULT_TOLERANCE, SecretError, SigningSecret};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `Webhook-Id`.
pub const WEBHOOK_ID: HeaderName = HeaderName::from_static(idem_webhooks::ID_HEADER);
/// `Webhook-Timestamp`.
pub const WEBHOOK_TIMESTAMP: HeaderName = HeaderName::from_static(idem_webhooks::TIMESTAMP_HEADER);
/// `Webhook-Signature`.
pub const WEBHOOK_SIGNATURE: HeaderName = HeaderName::from_static(idem_webhooks::SIGNATURE_HEADER);

/// `Idem-Target-Signature`: Idem's signature of the method, path, query and
/// body of a delivery ([`SignedHead::verify_target`]).
pub const IDEM_TARGET_SIGNATURE: HeaderName =
    HeaderName::from_static(idem_webhooks::TARGET_SIGNATURE_HEADER);

/// Bodies above this are refused (413) by [`VerifySignatureLayer`] unless
/// configured otherwise: the whole body must be read to check its signature.
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Why a request's signature was refused. Each answers 401.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// A signature header is absent.
    #[error("missing {0} header")]
    MissingHeader(HeaderName),
    /// A signature header appears more than once.
    #[error("{0} header is sent more than once")]
    RepeatedHeader(HeaderName),
    /// `Webhook-Timestamp` is not a number of seconds.
    #[error("Webhook-Timestamp is not Unix seconds")]
    InvalidTimestamp,
    /// The timestamp is further from now than the tolerance.
    #[error("Webhook-Timestamp is outside the tolerated window")]
    Stale,
    /// `Webhook-Signature` is longer or lists more signatures than any
    /// sender needs (see `idem_webhooks::MAX_SIGNATURES`).
    #[error("Webhook-Signature is too long")]
    TooManySignatures,
    /// No `v1` signature matches any configured secret.
    #[error("no valid signature")]
    NoMatch,
    /// `Idem-Target-Signature` does not sign this request's method, path,
    /// query and body: a signed delivery re-sent to another route.
    #[error("Idem-Target-Signature does not match this request's method, path and query")]
    TargetMismatch,
}

impl From<VerifyError> for SignatureError {
    fn from(error: VerifyError) -> Self {
        match error {
            VerifyError::InvalidTimestamp => Self::InvalidTimestamp,
            VerifyError::Stale => Self::Stale,
            VerifyError::TooManySignatures => Self::TooManySignatures,
            VerifyError::NoMatch => Self::NoMatch,
        }
    }
}

/// Checks a request's Standard Webhooks signature against any of `secrets`
/// (several secrets are accepted, for rotation), with `now` and `tolerance`
/// bounding the timestamp.
pub fn verify_signature(
    secrets: &[SigningSecret],
    headers: &HeaderMap,
    body: &[u8],
    now: Timestamp,
    tolerance: Duration,
) -> Result<(), SignatureError> {
    check_signature_head(headers, now, tolerance)?.verify_body(secrets, body)
}

/// The signature headers of a request, checked before its body is read:
/// present once each, a timestamp within `tolerance` of `now`, a signature
/// list within bounds. What fails here costs no body read and no HMAC.
pub fn check_signature_head(
    headers: &HeaderMap,
    now: Timestamp,
    tolerance: Duration,
) -> Result<SignedHead<'_>, SignatureError> {
    let checked = Verifier::new(&[]).with_tolerance(tolerance).check_head(
        single(headers, &WEBHOOK_ID)?,
        single(headers, &WEBHOOK_TIMESTAMP)?,
        single(headers, &WEBHOOK_SIGNATURE)?,
        now.as_second(),
    )?;
    Ok(SignedHead(checked))
}

/// Signature headers that passed [`check_signature_head`].
#[derive(Debug, Clone)]
pub struct SignedHead<'a>(Checked<'a>);

impl SignedHead<'_> {
    /// The signed `webhook-id`, once [`Self::verify_body`] has succeeded.
    pub fn id(&self) -> &str {
        self.0.id()
    }

    /// Whether any of `secrets` signed `body` under these headers.
    pub fn verify_body(
        &self,
        secrets: &[SigningSecret],
        body: &[u8],
    ) -> Result<(), SignatureError> {
        Ok(self.0.verify_body(secrets, body)?)
    }
}

impl SignedHead<'_> {
    /// Whether the request's `Idem-Target-Signature` (checked when present,
    /// required when `required`) signs its method, path and query as
    /// received, and its body. Call it once [`Self::verify_body`] has
    /// succeeded. A receiver behind something that rewrites paths leaves
    /// `required` off, and then such rewriting must keep the path as sent.
    pub fn verify_target(
        &self,
        secrets: &[SigningSecret],
        request: &http::request::Parts,
        body: &[u8],
        required: bool,
    ) -> Result<(), SignatureError> {
        let signatures = match single(&request.headers, &IDEM_TARGET_SIGNATURE) {
            Ok(signatures) => signatures,
            Err(SignatureError::MissingHeader(_)) if !required => return Ok(()),
            Err(error) => return Err(error),
        };
        let target = idem_webhooks::SignedTarget {
            method: request.method.as_str(),
            path_and_query: request.uri.path_and_query().map_or("/", |p| p.as_str()),
            body_sha256: idem_webhooks::body_sha256(body),
        };
        self.0
            .verify_target(secrets, signatures, &target)
            .map_err(|error| match error {
                VerifyError::NoMatch => SignatureError::TargetMismatch,
                other => other.into(),
            })
    }
}

/// Put in a request's extensions by [`VerifySignatureLayer`] once its
/// signature is verified: the message's signed `webhook-id`. The guard
/// keys such a request by it alone ([`crate::RunKey::of_signed_message`]),
/// so nothing unsigned beside the message can give it a second run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedMessage {
    /// The signed `webhook-id`.
    pub id: String,
}

fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<&'a str, SignatureError> {
    let mut values = headers.get_all(name).iter();
    let value = values
        .next()
        .ok_or_else(|| SignatureError::MissingHeader(name.clone()))?;
    if values.next().is_some() {
        return Err(SignatureError::RepeatedHeader(name.clone()));
    }
    // Non-ASCII values cannot be what a sender signed with the Standard
    // Webhooks scheme, so they are treated like an absent header.
    let value = value
        .to_str()
        .map_err(|_| SignatureError::MissingHeader(name.clone()))?
        .trim();
    if value.is_empty() {
        return Err(SignatureError::MissingHeader(name.clone()));
    }
    Ok(value)
}

/// Verifies signatures against a set of secrets and a clock.
#[derive(Debug, Clone)]
pub struct WebhookVerifier {
    secrets: Vec<SigningSecret>,
    tolerance: Duration,
    clock: Arc<dyn Clock>,
    require_target_signature: bool,
}

impl WebhookVerifier {
    /// Accepts a signature by any of `secrets`, within 5 minutes of now.
    pub fn new(secrets: Vec<SigningSecret>) -> Self {
        Self {
            secrets,
            tolerance: DEFAULT_TOLERANCE,
            clock: Arc::new(SystemClock),
            require_target_signature: false,
        }
    }

    /// Makes `Idem-Target-Signature` mandatory in [`Self::layer`]: without
    /// it the header is checked when present.
    pub fn require_target_signature(mut self, required: bool) -> Self {
        self.require_target_signature = required;
        self
    }

    /// Sets the timestamp tolerance.
    pub fn with_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Reads "now" from `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The signature headers of a request, before its body is read.
    pub fn check_head<'h>(&self, headers: &'h HeaderMap) -> Result<SignedHead<'h>, SignatureError> {
        check_signature_head(headers, self.clock.now(), self.tolerance)
    }

    /// Checks one request.
    pub fn verify(&self, headers: &HeaderMap, body: &[u8]) -> Result<(), SignatureError> {
        verify_signature(
            &self.secrets,
            headers,
            body,
            self.clock.now(),
            self.tolerance,
        )
    }

    /// A tower layer that answers 401 unless the request is validly signed.
    pub fn layer(self) -> VerifySignatureLayer {
        VerifySignatureLayer {
            verifier: Arc::new(self),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// Layer that rejects unsigned or badly signed requests with 401 before the
/// wrapped service runs. Put it outside the guard layer so that an unsigned
/// request claims nothing.
#[derive(Debug, Clone)]
pub struct VerifySignatureLayer {
    verifier: Arc<WebhookVerifier>,
    max_body_bytes: usize,
}

impl VerifySignatureLayer {
    /// Sets the largest body read for verification (413 above it).
    pub fn with_max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }
}

impl<S> Layer<S> for VerifySignatureLayer {
    type Service = VerifySignatureService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        VerifySignatureService {
            verifier: Arc::clone(&self.verifier),
            max_body_bytes: self.max_body_bytes,
            inner,
        }
    }
}

/// The service of [`VerifySignatureLayer`]. It buffers the body (the
/// signature covers it) and hands the inner service an equal body.
#[derive(Debug, Clone)]
pub struct VerifySignatureService<S> {
    verifier: Arc<WebhookVerifier>,
    max_body_bytes: usize,
    inner: S,
}

/// Reads a whole body, answering 413 above `limit`.
pub(crate) async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, Response<Body>>
where
    B: HttpBody<Data = Bytes> + Send,
    B::Error: Into<BoxError>,
{
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => Err(response::problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            &format!("the body exceeds {limit} bytes"),
        )),
        Err(error) => Err(response::problem(
            StatusCode::BAD_REQUEST,
            "INVALID_ARGUMENT",
            &format!("could not read the request body: {error}"),
        )),
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for VerifySignatureService<S>
where
    S: Service<Request<Body>, Response = Response<ResBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    ReqBody: HttpBody<Data = Bytes> + Send + 'static,
    ReqBody::Error: Into<BoxError>,
    ResBody: HttpBody<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let verifier = Arc::clone(&self.verifier);
        let limit = self.max_body_bytes;
        let path = request.uri().path().to_owned();
        let answer = async move {
            let (mut parts, body) = request.into_parts();
            // The headers first: a request that cannot be valid is refused
            // before its body is read or hashed.
            let head = match verifier.check_head(&parts.headers) {
                Ok(head) => head,
                Err(error) => return Ok(response::unauthenticated(&error.to_string())),
            };
            let bytes = match read_body(body, limit).await {
                Ok(bytes) => bytes,
                Err(response) => return Ok(response),
            };
            if let Err(error) = head.verify_body(&verifier.secrets, &bytes) {
                return Ok(response::unauthenticated(&error.to_string()));
            }
            if let Err(error) = head.verify_target(
                &verifier.secrets,
                &parts,
                &bytes,
                verifier.require_target_signature,
            ) {
                return Ok(response::unauthenticated(&error.to_string()));
            }
            let verified = VerifiedMessage {
                id: head.id().to_owned(),
            };
            parts.extensions.insert(verified);
            let request = Request::from_parts(parts, Body::from(bytes));
            match inner.oneshot(request).await {
                Ok(response) => Ok(response.map(Body::new)),
                Err(never) => match never {},
            }
        };
        Box::pin(async move { answer.await.map(|r| response::stamped(&path, r)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(id: &str, ts: i64, sig: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(WEBHOOK_ID, HeaderValue::from_str(id).unwrap());
        h.insert(
            WEBHOOK_TIMESTAMP,
            HeaderValue::from_str(&ts.to_string()).unwrap(),
        );
        h.insert(WEBHOOK_SIGNATURE, HeaderValue::from_str(sig).unwrap());
        h
    }

    #[test]
    fn verifies_the_standard_webhooks_reference_vector_from_headers() {
        // The vector of the Standard Webhooks reference libraries; idem-webhooks'
        // tests/vectors.rs says where it is published.
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let ts = 1614265330;
        let body = br#"{"test": 2432232314}"#;
        let now = Timestamp::from_second(ts + 10).unwrap();
        let h = headers(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            ts,
            " v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= ",
        );
        let s = std::slice::from_ref(&secret);
        assert_eq!(
            verify_signature(s, &h, body, now, DEFAULT_TOLERANCE),
            Ok(())
        );
        assert_eq!(
            verify_signature(s, &h, b"{}", now, DEFAULT_TOLERANCE),
            Err(SignatureError::NoMatch)
        );
        let later = Timestamp::from_second(ts + 301).unwrap();
        assert_eq!(
            verify_signature(s, &h, body, later, DEFAULT_TOLERANCE),
            Err(SignatureError::Stale)
        );
    }

    #[test]
    fn missing_repeated_or_malformed_headers_are_refused() {
        let secret = SigningSecret::from_key(b"k".to_vec());
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let s = std::slice::from_ref(&secret);
        let mut h = headers("id", now.as_second(), "v1,x");
        h.remove(WEBHOOK_SIGNATURE);
        assert_eq!(
            verify_signature(s, &h, b"", now, DEFAULT_TOLERANCE),
            Err(SignatureError::MissingHeader(WEBHOOK_SIGNATURE))
        );
        let mut h = headers("id", now.as_second(), "v1,x");
        h.insert(WEBHOOK_ID, HeaderValue::from_static("  "));
        assert_eq!(
            verify_signature(s, &h, b"", now, DEFAULT_TOLERANCE),
            Err(SignatureError::MissingHeader(WEBHOOK_ID))
        );
        let mut h = headers("id", now.as_second(), "v1,x");
        h.append(WEBHOOK_SIGNATURE, HeaderValue::from_static("v1,y"));
        assert_eq!(
            verify_signature(s, &h, b"", now, DEFAULT_TOLERANCE),
            Err(SignatureError::RepeatedHeader(WEBHOOK_SIGNATURE))
        );
        let mut h = headers("id", now.as_second(), "v1,x");
        h.insert(WEBHOOK_TIMESTAMP, HeaderValue::from_static("soon"));
        assert_eq!(
            verify_signature(s, &h, b"", now, DEFAULT_TOLERANCE),
            Err(SignatureError::InvalidTimestamp)
        );
    }
}
