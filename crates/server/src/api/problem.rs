//! RFC 9457 problem documents with Idem's error codes (SPEC 10).

use crate::context;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use idem_core::FieldErrors;
use idem_store::Error as StoreError;
use serde_json::{Value, json};

/// An API failure, rendered as `application/problem+json`.
#[derive(Debug)]
pub struct Problem {
    pub status: StatusCode,
    pub code: &'static str,
    pub detail: String,
    pub extensions: Option<Value>,
    pub retry_after: Option<u32>,
}

impl Problem {
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Problem {
            status,
            code,
            detail: detail.into(),
            extensions: None,
            retry_after: None,
        }
    }

    pub fn with_extensions(mut self, extensions: Value) -> Self {
        self.extensions = Some(extensions);
        self
    }

    pub fn invalid(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", detail)
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
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", detail)
    }

    pub fn unauthenticated(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", detail)
    }

    pub fn permission_denied(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "PERMISSION_DENIED", detail)
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            format!("request body exceeds the limit of {limit} bytes"),
        )
    }

    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            detail,
        )
    }

    pub fn unavailable(detail: impl Into<String>) -> Self {
        let mut p = Self::new(StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE", detail);
        p.retry_after = Some(1);
        p
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", detail)
    }
}

impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { kind, id } => {
                Problem::not_found(format!("{} '{id}' not found", kind.replace('_', " ")))
            }
            StoreError::AlreadyExists { kind, id } => {
                let code = match kind {
                    "queue" => "QUEUE_ALREADY_EXISTS",
                    "principal" => "PRINCIPAL_ALREADY_EXISTS",
                    "organization" => "ORGANIZATION_ALREADY_EXISTS",
                    "job" => "JOB_ALREADY_EXISTS",
                    _ => return Problem::internal(format!("{kind} '{id}' collided")),
                };
                Problem::new(
                    StatusCode::CONFLICT,
                    code,
                    format!("{kind} '{id}' already exists"),
                )
            }
            StoreError::TaskExists(task) => Problem::new(
                StatusCode::CONFLICT,
                "TASK_ALREADY_EXISTS",
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
            StoreError::FailedPrecondition(msg) => Problem::invalid(msg),
            StoreError::Stale(msg) => Problem::new(StatusCode::CONFLICT, "STALE_VERSION", msg),
            StoreError::KeyLost(msg) => {
                let mut p = Problem::new(StatusCode::CONFLICT, "IDEMPOTENCY_KEY_IN_PROGRESS", msg);
                p.retry_after = Some(1);
                p
            }
            StoreError::Invalid(errors) => Problem::fields(errors),
            StoreError::Unavailable(msg) => {
                tracing::warn!(error = %msg, "store unavailable");
                Problem::unavailable("the store is unreachable; retry shortly")
            }
            StoreError::Internal(msg) | StoreError::Retryable(msg) => {
                tracing::error!(error = %msg, "store error");
                Problem::internal("internal error")
            }
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let ctx = context::current();
        let mut body = json!({
            "type": self.code,
            "title": self.status.canonical_reason().unwrap_or("Error"),
            "status": self.status.as_u16(),
            "detail": self.detail,
            "request_id": ctx.as_ref().map(|c| c.request_id.clone()),
            "instance": ctx.as_ref().map(|c| c.path.clone()),
        });
        if let Some(ext) = self.extensions {
            body["extensions"] = ext;
        }
        let mut response = (self.status, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        match self.status {
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
