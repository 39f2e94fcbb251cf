//! Idempotency-Key records (SPEC 2), kept per (organization, principal,
//! key).
//!
//! A request holds its key's lock from `idempotency_begin` until its effect
//! commits: every write operation of the [`Store`](crate::Store) that an
//! `Idempotency-Key` may accompany takes an optional [`Completion`] and
//! writes the completed record in the same transaction as the effect, so a
//! crash leaves both or neither. A completion whose lock was lost (it
//! expired and another request took the key) fails, and the effect with it.

use crate::Result;
use async_trait::async_trait;
use jiff::Timestamp;
use std::time::Duration;

/// Asks for a key's lock.
#[derive(Debug, Clone)]
pub struct IdempotencyBegin {
    pub org: String,
    pub principal: String,
    pub key: String,
    /// The request's fingerprint in its stored form.
    pub fingerprint: String,
    /// How long the lock outlives a holder that never finishes.
    pub lock_for: Duration,
    /// How long a completed record is kept.
    pub retain_for: Duration,
}

/// A key's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    pub key: String,
    pub fingerprint: String,
    pub state: RecordState,
    pub status: Option<u16>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<String>,
    /// A response body kept for replays that cannot re-read a resource.
    pub body: Option<String>,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordState {
    InProgress,
    Completed,
}

impl RecordState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// The outcome of `idempotency_begin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begun {
    /// The caller holds the lock under this token.
    Started(String),
    /// A live record holds the key.
    Existing(IdempotencyRecord),
}

/// Completes a record inside an effect's transaction.
#[derive(Debug, Clone)]
pub struct Completion {
    pub org: String,
    pub principal: String,
    pub key: String,
    pub token: String,
    pub fingerprint: String,
    pub status: u16,
    pub resource_kind: &'static str,
    pub resource_id: String,
    pub body: Option<String>,
    pub retain_for: Duration,
}

#[async_trait]
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Takes the key's lock unless a live record holds it. Of concurrent
    /// callers exactly one gets [`Begun::Started`].
    async fn idempotency_begin(&self, begin: &IdempotencyBegin) -> Result<Begun>;
    /// Drops the lock of a request that failed, so its retry runs afresh;
    /// nothing happens unless `token` still holds it.
    async fn idempotency_release(
        &self,
        org: &str,
        principal: &str,
        key: &str,
        token: &str,
    ) -> Result<()>;
    /// The caller's live record for `key`, if any.
    async fn idempotency_get(
        &self,
        org: &str,
        principal: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>>;
    /// Deletes at most `limit` expired records; returns how many.
    async fn idempotency_sweep(&self, limit: u32) -> Result<u64>;
}

/// Columns of `idempotency_keys` in the order [`record`] reads them.
pub(crate) const RECORD_COLUMNS: &str = "key, fingerprint, state, status, resource_kind, \
     resource_id, body, created_at, expires_at";

pub(crate) fn record(r: &impl crate::sql::Row) -> Result<IdempotencyRecord> {
    use idem_core::clock::from_micros;
    let state = r.text(2)?;
    Ok(IdempotencyRecord {
        key: r.text(0)?,
        fingerprint: r.text(1)?,
        state: match state.as_str() {
            "completed" => RecordState::Completed,
            _ => RecordState::InProgress,
        },
        status: r.opt_i64(3)?.map(|s| s as u16),
        resource_kind: r.opt_text(4)?,
        resource_id: r.opt_text(5)?,
        body: r.opt_text(6)?,
        created_at: from_micros(r.i64(7)?),
        expires_at: from_micros(r.i64(8)?),
    })
}

/// Writes a completed record, replacing the request's own in-progress row
/// (same token) or an expired one; matches nothing when another request
/// holds the key. Parameters: org, principal, key, fingerprint, token,
/// status, kind, id, body, now, expires_at.
pub(crate) const SQL_COMPLETE: &str = "INSERT INTO idempotency_keys (org, principal, key, \
     fingerprint, state, token, status, resource_kind, resource_id, body, created_at, \
     locked_until, expires_at) \
     VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, $8, $9, $10, $10, $11) \
     ON CONFLICT (org, principal, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     state = 'completed', token = excluded.token, status = excluded.status, \
     resource_kind = excluded.resource_kind, resource_id = excluded.resource_id, \
     body = excluded.body, locked_until = excluded.locked_until, \
     expires_at = excluded.expires_at \
     WHERE idempotency_keys.token = excluded.token \
     OR idempotency_keys.expires_at <= excluded.created_at \
     OR (idempotency_keys.state = 'in_progress' \
         AND idempotency_keys.locked_until <= excluded.created_at)";

pub(crate) fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The error of a completion that matched no row: the lock was lost.
pub(crate) fn lost(key: &str) -> crate::Error {
    crate::Error::KeyLost(format!(
        "the Idempotency-Key '{key}' was taken over by another request; nothing was changed"
    ))
}
