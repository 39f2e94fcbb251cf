//! The answers the guard gives on its own, without running the handler.

use axum::body::Body;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};

use crate::guard::LeaseLost;
use crate::key::RunKey;

/// Set on the answer to a duplicate of a completed run.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The header naming the request a problem answered, as Idem's API sends it.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("idem-request-id");

/// A problem the guard answered, before [`stamped`] gives it the request's
/// ID and path.
#[derive(Clone)]
struct Draft(serde_json::Map<String, serde_json::Value>);

/// An RFC 9457 problem document with one of Idem's error codes as `type`.
/// Its `request_id` and `instance` are added by [`stamped`] where the
/// request is known.
pub(crate) fn problem(status: StatusCode, code: &str, detail: &str) -> Response<Body> {
    let serde_json::Value::Object(body) = serde_json::json!({
        "type": code,
        "title": status.canonical_reason().unwrap_or(""),
        "status": status.as_u16(),
        "detail": detail,
    }) else {
        unreachable!("an object literal")
    };
    let mut response = Response::new(Body::from(
        serde_json::Value::Object(body.clone()).to_string(),
    ));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    response.extensions_mut().insert(Draft(body));
    response
}

/// A problem the guard answered to the request for `path`, with the
/// request's ID (new, also sent as `Idem-Request-Id` and logged with the
/// problem) and `instance` (the path), as the API's problems carry them, so
/// that a refusal seen by a sender can be found in the guard's log. Any
/// other response passes unchanged.
pub(crate) fn stamped(path: &str, mut response: Response<Body>) -> Response<Body> {
    let Some(Draft(mut doc)) = response.extensions_mut().remove::<Draft>() else {
        return response;
    };
    let request_id = uuid::Uuid::now_v7().to_string();
    let status = response.status();
    let code = doc.get("type").and_then(|t| t.as_str()).unwrap_or_default();
    let detail = doc
        .get("detail")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    if status.is_server_error() {
        tracing::warn!(%request_id, instance = path, status = status.as_u16(), code, detail, "answered a problem");
    } else {
        tracing::info!(%request_id, instance = path, status = status.as_u16(), code, detail, "answered a problem");
    }
    response.headers_mut().insert(
        REQUEST_ID,
        HeaderValue::from_str(&request_id).expect("a UUID is a header value"),
    );
    doc.insert("request_id".into(), request_id.into());
    doc.insert("instance".into(), path.into());
    *response.body_mut() = Body::from(serde_json::Value::Object(doc).to_string());
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
