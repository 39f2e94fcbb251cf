//! The multi-node backend: any number of `idem` nodes on one PostgreSQL
//! database.
//!
//! Each operation is one transaction on a pooled connection; creates
//! without an Idempotency-Key share their commits ([`batch`]). Uniqueness
//! (organization, queue and task names; task IDs) rests on primary keys, so
//! nodes never need to coordinate in memory; row locks (`FOR UPDATE`) order
//! the read-modify-write operations.

mod batch;
mod clock;
mod dispatch;
mod idempotency;
mod pull_lines;
mod queues;
mod statistics;
mod tasks;
mod tenancy;
#[cfg(test)]
mod testing;
mod work;

pub use clock::DatabaseClock;

use crate::driver::{Conn, Dialect, Value};
use crate::events::EventRenderer;
use crate::idempotency::KeyCompletion;
use crate::schema::migration_sql;
use crate::tables::idempotency::Keyed;
use crate::{Error, Result};
use deadpool_postgres::{
    GenericClient, Manager, ManagerConfig, Object, Pool, RecyclingMethod, Transaction,
};
use idem_core::Clock;
use idem_core::clock::to_micros;
use idem_postgres_tls::{MakeRustlsConnect, with_server_options};
use std::sync::{Arc, Mutex};
use tokio_postgres::types::ToSql;

const MIGRATIONS: &[&str] = crate::schema::with_migrations!(migration_sql!("postgres",));
/// How many times a write runs when PostgreSQL aborts it for a conflict.
const WRITE_TRIES: u32 = 4;
/// The connections a node opens as it starts ([`PostgresStore::warm_up`]).
const WARM_CONNECTIONS: usize = 4;
/// Planned, not run: planning a table opens its indexes.
const SQL_WARM_UP: &str = "EXPLAIN SELECT 1 FROM tasks t \
     JOIN queues q ON q.org = t.org AND q.name = t.queue \
     JOIN attempts a ON a.task_uid = t.uid WHERE t.org = ''";
/// What [`PostgresStore::read_walking`] plans under: sorts only where no
/// index gives the order.
const SQL_WALK_IN_KEY_ORDER: &str = "SET LOCAL enable_sort = off";
/// Serializes migrations and bootstrap across nodes starting together.
const ADVISORY_LOCK: i64 = 0x1de3_5c4e_3a00_0001;

/// The PostgreSQL store. Cheap to clone.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    clock: Arc<dyn Clock>,
    /// Writes the bodies of the events final states raise.
    events: Arc<dyn EventRenderer>,
    /// For the dedicated connection that LISTENs for dispatch wake-ups.
    listen_config: tokio_postgres::Config,
    /// The TLS the URL's `sslmode` and `sslrootcert` ask for.
    tls: MakeRustlsConnect,
    /// Queue configurations recently read, for the one-statement create.
    queue_configs: Arc<Mutex<tasks::QueueConfigCache>>,
    /// Group commit for creates without an Idempotency-Key.
    batcher: batch::Batcher,
    /// Group commit for the ends of pull tasks.
    finisher: work::Finisher,
    /// Concurrent claims of a pull queue, gathered.
    claims: Arc<pull_lines::PullLines<crate::records::Task>>,
    /// The pull queues found ordered, whose claims take turns at once.
    ordered_queues: Arc<crate::tables::work::OrderedQueues>,
    /// Keeps the task tables' planner statistics fresh while held.
    _statistics: Arc<()>,
    /// Connections whose commits do not wait for the disk, for
    /// Idempotency-Key locks only: a lock lost in a crash is released, which
    /// is what a crash should do to it, and the effect's durable commit
    /// flushes it anyway. One statement instead of a four-round-trip
    /// transaction with `SET LOCAL`.
    lock_pool: Pool,
    quotas: Arc<std::sync::RwLock<crate::Quotas>>,
    task_usage: Arc<crate::usage::TaskUsage>,
    /// Whether the database orders task IDs byte by byte (collation `C`
    /// or `C.UTF-8`), so that an ID prefix is one range of the primary
    /// key; with a linguistic collation, where `-` and `_` may weigh
    /// nothing, the prefix is matched row by row instead.
    ids_bytewise: bool,
}

/// How many connections a node holds and how long it waits on them.
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// Most connections of the main pool.
    pub max_connections: usize,
    /// The statement timeout applies to every connection but the
    /// listener's: a statement stuck behind a lock gives its connection
    /// back.
    pub timeouts: idem_postgres_tls::Timeouts,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_connections: 32,
            timeouts: idem_postgres_tls::Timeouts::default(),
        }
    }
}

fn pool(
    config: tokio_postgres::Config,
    tls: &MakeRustlsConnect,
    max_size: usize,
    options: &PoolOptions,
) -> Result<Pool> {
    let manager = Manager::from_config(
        config,
        tls.clone(),
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(max_size)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(options.timeouts.acquire_timeout))
        .create_timeout(Some(options.timeouts.acquire_timeout))
        .build()
        .map_err(|e| Error::Internal(e.to_string()))
}

/// The configuration and TLS connector of a database URL.
pub(crate) fn connect_params(url: &str) -> Result<(tokio_postgres::Config, MakeRustlsConnect)> {
    idem_postgres_tls::connect_params(url)
        .map_err(|e| Error::Unavailable(format!("invalid database URL: {e}")))
}

impl PostgresStore {
    /// Connects to `url` (`postgres://…`, with libpq's `sslmode` and
    /// `sslrootcert`), with at most `max_connections` pooled connections,
    /// and brings the schema up to date. Events are written by `events`.
    pub async fn open(
        url: &str,
        max_connections: usize,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventRenderer>,
    ) -> Result<Self> {
        let options = PoolOptions {
            max_connections,
            ..PoolOptions::default()
        };
        Self::open_with(url, options, clock, events).await
    }

    /// [`PostgresStore::open`] with every pool setting given.
    pub async fn open_with(
        url: &str,
        pool_options: PoolOptions,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventRenderer>,
    ) -> Result<Self> {
        let max_connections = pool_options.max_connections;
        let (config, tls) = connect_params(url)?;
        let listen_config = config.clone();
        let config = with_server_options(
            &config,
            &idem_postgres_tls::statement_timeout(pool_options.timeouts.statement_timeout),
        );
        let lock_config = with_server_options(&config, "-c synchronous_commit=off");
        let lock_pool = pool(
            lock_config,
            &tls,
            max_connections.clamp(1, 8),
            &pool_options,
        )?;
        // The batcher's statements look rows up by primary key, one key at a
        // time, whatever their arrays hold: one plan serves every batch
        // (rather than a custom plan, planned anew for each), and it must
        // never scan a table, even when made while the table was small.
        let batch_config = with_server_options(
            &config,
            "-c plan_cache_mode=force_generic_plan -c enable_seqscan=off",
        );
        let batch_pool = pool(batch_config, &tls, batch::BATCH_CONNECTIONS, &pool_options)?;
        let pool = pool(config, &tls, max_connections, &pool_options)?;
        let store = PostgresStore {
            batcher: batch::Batcher::start(batch_pool),
            finisher: work::Finisher::start(pool.clone(), clock.clone(), events.clone()),
            claims: Arc::default(),
            ordered_queues: Arc::default(),
            _statistics: statistics::keep_fresh(pool.clone()),
            pool,
            clock,
            events,
            listen_config,
            tls,
            queue_configs: Arc::default(),
            lock_pool,
            quotas: Arc::default(),
            task_usage: Arc::default(),
            ids_bytewise: false,
        };
        store.migrate().await?;
        let ids_bytewise = store.ids_sort_bytewise_probe().await?;
        let ordered = store
            .read(async |c, _| crate::tables::work::ordered_queues(c).await)
            .await?;
        store.warm_up().await?;
        Ok(PostgresStore {
            ids_bytewise,
            ordered_queues: Arc::new(Mutex::new(ordered)),
            ..store
        })
    }

    /// Opens [`WARM_CONNECTIONS`] of the pool's connections and has each
    /// plan a statement over the task tables, so that the first requests
    /// after a start find connections made and the tables' catalog entries
    /// (the tasks table's indexes above all) loaded, rather than paying for
    /// both: a new server process reads them on its first plan of a table.
    async fn warm_up(&self) -> Result<()> {
        let n = WARM_CONNECTIONS.min(self.pool.status().max_size);
        let clients = futures_util::future::try_join_all((0..n).map(|_| self.pool.get())).await?;
        futures_util::future::try_join_all(clients.iter().map(|c| c.simple_query(SQL_WARM_UP)))
            .await?;
        Ok(())
    }

    /// Sorts every character a task ID may hold under the database's
    /// default collation and compares with byte order.
    async fn ids_sort_bytewise_probe(&self) -> Result<bool> {
        const BYTE_ORDER: &str = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";
        let client = self.pool.get().await?;
        let sorted: String = client
            .query_one(
                "SELECT string_agg(c, '' ORDER BY c) FROM unnest(string_to_array($1, NULL)) c",
                &[&BYTE_ORDER],
            )
            .await?
            .get(0);
        Ok(sorted == BYTE_ORDER
            && client
                .query_one("SELECT 'a-' < 'a-0' AND 'a-z' < 'a.' AND 'a_' < 'ab'", &[])
                .await?
                .get::<_, bool>(0))
    }

    /// Whether the database orders task IDs byte by byte, so that a list by
    /// ID prefix reads one range of the primary key (otherwise it matches
    /// the queue's IDs one by one).
    pub fn ids_bytewise(&self) -> bool {
        self.ids_bytewise
    }

    async fn migrate(&self) -> Result<()> {
        let mut client = self.pool.get().await?;
        migrate_client(&mut client).await.map(drop)
    }

    fn now(&self) -> i64 {
        to_micros(self.clock.now())
    }
}

/// The schema version of the database at `url`, read without writing.
pub async fn schema_state(url: &str) -> Result<crate::schema::SchemaState> {
    let client = connect_one(url).await?;
    let store = match client
        .query_one("SELECT to_regclass('idem_schema') IS NOT NULL", &[])
        .await?
        .get::<_, bool>(0)
    {
        true => client
            .query_opt("SELECT version FROM idem_schema", &[])
            .await?
            .map_or(0, |r| r.get(0)),
        false => 0,
    };
    Ok(crate::schema::SchemaState { store })
}

/// Applies the migrations the database at `url` lacks (none if another
/// node is doing so: it waits for that node's); the version before.
pub async fn migrate(url: &str) -> Result<crate::schema::SchemaState> {
    let mut client = connect_one(url).await?;
    migrate_client(&mut client).await
}

async fn connect_one(url: &str) -> Result<tokio_postgres::Client> {
    let (config, tls) = connect_params(url)?;
    let (client, connection) = config
        .connect(tls)
        .await
        .map_err(|e| Error::Unavailable(format!("connecting to PostgreSQL: {e}")))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "a migration's connection ended");
        }
    });
    Ok(client)
}

/// Brings the schema up to date in one transaction, serialized across
/// nodes; a newer schema than this binary's is refused before any write.
async fn migrate_client(client: &mut tokio_postgres::Client) -> Result<crate::schema::SchemaState> {
    {
        let tx = client.transaction().await?;
        // Waiting for another node's migration, and a migration itself, may
        // take longer than any request should.
        tx.batch_execute("SET LOCAL statement_timeout = 0").await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&ADVISORY_LOCK])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS idem_schema (version BIGINT NOT NULL); \
             INSERT INTO idem_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM idem_schema)",
        )
        .await?;
        let version: i64 = tx
            .query_one("SELECT version FROM idem_schema", &[])
            .await?
            .get(0);
        let before = crate::schema::SchemaState { store: version };
        // Dropping the transaction rolls back: a newer store is left as
        // it was.
        before.refuse_newer()?;
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.batch_execute(sql).await?;
            tx.execute("UPDATE idem_schema SET version = $1", &[&(i as i64 + 1)])
                .await?;
        }
        tx.commit().await?;
        Ok(before)
    }
}

crate::operations::store_operations!(PostgresStore);

/// A connection or transaction of the pool, running the shared statements;
/// each statement is prepared once per connection.
pub(crate) struct Pg<'a, C>(&'a C);

fn params<'a>(params: &'a [Value<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl<C: GenericClient> Conn for Pg<'_, C> {
    const DIALECT: Dialect = Dialect::Postgres;
    type Row<'r> = tokio_postgres::Row;

    async fn execute(&self, sql: &str, p: &[Value<'_>]) -> Result<u64> {
        let stmt = self.0.prepare_cached(sql).await?;
        Ok(self.0.execute(&stmt, &params(p)).await?)
    }

    async fn query<T>(
        &self,
        sql: &str,
        p: &[Value<'_>],
        map: impl Fn(&tokio_postgres::Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let stmt = self.0.prepare_cached(sql).await?;
        self.0
            .query(&stmt, &params(p))
            .await?
            .iter()
            .map(map)
            .collect()
    }

    async fn query_opt<T>(
        &self,
        sql: &str,
        p: &[Value<'_>],
        map: impl Fn(&tokio_postgres::Row) -> Result<T>,
    ) -> Result<Option<T>> {
        let stmt = self.0.prepare_cached(sql).await?;
        self.0
            .query_opt(&stmt, &params(p))
            .await?
            .as_ref()
            .map(map)
            .transpose()
    }
}

impl PostgresStore {
    fn quotas_cell(&self) -> &std::sync::RwLock<crate::Quotas> {
        &self.quotas
    }

    fn task_usage(&self) -> &crate::usage::TaskUsage {
        &self.task_usage
    }

    /// The renderer of events, for an operation's body.
    fn events(&self) -> Arc<dyn EventRenderer> {
        self.events.clone()
    }

    /// Any node may claim: the attempts started are counted in the
    /// database (`task_dispatches`), not here.
    fn dispatched_in_memory(&self, _org: &str, _queue: &str) -> Option<u64> {
        None
    }

    /// A claim logs the attempts it started in its own transaction
    /// (`tables::dispatch::record_started`).
    fn record_dispatched(&self, _org: &str, _queue: &str, _n: u64) {}

    /// Runs `body` on a pooled connection, outside a transaction.
    async fn read<T>(
        &self,
        body: impl AsyncFnOnce(&Pg<'_, Object>, i64) -> Result<T>,
    ) -> Result<T> {
        let client = self.pool.get().await?;
        body(&Pg(&client), self.now()).await
    }

    /// Runs a read that walks an index group by group (one probe of the
    /// index for each next key, [`group_keys!`](crate::tables::due)) in a
    /// read-only transaction planned without sorts, so that each step reads
    /// the index in key order. With statistics that know nothing yet of a
    /// queue (filled since the last analysis), PostgreSQL took it for a
    /// few rows and planned every step as a sort of all the queue's tasks,
    /// read through the primary key: five seconds for a queue's statistics
    /// among 1,000 groups of 20,000 tasks, instead of 19 ms.
    async fn read_walking<T>(
        &self,
        body: impl AsyncFnOnce(&Pg<'_, Transaction<'_>>, i64) -> Result<T>,
    ) -> Result<T> {
        let mut client = self.pool.get().await?;
        let tx = client.build_transaction().read_only(true).start().await?;
        tx.batch_execute(SQL_WALK_IN_KEY_ORDER).await?;
        let value = body(&Pg(&tx), self.now()).await?;
        tx.commit().await?;
        Ok(value)
    }

    /// Writes outside a transaction: each statement commits by itself.
    async fn autocommit<T>(
        &self,
        body: impl AsyncFnOnce(&Pg<'_, Object>, i64) -> Result<T>,
    ) -> Result<T> {
        self.read(body).await
    }

    async fn ping_database(&self) -> Result<()> {
        let client = self.pool.get().await?;
        client.simple_query("SELECT 1").await?;
        Ok(())
    }

    /// The version recorded now: another node may have migrated the
    /// database since this one started.
    async fn schema_now(&self) -> Result<crate::schema::SchemaState> {
        let client = self.pool.get().await?;
        let store: i64 = client
            .query_one("SELECT version FROM idem_schema", &[])
            .await?
            .get(0);
        Ok(crate::schema::SchemaState { store })
    }

    /// [`Self::write_at`] now.
    async fn write<T>(
        &self,
        key: Option<KeyCompletion>,
        body: impl AsyncFnOnce(&Pg<'_, Transaction<'_>>, i64, &mut Keyed) -> Result<T> + Clone,
    ) -> Result<T> {
        self.write_at(key, self.now(), body).await
    }

    /// Runs `body` in one transaction, completes the Idempotency-Key record
    /// `key` in it, and commits: the record commits with the effect or
    /// neither does, whatever way the body ends. A key the write claims is
    /// taken in the same transaction before the body runs.
    ///
    /// A transaction PostgreSQL aborts to resolve a conflict (a deadlock,
    /// a serialization failure) wrote nothing, and `body` reads everything
    /// it decides on inside it, so it runs again, up to
    /// [`WRITE_TRIES`] times, before the caller sees [`Error::Retryable`].
    async fn write_at<T>(
        &self,
        key: Option<KeyCompletion>,
        now: i64,
        body: impl AsyncFnOnce(&Pg<'_, Transaction<'_>>, i64, &mut Keyed) -> Result<T> + Clone,
    ) -> Result<T> {
        let mut tries = 1;
        loop {
            if tries == WRITE_TRIES {
                return self.write_once(key, now, body).await;
            }
            match self.write_once(key.clone(), now, body.clone()).await {
                Err(Error::Retryable(why)) => {
                    tracing::debug!(tries, %why, "transaction aborted by a conflict; running it again");
                    // Staggered, so that the two sides of a deadlock do not
                    // meet again at once.
                    let jitter = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| u64::from(d.subsec_micros() % 8));
                    tokio::time::sleep(std::time::Duration::from_millis(
                        u64::from(tries) * 5 + jitter,
                    ))
                    .await;
                    tries += 1;
                }
                other => return other,
            }
        }
    }

    async fn write_once<T>(
        &self,
        key: Option<KeyCompletion>,
        now: i64,
        body: impl AsyncFnOnce(&Pg<'_, Transaction<'_>>, i64, &mut Keyed) -> Result<T>,
    ) -> Result<T> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let mut keyed = Keyed::new(key);
        let value = {
            let c = Pg(&tx);
            keyed.claim(&c, now).await?;
            let value = body(&c, now, &mut keyed).await?;
            keyed.complete(&c, now).await?;
            value
        };
        tx.commit().await?;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::{WARM_CONNECTIONS, testing};
    use crate::Store;
    use crate::records::{PageRequest, TaskBatch, TaskCreate, WorkClaim};
    use idem_core::queue::{QueueConfig, QueueMode};
    use testing::task;

    /// Creates `tasks` in `queue`, a thousand to a batch.
    async fn create_all(store: &super::PostgresStore, queue: &str, tasks: Vec<TaskCreate>) {
        let mut tasks = tasks.into_iter().peekable();
        while tasks.peek().is_some() {
            let batch = tasks.by_ref().take(1000).map(Ok).collect();
            store
                .task_create_batch(TaskBatch {
                    org: testing::ORG.into(),
                    queue: queue.into(),
                    tasks: batch,
                    atomic: true,
                    completion: None,
                })
                .await
                .unwrap();
        }
    }

    /// 2,000 due tasks in queue `backlog`, due before any other.
    async fn backlog(store: &super::PostgresStore) {
        store
            .queue_create(testing::ORG, "backlog", &QueueConfig::default(), None)
            .await
            .unwrap();
        let tasks = (0..2000)
            .map(|i| task("backlog", &format!("b{i}"), None, false))
            .collect();
        create_all(store, "backlog", tasks).await;
    }

    /// Queue `grouped` with `config`, holding 2,000 due tasks spread over
    /// `groups` groups (pull tasks in a pull queue).
    async fn grouped(store: &super::PostgresStore, config: QueueConfig, groups: usize) {
        store
            .queue_create(testing::ORG, "grouped", &config, None)
            .await
            .unwrap();
        let pull = config.mode == QueueMode::Pull;
        let tasks = (0..2000)
            .map(|i| {
                let group = format!("g{}", i % groups);
                task("grouped", &format!("t{i}"), Some(&group), pull)
            })
            .collect();
        create_all(store, "grouped", tasks).await;
    }

    /// The plan of `sql` prepared with parameters `types`, as a node runs
    /// it once PostgreSQL settles on a generic plan (planned for any
    /// value), executed with `args` in a transaction rolled back after.
    async fn generic_plan(
        client: &deadpool_postgres::Object,
        sql: &str,
        types: &str,
        args: &str,
    ) -> Vec<String> {
        client
            .batch_execute(&format!(
                "SET plan_cache_mode = force_generic_plan; PREPARE planned({types}) AS {sql}"
            ))
            .await
            .unwrap();
        client.batch_execute("BEGIN").await.unwrap();
        let plan = client
            .query(
                &format!("EXPLAIN (ANALYZE, COSTS OFF, FORMAT TEXT) EXECUTE planned({args})"),
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        client
            .batch_execute("ROLLBACK; DEALLOCATE planned")
            .await
            .unwrap();
        plan
    }

    /// The rows a plan read from the tasks table and dropped (`Rows Removed
    /// by Filter`), and those its scans of the table answered, over all
    /// their loops.
    fn rows_read(plan: &[String]) -> (u64, u64) {
        let number = |line: &str, after: &str| -> Option<u64> {
            let rest = line.split(after).nth(1)?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        let dropped = plan
            .iter()
            .filter_map(|line| number(line, "Rows Removed by Filter: "))
            .sum();
        let scanned = plan
            .iter()
            .filter(|line| line.contains(" on tasks"))
            .filter_map(|line| Some(number(line, " rows=")? * number(line, " loops=")?))
            .sum();
        (dropped, scanned)
    }

    /// The dispatcher's look for queues with due tasks reads a few index
    /// entries of each queue, whichever queue's tasks fall due first: a
    /// backlog due before a plain queue's one task, and before an ordered
    /// queue's, is not read to learn that those have one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_queues_backlog_is_not_read_to_find_anothers_due_task() {
        let (_db, store) = testing::store_with_org().await;
        backlog(&store).await;
        for q in ["late", "ordered"] {
            store
                .queue_create(testing::ORG, q, &QueueConfig::default(), None)
                .await
                .unwrap();
        }
        store
            .task_create(task("late", "l", None, false))
            .await
            .unwrap();
        store
            .task_create(task("ordered", "o", Some("g"), false))
            .await
            .unwrap();
        let client = store.pool.get().await.unwrap();
        client.batch_execute("ANALYZE tasks").await.unwrap();

        let sql = crate::tables::dispatch::SQL_CLAIM_CANDIDATES[1];
        let far: i64 = i64::MAX / 4;
        let mut found: Vec<String> = client
            .query(sql, &[&far])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(1))
            .collect();
        found.sort();
        assert_eq!(found, ["backlog", "late", "ordered"]);
        let plan = generic_plan(&client, sql, "bigint", &far.to_string()).await;
        let (dropped, _) = rows_read(&plan);
        assert!(
            dropped < 100,
            "{dropped} rows read and dropped:\n{}",
            plan.join("\n")
        );
    }

    /// A claim in turns among groups reads, for each group it visits, a few
    /// of the group's own entries: not every due task of its queue, nor
    /// another queue's backlog due before them, nor tasks of its groups it
    /// cannot take.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_claim_in_turns_reads_the_groups_it_visits_not_the_queue() {
        let (_db, store) = testing::store_with_org().await;
        backlog(&store).await;
        let limited = QueueConfig {
            group_concurrency: Some(10),
            ..QueueConfig::default()
        };
        grouped(&store, limited, 200).await;
        let client = store.pool.get().await.unwrap();
        client.batch_execute("ANALYZE tasks").await.unwrap();

        let sql = crate::tables::due::SQL_CLAIM_PUSH_ORDERED[0][1];
        let args = format!(
            "'{}', 'grouped', {}, '', 10, 10, '', 0",
            testing::ORG,
            i64::MAX / 4
        );
        let plan = generic_plan(
            &client,
            sql,
            "text, text, bigint, text, bigint, bigint, text, bigint",
            &args,
        )
        .await;
        let claimed = plan
            .first()
            .and_then(|top| top.split(" rows=").nth(1))
            .map(|rest| rest.split(' ').next().unwrap().to_string());
        assert_eq!(claimed.as_deref(), Some("10"), "{}", plan.join("\n"));
        // Ten groups visited, none running: a step of the walk, a look for
        // a due task, a count of running ones and one task each (a group's
        // second would be of a turn the claim does not reach, whatever its
        // limit), then ten locks and ten updates: 70 rows answered. Each
        // group bringing as many as its limit allows made 150; a look for
        // due tasks joined to all of the queue's, over 4,000.
        let (dropped, scanned) = rows_read(&plan);
        assert!(
            dropped + scanned < 100,
            "{dropped} rows read and dropped, {scanned} answered:\n{}",
            plan.join("\n")
        );
    }

    /// The index entries and rows of `tasks` read by every session so far,
    /// once the counts have settled: a session reports what it read when it
    /// goes idle, within a second or so.
    async fn tasks_read(client: &deadpool_postgres::Object) -> i64 {
        let read = async || -> i64 {
            client
                .query_one(
                    "SELECT (SELECT COALESCE(sum(idx_tup_read), 0)::bigint \
                     FROM pg_stat_user_indexes WHERE relname = 'tasks') \
                     + (SELECT COALESCE(seq_tup_read, 0) FROM pg_stat_user_tables \
                     WHERE relname = 'tasks')",
                    &[],
                )
                .await
                .unwrap()
                .get(0)
        };
        let mut last = read().await;
        let mut unchanged = 0;
        while unchanged < 15 {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let now = read().await;
            unchanged = if now == last { unchanged + 1 } else { 0 };
            last = now;
        }
        last
    }

    /// A queue's statistics, its list of groups and a claim in turns walk
    /// through its groups one index probe at a time even while PostgreSQL
    /// knows nothing of the table: never analyzed, with 40,000 tasks among
    /// 1,000 groups, the statistics alone read 48 million index entries (a
    /// sort of all of the queue's tasks, read through the primary key, for
    /// each step of the walk), 10 million when planned without sorts but
    /// with each group's probe in no order.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_queues_groups_are_walked_by_the_index_before_any_analysis() {
        let (_db, store) = testing::store_with_org().await;
        let limited = QueueConfig {
            mode: QueueMode::Pull,
            group_concurrency: Some(4),
            ..QueueConfig::default()
        };
        grouped(&store, limited, 1000).await;
        backlog(&store).await;
        let client = store.pool.get().await.unwrap();
        // Nineteen times as many, copies of those, written at once (well
        // before the node's first look for tables to analyze).
        client
            .batch_execute(
                "ALTER TABLE tasks SET (autovacuum_enabled = false); \
                 INSERT INTO tasks SELECT (jsonb_populate_record(t, jsonb_build_object(\
                 'task_id', t.task_id || '-' || i, 'uid', t.uid || '-' || i))).* \
                 FROM tasks t, generate_series(1, 18) i WHERE t.queue = 'grouped'",
            )
            .await
            .unwrap();
        let analyzed: Option<i64> = client
            .query_one(
                "SELECT analyze_count + autoanalyze_count FROM pg_stat_user_tables \
                 WHERE relname = 'tasks'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(analyzed, Some(0), "the test needs a table never analyzed");

        let before = tasks_read(&client).await;
        let stats = store.queue_stats(testing::ORG, "grouped").await.unwrap();
        assert_eq!(stats.groups_with_due, 1000);
        let page = PageRequest {
            limit: 100,
            ..PageRequest::default()
        };
        let groups = store
            .queue_groups(testing::ORG, "grouped", "", &page)
            .await
            .unwrap();
        assert_eq!(groups.items.len(), 100);
        let claimed = store
            .work_claim(WorkClaim {
                org: testing::ORG.into(),
                queue: "grouped".into(),
                claimant: "worker".into(),
                max_tasks: 100,
                lease_s: 60,
                tag: None,
                attempts_kept: 10,
            })
            .await
            .unwrap();
        let groups: std::collections::BTreeSet<_> =
            claimed.iter().map(|t| t.group.clone()).collect();
        assert_eq!((claimed.len(), groups.len()), (100, 100));
        let read = tasks_read(&client).await - before;
        // The walks: a probe and a look for a due task for each group, the
        // statistics' counts over the queue's due entries once (80,000),
        // and a claim's reads of the hundred groups it visits.
        assert!(
            read < 400_000,
            "{read} index entries and rows of tasks read"
        );
    }

    /// A node starts with connections open: as many requests at once as
    /// it warmed take them without opening one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_node_starts_with_its_connections_open() {
        let (_db, store) = testing::store_with_org().await;
        let opened = store.pool.status().size;
        assert!(opened >= WARM_CONNECTIONS, "{opened} connections open");
        let held =
            futures_util::future::try_join_all((0..WARM_CONNECTIONS).map(|_| store.pool.get()))
                .await
                .unwrap();
        assert_eq!(store.pool.status().size, opened, "a connection was opened");
        drop(held);
    }
}
