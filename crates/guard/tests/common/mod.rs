//! Test fixtures: real stores, each test with its own database or key prefix
//! so that tests run in parallel without sharing data; each cleans up when
//! dropped.

// Each test binary uses a different subset of these fixtures.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use idem_guard::{GuardStore, ManualClock, MemoryStore, PostgresStore, RedisStore, SqliteStore};
use idem_testkit::{DATABASE_URL_VAR, REDIS_URL_VAR, TestDatabase, redis_url};

pub fn random_hex() -> String {
    format!("{:016x}", rand::random::<u64>())
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

/// Deletes the keys under `prefix`; synchronous, as it runs on drop.
pub fn redis_cleanup(prefix: &str) {
    let Ok(client) = redis::Client::open(redis_url()) else {
        return;
    };
    let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_secs(5)) else {
        return;
    };
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query(&mut conn)
        .unwrap_or_default();
    if !keys.is_empty() {
        let _: Result<i64, _> = redis::cmd("DEL").arg(keys).query(&mut conn);
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

/// What a store leaves behind, removed on drop.
enum Teardown {
    Nothing,
    Sqlite(PathBuf),
    // Drops its database itself.
    Postgres(TestDatabase),
    Redis(String),
    // Servers of the test's own, stopped on drop.
    TlsRedis(Box<(idem_testkit::tls::TlsRedis, idem_testkit::tls::TestCa)>),
}

impl Drop for Teardown {
    fn drop(&mut self) {
        match self {
            Teardown::Nothing | Teardown::Postgres(_) | Teardown::TlsRedis(_) => {}
            Teardown::Sqlite(path) => remove_sqlite(path),
            Teardown::Redis(prefix) => redis_cleanup(prefix),
        }
    }
}

/// A store under test, and how time moves for it.
pub struct Harness {
    // Declared first: the store closes before its data is removed.
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
        let store = idem_guard::open_store(&db.url)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL store via {DATABASE_URL_VAR}: {e}"));
        Self {
            store,
            clock: None,
            teardown: Teardown::Postgres(db),
        }
    }

    pub async fn postgres() -> Self {
        let db = TestDatabase::create().await;
        let config = db
            .url
            .parse()
            .unwrap_or_else(|e| panic!("{DATABASE_URL_VAR} is not a PostgreSQL URL: {e}"));
        let store = PostgresStore::from_config(config)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL store via {DATABASE_URL_VAR}: {e}"));
        Self {
            store: Arc::new(store),
            clock: None,
            teardown: Teardown::Postgres(db),
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

    /// Redis over TLS (`rediss://`): a server of the test's own whose
    /// certificate a test CA signed, trusted through the Redis CA file.
    pub async fn rediss() -> Self {
        let ca = idem_testkit::tls::TestCa::new();
        let server = idem_testkit::tls::TlsRedis::start(&ca);
        let store = idem_guard::open_store_with(
            &server.url(),
            idem_guard::PostgresLimits::default(),
            Some(&ca.ca_file),
        )
        .await
        .unwrap_or_else(|e| panic!("Redis over TLS at {}: {e}", server.url()));
        Self {
            store,
            clock: None,
            teardown: Teardown::TlsRedis(Box::new((server, ca))),
        }
    }

    /// Lets `by` pass for the store.
    pub async fn advance(&self, by: Duration) {
        match &self.clock {
            Some(clock) => clock.advance(by),
            None => tokio::time::sleep(by).await,
        }
    }
}
