//! SQLite: one file, zero setup, and group commit.
//!
//! With `synchronous=FULL` every commit waits for an fsync, so a commit per
//! claim and per finish caps the store at the disk's fsync rate. Instead one
//! writer thread owns the write connection: it takes every claim, finish and
//! sweep that queued up while the previous commit was being made durable,
//! runs each in its own savepoint inside one `BEGIN IMMEDIATE` transaction,
//! commits once, and only then answers each caller. Operations in a batch run
//! one after the other, in arrival order, each seeing the ones before it, so
//! a batch decides exactly what the same operations run one by one would
//! have; a failing operation rolls back to its savepoint alone.
//! `BEGIN IMMEDIATE` takes SQLite's write lock before reading, so two
//! processes sharing the file cannot both see "no record" and both claim.
//! `inspect`, which writes nothing, reads on a connection of its own.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;
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

/// Most operations per commit: bounds the latency the first one waits for.
const MAX_BATCH: usize = 512;

/// A store in one SQLite file (WAL mode, `synchronous=FULL`), written by one
/// thread that commits concurrent operations together (see the module
/// documentation). Clones share the writer; it stops when the last clone is
/// dropped.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writer: mpsc::Sender<Job>,
    // Used from a blocking thread so that SQLite's waits never stall the
    // async runtime.
    reader: Arc<Mutex<Connection>>,
    clock: Arc<dyn Clock>,
    path: PathBuf,
}

/// One queued write.
enum Op {
    Claim {
        key: RunKey,
        terms: ClaimTerms,
    },
    Finish {
        key: RunKey,
        attempt: Uuid,
        outcome: HandlerOutcome,
    },
    Sweep {
        limit: i64,
    },
}

/// What a write decided, told to its caller once the commit is durable.
#[derive(Debug)]
enum Done {
    Claim(ClaimOutcome),
    Finish(FinishResult),
    Sweep(Swept),
}

struct Job {
    op: Op,
    reply: oneshot::Sender<Result<Done, StoreError>>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    // Other processes may hold the write lock briefly; wait rather than
    // fail a claim with SQLITE_BUSY.
    conn.busy_timeout(Duration::from_secs(5))?;
    Ok(conn)
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
        let (writer, reader) =
            tokio::task::spawn_blocking(move || -> Result<(Connection, Connection), StoreError> {
                let writer = open_connection(&open_path)?;
                writer.pragma_update(None, "journal_mode", "WAL")?;
                // A completed record lost to a power cut would let a retry
                // run the effect again, so commits are fsynced.
                writer.pragma_update(None, "synchronous", "FULL")?;
                writer.execute_batch(SCHEMA)?;
                let reader = open_connection(&open_path)?;
                Ok((writer, reader))
            })
            .await??;
        let (jobs, queue) = mpsc::channel();
        let writer_clock = Arc::clone(&clock);
        std::thread::Builder::new()
            .name("idem-guard-sqlite-writer".into())
            .spawn(move || run_writer(writer, writer_clock, queue))
            .map_err(|e| StoreError::Closed(format!("cannot start the SQLite writer: {e}")))?;
        Ok(Self {
            writer: jobs,
            reader: Arc::new(Mutex::new(reader)),
            clock,
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `op` in the next group commit; answers once that commit is
    /// durable.
    async fn write(&self, op: Op) -> Result<Done, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.writer
            .send(Job { op, reply })
            .map_err(|_| StoreError::Closed("the SQLite writer stopped".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Closed("the SQLite writer stopped".into()))?
    }
}

fn unexpected(done: Done) -> StoreError {
    StoreError::Corrupt(format!("the SQLite writer answered {done:?}"))
}

/// The writer thread: one batch, one transaction, one commit at a time.
fn run_writer(conn: Connection, clock: Arc<dyn Clock>, queue: mpsc::Receiver<Job>) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        run_batch(&conn, clock.as_ref(), batch);
    }
}

/// Runs `batch` in one transaction, each operation in its own savepoint and
/// in order, commits, and answers every job.
fn run_batch(conn: &Connection, clock: &dyn Clock, batch: Vec<Job>) {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "guard sqlite writer could not begin a transaction");
        let message = e.to_string();
        for job in batch {
            let _ = job.reply.send(Err(StoreError::Commit(message.clone())));
        }
        return;
    }
    let mut results = Vec::with_capacity(batch.len());
    for job in &batch {
        results.push(run_in_savepoint(conn, clock, &job.op));
    }
    let committed = conn.execute_batch("COMMIT").map_err(|e| e.to_string());
    if let Err(e) = &committed {
        tracing::error!(error = %e, "guard sqlite writer could not commit");
        let _ = conn.execute_batch("ROLLBACK");
    }
    for (job, result) in batch.into_iter().zip(results) {
        let answer = match (&committed, result) {
            (_, Err(e)) => Err(e),
            (Ok(()), Ok(done)) => Ok(done),
            (Err(e), Ok(_)) => Err(StoreError::Commit(e.clone())),
        };
        let _ = job.reply.send(answer);
    }
}

fn run_in_savepoint(conn: &Connection, clock: &dyn Clock, op: &Op) -> Result<Done, StoreError> {
    conn.prepare_cached("SAVEPOINT op")?.execute([])?;
    // Read per operation, in order, so "now" never goes backwards between
    // two operations of this store.
    let now = micros(clock.now());
    let result = catch_unwind(AssertUnwindSafe(|| apply(conn, now, op)))
        .unwrap_or_else(|_| Err(StoreError::Corrupt("a store operation panicked".into())));
    let closed = if result.is_ok() {
        conn.prepare_cached("RELEASE op")?.execute([]).map(drop)
    } else {
        conn.execute_batch("ROLLBACK TO op; RELEASE op")
    };
    closed?;
    result
}

fn apply(conn: &Connection, now: i64, op: &Op) -> Result<Done, StoreError> {
    match op {
        Op::Claim { key, terms } => claim(conn, now, key, *terms).map(Done::Claim),
        Op::Finish {
            key,
            attempt,
            outcome,
        } => finish(conn, key, attempt, *outcome).map(Done::Finish),
        Op::Sweep { limit } => sweep(conn, now, *limit).map(Done::Sweep),
    }
}

fn claim(
    conn: &Connection,
    now: i64,
    key: &RunKey,
    terms: ClaimTerms,
) -> Result<ClaimOutcome, StoreError> {
    let existing = conn
        .prepare_cached(
            "SELECT state, lease_expires_us, expire_at_us FROM idem_guard_runs WHERE key = ?1",
        )?
        .query_row([key.as_str()], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
            ))
        })
        .optional()?;
    if let Some((state, lease_expires, expire_at)) = existing
        && let Some(blocked) = existing_blocks(parse_state(&state)?, lease_expires, expire_at, now)
    {
        return Ok(blocked);
    }
    let watermark: Option<i64> = conn
        .prepare_cached("SELECT fence FROM idem_guard_fences WHERE key = ?1")?
        .query_row([key.as_str()], |row| row.get(0))
        .optional()?;
    let fence = next_fence(watermark, now);
    let attempt_id = Uuid::now_v7();
    let expire_at = now.saturating_add(duration_micros(terms.effective_retention()));
    let lease_expires = now.saturating_add(duration_micros(terms.lease));
    conn.prepare_cached(
        "INSERT INTO idem_guard_fences (key, fence, expire_at_us) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET fence = excluded.fence,
             expire_at_us = max(expire_at_us, excluded.expire_at_us)",
    )?
    .execute(params![key.as_str(), fence, expire_at])?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO idem_guard_runs
             (key, state, attempt_id, fence, lease_expires_us, expire_at_us)
         VALUES (?1, 'in_progress', ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        key.as_str(),
        attempt_id.to_string(),
        fence,
        lease_expires,
        expire_at
    ])?;
    Ok(ClaimOutcome::Claimed(Claim {
        key: key.clone(),
        attempt_id,
        fence: fence_from_db(fence)?,
    }))
}

fn finish(
    conn: &Connection,
    key: &RunKey,
    attempt: &Uuid,
    outcome: HandlerOutcome,
) -> Result<FinishResult, StoreError> {
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
    let changed = conn
        .prepare_cached(sql)?
        .execute(params![key.as_str(), attempt.to_string()])?;
    Ok(if changed == 1 {
        FinishResult::Applied
    } else {
        FinishResult::Stale
    })
}

fn sweep(conn: &Connection, now: i64, limit: i64) -> Result<Swept, StoreError> {
    let records = conn
        .prepare_cached(
            "DELETE FROM idem_guard_runs WHERE key IN
                 (SELECT key FROM idem_guard_runs WHERE expire_at_us <= ?1 LIMIT ?2)",
        )?
        .execute(params![now, limit])?;
    let fences = conn
        .prepare_cached(
            "DELETE FROM idem_guard_fences WHERE key IN
                 (SELECT key FROM idem_guard_fences WHERE expire_at_us <= ?1 LIMIT ?2)",
        )?
        .execute(params![now, limit])?;
    Ok(Swept { records, fences })
}

#[async_trait]
impl GuardStore for SqliteStore {
    async fn claim(&self, key: &RunKey, terms: ClaimTerms) -> Result<ClaimOutcome, StoreError> {
        let op = Op::Claim {
            key: key.clone(),
            terms,
        };
        match self.write(op).await? {
            Done::Claim(outcome) => Ok(outcome),
            other => Err(unexpected(other)),
        }
    }

    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        let op = Op::Finish {
            key: claim.key.clone(),
            attempt: claim.attempt_id,
            outcome,
        };
        match self.write(op).await? {
            Done::Finish(result) => Ok(result),
            other => Err(unexpected(other)),
        }
    }

    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        match self.write(Op::Sweep { limit }).await? {
            Done::Sweep(swept) => Ok(swept),
            other => Err(unexpected(other)),
        }
    }

    async fn inspect(&self, key: &RunKey) -> Result<Option<RecordView>, StoreError> {
        let key = key.clone();
        let reader = Arc::clone(&self.reader);
        let clock = Arc::clone(&self.clock);
        tokio::task::spawn_blocking(move || {
            let conn = reader.lock().unwrap_or_else(|e| e.into_inner());
            let now = micros(clock.now());
            let row = conn
                .prepare_cached(
                    "SELECT state, attempt_id, fence FROM idem_guard_runs
                     WHERE key = ?1 AND expire_at_us > ?2",
                )?
                .query_row(params![key.as_str(), now], |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, i64>(2)?,
                    ))
                })
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
        .await?
    }
}
