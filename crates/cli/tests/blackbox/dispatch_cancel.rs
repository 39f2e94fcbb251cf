//! Cancelling a running task: the attempt in flight is aborted (the target
//! sees its connection closed), the task ends `cancelled` with the aborted
//! attempt recorded, and no retry follows; on one node of either store and
//! across two PostgreSQL nodes.

use crate::harness::target::*;
use crate::harness::{Api, Server, TwoNodes};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const WITHIN: Duration = Duration::from_secs(10);
/// How soon after the DELETE answers the target must see the close.
const CLOSED_WITHIN: Duration = Duration::from_secs(2);

/// Fast retries, so that a retry, were one to follow, would come at once;
/// a deadline far longer than the tests, so that only the cancel ends the
/// attempt.
fn quick_retry_queue(name: &str) -> Value {
    json!({"name": name, "dispatch_deadline_s": 300,
           "retry_config": {"min_backoff_ms": 100, "max_backoff_ms": 100}})
}

fn task(id: &str, url: &str) -> Value {
    json!({"task_id": id, "target": {"url": url}})
}

/// Cancels `id` through `api` and checks what the DELETE answers.
async fn cancel(api: &Api, queue: &str, id: &str) -> Value {
    let answered = api
        .delete(&format!("/v1/queues/{queue}/tasks/{id}"))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(answered["state"], "cancelled", "{answered}");
    answered
}

/// The task as it reads after the cancel: `cancelled`, one attempt, and
/// that attempt ended by the cancel, no sooner than `held_for`.
async fn assert_ended_by_cancel(api: &Api, queue: &str, id: &str, held_for: Duration) {
    let task = api.get_task(queue, id).await;
    assert_eq!(task["state"], "cancelled", "{task}");
    assert_eq!(task["attempt_count"], 1, "{task}");
    assert!(task["finished_at"].is_string(), "{task}");
    let last = &task["last_attempt"];
    assert_eq!(last["attempt"], 1, "{task}");
    assert!(last["status_code"].is_null(), "{task}");
    assert!(
        last["error"].as_str().unwrap().starts_with("cancelled"),
        "{task}"
    );
    assert!(last["finished_at"].is_string(), "{task}");
    let duration = last["duration_ms"].as_u64().unwrap();
    assert!(
        duration >= held_for.as_millis() as u64 && duration < 60_000,
        "duration {duration} ms, held {held_for:?}: {task}"
    );
    let attempts = api
        .get(&format!("/v1/queues/{queue}/tasks/{id}/attempts"))
        .await
        .ok(200)
        .json["items"]
        .clone();
    assert_eq!(attempts, json!([last]));
}

async fn a_cancel_closes_the_running_attempts_connection(s: Server) {
    let target = Target::start().await;
    s.create_queue_with(quick_retry_queue("q")).await;
    s.create_task("q", task("hung", &target.hang_url())).await;
    target.wait_open(1, WITHIN).await;
    let running = s.get_task("q", "hung").await;
    assert_eq!(running["state"], "running", "{running}");
    // A purge cancels every task not running: this one runs on.
    let purged = s.post_empty("/v1/queues/q/purge").await;
    purged.ok(200);
    assert_eq!(purged.json["cancelled"], 0);
    // Held for a while, so that the recorded duration means something.
    let held_for = Duration::from_millis(300);
    tokio::time::sleep(held_for).await;
    assert_eq!(s.get_task("q", "hung").await["state"], "running");
    assert!(target.held("hung")[0].closed.is_none(), "purge closed it");

    let asked = Instant::now();
    let answered = cancel(&s, "q", "hung").await;
    assert!(
        answered["last_attempt"]["error"]
            .as_str()
            .unwrap()
            .starts_with("cancelled"),
        "{answered}"
    );
    let closed = target.wait_closed("hung", CLOSED_WITHIN).await;
    assert!(closed.duration_since(asked) < CLOSED_WITHIN);
    assert_ended_by_cancel(&s, "q", "hung", held_for).await;

    // Well past the 100 ms backoff: no retry reached the target.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(target.held("hung").len(), 1);
    assert_eq!(s.get_task("q", "hung").await["attempt_count"], 1);
    // The ID stays taken for its window, as for any cancel.
    let again = s
        .post("/v1/queues/q/tasks", task("hung", &target.url("/ok")))
        .await;
    again.ok(409);
    assert_eq!(again.json["type"], "TASK_ALREADY_EXISTS");
}

async fn the_aborted_attempts_late_answer_changes_nothing(s: Server) {
    // The target answers 500 after 700 ms whatever happened to the
    // connection: the cancel wins, and no retry follows.
    let target = Target::start().await;
    s.create_queue_with(quick_retry_queue("q")).await;
    s.create_task("q", task("late", &target.url("/hold-then-fail")))
        .await;
    target.wait_for("late", 1, WITHIN).await;
    cancel(&s, "q", "late").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_ended_by_cancel(&s, "q", "late", Duration::ZERO).await;
    assert_eq!(target.received_for("late").len(), 1);
}

async fn a_waiter_hears_of_the_cancel_at_once(s: Server) {
    let target = Target::start().await;
    s.create_queue_with(quick_retry_queue("q")).await;
    let waiter = {
        let api = s.admin.clone();
        let body = task("awaited", &target.hang_url());
        tokio::spawn(async move {
            let r = api.post("/v1/queues/q/tasks?wait_ms=20000", body).await;
            (Instant::now(), r.status, r.json.clone())
        })
    };
    target.wait_open(1, WITHIN).await;
    let asked = Instant::now();
    cancel(&s, "q", "awaited").await;
    let (answered_at, status, body) = waiter.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "cancelled", "{body}");
    assert!(answered_at.duration_since(asked) < CLOSED_WITHIN);
}

idem_testkit::store_tests!(
    Server::start;
    a_cancel_closes_the_running_attempts_connection,
    the_aborted_attempts_late_answer_changes_nothing,
    a_waiter_hears_of_the_cancel_at_once,
);

#[tokio::test]
async fn a_cancel_sent_to_another_node_closes_the_connection() {
    // One slot per node and two held attempts: each node runs one, so
    // whichever node answers the DELETEs, one of the two attempts runs on
    // the other node.
    let target = Target::start().await;
    let nodes = TwoNodes::start_with(&["--max-in-flight", "1"]).await;
    let apis = &nodes.apis;
    apis[0].create_queue_with(quick_retry_queue("q")).await;
    for id in ["a", "b"] {
        apis[0].create_task("q", task(id, &target.hang_url())).await;
    }
    target.wait_open(2, WITHIN).await;
    for id in ["a", "b"] {
        assert_eq!(apis[1].get_task("q", id).await["state"], "running");
    }

    for id in ["a", "b"] {
        let asked = Instant::now();
        cancel(&apis[0], "q", id).await;
        let closed = target.wait_closed(id, CLOSED_WITHIN).await;
        assert!(closed.duration_since(asked) < CLOSED_WITHIN);
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for id in ["a", "b"] {
        assert_eq!(target.held(id).len(), 1, "no retry of {id}");
        for api in apis {
            assert_ended_by_cancel(api, "q", id, Duration::ZERO).await;
        }
    }
    drop(nodes);
}

#[tokio::test]
async fn a_node_that_missed_the_cancel_aborts_once_it_listens_again() {
    let target = Target::start().await;
    let nodes = TwoNodes::start_with(&["--max-in-flight", "1"]).await;
    let apis = &nodes.apis;
    apis[0].create_queue_with(quick_retry_queue("q")).await;
    for id in ["a", "b"] {
        apis[0].create_task("q", task(id, &target.hang_url())).await;
    }
    target.wait_open(2, WITHIN).await;

    // Both nodes' listening connections go; they reconnect a second later.
    let (db, conn) = tokio_postgres::connect(nodes.database_url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let terminated = db
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() \
             AND query LIKE 'LISTEN%'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(terminated.len(), 2, "one listener per node");

    // Cancelled while nobody listens: the node running the other attempt
    // hears nothing, and finds out from the store once it listens again.
    let asked = Instant::now();
    for id in ["a", "b"] {
        cancel(&apis[0], "q", id).await;
    }
    for id in ["a", "b"] {
        let closed = target.wait_closed(id, WITHIN).await;
        let after = closed.duration_since(asked);
        // The listener's reconnect delay (1 s), then one read of the store.
        assert!(
            after < Duration::from_secs(5),
            "{id} closed after {after:?}"
        );
    }
    for id in ["a", "b"] {
        assert_eq!(target.held(id).len(), 1, "no retry of {id}");
        assert_ended_by_cancel(&apis[1], "q", id, Duration::ZERO).await;
    }
    drop(nodes);
}
