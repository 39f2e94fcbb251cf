//! The answers the guard gives on its own, without running the handler.

use axum::body::Body;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};

use crate::guard::LeaseLost;
use crate::key::RunKey;

/// Set on the answer to a duplicate of a completed run.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// An RFC 9457 problem document with one of Idem's error codes as `type`.
pub(crate) fn problem(status: StatusCode, code: &str, detail: &str) -> Response<Body> {
    let body = serde_json::json!({
        "type": code,
        "title": status.canonical_reason().unwrap_or(""),
        "status": status.as_u16(),
        "detail": detail,
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    response
}

/// 200 for a delivery whose run already completed: the sender should stop
/// retrying, and nothing runs again.
pub(crate) fn duplicate(key: &RunKey) -> Response<Body> {
    // Written by hand to keep the documented field order (serde_json sorts
    // keys); a run key is hex, so it needs no escaping.
    let body = format!(r#"{{"status":"duplicate","run_key":"{key}"}}"#);
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    response
}

/// 409 rather than 503: some senders retry 503 without counting the attempt,
/// and a run in flight is a conflict with another attempt, not an outage.
pub(crate) fn in_progress(key: &RunKey) -> Response<Body> {
    let mut response = problem(
        StatusCode::CONFLICT,
        "IDEMPOTENCY_KEY_IN_PROGRESS",
        &format!("run {key} is being processed by another attempt"),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// 409 for an attempt whose claim was lost while it ran: another attempt
/// may own the run, so a retry is told what that one decided.
pub(crate) fn lease_lost(key: &RunKey, why: LeaseLost) -> Response<Body> {
    let detail = match why {
        LeaseLost::Taken => format!(
            "run {key} stopped being this attempt's while it ran (it was taken over or is \
             gone); this attempt was stopped and its outcome not recorded"
        ),
        LeaseLost::Unrenewed => format!(
            "the guard store could not renew run {key}'s lease before it ran out; this \
             attempt was stopped and its outcome not recorded"
        ),
    };
    let mut response = problem(StatusCode::CONFLICT, "LEASE_LOST", &detail);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

pub(crate) fn missing_identity(detail: &str) -> Response<Body> {
    problem(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", detail)
}

pub(crate) fn unauthenticated(detail: &str) -> Response<Body> {
    problem(StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", detail)
}

pub(crate) fn store_unavailable(detail: &str) -> Response<Body> {
    let mut response = problem(StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE", detail);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

pub(crate) fn internal(detail: &str) -> Response<Body> {
    problem(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", detail)
}
