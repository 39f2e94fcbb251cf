//! Problem documents (RFC 9457) and the catalogue of their `type` codes.

use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every `type` a problem document of Idem's carries, with the status it is
/// answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemCode {
    /// A bad request; `extensions.errors` names each bad field.
    InvalidArgument,
    IdempotencyKeyInvalid,
    IdempotencyKeyMissing,
    Unauthenticated,
    PermissionDenied,
    /// A person-only operation (`x-person-only` in the OpenAPI document)
    /// called with a service principal's key, whatever its role.
    UserIdentityRequired,
    NotFound,
    /// The route exists, but not with this method.
    MethodNotAllowed,
    QueueAlreadyExists,
    /// `extensions.task` describes the task holding the ID.
    TaskAlreadyExists,
    JobAlreadyExists,
    PrincipalAlreadyExists,
    OrganizationAlreadyExists,
    /// Another request holds the key; answered with `Retry-After`.
    IdempotencyKeyInProgress,
    /// `expected_updated_at` is not the resource's version.
    StaleVersion,
    /// A well-formed request the resource's current state does not allow
    /// (a finished task run again, the last signing secret or admin key).
    FailedPrecondition,
    /// A pull task is leased, also to the caller; `extensions.claim` gives
    /// `claimant` and `lease_expires_at`.
    WorkAlreadyClaimed,
    /// The `attempt_id` is not the task's current lease; nothing changed.
    LeaseLost,
    /// What the key's request created or changed no longer exists.
    IdempotentResourceGone,
    PayloadTooLarge,
    UnsupportedMediaType,
    /// The key was used for a different request.
    IdempotencyKeyMismatch,
    /// An organization's quota is reached; `extensions.limit` names it and
    /// `extensions.max` gives its value.
    ResourceExhausted,
    Internal,
    /// The store is unreachable; answered with `Retry-After`.
    Unavailable,
}

impl ProblemCode {
    pub const ALL: &[ProblemCode] = &[
        Self::InvalidArgument,
        Self::IdempotencyKeyInvalid,
        Self::IdempotencyKeyMissing,
        Self::Unauthenticated,
        Self::PermissionDenied,
        Self::UserIdentityRequired,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::QueueAlreadyExists,
        Self::TaskAlreadyExists,
        Self::JobAlreadyExists,
        Self::PrincipalAlreadyExists,
        Self::OrganizationAlreadyExists,
        Self::IdempotencyKeyInProgress,
        Self::StaleVersion,
        Self::FailedPrecondition,
        Self::WorkAlreadyClaimed,
        Self::LeaseLost,
        Self::IdempotentResourceGone,
        Self::PayloadTooLarge,
        Self::UnsupportedMediaType,
        Self::IdempotencyKeyMismatch,
        Self::ResourceExhausted,
        Self::Internal,
        Self::Unavailable,
    ];

    /// The `type` string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::IdempotencyKeyInvalid => "IDEMPOTENCY_KEY_INVALID",
            Self::IdempotencyKeyMissing => "IDEMPOTENCY_KEY_MISSING",
            Self::Unauthenticated => "UNAUTHENTICATED",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::UserIdentityRequired => "USER_IDENTITY_REQUIRED",
            Self::NotFound => "NOT_FOUND",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::QueueAlreadyExists => "QUEUE_ALREADY_EXISTS",
            Self::TaskAlreadyExists => "TASK_ALREADY_EXISTS",
            Self::JobAlreadyExists => "JOB_ALREADY_EXISTS",
            Self::PrincipalAlreadyExists => "PRINCIPAL_ALREADY_EXISTS",
            Self::OrganizationAlreadyExists => "ORGANIZATION_ALREADY_EXISTS",
            Self::IdempotencyKeyInProgress => "IDEMPOTENCY_KEY_IN_PROGRESS",
            Self::StaleVersion => "STALE_VERSION",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::WorkAlreadyClaimed => "WORK_ALREADY_CLAIMED",
            Self::LeaseLost => "LEASE_LOST",
            Self::IdempotentResourceGone => "IDEMPOTENT_RESOURCE_GONE",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            Self::IdempotencyKeyMismatch => "IDEMPOTENCY_KEY_MISMATCH",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::Internal => "INTERNAL",
            Self::Unavailable => "UNAVAILABLE",
        }
    }

    /// The code a `type` string names; `None` for a code this version does
    /// not know (a newer server's, or a proxy's).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == s)
    }

    /// What the code means and what to do about it, for the catalogue
    /// (`docs/ERRORS.md`).
    pub fn meaning(self) -> &'static str {
        match self {
            Self::InvalidArgument => {
                "A field, parameter or header is malformed or out of range; `extensions.errors` lists each one as `{field, message}`. Nothing was written. Fix the request."
            }
            Self::IdempotencyKeyInvalid => {
                "The `Idempotency-Key` header is empty, longer than 255 characters, not printable ASCII, a list, or sent twice. Nothing ran."
            }
            Self::IdempotencyKeyMissing => {
                "The server runs with `--require-idempotency-key` and this `x-idempotent` operation came without a key. Nothing ran."
            }
            Self::Unauthenticated => {
                "No API key, or one the server does not know (revoked, mistyped). Send `Authorization: Bearer <key>`."
            }
            Self::PermissionDenied => {
                "The key's role is too weak for the operation (a reader writing, a writer managing queues or principals), or the operation is reserved to the admins of the organization `default`."
            }
            Self::UserIdentityRequired => {
                "The operation is `x-person-only` (creating organizations, changing roles, rotating or deleting signing secrets, creating admin principals or admin keys) and the key belongs to a `service` principal. Use a person's key."
            }
            Self::NotFound => {
                "No such resource in the caller's organization (another organization's resources are not found either), or no such route."
            }
            Self::MethodNotAllowed => {
                "The route exists, but not with this method; `Allow` lists the methods it takes."
            }
            Self::QueueAlreadyExists => "A queue of that name exists in the organization.",
            Self::TaskAlreadyExists => {
                "The task ID is taken in the queue: by a task that exists, or by one that ended within the queue's dedup window. `extensions.task` describes it (`id`, `state`, `created_at`, `finished_at`). Nothing was created."
            }
            Self::JobAlreadyExists => "A cron job of that name exists in the organization.",
            Self::PrincipalAlreadyExists => "A principal of that name exists in the organization.",
            Self::OrganizationAlreadyExists => "An organization of that name exists.",
            Self::IdempotencyKeyInProgress => {
                "Another request with the same `Idempotency-Key` is still running; retry after `Retry-After` seconds to get its answer."
            }
            Self::StaleVersion => {
                "`expected_updated_at` is not the resource's current `updated_at`: someone changed it since it was read. Read it again and reapply the change."
            }
            Self::FailedPrecondition => {
                "A well-formed request the resource's current state does not allow: running a task that has ended, redriving one that has not, removing an organization's last admin key or last signing secret."
            }
            Self::WorkAlreadyClaimed => {
                "A pull task is leased (also when the caller holds the lease: a retried claim answers this). `extensions.claim` gives `claimant` and `lease_expires_at`; read the task to see whether the lease is yours."
            }
            Self::LeaseLost => {
                "The `attempt_id` is not the task's current lease, or the caller does not hold it: it expired, was released or reassigned, the task finished otherwise, or it is another principal's. Nothing changed; read the task. (A holder's repeated complete or fail of the attempt it ended, with the same result or error, is not this: it answers 200, `Idempotent-Replayed: true`.)"
            }
            Self::IdempotentResourceGone => {
                "The request this `Idempotency-Key` made succeeded, but what it made is gone (deleted, or made again under the same name since) or no longer visible to the caller. `extensions.idempotency` names it (`resource_kind`, `resource_id`)."
            }
            Self::PayloadTooLarge => {
                "The body is over the server's limit (1 MiB unless configured). The connection is closed after the answer."
            }
            Self::UnsupportedMediaType => {
                "The body's `Content-Type` is not one the operation reads (`application/json`; for task creates also `multipart/form-data`)."
            }
            Self::IdempotencyKeyMismatch => {
                "The `Idempotency-Key` was used within its retention for a different request; `extensions.idempotency.differs` names the parts that differ (`method`, `path`, `query`, `body`). Nothing ran. Use a new key for a new request."
            }
            Self::ResourceExhausted => {
                "A creation would pass one of the organization's quotas; `extensions.limit` names it and `extensions.max` gives its value. Nothing was created."
            }
            Self::Internal => {
                "A fault of the server; its log holds the cause under the problem's `request_id`. Not listed by any operation: it is a bug."
            }
            Self::Unavailable => {
                "The store could not be reached in time, the database rolled the request's transaction back for a conflict with a concurrent one (nothing was written), or the request ran past `--request-timeout`; `/readyz` also answers it while a background task (dispatcher, scheduler, sweeper) is being restarted, naming it in `extensions.down`. Retry after `Retry-After` seconds."
            }
        }
    }

    /// The status a problem of this code is answered with.
    pub fn status(self) -> StatusCode {
        match self {
            Self::InvalidArgument | Self::IdempotencyKeyInvalid | Self::IdempotencyKeyMissing => {
                StatusCode::BAD_REQUEST
            }
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::PermissionDenied | Self::UserIdentityRequired => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::QueueAlreadyExists
            | Self::TaskAlreadyExists
            | Self::JobAlreadyExists
            | Self::PrincipalAlreadyExists
            | Self::OrganizationAlreadyExists
            | Self::IdempotencyKeyInProgress
            | Self::StaleVersion
            | Self::FailedPrecondition
            | Self::WorkAlreadyClaimed
            | Self::LeaseLost => StatusCode::CONFLICT,
            Self::IdempotentResourceGone => StatusCode::GONE,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::IdempotencyKeyMismatch => StatusCode::UNPROCESSABLE_ENTITY,
            Self::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl std::fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem document (`application/problem+json`), as Idem answers every
/// error.
///
/// `type` stays a string: a client must be able to read a code it does not
/// know. [`Problem::known_code`] maps it to the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// One of Idem's error codes (`TASK_ALREADY_EXISTS`, `NOT_FOUND`, …).
    #[serde(rename = "type")]
    pub code: String,
    /// The status's reason phrase (`Conflict`).
    #[serde(default)]
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong, for people.
    #[serde(default)]
    pub detail: Option<String>,
    /// The `Idem-Request-Id` of the failed request, for the server's logs.
    #[serde(default)]
    pub request_id: Option<String>,
    /// The request path.
    #[serde(default)]
    pub instance: Option<String>,
    /// Code-specific details: `errors` (field errors) for
    /// `INVALID_ARGUMENT`, `task` for `TASK_ALREADY_EXISTS`, `idempotency`
    /// for the idempotency codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
}

impl Problem {
    /// The code in the catalogue, when `type` is one this version knows.
    pub fn known_code(&self) -> Option<ProblemCode> {
        ProblemCode::parse(&self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_their_names() {
        for &code in ProblemCode::ALL {
            assert_eq!(ProblemCode::parse(code.as_str()), Some(code));
            assert!(code.status().is_client_error() || code.status().is_server_error());
        }
        assert_eq!(ProblemCode::parse("TEAPOT"), None);
    }

    #[test]
    fn a_document_with_an_unknown_code_still_decodes() {
        let p: Problem =
            serde_json::from_str(r#"{"type": "SOMETHING_NEW", "status": 418}"#).unwrap();
        assert_eq!((p.code.as_str(), p.known_code()), ("SOMETHING_NEW", None));
    }
}
