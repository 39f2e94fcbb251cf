//! SIGTERM: the node stops claiming, lets the attempt in flight finish
//! within `--shutdown-grace`, records it, and exits; what outlives the
//! grace is given back without counting an attempt.

use crate::harness;
use crate::harness::target::*;
use crate::harness::{Backend, Backing, Server};
use serde_json::json;
use std::time::Duration;

async fn sigterm_lets_the_attempt_in_flight_finish(kind: Backend) {
    let target = Target::start().await;
    let s = Server::start_on(Backing::new(kind).await, harness::fresh_key(), &[]).await;
    s.create_queue_with(json!({"name": "q", "dispatch_deadline_s": 30}))
        .await;
    s.create_task(
        "q",
        json!({"task_id": "slow", "target": {"url": target.url("/hold/1500")}}),
    )
    .await;
    target.wait_for("slow", 1, Duration::from_secs(10)).await;
    // A task due later must not be claimed by a stopping node.
    s.create_task(
        "q",
        json!({"task_id": "later", "schedule_time": "2099-01-01T00:00:00Z",
               "target": {"url": target.url("/ok")}}),
    )
    .await;
    let (backing, key, status, took) = s.terminate().await;
    assert!(status.success(), "exit status {status}");
    assert!(
        took >= Duration::from_millis(1000) && took < Duration::from_secs(10),
        "the node waited for the attempt, within the bound: {took:?}"
    );

    let s = Server::start_on(backing, key, &[]).await;
    let task = s.get_task("q", "slow").await;
    assert_eq!(
        task["state"], "succeeded",
        "the drained attempt was recorded: {task}"
    );
    assert_eq!(task["attempt_count"], 1);
    assert_eq!(task["last_attempt"]["status_code"], 200);
    assert_eq!(target.received_for("slow").len(), 1, "not delivered again");
    assert_eq!(s.get_task("q", "later").await["state"], "scheduled");
}

async fn sigterm_gives_back_what_outlives_the_grace(kind: Backend) {
    let target = Target::start().await;
    let grace = ["--shutdown-grace", "1s"];
    let s = Server::start_on(Backing::new(kind).await, harness::fresh_key(), &grace).await;
    // A lease of 60 s + 30 s: were it left to expire, the next node would
    // start the task a minute and a half later.
    s.create_queue_with(json!({"name": "q", "dispatch_deadline_s": 60}))
        .await;
    s.create_task(
        "q",
        json!({"task_id": "stuck", "target": {"url": target.url("/block-first")}}),
    )
    .await;
    let first = target.wait_for("stuck", 1, Duration::from_secs(10)).await;
    let (backing, key, status, took) = s.terminate().await;
    assert!(status.success(), "exit status {status}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(8),
        "the node waited out the grace, no longer: {took:?}"
    );

    let s = Server::start_on(backing, key, &[]).await;
    let got = target.wait_for("stuck", 2, Duration::from_secs(10)).await;
    let (a, b) = (&first[0], &got[1]);
    assert!(
        b.at.duration_since(a.at) < Duration::from_secs(30),
        "started again at once, not after the lease"
    );
    assert_eq!(a.header("idempotency-key"), b.header("idempotency-key"));
    assert_eq!(
        b.header("idem-retry-count"),
        Some("0"),
        "the abandoned attempt was not counted"
    );
    let done = wait_state(&s, "q", "stuck", "succeeded", Duration::from_secs(10)).await;
    assert_eq!(done["attempt_count"], 1, "{done}");
    let attempts = s
        .get("/v1/queues/q/tasks/stuck/attempts")
        .await
        .ok(200)
        .json
        .clone();
    let items = attempts["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "no failed attempt recorded: {attempts}");
    assert_eq!(items[0]["status_code"], 200);
}

/// A request still open when the grace runs out (a create waiting for its
/// task's end) does not keep the node from stopping.
async fn sigterm_cuts_off_requests_that_outlive_the_grace(kind: Backend) {
    let s = Server::start_on(
        Backing::new(kind).await,
        harness::fresh_key(),
        &["--shutdown-grace", "1s"],
    )
    .await;
    s.create_paused_queue("held").await;
    let waiting = s.admin.clone();
    let open = tokio::spawn(async move {
        waiting
            .request(reqwest::Method::POST, "/v1/queues/held/tasks?wait_ms=30000")
            .json(&json!({"task_id": "waits", "target": {"url": "http://127.0.0.1:9/"}}))
            .try_send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, _, status, took) = s.terminate().await;
    assert!(status.success(), "exit status {status}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(8),
        "the open request held the node for the grace, no longer: {took:?}"
    );
    open.abort();
}

idem_testkit::store_tests!(
    sigterm_lets_the_attempt_in_flight_finish,
    sigterm_gives_back_what_outlives_the_grace,
    sigterm_cuts_off_requests_that_outlive_the_grace
);
