//! Test fixtures: real stores, each test with its own database or key prefix
//! so that tests run in parallel without sharing data.

// Each test binary uses a different subset of these fixtures.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use idem_guard::{GuardStore, ManualClock, MemoryStore, PostgresStore, RedisStore, SqliteStore};

pub const DATABASE_URL_VAR: &str = "IDEM_TEST_DATABASE_URL";
pub const REDIS_URL_VAR: &str = "IDEM_TEST_REDIS_URL";

pub fn random_hex() -> String {
    format!("{:016x}", rand::random::<u64>())
}

pub fn database_url() -> String {
    std::env::var(DATABASE_URL_VAR)
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

pub fn redis_url() -> String {
    std::env::var(REDIS_URL_VAR).unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

/// A database created for one test.
pub struct TestDatabase {
    pub name: String,
    pub config: tokio_postgres::Config,
}

impl TestDatabase {
    pub async fn create() -> Self {
        let url = database_url();
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| {
                panic!("PostgreSQL is unreachable at {DATABASE_URL_VAR}={url}: {e}")
            });
        tokio::spawn(connection);
        let name = format!("guard_{}", random_hex());
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| {
                panic!("cannot create a test database via {DATABASE_URL_VAR}: {e}")
            });
        let mut config = tokio_postgres::Config::from_str(&url)
            .unwrap_or_else(|e| panic!("{DATABASE_URL_VAR} is not a PostgreSQL URL: {e}"));
        config.dbname(&name);
        Self { name, config }
    }

    /// The URL of this test's database, for code that takes URLs.
    pub fn url(&self) -> String {
        let url = database_url();
        let base = url.split('?').next().unwrap_or(&url);
        let (server, _) = base.rsplit_once('/').expect("database URL has a path");
        format!("{server}/{}", self.name)
    }

    pub async fn drop_database(self) {
        let url = database_url();
        if let Ok((client, connection)) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await
        {
            tokio::spawn(connection);
            let _ = client
                .batch_execute(&format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ))
                .await;
        }
    }
}

pub fn redis_prefix() -> String {
    format!("guard_test_{}:", random_hex())
}

pub async fn redis_store(prefix: &str) -> RedisStore {
    let url = redis_url();
    tokio::time::timeout(Duration::from_secs(15), RedisStore::connect(&url, prefix))
        .await
        .unwrap_or_else(|_| panic!("Redis is unreachable at {REDIS_URL_VAR}={url}: timed out"))
        .unwrap_or_else(|e| panic!("Redis is unreachable at {REDIS_URL_VAR}={url}: {e}"))
}

pub async fn redis_cleanup(prefix: &str) {
    let Ok(client) = redis::Client::open(redis_url()) else {
        return;
    };
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else {
        return;
    };
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .unwrap_or_default();
    if !keys.is_empty() {
        let _: Result<i64, _> = redis::cmd("DEL").arg(keys).query_async(&mut conn).await;
    }
}

pub fn sqlite_path() -> PathBuf {
    std::env::temp_dir().join(format!("idem-guard-{}.db", random_hex()))
}

pub fn remove_sqlite(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

enum Teardown {
    Nothing,
    Sqlite(PathBuf),
    Postgres(Box<TestDatabase>),
    Redis(String),
}

/// A store under test, and how time moves for it.
pub struct Harness {
    pub store: Arc<dyn GuardStore>,
    /// `Some` for stores on an injected clock; stores on their own server
    /// clock wait in real time instead.
    pub clock: Option<ManualClock>,
    teardown: Teardown,
}

impl Harness {
    pub async fn memory() -> Self {
        let clock = ManualClock::starting_now();
        Self {
            store: Arc::new(MemoryStore::with_clock(Arc::new(clock.clone()))),
            clock: Some(clock),
            teardown: Teardown::Nothing,
        }
    }

    pub async fn sqlite() -> Self {
        let clock = ManualClock::starting_now();
        let path = sqlite_path();
        let store = SqliteStore::open_with_clock(&path, Arc::new(clock.clone()))
            .await
            .expect("open sqlite store");
        Self {
            store: Arc::new(store),
            clock: Some(clock),
            teardown: Teardown::Sqlite(path),
        }
    }

    /// The in-memory store on the system clock (for servers under test).
    pub async fn memory_on_system_clock() -> Self {
        Self {
            store: Arc::new(MemoryStore::new()),
            clock: None,
            teardown: Teardown::Nothing,
        }
    }

    /// SQLite on the system clock, opened through its store URL.
    pub async fn sqlite_on_system_clock() -> Self {
        let path = sqlite_path();
        let store = idem_guard::open_store(&format!("sqlite://{}", path.display()))
            .await
            .expect("open sqlite store");
        Self {
            store,
            clock: None,
            teardown: Teardown::Sqlite(path),
        }
    }

    /// PostgreSQL, opened through its store URL.
    pub async fn postgres_by_url() -> Self {
        let db = TestDatabase::create().await;
        let store = idem_guard::open_store(&db.url())
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL store via {DATABASE_URL_VAR}: {e}"));
        Self {
            store,
            clock: None,
            teardown: Teardown::Postgres(Box::new(db)),
        }
    }

    pub async fn postgres() -> Self {
        let db = TestDatabase::create().await;
        let store = PostgresStore::from_config(db.config.clone())
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL store via {DATABASE_URL_VAR}: {e}"));
        Self {
            store: Arc::new(store),
            clock: None,
            teardown: Teardown::Postgres(Box::new(db)),
        }
    }

    pub async fn redis() -> Self {
        let prefix = redis_prefix();
        let store = redis_store(&prefix).await;
        Self {
            store: Arc::new(store),
            clock: None,
            teardown: Teardown::Redis(prefix),
        }
    }

    /// Lets `by` pass for the store.
    pub async fn advance(&self, by: Duration) {
        match &self.clock {
            Some(clock) => clock.advance(by),
            None => tokio::time::sleep(by).await,
        }
    }

    pub async fn teardown(self) {
        drop(self.store);
        match self.teardown {
            Teardown::Nothing => {}
            Teardown::Sqlite(path) => remove_sqlite(&path),
            Teardown::Postgres(db) => db.drop_database().await,
            Teardown::Redis(prefix) => redis_cleanup(&prefix).await,
        }
    }
}
