//! SQLite: one file, zero setup. Each claim is one `BEGIN IMMEDIATE`
//! transaction, which takes SQLite's write lock before reading, so two
//! processes sharing the file cannot both see "no record" and both claim.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use uuid::Uuid;

use super::{
    Claim, ClaimOutcome, ClaimTerms, FinishResult, GuardStore, HandlerOutcome, RecordView,
    StoreError, Swept, existing_blocks, fence_from_db, next_fence, parse_attempt, parse_state,
};
use crate::clock::{Clock, SystemClock, duration_micros, micros};
use crate::key::RunKey;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS idem_guard_runs (
    key TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed')),
    attempt_id TEXT NOT NULL,
    fence INTEGER NOT NULL,
    lease_expires_us INTEGER NOT NULL,
    expire_at_us INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idem_guard_runs_expire ON idem_guard_runs (expire_at_us);
CREATE TABLE IF NOT EXISTS idem_guard_fences (
    key TEXT PRIMARY KEY,
    fence INTEGER NOT NULL,
    expire_at_us INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idem_guard_fences_expire ON idem_guard_fences (expire_at_us);
";

/// A store in one SQLite file (WAL mode, `synchronous=FULL`).
///
/// The connection is used from a blocking thread so that SQLite's waits
/// (fsync, the busy timeout) never stall the async runtime.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    clock: Arc<dyn Clock>,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` on the system clock.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with_clock(path, Arc::new(SystemClock)).await
    }

    /// Opens the database at `path`, reading time from `clock`.
    pub async fn open_with_clock(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let open_path = path.clone();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection, StoreError> {
            let conn = Connection::open(&open_path)?;
            // Other processes may hold the write lock briefly; wait rather
            // than fail a claim with SQLITE_BUSY.
            conn.busy_timeout(Duration::from_secs(5))?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            // A completed record lost to a power cut would let a retry run
            // the effect again, so commits are fsynced.
            conn.pragma_update(None, "synchronous", "FULL")?;
            conn.execute_batch(SCHEMA)?;
            Ok(conn)
        })
        .await??;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            clock,
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn with_conn<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, i64) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        let clock = Arc::clone(&self.clock);
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|e| e.into_inner());
            // Read the clock under the lock so that "now" never goes
            // backwards between two operations of this store.
            let now = micros(clock.now());
            f(&mut conn, now)
        })
        .await?
    }
}

#[async_trait]
impl GuardStore for SqliteStore {
    async fn claim(&self, key: &RunKey, terms: ClaimTerms) -> Result<ClaimOutcome, StoreError> {
        let key = key.clone();
        self.with_conn(move |conn, now| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let existing = tx
                .query_row(
                    "SELECT state, lease_expires_us, expire_at_us FROM idem_guard_runs WHERE key = ?1",
                    [key.as_str()],
                    |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?)),
                )
                .optional()?;
            if let Some((state, lease_expires, expire_at)) = existing
                && let Some(blocked) = existing_blocks(parse_state(&state)?, lease_expires, expire_at, now)
            {
                return Ok(blocked);
            }
            let watermark: Option<i64> = tx
                .query_row(
                    "SELECT fence FROM idem_guard_fences WHERE key = ?1",
                    [key.as_str()],
                    |row| row.get(0),
                )
                .optional()?;
            let fence = next_fence(watermark, now);
            let attempt_id = Uuid::now_v7();
            let expire_at = now.saturating_add(duration_micros(terms.effective_retention()));
            let lease_expires = now.saturating_add(duration_micros(terms.lease));
            tx.execute(
                "INSERT INTO idem_guard_fences (key, fence, expire_at_us) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET fence = excluded.fence,
                     expire_at_us = max(expire_at_us, excluded.expire_at_us)",
                params![key.as_str(), fence, expire_at],
            )?;
            tx.execute(
                "INSERT OR REPLACE INTO idem_guard_runs
                     (key, state, attempt_id, fence, lease_expires_us, expire_at_us)
                 VALUES (?1, 'in_progress', ?2, ?3, ?4, ?5)",
                params![key.as_str(), attempt_id.to_string(), fence, lease_expires, expire_at],
            )?;
            tx.commit()?;
            Ok(ClaimOutcome::Claimed(Claim {
                key,
                attempt_id,
                fence: fence_from_db(fence)?,
            }))
        })
        .await
    }

    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        let key = claim.key.clone();
        let attempt = claim.attempt_id.to_string();
        self.with_conn(move |conn, _now| {
            let sql = match outcome {
                HandlerOutcome::Success => {
                    "UPDATE idem_guard_runs SET state = 'completed'
                     WHERE key = ?1 AND attempt_id = ?2 AND state = 'in_progress'"
                }
                HandlerOutcome::Failure => {
                    "DELETE FROM idem_guard_runs
                     WHERE key = ?1 AND attempt_id = ?2 AND state = 'in_progress'"
                }
            };
            let changed = conn.execute(sql, params![key.as_str(), attempt])?;
            Ok(if changed == 1 {
                FinishResult::Applied
            } else {
                FinishResult::Stale
            })
        })
        .await
    }

    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with_conn(move |conn, now| {
            let records = conn.execute(
                "DELETE FROM idem_guard_runs WHERE key IN
                     (SELECT key FROM idem_guard_runs WHERE expire_at_us <= ?1 LIMIT ?2)",
                params![now, limit],
            )?;
            let fences = conn.execute(
                "DELETE FROM idem_guard_fences WHERE key IN
                     (SELECT key FROM idem_guard_fences WHERE expire_at_us <= ?1 LIMIT ?2)",
                params![now, limit],
            )?;
            Ok(Swept { records, fences })
        })
        .await
    }

    async fn inspect(&self, key: &RunKey) -> Result<Option<RecordView>, StoreError> {
        let key = key.clone();
        self.with_conn(move |conn, now| {
            let row = conn
                .query_row(
                    "SELECT state, attempt_id, fence FROM idem_guard_runs
                     WHERE key = ?1 AND expire_at_us > ?2",
                    params![key.as_str(), now],
                    |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, String>(1)?,
                            row.get::<_, i64>(2)?,
                        ))
                    },
                )
                .optional()?;
            row.map(|(state, attempt, fence)| {
                Ok(RecordView {
                    state: parse_state(&state)?,
                    attempt_id: parse_attempt(&attempt)?,
                    fence: fence_from_db(fence)?,
                })
            })
            .transpose()
        })
        .await
    }
}
