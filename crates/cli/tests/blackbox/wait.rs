//! `?wait_ms=N` on task creation: woken by the task's completion, 200 when
//! it got there, 202 when not; and its replays, which never wait again.

use crate::harness;
use crate::harness::Server;
use crate::harness::target::Target;
use reqwest::Method;
use serde_json::json;
use std::time::{Duration, Instant};

async fn create_waiting(
    s: &Server,
    queue: &str,
    key: Option<&str>,
    wait_ms: u64,
    url: &str,
    id: &str,
) -> harness::Resp {
    let mut req = s
        .admin
        .request(
            Method::POST,
            &format!("/v1/queues/{queue}/tasks?wait_ms={wait_ms}"),
        )
        .json(&json!({"task_id": id, "target": {"url": url}}));
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    req.send().await
}

async fn a_wait_ends_when_the_task_does(s: Server) {
    let target = Target::start().await;
    s.create_queue("q").await;
    let started = Instant::now();
    let r = create_waiting(&s, "q", None, 10_000, &target.url("/hold/300"), "t1").await;
    r.ok(200);
    assert_eq!(r.json["state"], "succeeded");
    assert_eq!(r.json["attempt_count"], 1);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "woken by the completion, not a timeout: {took:?}"
    );
    assert_eq!(r.header("location"), Some("/v1/queues/q/tasks/t1"));
}

async fn a_wait_that_runs_out_answers_202(s: Server) {
    let target = Target::start().await;
    s.create_queue("q").await;
    let started = Instant::now();
    let r = create_waiting(&s, "q", None, 200, &target.url("/hold/2000"), "t1").await;
    r.ok(202);
    assert!(!["succeeded", "failed", "cancelled"].contains(&r.json["state"].as_str().unwrap()));
    assert!(started.elapsed() < Duration::from_millis(1500));
}

async fn a_replay_does_not_wait_again(s: Server) {
    let target = Target::start().await;
    s.create_queue("q").await;
    let first = create_waiting(&s, "q", Some("w"), 100, &target.url("/hold/800"), "t1").await;
    first.ok(202);
    let started = Instant::now();
    let again = create_waiting(&s, "q", Some("w"), 100, &target.url("/hold/800"), "t1").await;
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "no second wait"
    );
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert!(again.status == 202 || again.status == 200);
    // Once finished, the replay answers 200.
    harness::target::wait_state(&s, "q", "t1", "succeeded", Duration::from_secs(10)).await;
    let done = create_waiting(&s, "q", Some("w"), 100, &target.url("/hold/800"), "t1").await;
    done.ok(200);
    assert_eq!(done.header("idempotent-replayed"), Some("true"));
    assert_eq!(target.received_for("t1").len(), 1);
}

async fn wait_ms_out_of_range_is_refused(s: Server) {
    s.create_queue("q").await;
    for bad in ["0", "30001", "soon"] {
        let r = s
            .admin
            .request(Method::POST, &format!("/v1/queues/q/tasks?wait_ms={bad}"))
            .json(&json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/"}}))
            .send()
            .await;
        r.problem(400, "INVALID_ARGUMENT");
        assert_eq!(r.json["extensions"]["errors"][0]["field"], "wait_ms");
    }
    s.get("/v1/queues/q/tasks/t")
        .await
        .problem(404, "NOT_FOUND");
}

/// The parameter's name is read as any form decoder reads it: a
/// percent-encoded `wait_ms` waits too, and its replay knows it waited.
async fn a_percent_encoded_wait_ms_still_waits(s: Server) {
    let target = Target::start().await;
    s.create_queue("q").await;
    let send = || {
        s.admin
            .request(Method::POST, "/v1/queues/q/tasks?wait%5Fms=10000")
            .header("Idempotency-Key", "encoded")
            .json(&json!({"task_id": "t1", "target": {"url": target.url("/hold/200")}}))
            .send()
    };
    let r = send().await;
    r.ok(200);
    assert_eq!(r.json["state"], "succeeded");
    let again = send().await;
    again.ok(200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
}

idem_testkit::store_tests!(
    Server::start;
    a_percent_encoded_wait_ms_still_waits,
    a_wait_ends_when_the_task_does,
    a_wait_that_runs_out_answers_202,
    a_replay_does_not_wait_again,
    wait_ms_out_of_range_is_refused,
);
