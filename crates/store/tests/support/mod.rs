//! The store suites' shared harness: a fresh store of each backend on a
//! manual clock, with organization [`ORG`] created.

#![allow(dead_code)]

use idem_core::ManualClock;
use idem_core::event::EventType;
use idem_core::task::{BodyForm, Target};
use idem_core::tenancy::{generate_api_key, generate_id, hash_api_key};
use idem_store::events::EventRenderer;
use idem_store::postgres::PostgresStore;
use idem_store::sqlite::{SqliteStore, StatementCounts};
use idem_store::{NewApiKey, Store, Task};
use idem_testkit::TestDatabase;
use idem_testkit::pg_wire::WireCounter;
use jiff::Timestamp;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub const ORG: &str = "acme";

/// What a node has sent its store so far: on PostgreSQL counted on the
/// wire (less the planner-statistics timer's, which runs whatever the
/// workload), on SQLite every statement its connections start.
pub enum Sent {
    Wire(WireCounter),
    Sqlite(Arc<StatementCounts>),
}

impl Sent {
    pub fn total(&self) -> u64 {
        match self {
            Sent::Wire(w) => w
                .snapshot()
                .without("pg_stat_user_tables")
                .without("ANALYZE")
                .total(),
            Sent::Sqlite(n) => n.statements.load(Ordering::Relaxed),
        }
    }
}

/// Where every test's clock starts: a whole minute.
/// A push target the tests never reach: a POST to a closed local port,
/// carrying `body`.
pub fn hook(body: Option<(BodyForm, Vec<u8>)>) -> Target {
    Target {
        url: "http://127.0.0.1:9/hook".into(),
        method: "POST".into(),
        headers: Default::default(),
        body,
        oidc: None,
        secret_headers: Vec::new(),
        trace: None,
    }
}

pub fn start() -> Timestamp {
    "2026-10-16T12:00:00Z".parse().unwrap()
}

pub fn new_key() -> NewApiKey {
    NewApiKey {
        id: generate_id("key"),
        key_hash: hash_api_key(&generate_api_key()),
    }
}

/// Writes an event as the part of the API's body that the suites read: its
/// type, the task's queue (or the run's job), and the task's or run's ID,
/// state and last attempt. The server's views write the whole body; the
/// store has none of its own.
pub struct Summary;

impl EventRenderer for Summary {
    fn render(&self, event: EventType, t: Task, now: Timestamp) -> Vec<u8> {
        let body = match event {
            EventType::JobRunFailed => json!({
                "type": event,
                "job": t.run.as_ref().map(|r| r.job.clone()),
                "run": {"run_id": t.task_id, "state": t.state(now), "last_attempt": t.last_attempt},
            }),
            EventType::TaskSucceeded | EventType::TaskFailed => json!({
                "type": event,
                "queue": t.queue,
                "task": {"task_id": t.task_id, "state": t.state(now), "last_attempt": t.last_attempt},
            }),
        };
        body.to_string().into_bytes()
    }
}

/// What the suites open their stores with.
pub fn events() -> Arc<dyn EventRenderer> {
    Arc::new(Summary)
}

pub struct Harness {
    pub store: Arc<dyn Store>,
    /// A second handle on the same data: on PostgreSQL a separate pool, as
    /// another node would hold.
    pub other: Arc<dyn Store>,
    pub clock: ManualClock,
    _db: Option<TestDatabase>,
    _dir: Option<tempfile::TempDir>,
}

impl Harness {
    /// Runs `sql` on the store's database behind the store's back, as an
    /// operator (or a fault) would.
    pub async fn raw(&self, sql: &str) {
        if let Some(db) = &self._db {
            let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            client.batch_execute(sql).await.unwrap();
        } else {
            let dir = self._dir.as_ref().expect("a backend");
            let conn = rusqlite::Connection::open(dir.path().join("idem.db")).unwrap();
            conn.busy_timeout(std::time::Duration::from_secs(5))
                .unwrap();
            conn.execute_batch(sql).unwrap();
        }
    }

    /// The one integer `sql` answers, read behind the store's back.
    pub async fn raw_i64(&self, sql: &str) -> i64 {
        if let Some(db) = &self._db {
            let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            client.query_one(sql, &[]).await.unwrap().get(0)
        } else {
            let dir = self._dir.as_ref().expect("a backend");
            let conn = rusqlite::Connection::open(dir.path().join("idem.db")).unwrap();
            conn.busy_timeout(std::time::Duration::from_secs(5))
                .unwrap();
            conn.query_row(sql, [], |r| r.get(0)).unwrap()
        }
    }

    /// Asserts that `org`'s task counters (per queue and status, tasks and
    /// stored bytes) are exactly what its rows hold, in both directions.
    pub async fn assert_counters_match_rows(&self, org: &str) {
        let counters = format!(
            "SELECT queue, status, CAST(sum(n) AS BIGINT), CAST(sum(bytes) AS BIGINT) \
             FROM task_counts WHERE org = '{org}' GROUP BY queue, status HAVING sum(n) <> 0"
        );
        let rows = format!(
            "SELECT queue, status, CAST(count(*) AS BIGINT), \
             CAST(sum(octet_length(target) + coalesce(octet_length(body), 0)) AS BIGINT) \
             FROM tasks WHERE org = '{org}' GROUP BY queue, status"
        );
        for (one, other) in [(&counters, &rows), (&rows, &counters)] {
            let differing = self
                .raw_i64(&format!(
                    "SELECT CAST(count(*) AS BIGINT) FROM ({one} EXCEPT {other}) d"
                ))
                .await;
            assert_eq!(
                differing, 0,
                "counters against rows:\n{one}\nEXCEPT\n{other}"
            );
        }
    }

    /// Another store opened on the same database, as a node starting on
    /// it would: it brings the schema up to date first.
    pub async fn reopen(&self) -> Arc<dyn Store> {
        let clock = Arc::new(self.clock.clone());
        if self._db.is_some() {
            self.node_with(8).await
        } else {
            let dir = self._dir.as_ref().expect("a backend");
            Arc::new(
                SqliteStore::open(dir.path().join("idem.db"), clock, events())
                    .await
                    .unwrap(),
            )
        }
    }

    /// On PostgreSQL, another node on the same database with a pool of
    /// `connections`, so that more transactions run at once than the
    /// harness's two nodes hold; on SQLite, the store itself.
    pub async fn node_with(&self, connections: usize) -> Arc<dyn Store> {
        match &self._db {
            Some(db) => Arc::new(
                PostgresStore::open(&db.url, connections, Arc::new(self.clock.clone()), events())
                    .await
                    .unwrap(),
            ),
            None => self.store.clone(),
        }
    }

    /// Another node on the same store, as one starting on it would, whose
    /// statements are counted where it sends them.
    pub async fn counted_node(&self) -> (Arc<dyn Store>, Sent) {
        let clock = Arc::new(self.clock.clone());
        match &self._db {
            Some(db) => {
                let wire = WireCounter::start(&db.url).await;
                let store = PostgresStore::open(wire.url(), 8, clock, events())
                    .await
                    .unwrap();
                (Arc::new(store), Sent::Wire(wire))
            }
            None => {
                let dir = self._dir.as_ref().expect("a backend");
                let n = Arc::new(StatementCounts::default());
                let store = SqliteStore::open_counting_statements(
                    dir.path().join("idem.db"),
                    clock,
                    events(),
                    n.clone(),
                )
                .await
                .unwrap();
                (Arc::new(store), Sent::Sqlite(n))
            }
        }
    }

    /// The PostgreSQL database's URL, when the store is PostgreSQL.
    pub fn postgres_url(&self) -> Option<&str> {
        self._db.as_ref().map(|db| db.url.as_str())
    }

    pub async fn sqlite() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(start());
        let store = Arc::new(
            SqliteStore::open(
                dir.path().join("idem.db"),
                Arc::new(clock.clone()),
                events(),
            )
            .await
            .unwrap(),
        );
        Harness::ready(store.clone(), store, clock, None, Some(dir)).await
    }

    pub async fn postgres() -> Harness {
        Harness::postgres_in(TestDatabase::create().await).await
    }

    /// A PostgreSQL store in a database whose collation is not byte order
    /// ([`TestDatabase::create_linguistic`]).
    pub async fn postgres_linguistic() -> Harness {
        Harness::postgres_in(TestDatabase::create_linguistic().await).await
    }

    async fn postgres_in(db: TestDatabase) -> Harness {
        let clock = ManualClock::new(start());
        let open = || PostgresStore::open(&db.url, 8, Arc::new(clock.clone()), events());
        let store = open().await.unwrap();
        let other = open().await.unwrap();
        Harness::ready(Arc::new(store), Arc::new(other), clock, Some(db), None).await
    }

    async fn ready(
        store: Arc<dyn Store>,
        other: Arc<dyn Store>,
        clock: ManualClock,
        db: Option<TestDatabase>,
        dir: Option<tempfile::TempDir>,
    ) -> Harness {
        store
            .organization_create(ORG, new_key(), None)
            .await
            .unwrap();
        Harness {
            store,
            other,
            clock,
            _db: db,
            _dir: dir,
        }
    }
}
