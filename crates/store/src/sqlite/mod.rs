//! The embedded backend: one SQLite file in WAL mode.
//!
//! Writes go through the [`writer::Writer`] (group commit, `synchronous=FULL`,
//! so a write acknowledged is a write that survives power loss); reads run
//! on a small pool of read-only connections, which WAL lets proceed while
//! the writer commits.

mod counts;
mod dispatch;
mod dispatched;
mod idempotency;
mod queues;
mod tasks;
mod tenancy;
mod work;
mod writer;

use crate::driver::{Conn, Dialect, Value, run_now};
use crate::events::EventRenderer;
use crate::idempotency::KeyCompletion;
use crate::records::Status;
use crate::schema::migration_sql;
use crate::tables::idempotency::Keyed;
use crate::{Error, Result};
use idem_core::Clock;
use idem_core::clock::to_micros;
use jiff::Timestamp;
use rusqlite::{Connection, OpenFlags, params_from_iter};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use writer::Writer;

/// Idle read connections kept open.
const MAX_IDLE_READERS: usize = 8;

/// The SQLite store. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// Counts what any connection of the store runs, when asked to (see
    /// [`SqliteStore::open_counting_statements`]).
    statements: Option<Arc<StatementCounts>>,
    writer: Writer,
    readers: Mutex<Vec<Connection>>,
    clock: Arc<dyn Clock>,
    /// Writes the bodies of the events final states raise.
    events: Arc<dyn EventRenderer>,
    /// In-progress Idempotency-Key locks (see `idempotency`).
    locks: Mutex<HashMap<idempotency::LockId, idempotency::Lock>>,
    /// Queue configurations and states as the writer last read them, so
    /// that a task create costs the single writer no queue lookup. Exact:
    /// every change of a queue's configuration, state or existence goes
    /// through this store and drops the entry.
    queue_configs: tasks::QueueCache,
    /// The pull queues found ordered, whose claims take turns at once.
    ordered_queues: Arc<crate::tables::work::OrderedQueues>,
    quotas: std::sync::RwLock<crate::Quotas>,
    task_usage: crate::usage::TaskUsage,
    /// The attempts each queue started in the last minute.
    dispatched: dispatched::Dispatched,
}

/// The writer's settings, on every connection that writes (the store's
/// writer, `idem migrate`). Each job of a group commit runs in a
/// savepoint, whose undo pages SQLite writes to a temporary file unless
/// told to keep them in memory (`temp_store`): a third of the writer's
/// time went to those writes. They only undo a job within its open
/// transaction; a crash loses the transaction, which never reached the WAL.
const WRITER_PRAGMAS: &str = "PRAGMA journal_mode = WAL;
     PRAGMA synchronous = FULL;
     PRAGMA foreign_keys = OFF;
     PRAGMA temp_store = MEMORY;";

/// How long any connection to the file waits for a lock another holds
/// (the writer's, a checkpoint's) before it gives up: the store's own
/// connections, `idem migrate`'s and `idem backup`'s.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path` and brings its
    /// schema up to date. Events are written by `events`.
    pub async fn open(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventRenderer>,
    ) -> Result<SqliteStore> {
        Self::open_inner(path.as_ref(), clock, events, None).await
    }

    /// [`SqliteStore::open`], counting in `statements` what any of the
    /// store's connections runs ([`StatementCounts`]): what a workload
    /// costs the database, for the cost-budget tests.
    pub async fn open_counting_statements(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventRenderer>,
        statements: Arc<StatementCounts>,
    ) -> Result<SqliteStore> {
        Self::open_inner(path.as_ref(), clock, events, Some(statements)).await
    }

    async fn open_inner(
        path: &Path,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventRenderer>,
        statements: Option<Arc<StatementCounts>>,
    ) -> Result<SqliteStore> {
        let path = path.to_path_buf();
        let p = path.clone();
        let counter = statements.clone();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection> {
            let mut conn = Connection::open(&p)?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.execute_batch(WRITER_PRAGMAS)?;
            migrate(&conn)?;
            count_statements(&mut conn, counter)?;
            Ok(conn)
        })
        .await
        .map_err(|e| Error::Internal(e.to_string()))??;
        let store = SqliteStore {
            inner: Arc::new(Inner {
                path,
                statements,
                writer: Writer::start(conn),
                readers: Mutex::new(Vec::new()),
                clock,
                events,
                locks: Mutex::new(HashMap::new()),
                queue_configs: Arc::default(),
                ordered_queues: Arc::default(),
                quotas: Default::default(),
                task_usage: Default::default(),
                dispatched: Default::default(),
            }),
        };
        let ordered = store
            .read(async |c, _| crate::tables::work::ordered_queues(c).await)
            .await?;
        *store.inner.ordered_queues.lock().expect("ordered queues") = ordered;
        Ok(store)
    }

    fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    fn quotas_cell(&self) -> &std::sync::RwLock<crate::Quotas> {
        &self.inner.quotas
    }

    fn task_usage(&self) -> &crate::usage::TaskUsage {
        &self.inner.task_usage
    }

    /// The renderer of events, for an operation's body.
    fn events(&self) -> Arc<dyn EventRenderer> {
        self.inner.events.clone()
    }

    /// `dispatched_last_minute` as this process counted it.
    fn dispatched_in_memory(&self, org: &str, queue: &str) -> Option<u64> {
        let now = idem_core::clock::to_micros(self.now());
        Some(self.inner.dispatched.last_minute(org, queue, now))
    }

    /// Counts attempts a worker's claim started.
    fn record_dispatched(&self, org: &str, queue: &str, n: u64) {
        if n > 0 {
            let now = idem_core::clock::to_micros(self.now());
            self.inner.dispatched.record(org, queue, now, n);
        }
    }

    /// Runs `body` on the writer thread, in the transaction of its batch
    /// (a savepoint of its own), and completes the Idempotency-Key record
    /// `key` in it: the record commits with the effect or neither does,
    /// whatever way the body ends. A key whose in-memory lock another
    /// request holds now is refused before the effect, in the writer, so
    /// that no takeover can slip in between; a key the write claims is
    /// checked there against the records too, and the writer's one write
    /// at a time makes the check and the insert of the record one step.
    async fn write<T, F>(&self, key: Option<KeyCompletion>, body: F) -> Result<T>
    where
        T: Send + 'static,
        F: AsyncFnOnce(&Lite<'_>, i64, &mut Keyed) -> Result<T> + Send + 'static,
    {
        self.write_in(true, key, body).await
    }

    /// [`Self::write`], in a savepoint of its own when `guarded`; unguarded,
    /// `body` must fail only before it changes a row or at its last
    /// statement ([`Writer::write_unguarded`]).
    async fn write_in<T, F>(&self, guarded: bool, key: Option<KeyCompletion>, body: F) -> Result<T>
    where
        T: Send + 'static,
        F: AsyncFnOnce(&Lite<'_>, i64, &mut Keyed) -> Result<T> + Send + 'static,
    {
        let lock = key.clone();
        let inner = self.inner.clone();
        let clock = self.inner.clock.clone();
        let job = move |conn: &Connection, counted: &counts::Counted| {
            // "now" is read inside the batch, so a write never records
            // a time earlier than writes committed before it.
            let now = to_micros(clock.now());
            if let Some(k) = &key {
                idempotency::check_still_held(&inner.locks, k, now)?;
            }
            let c = Lite(conn, Some(counted));
            let mut keyed = Keyed::new(key);
            run_now(async {
                keyed.claim(&c, now).await?;
                let value = body(&c, now, &mut keyed).await?;
                keyed.complete(&c, now).await?;
                Ok(value)
            })
        };
        let writer = &self.inner.writer;
        let result = if guarded {
            writer.write(job).await
        } else {
            writer.write_unguarded(job).await
        };
        match &result {
            Ok(_) => self.unlock(lock.as_ref()),
            // A batch that failed to commit may have filled the cache with
            // rows that never existed.
            Err(Error::Unavailable(_)) => self
                .inner
                .queue_configs
                .lock()
                .expect("queue cache")
                .clear(),
            Err(_) => {}
        }
        result
    }

    /// A write without an Idempotency-Key: one job of the writer.
    async fn autocommit<T, F>(&self, body: F) -> Result<T>
    where
        T: Send + 'static,
        F: AsyncFnOnce(&Lite<'_>, i64) -> Result<T> + Send + 'static,
    {
        self.write(None, async move |c, now, _| body(c, now).await)
            .await
    }

    async fn ping_database(&self) -> Result<()> {
        self.read(async |c, _| c.query_opt("SELECT 1", &[], |_| Ok(())).await)
            .await
            .map(drop)
    }

    /// The version recorded now: `idem migrate` may have run beside this
    /// node.
    async fn schema_now(&self) -> Result<crate::schema::SchemaState> {
        let store = self
            .read(async |c, _| {
                c.query_opt("PRAGMA user_version", &[], |r| crate::sql::Row::i64(r, 0))
                    .await
            })
            .await?
            .unwrap_or(0);
        Ok(crate::schema::SchemaState { store })
    }

    /// As [`Self::read`]: SQLite's planner reads an index in key order for
    /// a walk's steps whatever it knows of the table.
    async fn read_walking<T, F>(&self, body: F) -> Result<T>
    where
        T: Send + 'static,
        F: AsyncFnOnce(&Lite<'_>, i64) -> Result<T> + Send + 'static,
    {
        self.read(body).await
    }

    /// Runs `body` on a read-only connection.
    async fn read<T, F>(&self, body: F) -> Result<T>
    where
        T: Send + 'static,
        F: AsyncFnOnce(&Lite<'_>, i64) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        let now = to_micros(self.now());
        tokio::task::spawn_blocking(move || {
            let conn = match inner.readers.lock().expect("reader pool").pop() {
                Some(c) => c,
                None => open_reader(&inner.path, inner.statements.clone())?,
            };
            let result = run_now(body(&Lite(&conn, None), now));
            let mut idle = inner.readers.lock().expect("reader pool");
            if idle.len() < MAX_IDLE_READERS {
                idle.push(conn);
            }
            result
        })
        .await
        .map_err(|e| Error::Internal(e.to_string()))?
    }
}

fn open_reader(path: &Path, statements: Option<Arc<StatementCounts>>) -> Result<Connection> {
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    stable_plans(&conn, "reader");
    count_statements(&mut conn, statements)?;
    Ok(conn)
}

/// Query planner stability on a connection of the store (`role`, for the
/// log): plans must not depend on bound values. Without it SQLite looks at
/// a parameter's value while planning (a `LIMIT $n`, an equality on an
/// index's leading column when the statement also orders by the index)
/// and then expires the statement whenever that parameter is rebound, so
/// a cached statement is prepared anew on every execution. Measured on the
/// dispatcher's completion lookup (a three-table join run once per delivery
/// with a new task uid): re-preparing was half of the writer's time; a
/// queue's task list with its `LIMIT` was prepared again on every page.
/// Plans stay the ones chosen for the SQL text (no statement here depends
/// on a bound value to pick an index); results are unaffected.
fn stable_plans(conn: &Connection, role: &str) {
    if let Err(e) = conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    ) {
        tracing::warn!(error = %e, "sqlite {role}: query planner stability not enabled");
    }
}

/// What a store's connections ran, when counted
/// ([`SqliteStore::open_counting_statements`]).
#[derive(Debug, Default)]
pub struct StatementCounts {
    /// Statements started, trigger programs and the writer's transaction
    /// control included.
    pub statements: AtomicU64,
    /// Virtual-machine instructions the statements executed (their trigger
    /// programs' within them): the work they did, counted the same on any
    /// machine, so that a statement that starts doing more per row (a
    /// subquery run again for each row) shows without a clock.
    pub vm_steps: AtomicU64,
}

/// Has `conn` count what it runs into `counts`. A statement's instruction
/// counter runs on across its executions while it stays prepared, so each
/// execution counts what it added between its start and its end.
fn count_statements(conn: &mut Connection, counts: Option<Arc<StatementCounts>>) -> Result<()> {
    use rusqlite::StatementStatus::VmStep;
    use rusqlite::trace::{TraceEvent, TraceEventCodes};
    if let Some(counts) = counts {
        let mut started: HashMap<String, i32> = HashMap::new();
        conn.trace_v2(
            TraceEventCodes::SQLITE_TRACE_STMT | TraceEventCodes::SQLITE_TRACE_PROFILE,
            Some(move |event: TraceEvent<'_>| match event {
                TraceEvent::Stmt(stmt, text) => {
                    counts.statements.fetch_add(1, Ordering::Relaxed);
                    // A trigger program starts inside its statement, which
                    // it names by a comment: the statement's start stays.
                    if !text.starts_with("--") {
                        started.insert(stmt.sql().into_owned(), stmt.get_status(VmStep));
                    }
                }
                TraceEvent::Profile(stmt, _) => {
                    let at = stmt.get_status(VmStep);
                    let from = started.remove(stmt.sql().as_ref()).unwrap_or(0);
                    let steps = u64::try_from(at - from).unwrap_or(0);
                    counts.vm_steps.fetch_add(steps, Ordering::Relaxed);
                }
                _ => {}
            }),
        )?;
    }
    Ok(())
}

/// Schema versions, applied in order; each runs once, recorded in
/// `user_version`.
const MIGRATIONS: &[&str] = crate::schema::with_migrations!(migration_sql!("sqlite",));

/// Applies the migrations `conn`'s database lacks; a newer schema than
/// this binary's is refused before any write. The version before.
fn migrate(conn: &Connection) -> Result<crate::schema::SchemaState> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let before = crate::schema::SchemaState { store: version };
    before.refuse_newer()?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(before)
}

/// The schema version of the database file at `path` (0 when there is
/// none), read without writing.
pub fn schema_state(path: &Path) -> Result<crate::schema::SchemaState> {
    if !path.exists() {
        return Ok(crate::schema::SchemaState { store: 0 });
    }
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let store = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok(crate::schema::SchemaState { store })
}

/// Applies the migrations the database file at `path` lacks, creating it
/// if needed; the version before. Safe beside a running `idem serve`: the
/// file's write lock orders them.
pub fn migrate_file(path: &Path) -> Result<crate::schema::SchemaState> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.execute_batch(WRITER_PRAGMAS)?;
    migrate(&conn)
}

crate::operations::store_operations!(SqliteStore);

/// A connection of the writer (with the counts of the tasks its writes
/// insert) or a reader, running the shared statements; each statement is
/// prepared once per connection.
pub(crate) struct Lite<'a>(&'a Connection, Option<&'a counts::Counted>);

impl Conn for Lite<'_> {
    const DIALECT: Dialect = Dialect::Sqlite;
    type Row<'r> = rusqlite::Row<'r>;

    async fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<u64> {
        let n = self
            .0
            .prepare_cached(sql)?
            .execute(params_from_iter(params))?;
        Ok(n as u64)
    }

    async fn query<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        map: impl Fn(&rusqlite::Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let mut rows = stmt.query(params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(map(r)?);
        }
        Ok(out)
    }

    async fn query_opt<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        map: impl Fn(&rusqlite::Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let mut rows = stmt.query(params_from_iter(params))?;
        rows.next()?.map(map).transpose()
    }

    fn count_inserted(&self, org: &str, queue: &str, tasks: u64, bytes: u64) {
        if let Some(counted) = self.1 {
            counted.inserted(org, queue, tasks, bytes);
        }
    }

    fn count_moved(&self, org: &str, queue: &str, moved: (Status, Status), tasks: u64, bytes: u64) {
        if let Some(counted) = self.1 {
            counted.moved(org, queue, moved, tasks, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::StatementStatus;

    /// How many times running `sql` three times, with a new value bound to
    /// each parameter each time, prepared it anew.
    fn reprepared(conn: &Connection, sql: &str) -> i32 {
        let mut stmt = conn.prepare_cached(sql).unwrap();
        for i in 0..3i64 {
            let mut rows = stmt
                .query(rusqlite::params![
                    format!("org-{i}"),
                    format!("q-{i}"),
                    10 + i
                ])
                .unwrap();
            while rows.next().unwrap().is_some() {}
        }
        stmt.get_status(StatementStatus::RePrepare)
    }

    /// A page of a queue's tasks, as the lists read it: an equality on the
    /// due index's leading columns, its order, a bound `LIMIT`.
    const LISTED: &str = "SELECT uid FROM tasks WHERE org = ?1 AND queue = ?2 \
         AND status = 'pending' ORDER BY group_key, priority DESC LIMIT ?3";

    #[test]
    fn a_cached_statement_is_not_prepared_again_for_new_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("idem.db");
        migrate_file(&path).unwrap();

        // What the store's setting prevents: without it, each new value of
        // the `LIMIT` or the leading columns makes SQLite plan again.
        let bare = Connection::open(&path).unwrap();
        assert!(reprepared(&bare, LISTED) > 0);

        let reader = open_reader(&path, None).unwrap();
        assert_eq!(reprepared(&reader, LISTED), 0, "a reader");
        let writer = Connection::open(&path).unwrap();
        stable_plans(&writer, "writer");
        assert_eq!(reprepared(&writer, LISTED), 0, "the writer");
    }
}
