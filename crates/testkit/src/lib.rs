//! Test support shared by the workspace's suites:
//!
//! - [`TestDatabase`]: a PostgreSQL database of its own for one test, created
//!   on the server [`DATABASE_URL_VAR`] names and dropped with the handle, so
//!   that tests run in parallel and never see each other's data.
//! - [`redis_url`]: the Redis server the tests use ([`REDIS_URL_VAR`]).
//! - [`tls`]: a test certificate authority and private PostgreSQL, Redis
//!   and HTTPS servers presenting its certificate.
//! - [`pg_wire`] and [`pg_wal`]: what a workload costs PostgreSQL, as the
//!   statements it sent and the records it wrote to the log.
//! - [`Backend`] and the macros [`backend_tests!`] and [`store_tests!`]: one
//!   test body, run once per backend, each run a test of its own named
//!   `<backend>::<test>`.

pub mod pg_wal;
pub mod pg_wire;
pub mod tls;

use std::time::Duration;
use tokio_postgres::NoTls;

/// The variable naming the server the tests use.
pub const DATABASE_URL_VAR: &str = "IDEM_TEST_DATABASE_URL";
const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// The variable naming the Redis server the tests use.
pub const REDIS_URL_VAR: &str = "IDEM_TEST_REDIS_URL";
const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:6379";

/// The stores Idem runs on, each of which every store-level test covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The Redis server tests use: [`REDIS_URL_VAR`], or the local default.
pub fn redis_url() -> String {
    std::env::var(REDIS_URL_VAR).unwrap_or_else(|_| DEFAULT_REDIS_URL.into())
}

/// The administrative connection URL tests create their databases through.
pub fn admin_url() -> String {
    std::env::var(DATABASE_URL_VAR).unwrap_or_else(|_| DEFAULT_DATABASE_URL.into())
}

/// A database that exists for one test.
#[derive(Debug)]
pub struct TestDatabase {
    /// Connection URL of the new database.
    pub url: String,
    name: String,
}

impl TestDatabase {
    /// Creates a uniquely named database on the server `IDEM_TEST_DATABASE_URL`
    /// points at; panics with a plain explanation when no server answers.
    pub async fn create() -> TestDatabase {
        TestDatabase::create_with("").await
    }

    /// A database whose collation is not byte order: ICU's `en-US`, where
    /// `a` and `A` sort together and punctuation and symbols before digits
    /// and letters, as many servers are set up.
    pub async fn create_linguistic() -> TestDatabase {
        TestDatabase::create_with(
            "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
        )
        .await
    }

    /// [`TestDatabase::create`] with options of `CREATE DATABASE` (a
    /// template, a collation).
    pub async fn create_with(options: &str) -> TestDatabase {
        let admin = admin_url();
        let name = format!("idem_test_{}", uuid::Uuid::now_v7().simple());
        let client = connect(&admin).await;
        client
            .batch_execute(&format!("CREATE DATABASE {name} {options}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create a test database on {admin}: {e}"));
        TestDatabase {
            url: replace_database(&admin, &name),
            name,
        }
    }
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let attempt =
        tokio::time::timeout(Duration::from_secs(10), tokio_postgres::connect(url, NoTls));
    match attempt.await {
        Ok(Ok((client, conn))) => {
            tokio::spawn(conn);
            client
        }
        Ok(Err(e)) => panic!(
            "PostgreSQL is not reachable at {url} ({e}). These tests need a real server: \
             start one, or set {DATABASE_URL_VAR} to a URL whose user may CREATE DATABASE."
        ),
        Err(_) => panic!(
            "PostgreSQL at {url} did not answer within 10 s. Start it, or set \
             {DATABASE_URL_VAR} to a reachable server."
        ),
    }
}

/// `url` with its database name replaced by `name`.
fn replace_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_end = base[scheme_end..]
        .find('/')
        .map(|i| i + scheme_end)
        .unwrap_or(base.len());
    let mut out = format!("{}/{name}", &base[..host_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let admin = admin_url();
        let name = self.name.clone();
        // Drop runs outside any async context we may block: use a thread
        // with its own runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok((client, conn)) = tokio_postgres::connect(&admin, NoTls).await {
                    tokio::spawn(conn);
                    let _ = client
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await;
                }
            });
        })
        .join();
    }
}

/// Runs each named test once per backend: for every `backend: setup` pair,
/// a module `backend` holding one test per name that calls the function of
/// that name in the invoking module with the value of `setup`, and awaits it.
///
/// The test attribute comes first and defaults to `#[tokio::test]` (the
/// invoking crate then needs `tokio` with `macros` and a runtime). `setup`
/// is evaluated inside the generated module, which sees the invoking
/// module's items through `use super::*`.
///
/// ```
/// # struct Harness;
/// # impl Harness {
/// #     async fn memory() -> Harness { Harness }
/// #     async fn redis() -> Harness { Harness }
/// # }
/// async fn keys_are_independent(h: Harness) { /* … */ }
///
/// // Tests `memory::keys_are_independent` and `redis::keys_are_independent`.
/// idem_testkit::backend_tests! {
///     #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
///     memory: Harness::memory().await,
///     redis: Harness::redis().await;
///     keys_are_independent,
/// }
/// # fn main() {}
/// ```
///
/// Fixtures clean up when dropped, because nothing runs after the body.
/// A suite of the store crate moves over by replacing its own `backends!`
/// with `backend_tests! { sqlite: Harness::sqlite().await, postgres:
/// Harness::postgres().await; … }` (with its `#[tokio::test(…)]` first
/// where it sets a flavor), or with [`store_tests!`] given a
/// `Harness::new(Backend)`; a test that runs on one backend only stays a
/// plain test beside it.
#[macro_export]
macro_rules! backend_tests {
    (
        #[$attr:meta]
        $($backend:ident: $setup:expr),+ ;
        $($test:ident),* $(,)?
    ) => {
        $crate::backend_tests!(@each #[$attr] [$($test)*] $($backend ($setup))+);
    };
    (
        $($backend:ident: $setup:expr),+ ;
        $($test:ident),* $(,)?
    ) => {
        $crate::backend_tests!(@each #[tokio::test] [$($test)*] $($backend ($setup))+);
    };
    (@each #[$attr:meta] $tests:tt $($backend:ident ($setup:expr))+) => {
        $($crate::backend_tests!(@module #[$attr] $backend ($setup) $tests);)+
    };
    (@module #[$attr:meta] $backend:ident ($setup:expr) [$($test:ident)*]) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[$attr]
                async fn $test() {
                    super::$test($setup).await
                }
            )*
        }
    };
}

/// [`backend_tests!`] on the two stores, as modules `sqlite` and `postgres`.
///
/// `store_tests!(start; a, b)` hands each test `start(Backend::…).await`,
/// where `start` is an async function taking a [`Backend`];
/// `store_tests!(a, b)` hands each test the [`Backend`] itself. A test
/// attribute may come first, as with [`backend_tests!`].
#[macro_export]
macro_rules! store_tests {
    (#[$attr:meta] $setup:path; $($test:ident),* $(,)?) => {
        $crate::backend_tests! {
            #[$attr]
            sqlite: $setup($crate::Backend::Sqlite).await,
            postgres: $setup($crate::Backend::Postgres).await;
            $($test),*
        }
    };
    ($setup:path; $($test:ident),* $(,)?) => {
        $crate::store_tests!(#[tokio::test] $setup; $($test),*);
    };
    (#[$attr:meta] $($test:ident),* $(,)?) => {
        $crate::backend_tests! {
            #[$attr]
            sqlite: $crate::Backend::Sqlite,
            postgres: $crate::Backend::Postgres;
            $($test),*
        }
    };
    ($($test:ident),* $(,)?) => {
        $crate::store_tests!(#[tokio::test] $($test),*);
    };
}

#[cfg(test)]
mod tests {
    use super::replace_database;

    #[test]
    fn replaces_only_the_database_name() {
        assert_eq!(
            replace_database("postgres://postgres@127.0.0.1:5432/test", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            replace_database("postgres://u:p@h/test?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(
            replace_database("postgres://h:5432", "x"),
            "postgres://h:5432/x"
        );
    }
}
