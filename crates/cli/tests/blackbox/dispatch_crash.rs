//! Crash safety: a node killed mid-attempt loses its lease and the task is
//! delivered again, with the same identity, by the restarted node.

use crate::harness;
use crate::harness::target::*;
use crate::harness::{Backend, Backing, Server};
use serde_json::json;
use std::time::Duration;

async fn kill_during_an_attempt_redelivers_with_the_same_key(kind: Backend) {
    let target = Target::start().await;
    let lease_grace = ["--lease-grace", "1s"];
    let s = Server::start_on(Backing::new(kind).await, harness::fresh_key(), &lease_grace).await;
    s.create_queue_with(json!({"name": "q", "dispatch_deadline_s": 2,
                               "retry_config": {"min_backoff_ms": 100}}))
        .await;
    s.create_task(
        "q",
        json!({"task_id": "survivor", "target": {"url": target.url("/block-first")}}),
    )
    .await;
    let first = target
        .wait_for("survivor", 1, Duration::from_secs(10))
        .await;
    let (backing, key) = s.kill().await;

    let s = Server::start_on(backing, key, &lease_grace).await;
    // Lease: deadline 2 s + grace 1 s after the first attempt started.
    let got = target
        .wait_for("survivor", 2, Duration::from_secs(10))
        .await;
    let (a, b) = (&first[0], &got[1]);
    let waited = b.at.duration_since(a.at);
    assert!(
        waited >= Duration::from_millis(2900),
        "redelivered after {waited:?}"
    );
    assert_eq!(a.header("idempotency-key"), b.header("idempotency-key"));
    assert_eq!(
        a.header("idem-schedule-time"),
        b.header("idem-schedule-time")
    );
    assert_eq!(a.header("idem-retry-count"), Some("0"));
    assert_eq!(b.header("idem-retry-count"), Some("1"));
    assert_eq!(
        b.header("idem-previous-response"),
        None,
        "the lost attempt had no answer"
    );

    let done = wait_state(&s, "q", "survivor", "succeeded", Duration::from_secs(10)).await;
    assert_eq!(done["attempt_count"], 2);
    let attempts = s
        .get("/v1/queues/q/tasks/survivor/attempts")
        .await
        .ok(200)
        .json
        .clone();
    let lost = &attempts["items"][0];
    assert!(lost["status_code"].is_null());
    assert!(
        lost["error"].as_str().unwrap().contains("lease expired"),
        "{lost}"
    );
    assert_eq!(attempts["items"][1]["status_code"], 200);
}

idem_testkit::store_tests!(kill_during_an_attempt_redelivers_with_the_same_key);
