//! PostgreSQL, for several nodes sharing one store. "Now" is the database's
//! `clock_timestamp()`, so nodes with skewed clocks still agree on leases.

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use idem_postgres_tls::MakeRustlsConnect;
use tokio_postgres::NoTls;
use uuid::Uuid;

use super::{
    Claim, ClaimOutcome, ClaimTerms, FinishResult, GuardStore, HandlerOutcome, RecordView,
    RunState, StoreError, Swept, fence_from_db, parse_attempt, parse_state,
};
use crate::clock::duration_micros;
use crate::key::RunKey;

/// Serializes schema creation between nodes starting at once: concurrent
/// `CREATE TABLE IF NOT EXISTS` can still fail on the catalog's unique index.
const SCHEMA_LOCK: i64 = 0x1de7_9a4d;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS idem_guard_runs (
    key text PRIMARY KEY,
    state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
    attempt_id text NOT NULL,
    fence bigint NOT NULL,
    lease_expires timestamptz NOT NULL,
    expire_at timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_runs_expire ON idem_guard_runs (expire_at);
CREATE TABLE IF NOT EXISTS idem_guard_fences (
    key text PRIMARY KEY,
    fence bigint NOT NULL,
    expire_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_fences_expire ON idem_guard_fences (expire_at);
";

// One statement, so one round trip and one atomic step:
//
// 1. The fence CTE upserts the key's watermark. Its ON CONFLICT DO UPDATE
//    locks that row until the statement commits, so claims of one key run
//    one after another, and each reads the watermark its predecessor wrote.
//    Every claim bumps the watermark, winners and losers alike; gaps in the
//    fencing sequence are harmless, and bumping unconditionally is what
//    makes the lock order simple.
// 2. The main INSERT … ON CONFLICT DO UPDATE sees the newest version of the
//    record (conflict handling ignores the statement's snapshot). The CASEs
//    rewrite it only when it may be taken over (past expire_at, or an
//    in_progress lease that ran out) and otherwise keep it as it is, so
//    RETURNING always reports the record: `attempt_id = $2` means we won.
//
// `clock` is materialized once so that every comparison uses one instant.
const CLAIM: &str = "
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
ON CONFLICT (key) DO UPDATE SET
    state = CASE WHEN r.expire_at <= EXCLUDED.claimed_at
                   OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)
            THEN EXCLUDED.state ELSE r.state END,
    attempt_id = CASE WHEN r.expire_at <= EXCLUDED.claimed_at
                   OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)
            THEN EXCLUDED.attempt_id ELSE r.attempt_id END,
    fence = CASE WHEN r.expire_at <= EXCLUDED.claimed_at
                   OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)
            THEN EXCLUDED.fence ELSE r.fence END,
    lease_expires = CASE WHEN r.expire_at <= EXCLUDED.claimed_at
                   OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)
            THEN EXCLUDED.lease_expires ELSE r.lease_expires END,
    expire_at = CASE WHEN r.expire_at <= EXCLUDED.claimed_at
                   OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)
            THEN EXCLUDED.expire_at ELSE r.expire_at END,
    claimed_at = CASE WHEN r.expire_at <= EXCLUDED.claimed_at
                   OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)
            THEN EXCLUDED.claimed_at ELSE r.claimed_at END
RETURNING r.attempt_id, r.state, r.fence
";

const FINISH_SUCCESS: &str = "
UPDATE idem_guard_runs SET state = 'completed'
WHERE key = $1 AND attempt_id = $2 AND state = 'in_progress'";

const FINISH_FAILURE: &str = "
DELETE FROM idem_guard_runs
WHERE key = $1 AND attempt_id = $2 AND state = 'in_progress'";

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

const INSPECT: &str = "
SELECT state, attempt_id, fence FROM idem_guard_runs
WHERE key = $1 AND expire_at > clock_timestamp()";

/// A store in PostgreSQL (tables `idem_guard_runs` and `idem_guard_fences`).
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: Pool,
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
        let store = Self { pool };
        store.create_schema().await?;
        Ok(store)
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
        let client = self.pool.get().await?;
        let stmt = client.prepare_cached(CLAIM).await?;
        let attempt_id = Uuid::now_v7();
        let attempt = attempt_id.to_string();
        let lease = duration_micros(terms.lease);
        let retention = duration_micros(terms.effective_retention());
        let row = client
            .query_one(&stmt, &[&key.as_str(), &attempt, &lease, &retention])
            .await?;
        let holder: String = row.get(0);
        let state = parse_state(row.get::<_, &str>(1))?;
        if holder == attempt {
            return Ok(ClaimOutcome::Claimed(Claim {
                key: key.clone(),
                attempt_id,
                fence: fence_from_db(row.get(2))?,
            }));
        }
        Ok(match state {
            RunState::Completed => ClaimOutcome::Completed,
            RunState::InProgress => ClaimOutcome::InProgress,
        })
    }

    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        let client = self.pool.get().await?;
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

    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.pool.get().await?;
        let runs = client.prepare_cached(SWEEP_RUNS).await?;
        let fences = client.prepare_cached(SWEEP_FENCES).await?;
        let records = client.execute(&runs, &[&limit]).await?;
        let fences = client.execute(&fences, &[&limit]).await?;
        Ok(Swept {
            records: usize::try_from(records).unwrap_or(usize::MAX),
            fences: usize::try_from(fences).unwrap_or(usize::MAX),
        })
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
