//! Per-request context every response needs: the request ID (sent as
//! `Idem-Request-Id` and echoed in problem documents) and the path (a
//! problem's `instance`).
//!
//! Kept in a task-local so that an error built deep in a handler can name
//! its request without every function threading it through, and in a
//! tracing span so that every log line does.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderValue;
use tracing::Instrument;

pub const REQUEST_ID_HEADER: &str = "idem-request-id";

#[derive(Clone, Debug)]
pub struct RequestContext {
    pub request_id: String,
    pub path: String,
}

tokio::task_local! {
    static CONTEXT: RequestContext;
}

/// The current request's context, if called while serving one.
pub fn current() -> Option<RequestContext> {
    CONTEXT.try_with(Clone::clone).ok()
}

/// Middleware: assigns the request ID and runs the rest of the stack inside
/// its context, for at most `limit` ([`within`]).
pub async fn with_context(limit: std::time::Duration, req: Request, next: Next) -> Response {
    let ctx = RequestContext {
        request_id: uuid::Uuid::now_v7().to_string(),
        path: req.uri().path().to_string(),
    };
    let id = HeaderValue::from_str(&ctx.request_id).expect("uuid is a valid header value");
    // Every line logged while serving the request names it; the span is
    // attached to the future, so it is entered exactly while the request's
    // work is polled.
    let span = tracing::info_span!(
        "request",
        request_id = %ctx.request_id,
        method = %req.method(),
        path = %ctx.path,
        // Recorded once known (`crate::auth::authenticate`).
        org = tracing::field::Empty,
        queue = tracing::field::Empty,
        task_id = tracing::field::Empty,
        trace_id = tracing::field::Empty,
        span_id = tracing::field::Empty,
        otel.kind = "server",
    );
    crate::traces::continue_trace(&span, crate::traces::from_headers(req.headers()).as_ref());
    let started = std::time::Instant::now();
    let mut response = CONTEXT
        .scope(ctx.clone(), within(limit, next.run(req)))
        .instrument(span.clone())
        .await;
    // An access log line, off by default (`IDEM_LOG=debug` shows it): at
    // tens of thousands of requests a second it would cost more than the
    // work it describes.
    span.in_scope(|| {
        tracing::debug!(
            status = response.status().as_u16(),
            duration_ms = started.elapsed().as_secs_f64() * 1000.0,
            "request served"
        )
    });
    response.headers_mut().insert(REQUEST_ID_HEADER, id);
    let class = match response.status().as_u16() {
        200..=299 => "2xx",
        400..=499 => "4xx",
        500..=599 => "5xx",
        _ => "other",
    };
    metrics::counter!("idem_http_responses_total", "class" => class).increment(1);
    stamp_problem(response, &ctx).await
}

/// Work spawned off the request's task (a handler the Idempotency-Key layer
/// runs to completion on its own) cannot see the task-local context; a
/// problem document it produced gets the request's ID and path here.
async fn stamp_problem(response: Response, ctx: &RequestContext) -> Response {
    let is_problem = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == b"application/problem+json");
    if !is_problem {
        return response;
    }
    let (mut head, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return Response::from_parts(head, axum::body::Body::empty());
    };
    // Problems built on the request's own task carry the ID already.
    const UNSET: &[u8] = br#""request_id":null"#;
    if !bytes.windows(UNSET.len()).any(|w| w == UNSET) {
        return Response::from_parts(head, axum::body::Body::from(bytes));
    }
    let mut doc: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(_) => return Response::from_parts(head, axum::body::Body::from(bytes)),
    };
    if doc["request_id"].is_null() {
        doc["request_id"] = ctx.request_id.clone().into();
        doc["instance"] = ctx.path.clone().into();
        let out = doc.to_string();
        head.headers.remove(http::header::CONTENT_LENGTH);
        return Response::from_parts(head, axum::body::Body::from(out));
    }
    Response::from_parts(head, axum::body::Body::from(bytes))
}

/// Answers 503 when the rest of the stack takes longer than `limit`. A
/// request with an Idempotency-Key keeps running to its end (the key layer
/// runs it on its own task), so a retry with the same key gets its outcome
/// rather than a second execution. Inside the context's own middleware,
/// since every request pays for each layer it crosses.
async fn within(limit: std::time::Duration, run: impl Future<Output = Response>) -> Response {
    use axum::response::IntoResponse;
    match tokio::time::timeout(limit, run).await {
        Ok(response) => response,
        Err(_) => crate::api::problem::Problem::unavailable(format!(
            "the request took longer than the server's limit of {} ms; \
             retry it with the same Idempotency-Key to learn its outcome",
            limit.as_millis()
        ))
        .into_response(),
    }
}
