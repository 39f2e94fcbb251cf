//! RFC 9457 problem documents with Idem's error codes (API.md §10), whose
//! catalogue is `idem_api::ProblemCode`.

use crate::context;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use idem_api::ProblemCode;
use idem_core::FieldErrors;
use idem_store::Error as StoreError;
use serde_json::{Value, json};

/// An API failure, rendered as `application/problem+json`.
#[derive(Debug)]
pub struct Problem {
    /// The code's own status, unless [`Problem::with_status`] said otherwise.
    pub status: StatusCode,
    pub code: ProblemCode,
    pub detail: String,
    pub extensions: Option<Value>,
    pub retry_after: Option<u32>,
}

impl Problem {
    pub fn new(code: ProblemCode, detail: impl Into<String>) -> Self {
        Problem {
            status: code.status(),
            code,
            detail: detail.into(),
            extensions: None,
            retry_after: None,
        }
    }

    /// Answers with `status` rather than the code's own.
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    pub fn with_extensions(mut self, extensions: Value) -> Self {
        self.extensions = Some(extensions);
        self
    }

    pub fn invalid(detail: impl Into<String>) -> Self {
        Self::new(ProblemCode::InvalidArgument, detail)
    }

    /// 400 naming every bad field.
    pub fn fields(errors: FieldErrors) -> Self {
        let detail = errors.to_string();
        Self::invalid(detail).with_extensions(json!({ "errors": errors.0 }))
    }

    pub fn field(field: &str, message: impl Into<String>) -> Self {
        let mut errors = FieldErrors::new();
        errors.push(field, message);
        Self::fields(errors)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(ProblemCode::NotFound, detail)
    }

    pub fn unauthenticated(detail: impl Into<String>) -> Self {
        Self::new(ProblemCode::Unauthenticated, detail)
    }

    pub fn permission_denied(detail: impl Into<String>) -> Self {
        Self::new(ProblemCode::PermissionDenied, detail)
    }

    pub fn user_identity_required(detail: impl Into<String>) -> Self {
        Self::new(ProblemCode::UserIdentityRequired, detail)
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            ProblemCode::PayloadTooLarge,
            format!("request body exceeds the limit of {limit} bytes"),
        )
    }

    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        Self::new(ProblemCode::UnsupportedMediaType, detail)
    }

    pub fn unavailable(detail: impl Into<String>) -> Self {
        let mut p = Self::new(ProblemCode::Unavailable, detail);
        p.retry_after = Some(1);
        p
    }

    /// A fault of the server's own. Its cause goes to the log, under the
    /// request's ID, and never to the client: it may hold what the store or
    /// a library said about someone else's data.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(ProblemCode::Internal, INTERNAL_DETAIL)
    }
}

/// The answer to a handler that panicked: a bug, logged under the
/// request's ID, answered as any internal fault is.
pub fn from_panic(panic: Box<dyn std::any::Any + Send + 'static>) -> axum::response::Response {
    let message = idem_http::panic_message(&*panic);
    Problem::internal(format_args!("the handler panicked: {message}")).into_response()
}

/// The whole of what a client learns of a fault of the server's own; the
/// problem's `request_id` finds the cause in the log.
pub const INTERNAL_DETAIL: &str =
    "internal error; the server's log holds its cause under this request_id";

impl Problem {}

impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { kind, id } => {
                Problem::not_found(format!("{} '{id}' not found", kind.replace('_', " ")))
            }
            StoreError::AlreadyExists { kind, id } => {
                let code = match kind {
                    "queue" => ProblemCode::QueueAlreadyExists,
                    "principal" => ProblemCode::PrincipalAlreadyExists,
                    "organization" => ProblemCode::OrganizationAlreadyExists,
                    "job" => ProblemCode::JobAlreadyExists,
                    _ => return Problem::internal(format!("{kind} '{id}' collided")),
                };
                Problem::new(code, format!("{kind} '{id}' already exists"))
            }
            StoreError::TaskExists(task) => Problem::new(
                ProblemCode::TaskAlreadyExists,
                format!("task '{}' exists ({})", task.task_id, task.state.as_str()),
            )
            .with_extensions(json!({
                "task": {
                    "id": task.task_id,
                    "state": task.state,
                    "created_at": task.created_at,
                    "finished_at": task.finished_at,
                }
            })),
            StoreError::FailedPrecondition(msg) => {
                Problem::new(ProblemCode::FailedPrecondition, msg)
            }
            StoreError::Stale(msg) => Problem::new(ProblemCode::StaleVersion, msg),
            StoreError::WorkClaimed {
                task_id,
                claimant,
                lease_expires_at,
            } => Problem::new(
                ProblemCode::WorkAlreadyClaimed,
                format!("task '{task_id}' is claimed by '{claimant}' until {lease_expires_at}"),
            )
            .with_extensions(json!({
                "claim": {"claimant": claimant, "lease_expires_at": lease_expires_at}
            })),
            StoreError::LeaseLost(msg) => Problem::new(ProblemCode::LeaseLost, msg),
            StoreError::PermissionDenied(msg) => Problem::new(ProblemCode::PermissionDenied, msg),
            StoreError::PersonRequired(msg) => Problem::new(ProblemCode::UserIdentityRequired, msg),
            StoreError::KeyLost(msg) => {
                let mut p = Problem::new(ProblemCode::IdempotencyKeyInProgress, msg);
                p.retry_after = Some(1);
                p
            }
            // Answered from its record where a write claims a key
            // (`idempotency::claim_failed`); anywhere else, the key is busy.
            e @ StoreError::KeyHeld(_) => {
                let mut p = Problem::new(ProblemCode::IdempotencyKeyInProgress, e.to_string());
                p.retry_after = Some(1);
                p
            }
            StoreError::Invalid(errors) => Problem::fields(errors),
            StoreError::ResourceExhausted(e) => {
                Problem::new(ProblemCode::ResourceExhausted, e.to_string())
                    .with_extensions(json!({"limit": e.quota.as_str(), "max": e.limit}))
            }
            StoreError::BatchItem { index, error } => {
                let mut p = Problem::from(*error);
                let mut ext = p.extensions.take().unwrap_or_else(|| json!({}));
                ext["index"] = json!(index);
                p.detail = format!("tasks[{index}]: {}", p.detail);
                p.with_extensions(ext)
            }
            StoreError::Unavailable(msg) => {
                tracing::warn!(error = %msg, "store unavailable");
                Problem::unavailable("the store is unreachable or busy; retry shortly")
            }
            // A deadlock or serialization failure rolled the transaction
            // back whole: the same request again may well succeed.
            StoreError::Retryable(msg) => {
                tracing::warn!(error = %msg, "transaction aborted by a conflict");
                Problem::unavailable(
                    "the request met a concurrent one and was rolled back; retry it",
                )
            }
            StoreError::Internal(msg) => Problem::internal(format_args!("store error: {msg}")),
        }
    }
}

impl Problem {
    /// The document as a client reads it, with the request's ID and path.
    pub fn document(self) -> idem_api::Problem {
        let ctx = context::current();
        idem_api::Problem {
            code: self.code.as_str().to_string(),
            title: self
                .status
                .canonical_reason()
                .unwrap_or("Error")
                .to_string(),
            status: self.status.as_u16(),
            detail: Some(self.detail),
            request_id: ctx.as_ref().map(|c| c.request_id.clone()),
            instance: ctx.as_ref().map(|c| c.path.clone()),
            extensions: self.extensions,
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let (status, retry_after) = (self.status, self.retry_after);
        let body = self.document();
        let body = serde_json::to_string(&body).expect("a problem document serializes");
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(secs) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        match status {
            // RFC 9110 §15.5.2: say which scheme to authenticate with.
            StatusCode::UNAUTHORIZED => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"idem\""),
                );
            }
            // The rest of an oversized body is never read: the connection
            // cannot carry another request.
            StatusCode::PAYLOAD_TOO_LARGE => {
                headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        response
    }
}

pub type ApiResult<T> = Result<T, Problem>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_fault_answers_the_generic_text() {
        let p = Problem::from(StoreError::Internal(
            "22021: invalid byte sequence for encoding \"UTF8\": 0x00".into(),
        ));
        assert_eq!(
            (p.code, p.detail.as_str()),
            (ProblemCode::Internal, INTERNAL_DETAIL)
        );
        let p = Problem::from(StoreError::Unavailable(
            "password authentication failed".into(),
        ));
        assert_eq!(p.code, ProblemCode::Unavailable);
        assert!(!p.detail.contains("password"), "{}", p.detail);
    }
}
