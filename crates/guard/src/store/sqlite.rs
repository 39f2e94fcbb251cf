//! SQLite: one file, zero setup, and group commit.
//!
//! With `synchronous=FULL` every commit waits for an fsync, so a commit per
//! claim and per finish caps the store at the disk's fsync rate. Instead one
//! writer thread owns the write connection: it takes every claim, finish,
//! sweep and token binding that queued up while the previous commit was
//! being made durable, runs each in its own savepoint inside one
//! `BEGIN IMMEDIATE` transaction, commits once, and only then answers each
//! caller. Operations in a batch run
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
    Claim, ClaimOutcome, ClaimTerms, CommitCounter, FinishResult, GroupCommits, GuardStore,
    HandlerOutcome, RecordView, RenewResult, StoreError, Swept, existing_blocks, fence_from_db,
    next_fence, parse_attempt, parse_key, parse_state,
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
CREATE TABLE IF NOT EXISTS idem_guard_tokens (
    token TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    expire_at_us INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idem_guard_tokens_expire ON idem_guard_tokens (expire_at_us);
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
    commits: Arc<CommitCounter>,
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
    Renew {
        key: RunKey,
        attempt: Uuid,
        terms: ClaimTerms,
    },
    Sweep {
        limit: i64,
    },
    BindToken {
        token: String,
        key: RunKey,
        ttl: Duration,
    },
}

/// What a write decided, told to its caller once the commit is durable.
#[derive(Debug)]
enum Done {
    Claim(ClaimOutcome),
    Finish(FinishResult),
    Renew(RenewResult),
    Sweep(Swept),
    BindToken(RunKey),
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
        let commits = Arc::new(CommitCounter::default());
        let counter = Arc::clone(&commits);
        std::thread::Builder::new()
            .name("idem-guard-sqlite-writer".into())
            .spawn(move || run_writer(writer, writer_clock, &counter, queue))
            .map_err(|e| StoreError::Closed(format!("cannot start the SQLite writer: {e}")))?;
        Ok(Self {
            writer: jobs,
            reader: Arc::new(Mutex::new(reader)),
            clock,
            path,
            commits,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many commits the writer made, carrying how many operations.
    pub fn group_commits(&self) -> GroupCommits {
        self.commits.get()
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
fn run_writer(
    conn: Connection,
    clock: Arc<dyn Clock>,
    commits: &CommitCounter,
    queue: mpsc::Receiver<Job>,
) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        run_batch(&conn, clock.as_ref(), batch, commits);
    }
}

/// Runs `batch` in one transaction, each operation in its own savepoint and
/// in order, commits, and answers every job. A commit is counted before
/// anyone is answered, so that a caller who has its answer sees it counted.
fn run_batch(conn: &Connection, clock: &dyn Clock, batch: Vec<Job>, commits: &CommitCounter) {
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
    match &committed {
        Ok(()) => commits.count(batch.len()),
        Err(e) => {
            tracing::error!(error = %e, "guard sqlite writer could not commit");
            let _ = conn.execute_batch("ROLLBACK");
        }
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
        Op::Renew {
            key,
            attempt,
            terms,
        } => renew(conn, now, key, attempt, *terms).map(Done::Renew),
        Op::Sweep { limit } => sweep(conn, now, *limit).map(Done::Sweep),
        Op::BindToken { token, key, ttl } => {
            bind_token(conn, now, token, key, *ttl).map(Done::BindToken)
        }
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

fn renew(
    conn: &Connection,
    now: i64,
    key: &RunKey,
    attempt: &Uuid,
    terms: ClaimTerms,
) -> Result<RenewResult, StoreError> {
    let lease_expires = now.saturating_add(duration_micros(terms.lease));
    let expire_at = now.saturating_add(duration_micros(terms.effective_retention()));
    let changed = conn
        .prepare_cached(
            "UPDATE idem_guard_runs
             SET lease_expires_us = max(lease_expires_us, ?3),
                 expire_at_us = max(expire_at_us, ?4)
             WHERE key = ?1 AND attempt_id = ?2 AND state = 'in_progress'
               AND expire_at_us > ?5",
        )?
        .execute(params![
            key.as_str(),
            attempt.to_string(),
            lease_expires,
            expire_at,
            now
        ])?;
    Ok(if changed == 1 {
        RenewResult::Renewed
    } else {
        RenewResult::Lost
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
    let tokens = conn
        .prepare_cached(
            "DELETE FROM idem_guard_tokens WHERE token IN
                 (SELECT token FROM idem_guard_tokens WHERE expire_at_us <= ?1 LIMIT ?2)",
        )?
        .execute(params![now, limit])?;
    Ok(Swept {
        records,
        fences,
        tokens,
    })
}

fn bind_token(
    conn: &Connection,
    now: i64,
    token: &str,
    key: &RunKey,
    ttl: Duration,
) -> Result<RunKey, StoreError> {
    let bound: Option<String> = conn
        .prepare_cached("SELECT key FROM idem_guard_tokens WHERE token = ?1 AND expire_at_us > ?2")?
        .query_row(params![token, now], |row| row.get(0))
        .optional()?;
    if let Some(bound) = bound {
        return parse_key(&bound);
    }
    conn.prepare_cached(
        "INSERT OR REPLACE INTO idem_guard_tokens (token, key, expire_at_us) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![
        token,
        key.as_str(),
        now.saturating_add(duration_micros(ttl))
    ])?;
    Ok(key.clone())
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

    async fn renew(&self, claim: &Claim, terms: ClaimTerms) -> Result<RenewResult, StoreError> {
        let op = Op::Renew {
            key: claim.key.clone(),
            attempt: claim.attempt_id,
            terms,
        };
        match self.write(op).await? {
            Done::Renew(result) => Ok(result),
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

    async fn bind_token(
        &self,
        token: &str,
        key: &RunKey,
        ttl: Duration,
    ) -> Result<RunKey, StoreError> {
        let op = Op::BindToken {
            token: token.to_owned(),
            key: key.clone(),
            ttl,
        };
        match self.write(op).await? {
            Done::BindToken(bound) => Ok(bound),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::store::RunState;

    struct File(PathBuf);

    impl Drop for File {
        fn drop(&mut self) {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = self.0.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
    }

    /// A connection as the writer's, on a file of its own.
    fn writer() -> (Connection, File) {
        let path =
            std::env::temp_dir().join(format!("idem-guard-batch-{}.db", Uuid::now_v7().simple()));
        let conn = open_connection(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        (conn, File(path))
    }

    type Answer = oneshot::Receiver<Result<Done, StoreError>>;

    fn job(op: Op) -> (Job, Answer) {
        let (reply, answer) = oneshot::channel();
        (Job { op, reply }, answer)
    }

    fn claim_op(key: &RunKey, lease: Duration) -> Op {
        Op::Claim {
            key: key.clone(),
            terms: ClaimTerms {
                lease,
                retention: Duration::from_secs(3600),
            },
        }
    }

    fn finish_op(claim: &Claim, outcome: HandlerOutcome) -> Op {
        Op::Finish {
            key: claim.key.clone(),
            attempt: claim.attempt_id,
            outcome,
        }
    }

    /// Runs `ops` as one batch, in this order.
    fn batch(
        conn: &Connection,
        clock: &ManualClock,
        ops: Vec<Op>,
    ) -> Vec<Result<Done, StoreError>> {
        let (jobs, answers): (Vec<_>, Vec<_>) = ops.into_iter().map(job).unzip();
        run_batch(conn, clock, jobs, &CommitCounter::default());
        answers
            .into_iter()
            .map(|mut a| a.try_recv().expect("answered once the batch committed"))
            .collect()
    }

    fn claimed(done: &Result<Done, StoreError>) -> Claim {
        match done {
            Ok(Done::Claim(ClaimOutcome::Claimed(c))) => c.clone(),
            other => panic!("expected a won claim, got {other:?}"),
        }
    }

    fn record(conn: &Connection, key: &RunKey) -> Option<(String, String)> {
        conn.query_row(
            "SELECT state, attempt_id FROM idem_guard_runs WHERE key = ?1",
            [key.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .unwrap()
    }

    #[test]
    fn claims_of_one_key_in_one_batch_have_one_winner() {
        let (conn, _file) = writer();
        let clock = ManualClock::starting_now();
        let k = RunKey::from_parts(["race"]);
        let other = RunKey::from_parts(["other"]);
        let mut ops: Vec<Op> = (0..5)
            .map(|_| claim_op(&k, Duration::from_secs(60)))
            .collect();
        ops.insert(2, claim_op(&other, Duration::from_secs(60)));
        let out = batch(&conn, &clock, ops);
        let winner = claimed(&out[0]);
        claimed(&out[2]);
        for (i, o) in out.iter().enumerate() {
            if i != 0 && i != 2 {
                assert!(
                    matches!(o, Ok(Done::Claim(ClaimOutcome::InProgress))),
                    "{i}: {o:?}"
                );
            }
        }
        assert_eq!(
            record(&conn, &k),
            Some(("in_progress".into(), winner.attempt_id.to_string()))
        );
    }

    #[test]
    fn a_stale_finish_beside_a_fresh_claim_changes_nothing() {
        let (conn, _file) = writer();
        let clock = ManualClock::starting_now();
        let k = RunKey::from_parts(["stale"]);
        let old = claimed(&batch(&conn, &clock, vec![claim_op(&k, Duration::from_secs(1))])[0]);
        clock.advance(Duration::from_secs(2));
        let out = batch(
            &conn,
            &clock,
            vec![
                claim_op(&k, Duration::from_secs(60)),
                finish_op(&old, HandlerOutcome::Failure),
                finish_op(&old, HandlerOutcome::Success),
            ],
        );
        let new = claimed(&out[0]);
        assert!(new.fence > old.fence);
        for o in &out[1..] {
            assert!(matches!(o, Ok(Done::Finish(FinishResult::Stale))), "{o:?}");
        }
        assert_eq!(
            record(&conn, &k),
            Some(("in_progress".into(), new.attempt_id.to_string()))
        );
        // The fresh claim's own finish, in a batch with a repeat of it.
        let out = batch(
            &conn,
            &clock,
            vec![
                finish_op(&new, HandlerOutcome::Success),
                finish_op(&new, HandlerOutcome::Failure),
            ],
        );
        assert!(matches!(out[0], Ok(Done::Finish(FinishResult::Applied))));
        assert!(matches!(out[1], Ok(Done::Finish(FinishResult::Stale))));
        assert_eq!(record(&conn, &k).unwrap().0, "completed");
    }

    #[test]
    fn a_failing_operation_fails_alone() {
        let (conn, _file) = writer();
        let clock = ManualClock::starting_now();
        let poison = RunKey::from_parts(["poison"]);
        conn.execute_batch(&format!(
            "CREATE TRIGGER refuse BEFORE INSERT ON idem_guard_runs
             WHEN NEW.key = '{}' BEGIN SELECT RAISE(ABORT, 'refused'); END",
            poison.as_str()
        ))
        .unwrap();
        let earlier = RunKey::from_parts(["earlier"]);
        let held = claimed(
            &batch(
                &conn,
                &clock,
                vec![claim_op(&earlier, Duration::from_secs(60))],
            )[0],
        );
        let (a, b) = (RunKey::from_parts(["a"]), RunKey::from_parts(["b"]));
        let out = batch(
            &conn,
            &clock,
            vec![
                claim_op(&a, Duration::from_secs(60)),
                claim_op(&poison, Duration::from_secs(60)),
                finish_op(&held, HandlerOutcome::Success),
                claim_op(&b, Duration::from_secs(60)),
            ],
        );
        let a_claim = claimed(&out[0]);
        assert!(matches!(out[1], Err(StoreError::Sqlite(_))), "{:?}", out[1]);
        assert!(matches!(out[2], Ok(Done::Finish(FinishResult::Applied))));
        let b_claim = claimed(&out[3]);
        assert_eq!(record(&conn, &a).unwrap().1, a_claim.attempt_id.to_string());
        assert_eq!(record(&conn, &b).unwrap().1, b_claim.attempt_id.to_string());
        assert_eq!(record(&conn, &earlier).unwrap().0, "completed");
        // The refused claim's savepoint took its fence watermark with it.
        assert_eq!(record(&conn, &poison), None);
        let watermark: Option<i64> = conn
            .query_row(
                "SELECT fence FROM idem_guard_fences WHERE key = ?1",
                [poison.as_str()],
                |r| r.get(0),
            )
            .optional()
            .unwrap();
        assert_eq!(watermark, None);
    }

    /// Through the writer thread: many callers at once, one winner per key,
    /// and every answer matches what is stored (that they share commits is
    /// `waiting_callers_share_one_commit`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_callers_get_one_winner_per_key_and_stored_answers() {
        let (_, file) = writer();
        let store = SqliteStore::open(&file.0).await.unwrap();
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let k = RunKey::from_parts([format!("k{}", i % 16)]);
                    let outcome = store.claim(&k, ClaimTerms::default()).await.unwrap();
                    if let ClaimOutcome::Claimed(c) = &outcome {
                        assert_eq!(
                            store.finish(c, HandlerOutcome::Success).await.unwrap(),
                            FinishResult::Applied
                        );
                    }
                    (k, outcome)
                })
            })
            .collect();
        let mut winners = HashMap::new();
        for t in tasks {
            let (k, outcome) = t.await.unwrap();
            if let ClaimOutcome::Claimed(c) = outcome {
                assert!(winners.insert(k, c).is_none(), "two winners of one key");
            }
        }
        assert_eq!(winners.len(), 16);
        for (k, c) in winners {
            let view = store.inspect(&k).await.unwrap().unwrap();
            assert_eq!(view.state, RunState::Completed);
            assert_eq!(view.attempt_id, c.attempt_id);
        }
    }

    /// While another connection holds the write lock, callers queue up;
    /// once it lets go they share a commit or two, not one each.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn waiting_callers_share_one_commit() {
        let (blocker, file) = writer();
        let store = SqliteStore::open(&file.0).await.unwrap();
        blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
        let tasks: Vec<_> = (0..32)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let k = RunKey::from_parts([format!("k{i}")]);
                    store.claim(&k, ClaimTerms::default()).await.unwrap()
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        blocker.execute_batch("COMMIT").unwrap();
        for t in tasks {
            assert!(matches!(t.await.unwrap(), ClaimOutcome::Claimed(_)));
        }
        let shared = store.group_commits();
        assert_eq!(shared.operations, 32);
        assert!(shared.commits <= 3, "{shared:?}");
    }

    use std::collections::HashMap;
}
