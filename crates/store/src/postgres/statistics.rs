//! Planner statistics that keep up with the task tables.
//!
//! The dispatcher's statements choose between the primary key and the
//! partial index of due tasks from the planner's statistics. Autovacuum
//! refreshes them at most once a `autovacuum_naptime` (a minute by
//! default), and a table it has never analyzed has none: after a burst of
//! tasks into a new database, every task of a queue looks like one row,
//! the primary key (the smaller index) wins, and each claim reads the whole
//! queue (measured: idle create-to-delivery from 7 ms to 63 ms after 20,000
//! deliveries). A node therefore analyzes `tasks` and `attempts` itself
//! once they have changed by a tenth since their last analysis (and by at
//! least [`MIN_CHANGED`] rows), looking every [`EVERY`] from [`EVERY`]
//! after it starts.

use deadpool_postgres::Pool;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How often a node looks.
const EVERY: Duration = Duration::from_secs(5);

/// Fewest changed rows worth an analysis.
const MIN_CHANGED: i64 = 1000;

/// Keeps the statistics fresh while the returned guard lives (the store
/// holds it; its clones share it).
pub(super) fn keep_fresh(pool: Pool) -> Arc<()> {
    let alive = Arc::new(());
    tokio::spawn(run(pool, Arc::downgrade(&alive)));
    alive
}

async fn run(pool: Pool, alive: Weak<()>) {
    // The first look waits a period too: at a start it would analyze
    // whatever changed while the node was down, planning anew every
    // statement its connections had just planned, while its first
    // requests wait on them (an analysis of `tasks` took 130 ms beside
    // a node's first claim).
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + EVERY, EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while alive.strong_count() > 0 {
        ticks.tick().await;
        if let Err(e) = analyze_changed(&pool).await {
            tracing::debug!(error = %e, "refreshing planner statistics");
        }
    }
}

async fn analyze_changed(pool: &Pool) -> Result<(), crate::Error> {
    let client = pool.get().await?;
    let stale = client
        .query(
            "SELECT relname::text FROM pg_stat_user_tables \
             WHERE schemaname = current_schema() AND relname IN ('tasks', 'attempts') \
             AND n_mod_since_analyze >= greatest($1, n_live_tup / 10)",
            &[&MIN_CHANGED],
        )
        .await?;
    for row in stale {
        let table: String = row.get(0);
        // Two names, fixed above: nothing from outside reaches the text.
        client.batch_execute(&format!("ANALYZE {table}")).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::postgres::testing::{ORG, open, store_with_org};
    use idem_core::queue::QueueConfig;
    use std::time::{Duration, Instant};

    /// When `table` was last analyzed by an `ANALYZE` statement (not by
    /// autovacuum), as text; empty: never.
    async fn analyzed(client: &tokio_postgres::Client, table: &str) -> String {
        client
            .query_one(
                "SELECT COALESCE(last_analyze::text, '') \
                 FROM pg_stat_user_tables WHERE relname = $1",
                &[&table],
            )
            .await
            .unwrap()
            .get(0)
    }

    async fn connect(url: &str) -> tokio_postgres::Client {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
    }

    /// 3,000 pending tasks of queue `q`, written past the store.
    async fn insert_tasks(client: &tokio_postgres::Client) {
        client
            .execute(
                "INSERT INTO tasks (org, queue, task_id, uid, status, target, body_form, \
                 schedule_time, next_attempt_at, dispatch_deadline_s, retry_config, \
                 attempt_count, cancel_requested, created_at) \
                 SELECT $1, 'q', 't' || g, 'u' || g, 'pending', '{}', 'none', 0, 0, 10, \
                 '{}', 0, 0, 0 FROM generate_series(1, 3000) g",
                &[&ORG],
            )
            .await
            .unwrap();
    }

    /// Waits for a node to analyze `table`; fails after 40 s.
    async fn comes_analyzed(client: &tokio_postgres::Client, table: &str) {
        let deadline = Instant::now() + Duration::from_secs(40);
        while analyzed(client, table).await.is_empty() {
            assert!(Instant::now() < deadline, "{table} was never analyzed");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// A burst of tasks into a new database gets `tasks` analyzed by the
    /// node within a few of its looks; `attempts`, unchanged, is left alone.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_of_tasks_gets_the_table_analyzed() {
        let (db, store) = store_with_org().await;
        store
            .queue_create(ORG, "q", &QueueConfig::default(), None)
            .await
            .unwrap();
        let client = connect(&db.url).await;
        assert_eq!(analyzed(&client, "tasks").await, "");
        insert_tasks(&client).await;
        comes_analyzed(&client, "tasks").await;
        assert_eq!(analyzed(&client, "attempts").await, "");
        drop(store);
    }

    /// A node that starts on a table changed while no node ran does not
    /// analyze it as it starts, beside its first requests, but at its first
    /// look, a period later.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_starting_node_analyzes_at_its_first_look_not_at_once() {
        let (db, first) = store_with_org().await;
        first
            .queue_create(ORG, "q", &QueueConfig::default(), None)
            .await
            .unwrap();
        drop(first);
        // The first node's keeper wakes once more before it ends: its look
        // finds nothing changed yet.
        tokio::time::sleep(super::EVERY + Duration::from_millis(500)).await;
        let client = connect(&db.url).await;
        insert_tasks(&client).await;
        assert_eq!(analyzed(&client, "tasks").await, "");
        // The change reaches the statistics the keeper reads within a
        // second or so of the insert.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let changed: i64 = client
                .query_one(
                    "SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'tasks'",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            if changed >= 3000 {
                break;
            }
            assert!(Instant::now() < deadline, "the insert never showed");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        let second = open(&db.url).await;
        tokio::time::sleep(super::EVERY / 2).await;
        assert_eq!(
            analyzed(&client, "tasks").await,
            "",
            "analyzed as it started"
        );
        comes_analyzed(&client, "tasks").await;
        drop(second);
    }
}
