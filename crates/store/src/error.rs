//! What a store operation can fail with.

use crate::records::TaskSummary;
use idem_core::FieldErrors;

/// A store failure. Conflicts and absences are distinct variants so the API
/// can answer 404 and 409 precisely.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The resource (or its parent, named by `kind`) does not exist.
    #[error("{kind} '{id}' not found")]
    NotFound { kind: &'static str, id: String },
    /// A resource with that name exists already.
    #[error("{kind} '{id}' already exists")]
    AlreadyExists { kind: &'static str, id: String },
    /// The task ID is taken by a live task or a tombstone in its window.
    #[error("task '{}' exists", .0.task_id)]
    TaskExists(Box<TaskSummary>),
    /// The request's Idempotency-Key lock was taken over by another request
    /// (the lock had expired); the effect was not committed.
    #[error("{0}")]
    KeyLost(String),
    /// The Idempotency-Key a write was to claim is held by this live record
    /// of another request (completed, or in progress); nothing was written.
    #[error("the Idempotency-Key '{}' is held by another request", .0.key)]
    KeyHeld(Box<crate::idempotency::IdempotencyRecord>),
    /// A request the current state does not allow.
    #[error("{0}")]
    FailedPrecondition(String),
    /// An update based on a version that is no longer current
    /// (`expected_updated_at`).
    #[error("{0}")]
    Stale(String),
    /// The organization is at one of its quotas; nothing was written.
    #[error("{0}")]
    ResourceExhausted(crate::quotas::QuotaExceeded),
    /// A pull task is leased, the caller's own claim included: who holds
    /// it and until when.
    #[error("task '{task_id}' is claimed by '{claimant}'")]
    WorkClaimed {
        task_id: String,
        claimant: String,
        lease_expires_at: jiff::Timestamp,
    },
    /// The `attempt_id` an action named is not the task's current lease
    /// (expired, released, reassigned or finished); nothing changed.
    #[error("{0}")]
    LeaseLost(String),
    /// The caller's role or relation to the resource does not allow this.
    #[error("{0}")]
    PermissionDenied(String),
    /// Only a person may do this (a `person_only` queue's completions).
    #[error("{0}")]
    PersonRequired(String),
    /// Input that fails validation against stored state.
    #[error("invalid: {0}")]
    Invalid(FieldErrors),
    /// An item of an all-or-nothing batch could not be created (`error`
    /// says why: [`Error::TaskExists`] or [`Error::Invalid`]); nothing of
    /// the batch was written.
    #[error("tasks[{index}]: {error}")]
    BatchItem { index: usize, error: Box<Error> },
    /// The database cannot be reached or refused the operation.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The database aborted the transaction to resolve a conflict with a
    /// concurrent one (a deadlock, a serialization failure); running it
    /// again may succeed.
    #[error("store error: {0}")]
    Retryable(String),
    /// A bug or corrupted data.
    #[error("store error: {0}")]
    Internal(String),
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::SqliteFailure(code, _)
                if matches!(
                    code.code,
                    rusqlite::ErrorCode::DatabaseBusy
                        | rusqlite::ErrorCode::DatabaseLocked
                        | rusqlite::ErrorCode::CannotOpen
                        | rusqlite::ErrorCode::DiskFull
                        | rusqlite::ErrorCode::SystemIoFailure
                ) =>
            {
                Error::Unavailable(e.to_string())
            }
            other => Error::Internal(other.to_string()),
        }
    }
}

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        use tokio_postgres::error::SqlState;
        match e.as_db_error() {
            Some(db)
                if [
                    SqlState::T_R_DEADLOCK_DETECTED,
                    SqlState::T_R_SERIALIZATION_FAILURE,
                ]
                .contains(db.code()) =>
            {
                Error::Retryable(format!("{}: {}", db.code().code(), db.message()))
            }
            // `statement_timeout` ran out: the database is too busy (or a
            // lock is held too long) to answer in time, which is not a bug.
            Some(db) if *db.code() == SqlState::QUERY_CANCELED => {
                Error::Unavailable(format!("{}: {}", db.code().code(), db.message()))
            }
            // The server is going away or refusing work (class 57, operator
            // intervention: a shutdown, or a backend terminated by an
            // administrator), the connection broke (class 08), or it is out
            // of resources (class 53): the store is unavailable, not wrong.
            Some(db)
                if ["57", "08", "53"]
                    .iter()
                    .any(|c| db.code().code().starts_with(c)) =>
            {
                Error::Unavailable(format!("{}: {}", db.code().code(), db.message()))
            }
            Some(db) => Error::Internal(format!("{}: {}", db.code().code(), db.message())),
            // With its causes: a refused certificate is two causes down.
            None => Error::Unavailable(idem_postgres_tls::describe(&e)),
        }
    }
}

impl From<deadpool_postgres::PoolError> for Error {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        Error::Unavailable(idem_postgres_tls::describe(&e))
    }
}
