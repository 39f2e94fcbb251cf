//! SIGTERM: the node stops claiming, lets the attempt in flight finish
//! within the bound, records it, and exits.

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

idem_testkit::store_tests!(sigterm_lets_the_attempt_in_flight_finish);
