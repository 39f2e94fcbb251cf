//! What the PostgreSQL-only tests share: a node on a fresh database with
//! one organization.

use super::PostgresStore;
use crate::Store;
use crate::records::{NewApiKey, TaskCreate};
use idem_core::{Clock, SystemClock};
use idem_testkit::TestDatabase;
use std::sync::Arc;

/// The organization [`store_with_org`] creates.
pub(crate) const ORG: &str = "acme";

/// A store on a database of its own (dropped with the returned handle),
/// with the organization [`ORG`].
pub(crate) async fn store_with_org() -> (TestDatabase, PostgresStore) {
    let db = TestDatabase::create().await;
    let store = open(&db.url).await;
    let admin = NewApiKey {
        id: "k".into(),
        key_hash: "h".into(),
    };
    store.organization_create(ORG, admin, None).await.unwrap();
    (db, store)
}

/// A node on the database at `url`, as a test runs one: 8 connections,
/// the system's clock, events left unrendered.
pub(crate) async fn open(url: &str) -> PostgresStore {
    PostgresStore::open(
        url,
        8,
        Arc::new(SystemClock) as Arc<dyn Clock>,
        crate::events::unrendered(),
    )
    .await
    .unwrap()
}

/// A task of [`ORG`]'s `queue` carrying a small JSON payload, in `group`
/// if one is given, for a pull queue if `pull`.
pub(crate) fn task(queue: &str, task_id: &str, group: Option<&str>, pull: bool) -> TaskCreate {
    TaskCreate {
        group: group.map(str::to_string),
        pull,
        ..TaskCreate::example(ORG, queue, task_id)
    }
}

/// The `xmax` of the Idempotency-Key record of `key`: the ID of the last
/// transaction that locked (or changed) the row, `0` while none has, so
/// that a test can tell that a statement left the row alone.
pub(crate) async fn record_xmax(store: &PostgresStore, key: &str) -> String {
    let client = store.pool.get().await.unwrap();
    client
        .query_one(
            "SELECT xmax::text FROM idempotency_keys WHERE key = $1",
            &[&key],
        )
        .await
        .unwrap()
        .get(0)
}

#[cfg(test)]
mod tests {
    use super::super::{PoolOptions, PostgresStore};
    use idem_core::{Clock, SystemClock};
    use idem_testkit::TestDatabase;
    use std::sync::Arc;
    use std::time::Duration;

    /// A session left idle inside a transaction (its client gone without a
    /// word) is ended by the server after the statement timeout, so the
    /// locks it holds do not stop the other nodes' work.
    #[tokio::test]
    async fn a_transaction_left_idle_is_ended_by_the_server() {
        let db = TestDatabase::create().await;
        let options = PoolOptions {
            timeouts: idem_postgres_tls::Timeouts {
                statement_timeout: Duration::from_millis(500),
                ..Default::default()
            },
            ..Default::default()
        };
        let store = PostgresStore::open_with(
            &db.url,
            options,
            Arc::new(SystemClock) as Arc<dyn Clock>,
            crate::events::unrendered(),
        )
        .await
        .unwrap();
        let client = store.pool.get().await.unwrap();
        client
            .batch_execute("BEGIN; SELECT 1 FROM queues FOR UPDATE")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let error = client.batch_execute("SELECT 1").await.unwrap_err();
        assert!(
            error.is_closed()
                || error.code()
                    == Some(&tokio_postgres::error::SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT),
            "{error:?}"
        );
    }
}
