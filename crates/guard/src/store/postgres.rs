//! PostgreSQL, for several nodes sharing one store. "Now" is the database's
//! `clock_timestamp()`, so nodes with skewed clocks still agree on leases.
//!
//! Group commit: with `synchronous_commit = on` every commit waits for the
//! WAL to reach the disk, so a statement per claim and per finish caps the
//! store at the commit rate. Claims and finishes go to batcher tasks
//! instead; a batcher takes whatever is waiting (a lone operation goes at
//! once: there is no timer), runs it all as one statement — the claims as
//! one `INSERT … ON CONFLICT DO UPDATE … RETURNING` over `unnest` arrays, the
//! finishes as one `UPDATE` and one `DELETE` beside it — which is one
//! commit, and only then answers each caller. See [`BATCH`] for how a batch
//! keeps every guarantee of the one-operation statements.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use idem_postgres_tls::MakeRustlsConnect;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::NoTls;
use uuid::Uuid;

use super::{
    Claim, ClaimOutcome, ClaimTerms, CommitCounter, FinishResult, GroupCommits, GuardStore,
    HandlerOutcome, RecordView, RenewResult, RunState, StoreError, Swept, fence_from_db,
    parse_attempt, parse_key, parse_state,
};
use crate::clock::duration_micros;
use crate::key::RunKey;

/// Serializes schema creation between nodes starting at once: concurrent
/// `CREATE TABLE IF NOT EXISTS` can still fail on the catalog's unique index.
const SCHEMA_LOCK: i64 = 0x1de7_9a4d;

/// The tables, in `scripts/` with the Redis scripts: the TypeScript and
/// Python guards' tests hold their copies to it.
const SCHEMA: &str = include_str!("scripts/schema.sql");

/// The takeover rule of a claim, shared by [`CLAIM`] and [`BATCH`]: the
/// record is rewritten only when it may be taken over (past `expire_at`, or
/// an `in_progress` lease that ran out) and kept as it is otherwise, so
/// `RETURNING` always reports the record.
macro_rules! take_over_if_free {
    () => {
        concat!(
            "ON CONFLICT (key) DO UPDATE SET\n",
            take_over_if_free!(state),
            ",\n",
            take_over_if_free!(attempt_id),
            ",\n",
            take_over_if_free!(fence),
            ",\n",
            take_over_if_free!(lease_expires),
            ",\n",
            take_over_if_free!(expire_at),
            ",\n",
            take_over_if_free!(claimed_at),
        )
    };
    ($column:ident) => {
        concat!(
            "    ",
            stringify!($column),
            " = CASE WHEN r.expire_at <= EXCLUDED.claimed_at",
            " OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)",
            " THEN EXCLUDED.",
            stringify!($column),
            " ELSE r.",
            stringify!($column),
            " END"
        )
    };
}

// One statement, so one round trip and one atomic step:
//
// 1. The fence CTE upserts the key's watermark. Its ON CONFLICT DO UPDATE
//    locks that row until the statement commits, so claims of one key run
//    one after another, and each reads the watermark its predecessor wrote.
//    Every claim bumps the watermark, winners and losers alike; gaps in the
//    fencing sequence are harmless, and bumping unconditionally is what
//    makes the lock order simple.
// 2. The main INSERT … ON CONFLICT DO UPDATE sees the newest version of the
//    record (conflict handling ignores the statement's snapshot) and
//    rewrites it as `take_over_if_free!` says: `attempt_id = $2` in
//    RETURNING means we won.
//
// `clock` is materialized once so that every comparison uses one instant.
const CLAIM: &str = concat!(
    "
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t),
fence AS (
    INSERT INTO idem_guard_fences AS f (key, fence, expire_at)
    SELECT $1, GREATEST((extract(epoch FROM clock.t) * 1000000)::bigint, 1),
           clock.t + $4::bigint * interval '1 microsecond'
    FROM clock
    ON CONFLICT (key) DO UPDATE
        SET fence = GREATEST(f.fence + 1, EXCLUDED.fence),
            expire_at = GREATEST(f.expire_at, EXCLUDED.expire_at)
    RETURNING f.fence
)
INSERT INTO idem_guard_runs AS r
    (key, state, attempt_id, fence, lease_expires, expire_at, claimed_at)
SELECT $1, 'in_progress', $2, fence.fence,
       clock.t + $3::bigint * interval '1 microsecond',
       clock.t + $4::bigint * interval '1 microsecond',
       clock.t
FROM fence, clock
",
    take_over_if_free!(),
    "
RETURNING r.attempt_id, r.state, r.fence
"
);

const FINISH_SUCCESS: &str = "
UPDATE idem_guard_runs SET state = 'completed'
WHERE key = $1 AND attempt_id = $2 AND state = 'in_progress'";

const FINISH_FAILURE: &str = "
DELETE FROM idem_guard_runs
WHERE key = $1 AND attempt_id = $2 AND state = 'in_progress'";

// Not batched: a claim renews once per lease/3, far too rarely for a shared
// commit to pay. It locks the record alone, so it cannot deadlock with a
// claim, which locks the fence watermark first.
const RENEW: &str = "
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t)
UPDATE idem_guard_runs r
SET lease_expires = GREATEST(r.lease_expires, clock.t + $3::bigint * interval '1 microsecond'),
    expire_at = GREATEST(r.expire_at, clock.t + $4::bigint * interval '1 microsecond')
FROM clock
WHERE r.key = $1 AND r.attempt_id = $2 AND r.state = 'in_progress' AND r.expire_at > clock.t";

// SKIP LOCKED keeps a sweep from waiting on (or deadlocking with) claims that
// hold a row; whatever it skips, the next sweep gets.
const SWEEP_RUNS: &str = "
WITH doomed AS (
    SELECT key FROM idem_guard_runs WHERE expire_at <= clock_timestamp()
    ORDER BY expire_at LIMIT $1 FOR UPDATE SKIP LOCKED
)
DELETE FROM idem_guard_runs r USING doomed WHERE r.key = doomed.key";

const SWEEP_FENCES: &str = "
WITH doomed AS (
    SELECT key FROM idem_guard_fences WHERE expire_at <= clock_timestamp()
    ORDER BY expire_at LIMIT $1 FOR UPDATE SKIP LOCKED
)
DELETE FROM idem_guard_fences f USING doomed WHERE f.key = doomed.key";

const SWEEP_TOKENS: &str = "
WITH doomed AS (
    SELECT token FROM idem_guard_tokens WHERE expire_at <= clock_timestamp()
    ORDER BY expire_at LIMIT $1 FOR UPDATE SKIP LOCKED
)
DELETE FROM idem_guard_tokens t USING doomed WHERE t.token = doomed.token";

// A live binding is kept as it is; a binding past its expiry is replaced.
// ON CONFLICT sees the newest version of the row, so of two binds of one
// token the second waits for the first and answers its key.
const BIND_TOKEN: &str = "
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t)
INSERT INTO idem_guard_tokens AS b (token, key, expire_at)
SELECT $1, $2, clock.t + $3::bigint * interval '1 microsecond' FROM clock
ON CONFLICT (token) DO UPDATE SET
    key = CASE WHEN b.expire_at <= (SELECT t FROM clock) THEN EXCLUDED.key ELSE b.key END,
    expire_at = CASE WHEN b.expire_at <= (SELECT t FROM clock)
        THEN EXCLUDED.expire_at ELSE b.expire_at END
RETURNING b.key";

const INSPECT: &str = "
SELECT state, attempt_id, fence FROM idem_guard_runs
WHERE key = $1 AND expire_at > clock_timestamp()";

/// The claims and finishes of one batch, as one statement (so one commit).
///
/// - Claims ($1–$4, one array element per claim) work as [`CLAIM`] does,
///   row by row. Their keys are distinct (a second claim of a key in the
///   batch is answered from the first, see [`Round`]): `ON CONFLICT DO
///   UPDATE` may not touch one row twice in a statement.
/// - Finishes ($5–$7) work as [`FINISH_SUCCESS`] and [`FINISH_FAILURE`]
///   do; `RETURNING` names the records they changed. No finish shares a key
///   with a claim of the same statement (such a finish waits for the next
///   round), since the statement's parts do not see each other's writes.
/// - Rows are taken in key order, so two batches locking the same fence
///   watermarks and records lock them in the same order.
const BATCH: &str = concat!(
    "
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t),
c AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
        AS c(key, attempt_id, lease_us, retention_us)
),
fence AS (
    INSERT INTO idem_guard_fences AS f (key, fence, expire_at)
    SELECT c.key, GREATEST((extract(epoch FROM clock.t) * 1000000)::bigint, 1),
           clock.t + c.retention_us * interval '1 microsecond'
    FROM c CROSS JOIN clock
    ORDER BY c.key
    ON CONFLICT (key) DO UPDATE
        SET fence = GREATEST(f.fence + 1, EXCLUDED.fence),
            expire_at = GREATEST(f.expire_at, EXCLUDED.expire_at)
    RETURNING f.key, f.fence
),
claimed AS (
    INSERT INTO idem_guard_runs AS r
        (key, state, attempt_id, fence, lease_expires, expire_at, claimed_at)
    SELECT c.key, 'in_progress', c.attempt_id, fence.fence,
           clock.t + c.lease_us * interval '1 microsecond',
           clock.t + c.retention_us * interval '1 microsecond',
           clock.t
    FROM c JOIN fence ON fence.key = c.key CROSS JOIN clock
    ORDER BY c.key
    ",
    take_over_if_free!(),
    "
    RETURNING r.key, r.attempt_id, r.state, r.fence
),
fin AS MATERIALIZED (
    SELECT * FROM unnest($5::text[], $6::text[], $7::bool[]) AS fin(key, attempt_id, success)
),
completed AS (
    UPDATE idem_guard_runs r SET state = 'completed'
    FROM fin
    WHERE fin.success AND r.key = fin.key AND r.attempt_id = fin.attempt_id
      AND r.state = 'in_progress'
    RETURNING r.key, r.attempt_id
),
released AS (
    DELETE FROM idem_guard_runs r
    USING fin
    WHERE NOT fin.success AND r.key = fin.key AND r.attempt_id = fin.attempt_id
      AND r.state = 'in_progress'
    RETURNING r.key, r.attempt_id
)
SELECT true AS claim, key, attempt_id, state, fence FROM claimed
UNION ALL SELECT false, key, attempt_id, NULL, NULL FROM completed
UNION ALL SELECT false, key, attempt_id, NULL, NULL FROM released
"
);

/// Most operations per statement: bounds the latency the first one waits
/// for.
const MAX_BATCH: usize = 256;

/// Batcher tasks: while one waits for its commit to be flushed, the next
/// collects the operations that arrive meanwhile.
const BATCHERS: usize = 2;

/// A store in PostgreSQL (tables `idem_guard_runs`, `idem_guard_fences` and
/// `idem_guard_tokens`; token bindings are single statements, outside the
/// batches).
/// Claims and finishes are committed in batches (see the module
/// documentation); clones share the batchers, which stop when the last clone
/// is dropped.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: Pool,
    batcher: Batcher,
}

/// How long the guard's PostgreSQL store waits on the database.
pub use idem_postgres_tls::Timeouts as PostgresLimits;

impl PostgresStore {
    /// Connects with a `postgres://` URL (or key=value string) and creates
    /// the schema. The URL's `sslmode` (`disable`, `prefer` (the default),
    /// `require`, `verify-ca`, `verify-full`) and `sslrootcert` (a PEM file
    /// of trusted CA certificates, else the system's) work as in libpq.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let (config, tls) = idem_postgres_tls::connect_params(url)
            .map_err(|e| StoreError::InvalidUrl(e.to_string()))?;
        Self::from_config_with_tls(config, tls).await
    }

    /// Connects with a `postgres://` URL (TLS as [`PostgresStore::connect`])
    /// and the given limits.
    pub async fn connect_with(url: &str, limits: PostgresLimits) -> Result<Self, StoreError> {
        let (config, tls) = idem_postgres_tls::connect_params(url)
            .map_err(|e| StoreError::InvalidUrl(e.to_string()))?;
        Self::with_manager(config, tls, limits).await
    }

    /// Connects with a parsed configuration, without TLS, and creates the
    /// schema.
    pub async fn from_config(config: tokio_postgres::Config) -> Result<Self, StoreError> {
        Self::with_manager(config, NoTls, PostgresLimits::default()).await
    }

    /// Connects with a parsed configuration and a TLS connector (see
    /// `idem_postgres_tls::connect_params`), and creates the schema.
    pub async fn from_config_with_tls(
        config: tokio_postgres::Config,
        tls: MakeRustlsConnect,
    ) -> Result<Self, StoreError> {
        Self::with_manager(config, tls, PostgresLimits::default()).await
    }

    async fn with_manager<T>(
        mut config: tokio_postgres::Config,
        tls: T,
        limits: PostgresLimits,
    ) -> Result<Self, StoreError>
    where
        T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>
            + Clone
            + Sync
            + Send
            + 'static,
        T::Stream: Sync + Send,
        T::TlsConnect: Sync + Send,
        <T::TlsConnect as tokio_postgres::tls::TlsConnect<tokio_postgres::Socket>>::Future: Send,
    {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        let config = idem_postgres_tls::with_server_options(
            &config,
            &idem_postgres_tls::statement_timeout(limits.statement_timeout),
        );
        let manager = Manager::from_config(
            config,
            tls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(16)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(limits.acquire_timeout))
            .create_timeout(Some(limits.acquire_timeout))
            .build()?;
        let batcher = Batcher::start(pool.clone());
        let store = Self { pool, batcher };
        store.create_schema().await?;
        Ok(store)
    }

    /// How many statements committed claims and finishes, carrying how many
    /// of them.
    pub fn group_commits(&self) -> GroupCommits {
        self.batcher.commits.get()
    }

    /// The connection pool, for callers that share it.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    async fn create_schema(&self) -> Result<(), StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        // Another node may hold the lock while it creates the schema.
        tx.batch_execute("SET LOCAL statement_timeout = 0").await?;
        tx.batch_execute(&format!("SELECT pg_advisory_xact_lock({SCHEMA_LOCK})"))
            .await?;
        tx.batch_execute(SCHEMA).await?;
        tx.commit().await?;
        Ok(())
    }
}

#[async_trait]
impl GuardStore for PostgresStore {
    async fn claim(&self, key: &RunKey, terms: ClaimTerms) -> Result<ClaimOutcome, StoreError> {
        let attempt = Uuid::now_v7();
        let lease_us = duration_micros(terms.lease);
        let retention_us = duration_micros(terms.effective_retention());
        let (reply, answer) = oneshot::channel();
        let job = ClaimJob {
            key: key.clone(),
            attempt,
            lease_us,
            retention_us,
            reply,
        };
        if self.batcher.jobs.send(Job::Claim(job)).is_ok()
            && let Ok(result) = answer.await
        {
            return result;
        }
        // The batchers are gone (their runtime shut down), maybe mid-batch:
        // whether the claim committed is unknown, and claiming alone with the
        // same attempt id finds out (the record is then already ours).
        claim_alone(&self.pool, key, attempt, lease_us, retention_us).await
    }

    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = FinishJob {
            claim: claim.clone(),
            outcome,
            reply,
        };
        match self.batcher.jobs.send(Job::Finish(job)) {
            Ok(()) => answer
                .await
                .map_err(|_| StoreError::Closed("the PostgreSQL batcher stopped".into()))?,
            // The batchers are gone (their runtime shut down): go alone.
            Err(_) => finish_alone(&self.pool, claim, outcome).await,
        }
    }

    async fn renew(&self, claim: &Claim, terms: ClaimTerms) -> Result<RenewResult, StoreError> {
        let client = self.pool.get().await?;
        let stmt = client.prepare_cached(RENEW).await?;
        let changed = client
            .execute(
                &stmt,
                &[
                    &claim.key.as_str(),
                    &claim.attempt_id.to_string(),
                    &duration_micros(terms.lease),
                    &duration_micros(terms.effective_retention()),
                ],
            )
            .await?;
        Ok(if changed == 1 {
            RenewResult::Renewed
        } else {
            RenewResult::Lost
        })
    }

    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.pool.get().await?;
        let runs = client.prepare_cached(SWEEP_RUNS).await?;
        let fences = client.prepare_cached(SWEEP_FENCES).await?;
        let tokens = client.prepare_cached(SWEEP_TOKENS).await?;
        let records = client.execute(&runs, &[&limit]).await?;
        let fences = client.execute(&fences, &[&limit]).await?;
        let tokens = client.execute(&tokens, &[&limit]).await?;
        Ok(Swept {
            records: usize::try_from(records).unwrap_or(usize::MAX),
            fences: usize::try_from(fences).unwrap_or(usize::MAX),
            tokens: usize::try_from(tokens).unwrap_or(usize::MAX),
        })
    }

    async fn bind_token(
        &self,
        token: &str,
        key: &RunKey,
        ttl: Duration,
    ) -> Result<RunKey, StoreError> {
        let client = self.pool.get().await?;
        let stmt = client.prepare_cached(BIND_TOKEN).await?;
        let row = client
            .query_one(&stmt, &[&token, &key.as_str(), &duration_micros(ttl)])
            .await?;
        parse_key(row.get::<_, &str>(0))
    }

    async fn inspect(&self, key: &RunKey) -> Result<Option<RecordView>, StoreError> {
        let client = self.pool.get().await?;
        let stmt = client.prepare_cached(INSPECT).await?;
        let row = client.query_opt(&stmt, &[&key.as_str()]).await?;
        row.map(|row| {
            Ok(RecordView {
                state: parse_state(row.get::<_, &str>(0))?,
                attempt_id: parse_attempt(row.get::<_, &str>(1))?,
                fence: fence_from_db(row.get(2))?,
            })
        })
        .transpose()
    }
}

/// A claim waiting for its batch.
struct ClaimJob {
    key: RunKey,
    attempt: Uuid,
    lease_us: i64,
    retention_us: i64,
    reply: oneshot::Sender<Result<ClaimOutcome, StoreError>>,
}

/// A finish waiting for its batch.
struct FinishJob {
    claim: Claim,
    outcome: HandlerOutcome,
    reply: oneshot::Sender<Result<FinishResult, StoreError>>,
}

enum Job {
    Claim(ClaimJob),
    Finish(FinishJob),
}

/// The senders' side of the batchers.
#[derive(Clone)]
struct Batcher {
    jobs: mpsc::UnboundedSender<Job>,
    commits: Arc<CommitCounter>,
}

impl std::fmt::Debug for Batcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher").finish_non_exhaustive()
    }
}

impl Batcher {
    /// Starts [`BATCHERS`] tasks on the current runtime; they take their
    /// connections from `pool` one batch at a time.
    fn start(pool: Pool) -> Batcher {
        let (jobs, queue) = mpsc::unbounded_channel();
        let queue = Arc::new(Mutex::new(queue));
        let commits = Arc::new(CommitCounter::default());
        for _ in 0..BATCHERS {
            tokio::spawn(run_batcher(
                pool.clone(),
                Arc::clone(&queue),
                Arc::clone(&commits),
            ));
        }
        Batcher { jobs, commits }
    }
}

async fn run_batcher(
    pool: Pool,
    queue: Arc<Mutex<mpsc::UnboundedReceiver<Job>>>,
    commits: Arc<CommitCounter>,
) {
    loop {
        // The lock is held only while collecting: a batcher waiting for its
        // commit leaves the arriving operations to the next one. No waiting
        // once one is in: the batch is whatever is queued right now.
        let mut batch = Vec::new();
        {
            let mut queue = queue.lock().await;
            let Some(first) = queue.recv().await else {
                return;
            };
            batch.push(first);
            while batch.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
        }
        run_batch(&pool, &commits, batch).await;
    }
}

/// Runs `batch` in rounds of one statement each (nearly always one round)
/// and answers every job once its round has committed.
async fn run_batch(pool: &Pool, commits: &CommitCounter, mut batch: Vec<Job>) {
    while !batch.is_empty() {
        let (round, later) = Round::split(batch);
        round.run(pool, commits).await;
        batch = later;
    }
}

/// The operations one statement can take, in arrival order.
#[derive(Default)]
struct Round {
    /// Distinct keys.
    claims: Vec<ClaimJob>,
    /// Claims of a key claimed earlier in the round: they lost to that
    /// claim, or found what it found, exactly as if they had come after it.
    repeated_claims: Vec<ClaimJob>,
    /// Distinct (key, attempt) pairs, and no key of `claims`.
    finishes: Vec<FinishJob>,
    /// Finishes of a (key, attempt) finished earlier in the round: after
    /// that one the record no longer holds the attempt, so they are stale.
    repeated_finishes: Vec<FinishJob>,
}

impl Round {
    /// The round for the head of `batch`, and what must wait for the next:
    /// a claim of a key being finished in this round, or a finish of a key
    /// being claimed. Whatever waits keeps its order.
    fn split(batch: Vec<Job>) -> (Round, Vec<Job>) {
        let mut round = Round::default();
        let mut later = Vec::new();
        let mut claimed: HashSet<RunKey> = HashSet::new();
        let mut finished: HashSet<RunKey> = HashSet::new();
        let mut finished_attempts: HashSet<(RunKey, Uuid)> = HashSet::new();
        for job in batch {
            match job {
                Job::Claim(c) if finished.contains(&c.key) => later.push(Job::Claim(c)),
                Job::Claim(c) if claimed.contains(&c.key) => round.repeated_claims.push(c),
                Job::Claim(c) => {
                    claimed.insert(c.key.clone());
                    round.claims.push(c);
                }
                Job::Finish(f) if claimed.contains(&f.claim.key) => later.push(Job::Finish(f)),
                Job::Finish(f) => {
                    let attempt = (f.claim.key.clone(), f.claim.attempt_id);
                    if finished_attempts.contains(&attempt) {
                        round.repeated_finishes.push(f);
                    } else {
                        finished.insert(f.claim.key.clone());
                        finished_attempts.insert(attempt);
                        round.finishes.push(f);
                    }
                }
            }
        }
        (round, later)
    }

    fn len(&self) -> usize {
        self.claims.len()
            + self.repeated_claims.len()
            + self.finishes.len()
            + self.repeated_finishes.len()
    }

    async fn run(self, pool: &Pool, commits: &CommitCounter) {
        match self.execute(pool).await {
            Ok(decided) => {
                commits.count(self.len());
                self.answer(decided)
            }
            Err(e) => {
                // Nothing of the statement committed (or, if the connection
                // broke after the commit, claiming again with the same
                // attempt ids finds their records). Each operation on its
                // own: one that PostgreSQL refuses (or a deadlock with
                // another node's batch) then fails alone.
                tracing::warn!(error = %e, "batched guard statement failed; running its operations one by one");
                self.run_alone(pool, commits).await;
            }
        }
    }

    async fn execute(&self, pool: &Pool) -> Result<Decided, StoreError> {
        let claim_keys: Vec<&str> = self.claims.iter().map(|c| c.key.as_str()).collect();
        let claim_attempts: Vec<String> =
            self.claims.iter().map(|c| c.attempt.to_string()).collect();
        let leases: Vec<i64> = self.claims.iter().map(|c| c.lease_us).collect();
        let retentions: Vec<i64> = self.claims.iter().map(|c| c.retention_us).collect();
        let finish_keys: Vec<&str> = self.finishes.iter().map(|f| f.claim.key.as_str()).collect();
        let finish_attempts: Vec<String> = self
            .finishes
            .iter()
            .map(|f| f.claim.attempt_id.to_string())
            .collect();
        let successes: Vec<bool> = self
            .finishes
            .iter()
            .map(|f| f.outcome == HandlerOutcome::Success)
            .collect();
        let client = pool.get().await?;
        let stmt = client.prepare_cached(BATCH).await?;
        let rows = client
            .query(
                &stmt,
                &[
                    &claim_keys,
                    &claim_attempts,
                    &leases,
                    &retentions,
                    &finish_keys,
                    &finish_attempts,
                    &successes,
                ],
            )
            .await?;
        let mut decided = Decided::default();
        for row in rows {
            let key: String = row.try_get(1)?;
            let attempt: String = row.try_get(2)?;
            if row.try_get::<_, bool>(0)? {
                let state = parse_state(row.try_get::<_, &str>(3)?)?;
                let fence: i64 = row.try_get(4)?;
                decided.claims.insert(key, (attempt, state, fence));
            } else {
                decided.finished.insert((key, attempt));
            }
        }
        Ok(decided)
    }

    fn answer(self, mut decided: Decided) {
        let mut outcomes: HashMap<RunKey, ClaimOutcome> = HashMap::new();
        for job in self.claims {
            let outcome = match decided.claims.remove(job.key.as_str()) {
                Some((holder, state, fence)) => claim_outcome(&job, &holder, state, fence),
                None => Err(StoreError::Corrupt(
                    "the batched claim returned no record".into(),
                )),
            };
            if let Ok(o) = &outcome {
                outcomes.insert(job.key.clone(), o.clone());
            }
            let _ = job.reply.send(outcome);
        }
        for job in self.repeated_claims {
            let outcome = match outcomes.get(&job.key) {
                Some(ClaimOutcome::Claimed(_) | ClaimOutcome::InProgress) => {
                    Ok(ClaimOutcome::InProgress)
                }
                Some(ClaimOutcome::Completed) => Ok(ClaimOutcome::Completed),
                None => Err(StoreError::Corrupt(
                    "the batched claim returned no record".into(),
                )),
            };
            let _ = job.reply.send(outcome);
        }
        for job in self.finishes {
            let pair = (
                job.claim.key.as_str().to_owned(),
                job.claim.attempt_id.to_string(),
            );
            let result = if decided.finished.contains(&pair) {
                FinishResult::Applied
            } else {
                FinishResult::Stale
            };
            let _ = job.reply.send(Ok(result));
        }
        for job in self.repeated_finishes {
            let _ = job.reply.send(Ok(FinishResult::Stale));
        }
    }

    /// Every operation of the round on its own, concurrently (they were
    /// concurrent when they arrived), each with its own connection.
    async fn run_alone(self, pool: &Pool, commits: &CommitCounter) {
        let claims = self
            .claims
            .into_iter()
            .chain(self.repeated_claims)
            .map(|job| async move {
                let result =
                    claim_alone(pool, &job.key, job.attempt, job.lease_us, job.retention_us).await;
                if result.is_ok() {
                    commits.count(1);
                }
                let _ = job.reply.send(result);
            });
        let finishes =
            self.finishes
                .into_iter()
                .chain(self.repeated_finishes)
                .map(|job| async move {
                    let result = finish_alone(pool, &job.claim, job.outcome).await;
                    let _ = job.reply.send(result);
                });
        futures_util::future::join(
            futures_util::future::join_all(claims),
            futures_util::future::join_all(finishes),
        )
        .await;
    }
}

/// What a batch statement returned: claims by key (holder, state, fence);
/// finishes applied, by (key, attempt).
#[derive(Default)]
struct Decided {
    claims: HashMap<String, (String, RunState, i64)>,
    finished: HashSet<(String, String)>,
}

/// A claim's answer from the record its statement returned: holding this
/// attempt means it won.
fn claim_outcome(
    job: &ClaimJob,
    holder: &str,
    state: RunState,
    fence: i64,
) -> Result<ClaimOutcome, StoreError> {
    if parse_attempt(holder)? == job.attempt {
        return Ok(ClaimOutcome::Claimed(Claim {
            key: job.key.clone(),
            attempt_id: job.attempt,
            fence: fence_from_db(fence)?,
        }));
    }
    Ok(match state {
        RunState::Completed => ClaimOutcome::Completed,
        RunState::InProgress => ClaimOutcome::InProgress,
    })
}

/// One claim, one statement: the path of operations whose batch failed.
async fn claim_alone(
    pool: &Pool,
    key: &RunKey,
    attempt: Uuid,
    lease_us: i64,
    retention_us: i64,
) -> Result<ClaimOutcome, StoreError> {
    let client = pool.get().await?;
    let stmt = client.prepare_cached(CLAIM).await?;
    let row = client
        .query_one(
            &stmt,
            &[
                &key.as_str(),
                &attempt.to_string(),
                &lease_us,
                &retention_us,
            ],
        )
        .await?;
    let holder: &str = row.try_get(0)?;
    let state = parse_state(row.try_get::<_, &str>(1)?)?;
    if parse_attempt(holder)? == attempt {
        return Ok(ClaimOutcome::Claimed(Claim {
            key: key.clone(),
            attempt_id: attempt,
            fence: fence_from_db(row.try_get(2)?)?,
        }));
    }
    Ok(match state {
        RunState::Completed => ClaimOutcome::Completed,
        RunState::InProgress => ClaimOutcome::InProgress,
    })
}

/// One finish, one statement.
async fn finish_alone(
    pool: &Pool,
    claim: &Claim,
    outcome: HandlerOutcome,
) -> Result<FinishResult, StoreError> {
    let client = pool.get().await?;
    let sql = match outcome {
        HandlerOutcome::Success => FINISH_SUCCESS,
        HandlerOutcome::Failure => FINISH_FAILURE,
    };
    let stmt = client.prepare_cached(sql).await?;
    let changed = client
        .execute(&stmt, &[&claim.key.as_str(), &claim.attempt_id.to_string()])
        .await?;
    Ok(if changed == 1 {
        FinishResult::Applied
    } else {
        FinishResult::Stale
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use idem_testkit::TestDatabase;

    async fn store() -> (PostgresStore, TestDatabase) {
        let db = TestDatabase::create().await;
        let store = PostgresStore::connect(&db.url).await.unwrap();
        (store, db)
    }

    enum Answer {
        Claim(oneshot::Receiver<Result<ClaimOutcome, StoreError>>),
        Finish(oneshot::Receiver<Result<FinishResult, StoreError>>),
    }

    #[derive(Debug)]
    enum Out {
        Claim(Result<ClaimOutcome, StoreError>),
        Finish(Result<FinishResult, StoreError>),
    }

    fn claim_job(key: &RunKey, lease: Duration) -> (Job, Answer) {
        let (reply, answer) = oneshot::channel();
        let job = ClaimJob {
            key: key.clone(),
            attempt: Uuid::now_v7(),
            lease_us: duration_micros(lease),
            retention_us: duration_micros(Duration::from_secs(3600)),
            reply,
        };
        (Job::Claim(job), Answer::Claim(answer))
    }

    fn finish_job(claim: &Claim, outcome: HandlerOutcome) -> (Job, Answer) {
        let (reply, answer) = oneshot::channel();
        let job = FinishJob {
            claim: claim.clone(),
            outcome,
            reply,
        };
        (Job::Finish(job), Answer::Finish(answer))
    }

    /// Runs `jobs` as one batch, in this order.
    async fn batch(store: &PostgresStore, jobs: Vec<(Job, Answer)>) -> Vec<Out> {
        let (jobs, answers): (Vec<_>, Vec<_>) = jobs.into_iter().unzip();
        run_batch(&store.pool, &store.batcher.commits, jobs).await;
        let mut out = Vec::new();
        for answer in answers {
            out.push(match answer {
                Answer::Claim(a) => Out::Claim(a.await.unwrap()),
                Answer::Finish(a) => Out::Finish(a.await.unwrap()),
            });
        }
        out
    }

    fn claimed(out: &Out) -> Claim {
        match out {
            Out::Claim(Ok(ClaimOutcome::Claimed(c))) => c.clone(),
            other => panic!("expected a won claim, got {other:?}"),
        }
    }

    fn key(name: &str) -> RunKey {
        RunKey::from_parts(["pg-batch", name])
    }

    #[test]
    fn a_round_takes_one_operation_per_record() {
        let claim = |k: &str| claim_job(&key(k), Duration::from_secs(60)).0;
        let of = |k: &str| Claim {
            key: key(k),
            attempt_id: Uuid::now_v7(),
            fence: crate::store::Fence(1),
        };
        let (b_x, b_y, a_z) = (of("b"), of("b"), of("a"));
        let finish = |c: &Claim| finish_job(c, HandlerOutcome::Success).0;
        let (round, later) = Round::split(vec![
            claim("a"),
            finish(&b_x),
            claim("a"),
            finish(&b_x),
            finish(&b_y),
            claim("b"),
            finish(&a_z),
            claim("c"),
        ]);
        assert_eq!(round.claims.len(), 2);
        assert_eq!(round.repeated_claims.len(), 1);
        assert_eq!(round.finishes.len(), 2);
        assert_eq!(round.repeated_finishes.len(), 1);
        let later: Vec<String> = later
            .iter()
            .map(|j| match j {
                Job::Claim(c) => format!("claim {}", c.key == key("b")),
                Job::Finish(f) => format!("finish {}", f.claim == a_z),
            })
            .collect();
        assert_eq!(later, ["claim true", "finish true"]);
    }

    #[tokio::test]
    async fn claims_of_one_key_in_one_batch_have_one_winner() {
        let (store, _db) = store().await;
        let k = key("race");
        let mut jobs: Vec<_> = (0..5)
            .map(|_| claim_job(&k, Duration::from_secs(60)))
            .collect();
        jobs.insert(2, claim_job(&key("other"), Duration::from_secs(60)));
        let out = batch(&store, jobs).await;
        let winner = claimed(&out[0]);
        claimed(&out[2]);
        for (i, o) in out.iter().enumerate() {
            if i != 0 && i != 2 {
                assert!(
                    matches!(o, Out::Claim(Ok(ClaimOutcome::InProgress))),
                    "{i}: {o:?}"
                );
            }
        }
        let record = store.inspect(&k).await.unwrap().unwrap();
        assert_eq!(record.attempt_id, winner.attempt_id);
        assert_eq!(record.state, RunState::InProgress);
        assert_eq!(store.group_commits().commits, 1);
    }

    #[tokio::test]
    async fn a_stale_finish_beside_a_fresh_claim_changes_nothing() {
        let (store, _db) = store().await;
        let k = key("stale");
        let old = claimed(&batch(&store, vec![claim_job(&k, Duration::from_millis(20))]).await[0]);
        tokio::time::sleep(Duration::from_millis(60)).await;
        let out = batch(
            &store,
            vec![
                claim_job(&k, Duration::from_secs(60)),
                finish_job(&old, HandlerOutcome::Failure),
                finish_job(&old, HandlerOutcome::Success),
            ],
        )
        .await;
        let new = claimed(&out[0]);
        assert!(new.fence > old.fence);
        for o in &out[1..] {
            assert!(matches!(o, Out::Finish(Ok(FinishResult::Stale))), "{o:?}");
        }
        let record = store.inspect(&k).await.unwrap().unwrap();
        assert_eq!(record.attempt_id, new.attempt_id);
        assert_eq!(record.state, RunState::InProgress);

        // The fresh claim's own finish, beside a repeat of it and a stale one.
        let out = batch(
            &store,
            vec![
                finish_job(&old, HandlerOutcome::Failure),
                finish_job(&new, HandlerOutcome::Success),
                finish_job(&new, HandlerOutcome::Failure),
            ],
        )
        .await;
        assert!(matches!(out[0], Out::Finish(Ok(FinishResult::Stale))));
        assert!(matches!(out[1], Out::Finish(Ok(FinishResult::Applied))));
        assert!(matches!(out[2], Out::Finish(Ok(FinishResult::Stale))));
        let record = store.inspect(&k).await.unwrap().unwrap();
        assert_eq!(record.state, RunState::Completed);
    }

    #[tokio::test]
    async fn a_failing_operation_fails_alone() {
        let (store, _db) = store().await;
        let poison = key("poison");
        let client = store.pool.get().await.unwrap();
        client
            .batch_execute(&format!(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN
                     IF NEW.key = '{}' THEN RAISE EXCEPTION 'refused'; END IF;
                     RETURN NEW;
                 END $$;
                 CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON idem_guard_runs
                     FOR EACH ROW EXECUTE FUNCTION refuse();",
                poison.as_str()
            ))
            .await
            .unwrap();
        let earlier = key("earlier");
        let held =
            claimed(&batch(&store, vec![claim_job(&earlier, Duration::from_secs(60))]).await[0]);
        let (a, b) = (key("a"), key("b"));
        let out = batch(
            &store,
            vec![
                claim_job(&a, Duration::from_secs(60)),
                claim_job(&poison, Duration::from_secs(60)),
                finish_job(&held, HandlerOutcome::Success),
                claim_job(&b, Duration::from_secs(60)),
            ],
        )
        .await;
        let a_claim = claimed(&out[0]);
        assert!(
            matches!(out[1], Out::Claim(Err(StoreError::Postgres(_)))),
            "{:?}",
            out[1]
        );
        assert!(
            matches!(out[2], Out::Finish(Ok(FinishResult::Applied))),
            "{:?}",
            out[2]
        );
        let b_claim = claimed(&out[3]);
        assert_eq!(
            store.inspect(&a).await.unwrap().unwrap().attempt_id,
            a_claim.attempt_id
        );
        assert_eq!(
            store.inspect(&b).await.unwrap().unwrap().attempt_id,
            b_claim.attempt_id
        );
        assert_eq!(
            store.inspect(&earlier).await.unwrap().unwrap().state,
            RunState::Completed
        );
        assert_eq!(store.inspect(&poison).await.unwrap(), None);
    }

    /// While another transaction holds the fence table, callers queue up;
    /// once it lets go they share a few statements, not one each.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn waiting_callers_share_commits() {
        let (store, _db) = store().await;
        let mut blocker = store.pool.get().await.unwrap();
        let tx = blocker.transaction().await.unwrap();
        tx.batch_execute("LOCK TABLE idem_guard_fences IN EXCLUSIVE MODE")
            .await
            .unwrap();
        let tasks: Vec<_> = (0..32)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let k = key(&format!("k{i}"));
                    let outcome = store.claim(&k, ClaimTerms::default()).await.unwrap();
                    let ClaimOutcome::Claimed(claim) = outcome else {
                        panic!("a fresh key was not claimed: {outcome:?}");
                    };
                    store.finish(&claim, HandlerOutcome::Success).await.unwrap()
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        tx.commit().await.unwrap();
        for t in tasks {
            assert_eq!(t.await.unwrap(), FinishResult::Applied);
        }
        let shared = store.group_commits();
        assert_eq!(shared.operations, 64);
        // Claims: at most one statement per batcher, and what queued while
        // they were blocked; finishes alike.
        assert!(shared.commits <= 16, "{shared:?}");
    }
}
