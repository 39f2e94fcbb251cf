//! Standard Webhooks signature verification.
//!
//! A signed request carries `Webhook-Id`, `Webhook-Timestamp` (Unix seconds)
//! and `Webhook-Signature`, a space-separated list of
//! `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. Run identity headers are
//! never authentication; the signature is.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use http::header::{HeaderMap, HeaderName};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use jiff::Timestamp;
use sha2::Sha256;
use tower::{Layer, Service, ServiceExt};

use crate::clock::{Clock, SystemClock};
use crate::response;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `Webhook-Id`.
pub const WEBHOOK_ID: HeaderName = HeaderName::from_static("webhook-id");
/// `Webhook-Timestamp`.
pub const WEBHOOK_TIMESTAMP: HeaderName = HeaderName::from_static("webhook-timestamp");
/// `Webhook-Signature`.
pub const WEBHOOK_SIGNATURE: HeaderName = HeaderName::from_static("webhook-signature");

/// How far a signature's timestamp may be from now, in either direction.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// Bodies above this are refused (413) by [`VerifySignatureLayer`] unless
/// configured otherwise: the whole body must be read to check its signature.
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

const SECRET_PREFIX: &str = "whsec_";

/// A signing secret, written `whsec_<base64 key>`. The HMAC key is the
/// decoded part.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret {
    key: Arc<[u8]>,
}

/// Why a signing secret could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The secret does not start with `whsec_`.
    #[error("a signing secret starts with whsec_")]
    MissingPrefix,
    /// The part after `whsec_` is not base64.
    #[error("the part after whsec_ is not valid base64")]
    InvalidBase64,
    /// The key is empty.
    #[error("the signing key is empty")]
    Empty,
}

impl SigningSecret {
    /// Parses `whsec_<base64 key>`.
    pub fn parse(text: &str) -> Result<Self, SecretError> {
        let encoded = text
            .trim()
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        let key = STANDARD
            .decode(encoded)
            .map_err(|_| SecretError::InvalidBase64)?;
        if key.is_empty() {
            return Err(SecretError::Empty);
        }
        Ok(Self { key: key.into() })
    }

    /// A secret from raw key bytes.
    pub fn from_key(key: impl Into<Vec<u8>>) -> Self {
        Self {
            key: key.into().into(),
        }
    }

    /// The secret written as `whsec_<base64 key>`.
    pub fn to_whsec(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.key))
    }

    fn mac(&self, id: &str, timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
        // HMAC takes keys of any length, so this cannot fail.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(body);
        mac
    }

    /// The `Webhook-Signature` value (`v1,<base64>`) for a message.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let tag = self
            .mac(id, &timestamp.to_string(), body)
            .finalize()
            .into_bytes();
        format!("v1,{}", STANDARD.encode(tag))
    }

    /// Constant-time check of one decoded signature.
    fn verifies(&self, id: &str, timestamp: &str, body: &[u8], signature: &[u8]) -> bool {
        self.mac(id, timestamp, body)
            .verify_slice(signature)
            .is_ok()
    }
}

impl FromStr for SigningSecret {
    type Err = SecretError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(redacted)")
    }
}

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
    /// No `v1` signature matches any configured secret.
    #[error("no valid signature")]
    NoMatch,
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
    let id = single(headers, &WEBHOOK_ID)?;
    let timestamp = single(headers, &WEBHOOK_TIMESTAMP)?;
    let signatures = single(headers, &WEBHOOK_SIGNATURE)?;

    let seconds: i64 = timestamp
        .parse()
        .map_err(|_| SignatureError::InvalidTimestamp)?;
    let tolerance = i64::try_from(tolerance.as_secs()).unwrap_or(i64::MAX);
    if now.as_second().abs_diff(seconds) > tolerance.unsigned_abs() {
        return Err(SignatureError::Stale);
    }

    for candidate in signatures.split_ascii_whitespace() {
        let Some(encoded) = candidate.strip_prefix("v1,") else {
            continue;
        };
        let Ok(decoded) = STANDARD.decode(encoded) else {
            continue;
        };
        if secrets
            .iter()
            .any(|secret| secret.verifies(id, timestamp, body, &decoded))
        {
            return Ok(());
        }
    }
    Err(SignatureError::NoMatch)
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
}

impl WebhookVerifier {
    /// Accepts a signature by any of `secrets`, within 5 minutes of now.
    pub fn new(secrets: Vec<SigningSecret>) -> Self {
        Self {
            secrets,
            tolerance: DEFAULT_TOLERANCE,
            clock: Arc::new(SystemClock),
        }
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
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let bytes = match read_body(body, limit).await {
                Ok(bytes) => bytes,
                Err(response) => return Ok(response),
            };
            if let Err(error) = verifier.verify(&parts.headers, &bytes) {
                return Ok(response::unauthenticated(&error.to_string()));
            }
            let request = Request::from_parts(parts, Body::from(bytes));
            match inner.oneshot(request).await {
                Ok(response) => Ok(response.map(Body::new)),
                Err(never) => match never {},
            }
        })
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
    fn matches_the_standard_webhooks_reference_vector() {
        // The example published with the Standard Webhooks specification.
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let ts = 1614265330;
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign(id, ts, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        let now = Timestamp::from_second(ts + 10).unwrap();
        let h = headers(id, ts, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert_eq!(
            verify_signature(&[secret], &h, body, now, DEFAULT_TOLERANCE),
            Ok(())
        );
    }

    #[test]
    fn any_listed_signature_and_any_secret_may_match() {
        let old = SigningSecret::from_key(b"old-key".to_vec());
        let new = SigningSecret::from_key(b"new-key".to_vec());
        let ts = 1_700_000_000;
        let now = Timestamp::from_second(ts).unwrap();
        let sig = format!("v1a,ignored v1,AAAA {}", new.sign("id", ts, b"body"));
        let h = headers("id", ts, &sig);
        assert_eq!(
            verify_signature(&[old.clone(), new], &h, b"body", now, DEFAULT_TOLERANCE),
            Ok(())
        );
        assert_eq!(
            verify_signature(&[old], &h, b"body", now, DEFAULT_TOLERANCE),
            Err(SignatureError::NoMatch)
        );
    }

    #[test]
    fn body_id_and_timestamp_are_all_covered() {
        let secret = SigningSecret::from_key(b"k".to_vec());
        let ts = 1_700_000_000;
        let now = Timestamp::from_second(ts).unwrap();
        let sig = secret.sign("id", ts, b"body");
        let s = std::slice::from_ref(&secret);
        assert_eq!(
            verify_signature(s, &headers("id", ts, &sig), b"bodx", now, DEFAULT_TOLERANCE),
            Err(SignatureError::NoMatch)
        );
        assert_eq!(
            verify_signature(
                s,
                &headers("id2", ts, &sig),
                b"body",
                now,
                DEFAULT_TOLERANCE
            ),
            Err(SignatureError::NoMatch)
        );
        assert_eq!(
            verify_signature(
                s,
                &headers("id", ts + 1, &sig),
                b"body",
                now,
                DEFAULT_TOLERANCE
            ),
            Err(SignatureError::NoMatch)
        );
    }

    #[test]
    fn timestamps_outside_five_minutes_either_way_are_stale() {
        let secret = SigningSecret::from_key(b"k".to_vec());
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        for (offset, ok) in [(-301, false), (-300, true), (300, true), (301, false)] {
            let ts = now.as_second() + offset;
            let h = headers("id", ts, &secret.sign("id", ts, b""));
            let result = verify_signature(
                std::slice::from_ref(&secret),
                &h,
                b"",
                now,
                DEFAULT_TOLERANCE,
            );
            assert_eq!(result.is_ok(), ok, "offset {offset}: {result:?}");
            if !ok {
                assert_eq!(result, Err(SignatureError::Stale));
            }
        }
    }

    #[test]
    fn missing_or_malformed_headers_are_refused() {
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
        h.insert(WEBHOOK_TIMESTAMP, HeaderValue::from_static("soon"));
        assert_eq!(
            verify_signature(s, &h, b"", now, DEFAULT_TOLERANCE),
            Err(SignatureError::InvalidTimestamp)
        );
    }

    #[test]
    fn secrets_parse_only_in_whsec_form() {
        let secret = SigningSecret::parse("whsec_c2VjcmV0").unwrap();
        assert_eq!(secret, SigningSecret::from_key(b"secret".to_vec()));
        assert_eq!(secret.to_whsec(), "whsec_c2VjcmV0");
        assert_eq!(
            SigningSecret::parse("c2VjcmV0"),
            Err(SecretError::MissingPrefix)
        );
        assert_eq!(
            SigningSecret::parse("whsec_!!"),
            Err(SecretError::InvalidBase64)
        );
        assert_eq!(SigningSecret::parse("whsec_"), Err(SecretError::Empty));
        assert_eq!(format!("{secret:?}"), "SigningSecret(redacted)");
    }
}
