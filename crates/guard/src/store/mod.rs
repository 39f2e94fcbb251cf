//! The claim store contract and its four implementations.
//!
//! Every store keeps two things per run key:
//!
//! - the **record** (`in_progress` or `completed`, with `attempt_id`,
//!   `fence`, `lease_expires` and `expire_at`), which a failed attempt
//!   deletes so that a retry can claim at once;
//! - a **fence watermark** (the last fencing number handed out for the key,
//!   with its own `expire_at`), which is *not* deleted on failure. It is what
//!   keeps fencing numbers growing across delete-on-failure.
//!
//! Beside them, a **token binding** ties an OIDC token that names no run
//! (by its digest) to the first run key it opened, until the token expires
//! ([`GuardStore::bind_token`]).
//!
//! A new fencing number is `max(watermark + 1, now in microseconds)`. The
//! watermark alone makes the sequence strictly increasing while it exists;
//! the clock term keeps it increasing after the watermark was swept (at least
//! one retention period later, when the clock has moved far past any number
//! previously handed out for the key). The clock term alone would not do: a
//! claim, a failure and a re-claim can fall in one microsecond of a coarse or
//! frozen clock, and a clock can step backwards.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use crate::key::RunKey;

mod memory;
mod postgres;
mod redis;
mod sqlite;

pub use memory::MemoryStore;
pub use postgres::{PostgresLimits, PostgresStore};
pub use redis::RedisStore;
pub use sqlite::SqliteStore;

/// A fencing number: grows strictly with every successful claim of a key.
///
/// Pass it downstream (the proxy sends it as `Idem-Fence`) so that a store
/// can refuse a write from an attempt older than one it has already seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fence(pub u64);

impl std::fmt::Display for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A won claim: the right to run the handler for `key` until the lease ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The run key.
    pub key: RunKey,
    /// Identifies this attempt; `finish` only acts while the record holds it.
    pub attempt_id: Uuid,
    /// This claim's fencing number.
    pub fence: Fence,
}

/// How long a claim holds the key, and how long its record is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimTerms {
    /// After this, another attempt may take the key over. Set it at least to
    /// the sender's attempt deadline.
    pub lease: Duration,
    /// After this, the record is ignored and may be swept; a delivery of the
    /// same key is then a new run. Never shorter than `lease` (a shorter value
    /// is raised to it).
    pub retention: Duration,
}

impl ClaimTerms {
    /// Retention raised to at least the lease, so a live lease is never
    /// ignored as expired.
    pub(crate) fn effective_retention(&self) -> Duration {
        self.retention.max(self.lease)
    }
}

impl Default for ClaimTerms {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(5 * 60),
            retention: Duration::from_secs(24 * 60 * 60),
        }
    }
}

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// This caller holds the key: run the handler, then `finish`.
    Claimed(Claim),
    /// A previous attempt completed: answer success without running.
    Completed,
    /// Another attempt holds an unexpired lease: answer 409.
    InProgress,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerOutcome {
    /// The effect happened: record `completed`.
    Success,
    /// It did not: delete the record so that a retry can claim at once.
    Failure,
}

/// The answer to a finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishResult {
    /// The record held this attempt and was updated or deleted.
    Applied,
    /// The record no longer holds this attempt (another took over an
    /// expired lease, or the record expired); nothing changed.
    Stale,
}

/// The answer to a renewal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewResult {
    /// The record still held this attempt; its lease was extended.
    Renewed,
    /// The record no longer holds this attempt in progress (it finished,
    /// another attempt took it over, or it expired or was swept); nothing
    /// changed, and the attempt must stop calling the run its own.
    Lost,
}

/// The state of a record, as [`GuardStore::inspect`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// An attempt holds (or held, if its lease expired) the key.
    InProgress,
    /// An attempt completed.
    Completed,
}

/// A record within its retention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordView {
    /// `in_progress` or `completed`.
    pub state: RunState,
    /// The attempt that wrote it.
    pub attempt_id: Uuid,
    /// That attempt's fencing number.
    pub fence: Fence,
}

/// What one [`GuardStore::sweep`] call deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Swept {
    /// Records past `expire_at` (at most `limit`).
    pub records: usize,
    /// Fence watermarks past their `expire_at` (at most `limit`).
    pub fences: usize,
    /// Token bindings past their expiry (at most `limit`). Redis expires
    /// them itself, and counts none here.
    pub tokens: usize,
}

/// How far a store's group commit has shared its commits: `operations`
/// claims, finishes (and on SQLite sweeps and token bindings) were made
/// durable by `commits`
/// commits. Counted since the store was opened, over all its clones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupCommits {
    /// Commits made (batches, and on PostgreSQL also operations that ran
    /// alone after their batch's statement failed).
    pub commits: u64,
    /// Operations those commits carried.
    pub operations: u64,
}

/// The counters behind [`GroupCommits`].
#[derive(Debug, Default)]
pub(crate) struct CommitCounter {
    commits: std::sync::atomic::AtomicU64,
    operations: std::sync::atomic::AtomicU64,
}

impl CommitCounter {
    pub(crate) fn count(&self, operations: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.commits.fetch_add(1, Relaxed);
        self.operations.fetch_add(operations as u64, Relaxed);
    }

    pub(crate) fn get(&self) -> GroupCommits {
        use std::sync::atomic::Ordering::Relaxed;
        GroupCommits {
            commits: self.commits.load(Relaxed),
            operations: self.operations.load(Relaxed),
        }
    }
}

/// Errors from a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed. The message carries the causes: a refused
    /// certificate is two of them down.
    #[error("postgres: {}", idem_postgres_tls::describe(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// No PostgreSQL connection could be had from the pool.
    #[error("postgres pool: {}", idem_postgres_tls::describe(.0))]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The PostgreSQL pool could not be built.
    #[error("postgres pool setup: {0}")]
    PoolSetup(#[from] deadpool_postgres::BuildError),
    /// Redis failed.
    #[error("redis: {0}")]
    Redis(#[from] ::redis::RedisError),
    /// A blocking store task panicked or was cancelled.
    #[error("store task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The commit an operation shared with others (group commit) failed:
    /// nothing of the operation was written.
    #[error("group commit failed: {0}")]
    Commit(String),
    /// The store's writer (SQLite) is gone: its thread could not start or
    /// stopped.
    #[error("store closed: {0}")]
    Closed(String),
    /// The store did not answer in the time the operation had.
    #[error("store timed out: {0}")]
    TimedOut(String),
    /// The store holds something this crate did not write.
    #[error("unexpected data in store: {0}")]
    Corrupt(String),
    /// The store URL names no supported store.
    #[error(
        "unsupported store URL {0:?}: expected memory, sqlite://PATH, postgres://…, redis://… or rediss://…"
    )]
    UnsupportedUrl(String),
    /// The store URL, or the TLS settings beside it, cannot be used.
    #[error("invalid store URL: {0}")]
    InvalidUrl(String),
}

/// An atomic claim store. All four implementations pass one conformance
/// suite (`tests/conformance.rs`).
#[async_trait]
pub trait GuardStore: Send + Sync + std::fmt::Debug + 'static {
    /// Atomically: a live `completed` record answers [`ClaimOutcome::Completed`];
    /// a live `in_progress` record with an unexpired lease answers
    /// [`ClaimOutcome::InProgress`]; otherwise (no record, an expired lease,
    /// or a record past `expire_at`) a fresh `in_progress` record is written
    /// with a new attempt id and fencing number.
    async fn claim(&self, key: &RunKey, terms: ClaimTerms) -> Result<ClaimOutcome, StoreError>;

    /// Only if the record still holds `claim.attempt_id` and is
    /// `in_progress`: success marks it `completed`, failure deletes it.
    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError>;

    /// Only if the record still holds `claim.attempt_id`, is `in_progress`
    /// and is not past `expire_at`: its lease is extended to end
    /// `terms.lease` from now, and its `expire_at` to at least the
    /// effective retention from now, so that a record is never ignored
    /// while its lease lives and a run is remembered for the retention
    /// after its last renewal. Neither is ever shortened. A lease that ran
    /// out but was not taken over is still this attempt's and is renewed.
    ///
    /// The fence watermark is left alone: it expires at least one retention
    /// after the claim, and a fence handed out after that (from the clock)
    /// is already larger than this claim's.
    async fn renew(&self, claim: &Claim, terms: ClaimTerms) -> Result<RenewResult, StoreError>;

    /// Deletes at most `limit` records, at most `limit` fence watermarks
    /// and at most `limit` token bindings past their `expire_at`.
    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError>;

    /// Atomically: unless a binding of `token` (a token's digest) lives,
    /// binds it to `key` for `ttl`. Answers the key the token is bound to:
    /// `key` when this call bound it (or bound it before), the first key
    /// otherwise. A binding past its expiry is ignored and replaced.
    async fn bind_token(
        &self,
        token: &str,
        key: &RunKey,
        ttl: Duration,
    ) -> Result<RunKey, StoreError>;

    /// The record of `key`, unless absent or past `expire_at`.
    async fn inspect(&self, key: &RunKey) -> Result<Option<RecordView>, StoreError>;
}

/// Opens the store a URL names: `memory`, `sqlite://PATH`,
/// `postgres://…` (or `postgresql://…`), `redis://…` or `rediss://…` (TLS,
/// trusting the system's roots). Schemas are created.
pub async fn open_store(url: &str) -> Result<Arc<dyn GuardStore>, StoreError> {
    open_store_with(url, PostgresLimits::default(), None).await
}

/// [`open_store`], with the limits a PostgreSQL store is opened with, and
/// `redis_ca_file`: a PEM file of the CA certificates a `rediss://`
/// server's certificate must chain to, instead of the system's. PostgreSQL
/// takes its CA file from the URL (`sslrootcert`).
pub async fn open_store_with(
    url: &str,
    postgres: PostgresLimits,
    redis_ca_file: Option<&std::path::Path>,
) -> Result<Arc<dyn GuardStore>, StoreError> {
    if let Some(path) = redis_ca_file {
        if !url.starts_with("rediss://") {
            return Err(StoreError::InvalidUrl(format!(
                "a Redis CA file ({}) applies to a rediss:// store only",
                path.display()
            )));
        }
        let pem = std::fs::read(path).map_err(|e| {
            StoreError::InvalidUrl(format!("Redis CA file {}: {e}", path.display()))
        })?;
        return Ok(Arc::new(
            RedisStore::connect_tls(url, "idem:guard:", Some(pem)).await?,
        ));
    }
    if url == "memory" || url == "memory://" {
        return Ok(Arc::new(MemoryStore::new()));
    }
    if let Some(path) = url.strip_prefix("sqlite://") {
        if path.is_empty() {
            return Err(StoreError::UnsupportedUrl(url.to_owned()));
        }
        return Ok(Arc::new(SqliteStore::open(path).await?));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Arc::new(PostgresStore::connect_with(url, postgres).await?));
    }
    if url.starts_with("redis://") || url.starts_with("rediss://") {
        return Ok(Arc::new(RedisStore::connect(url, "idem:guard:").await?));
    }
    Err(StoreError::UnsupportedUrl(url.to_owned()))
}

/// What a claim decides about an existing record, in the stores that decide
/// in Rust (memory, SQLite) rather than in SQL or Lua.
pub(crate) fn existing_blocks(
    state: RunState,
    lease_expires_us: i64,
    expire_at_us: i64,
    now_us: i64,
) -> Option<ClaimOutcome> {
    if expire_at_us <= now_us {
        return None;
    }
    match state {
        RunState::Completed => Some(ClaimOutcome::Completed),
        RunState::InProgress if lease_expires_us > now_us => Some(ClaimOutcome::InProgress),
        RunState::InProgress => None,
    }
}

/// The next fencing number (see the module documentation).
pub(crate) fn next_fence(watermark: Option<i64>, now_us: i64) -> i64 {
    match watermark {
        Some(w) => w.saturating_add(1).max(now_us),
        None => now_us.max(1),
    }
}

pub(crate) fn fence_from_db(value: i64) -> Result<Fence, StoreError> {
    u64::try_from(value)
        .map(Fence)
        .map_err(|_| StoreError::Corrupt(format!("negative fence {value}")))
}

pub(crate) fn parse_attempt(value: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(value).map_err(|_| StoreError::Corrupt(format!("attempt id {value:?}")))
}

pub(crate) fn parse_key(value: &str) -> Result<RunKey, StoreError> {
    RunKey::parse(value).ok_or_else(|| StoreError::Corrupt(format!("run key {value:?}")))
}

pub(crate) fn parse_state(value: &str) -> Result<RunState, StoreError> {
    match value {
        "in_progress" => Ok(RunState::InProgress),
        "completed" => Ok(RunState::Completed),
        other => Err(StoreError::Corrupt(format!("state {other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_grows_past_watermark_even_when_clock_stands_still() {
        assert_eq!(next_fence(None, 1_000), 1_000);
        assert_eq!(next_fence(Some(1_000), 1_000), 1_001);
        assert_eq!(next_fence(Some(1_001), 900), 1_002);
        assert_eq!(next_fence(Some(5), 1_000), 1_000);
        assert_eq!(next_fence(None, -3), 1);
    }

    #[test]
    fn expired_records_never_block() {
        assert_eq!(
            existing_blocks(RunState::Completed, 0, 100, 50),
            Some(ClaimOutcome::Completed)
        );
        assert_eq!(existing_blocks(RunState::Completed, 0, 100, 100), None);
        assert_eq!(
            existing_blocks(RunState::InProgress, 60, 100, 50),
            Some(ClaimOutcome::InProgress)
        );
        assert_eq!(existing_blocks(RunState::InProgress, 50, 100, 50), None);
    }

    #[tokio::test]
    async fn unknown_store_urls_are_rejected() {
        for url in ["", "mysql://x", "sqlite://", "file:///tmp/x"] {
            assert!(matches!(
                open_store(url).await,
                Err(StoreError::UnsupportedUrl(_))
            ));
        }
    }
}
