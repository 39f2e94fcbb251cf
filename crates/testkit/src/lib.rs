//! Test support shared by the workspace's suites.
//!
//! Tests of the PostgreSQL paths run against a real server: each test gets a
//! database of its own, created here and dropped when the handle goes, so
//! tests run in parallel and never see each other's data.

use std::time::Duration;
use tokio_postgres::NoTls;

/// The variable naming the server the tests use.
pub const DATABASE_URL_VAR: &str = "IDEM_TEST_DATABASE_URL";
const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

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
        let admin = admin_url();
        let name = format!("idem_test_{}", uuid::Uuid::now_v7().simple());
        let client = connect(&admin).await;
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
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
