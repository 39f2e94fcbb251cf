//! Per-request context every response needs: the request ID (sent as
//! `Idem-Request-Id` and echoed in problem documents) and the path (a
//! problem's `instance`).
//!
//! Kept in a task-local so that an error built deep in a handler can name
//! its request without every function threading it through.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderValue;

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
/// its context.
pub async fn with_context(req: Request, next: Next) -> Response {
    let ctx = RequestContext {
        request_id: uuid::Uuid::now_v7().to_string(),
        path: req.uri().path().to_string(),
    };
    let id = HeaderValue::from_str(&ctx.request_id).expect("uuid is a valid header value");
    let span = tracing::info_span!("request", request_id = %ctx.request_id, method = %req.method(), path = %ctx.path);
    let _enter = span.enter();
    drop(_enter);
    let mut response = CONTEXT.scope(ctx, next.run(req)).await;
    response.headers_mut().insert(REQUEST_ID_HEADER, id);
    response
}
