//! Idempotency-Key records (API.md §2), kept per (organization, principal,
//! key).
//!
//! A request holds its key's lock from `idempotency_begin` until its effect
//! commits: every write operation of the [`Store`](crate::Store) that an
//! `Idempotency-Key` may accompany takes an optional [`KeyCompletion`], and
//! the backend's transaction helper itself writes the completed record in
//! the same transaction as the effect, so a crash leaves both or neither. A
//! completion whose lock was lost (it expired and another request took the
//! key) fails, and the effect with it.
//!
//! A write may also claim its key without a lock taken before it
//! ([`KeyCompletion::claim`]): the record is then inserted by the effect's
//! own transaction, and a live record of another request found there stops
//! the write with [`Error::KeyHeld`](crate::Error::KeyHeld) before anything
//! is written. Task creates do so, so that a key costs them neither a
//! commit nor a round trip of its own.

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
    /// For a completed record, the instant its effect committed: a resource
    /// created after it is not the one this request made. `None` while in
    /// progress.
    pub completed_at: Option<Timestamp>,
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

/// What `idempotency_begin` found: the key's lock for this request, or the
/// record that holds the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockOutcome {
    /// The caller holds the lock under this token.
    Started(String),
    /// A live record holds the key.
    Existing(IdempotencyRecord),
}

/// The completed record a keyed write commits with its effect.
#[derive(Debug, Clone)]
pub struct KeyCompletion {
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
    /// No lock was taken for this request (`token` holds none): the write
    /// claims the key in its own transaction, and answers
    /// [`Error::KeyHeld`](crate::Error::KeyHeld) with the live record of
    /// another request that holds it, writing nothing.
    pub claim: bool,
}

#[async_trait]
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Takes the key's lock unless a live record holds it. Of concurrent
    /// callers exactly one gets [`LockOutcome::Started`].
    async fn idempotency_begin(&self, begin: &IdempotencyBegin) -> Result<LockOutcome>;
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
