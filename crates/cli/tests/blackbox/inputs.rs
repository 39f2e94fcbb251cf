//! Hostile input: bounds on what arithmetic follows, target headers, a
//! target's `Retry-After`, attempt history, and arrays offered as objects.

use crate::harness::target::{Target, wait_state};
use crate::harness::{Server, task};
use idem_testkit::Backend;
use serde_json::{Value, json};
use std::time::Duration;

idem_testkit::store_tests!(
    Server::start;
    rates_too_small_for_the_token_arithmetic_are_refused,
    a_huge_retry_after_is_honoured_only_up_to_the_bound,
    thirty_thousand_target_headers_are_refused_naming_the_field,
    schedule_times_end_before_the_year_3000_and_start_at_the_epoch,
    arrays_are_never_taken_for_objects_and_nothing_is_written,
    trailing_content_after_the_body_is_refused,
    integral_floats_are_integers_and_fractions_are_not,
    every_task_id_header_given_must_be_a_task_id,
);

mod kept {
    use super::attempts_are_paginated_oldest_first_and_trimmed;
    idem_testkit::store_tests!(attempts_are_paginated_oldest_first_and_trimmed);
}

const WITHIN: Duration = Duration::from_secs(20);

async fn rates_too_small_for_the_token_arithmetic_are_refused(s: Server) {
    let field = "rate_limits.max_dispatches_per_second";
    for rate in [json!(1e-14), json!(0.0009), json!(1e300)] {
        s.post(
            "/v1/queues",
            json!({"name": "tiny", "rate_limits": {"max_dispatches_per_second": rate}}),
        )
        .await
        .invalid(field);
    }
    s.get("/v1/queues/tiny").await.problem(404, "NOT_FOUND");

    // The slowest rate allowed is harmless: the queue dispatches its burst
    // and waits for the next token without anything overflowing.
    let target = Target::start().await;
    s.create_queue_with(json!({"name": "slow",
        "rate_limits": {"max_dispatches_per_second": 0.001, "max_burst_size": 1}}))
        .await;
    s.patch(
        "/v1/queues/slow",
        json!({"rate_limits": {"max_dispatches_per_second": 1e-14}}),
    )
    .await
    .invalid(field);
    for id in ["first", "second"] {
        s.create_task(
            "slow",
            json!({"task_id": id, "target": {"url": target.url("/ok")}}),
        )
        .await;
    }
    wait_state(&s, "slow", "first", "succeeded", WITHIN).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.get_task("slow", "second").await["state"], "queued");
    s.get("/readyz").await.ok(200);
}

async fn a_huge_retry_after_is_honoured_only_up_to_the_bound(s: Server) {
    // Were a Retry-After of 31 years honoured, the next attempt would start
    // past the two-hour retry duration and the task would fail at once;
    // bounded to an hour, it waits for its retry.
    let target = Target::start().await;
    s.create_queue_with(json!({"name": "q",
        "retry_config": {"max_retry_duration_s": 7200, "min_backoff_ms": 10}}))
        .await;
    s.create_task(
        "q",
        json!({"task_id": "throttled", "target": {"url": target.url("/throttle/999999999")}}),
    )
    .await;
    target.wait_for("throttled", 1, WITHIN).await;
    let t = wait_attempted(&s, "q", "throttled").await;
    assert_eq!(t["state"], "queued", "{t}");
    assert_eq!(t["last_attempt"]["status_code"], 429, "{t}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(target.received_for("throttled").len(), 1, "no early retry");
}

/// The task once its first attempt is recorded.
async fn wait_attempted(s: &Server, queue: &str, id: &str) -> Value {
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let t = s.get_task(queue, id).await;
        if t["last_attempt"]["finished_at"].is_string() {
            return t;
        }
        assert!(std::time::Instant::now() < deadline, "never attempted: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn thirty_thousand_target_headers_are_refused_naming_the_field(s: Server) {
    s.create_queue("q").await;
    let headers: serde_json::Map<String, Value> = (0..30_000)
        .map(|i| (format!("X-H{i}"), json!("v")))
        .collect();
    let target = json!({"url": "http://127.0.0.1:9/hook", "headers": headers});
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "t", "target": target}),
    )
    .await
    .invalid("target.headers");
    s.post(
        "/v1/jobs",
        json!({"name": "j", "schedule": "* * * * *", "target": target}),
    )
    .await
    .invalid("target.headers");
    let big = json!({"url": "http://127.0.0.1:9/hook", "headers": {"X-Big": "v".repeat(17_000)}});
    s.post("/v1/queues/q/tasks", json!({"task_id": "t", "target": big}))
        .await
        .invalid("target.headers");
    assert!(s.all_tasks("q", "").await.is_empty());
    assert_eq!(s.get("/v1/jobs").await.ok(200).json["items"], json!([]));

    // Up to the bound, a task is taken.
    let at_bound: serde_json::Map<String, Value> =
        (0..64).map(|i| (format!("X-H{i}"), json!("v"))).collect();
    s.create_task(
        "q",
        json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/hook", "headers": at_bound}}),
    )
    .await;
}

async fn schedule_times_end_before_the_year_3000_and_start_at_the_epoch(s: Server) {
    s.create_queue("q").await;
    for at in ["9999-01-01T00:00:00Z", "3000-01-02T00:00:00Z"] {
        let mut body = task("t");
        body["schedule_time"] = json!(at);
        s.post("/v1/queues/q/tasks", body)
            .await
            .invalid("schedule_time");
    }
    assert!(s.all_tasks("q", "").await.is_empty());
    // The last instant the document's pattern allows, and a time before
    // the epoch, which is due at once, as the epoch.
    for (id, at, due) in [
        ("late", "2999-12-31T23:59:59-23:59", "3000-01-01T23:58:59Z"),
        ("early", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00Z"),
    ] {
        let mut body = task(id);
        body["schedule_time"] = json!(at);
        let created = s.post("/v1/queues/q/tasks", body).await;
        created.ok(201);
        assert_eq!(created.json["schedule_time"], due, "{at}");
    }
}

async fn arrays_are_never_taken_for_objects_and_nothing_is_written(s: Server) {
    s.post("/v1/queues", json!(["qarr"])).await.invalid("body");
    s.post(
        "/v1/queues",
        json!({"name": "qarr", "rate_limits": [1, 2, 3]}),
    )
    .await
    .invalid("rate_limits");
    s.post(
        "/v1/queues",
        json!({"name": "qarr", "retry_config": [5, 0, 100, 1000, 3]}),
    )
    .await
    .invalid("retry_config");
    assert_eq!(s.get("/v1/queues").await.ok(200).json["items"], json!([]));

    s.create_queue("q").await;
    s.patch("/v1/queues/q", json!([{"max_dispatches_per_second": 1}]))
        .await
        .invalid("body");
    s.patch("/v1/queues/q", json!({"rate_limits": [1, 2, 3]}))
        .await
        .invalid("rate_limits");
    assert_eq!(
        s.get_queue("q").await["rate_limits"]["max_burst_size"],
        json!(100)
    );

    for (body, field) in [
        (json!(["t", {"url": "http://127.0.0.1:9/hook"}]), "body"),
        (
            json!({"task_id": "t", "target": ["http://127.0.0.1:9/hook"]}),
            "target",
        ),
        (
            json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/hook"},
                   "retry_config": [3]}),
            "retry_config",
        ),
    ] {
        s.post("/v1/queues/q/tasks", body).await.invalid(field);
    }
    assert!(s.all_tasks("q", "").await.is_empty());

    for (body, field) in [
        (
            json!(["j", "* * * * *", {"url": "http://127.0.0.1:9/hook"}]),
            "body",
        ),
        (
            json!({"name": "j", "schedule": "* * * * *", "target": ["http://127.0.0.1:9/hook"]}),
            "target",
        ),
        (
            json!({"name": "j", "schedule": "* * * * *",
                   "target": {"url": "http://127.0.0.1:9/hook"}, "retry_config": [1]}),
            "retry_config",
        ),
    ] {
        s.post("/v1/jobs", body).await.invalid(field);
    }
    assert_eq!(s.get("/v1/jobs").await.ok(200).json["items"], json!([]));
    s.post(
        "/v1/schedules/preview",
        json!(["* * * * *", "UTC", "2026-01-01T00:00:00Z", 3]),
    )
    .await
    .invalid("body");

    let principals = s.get("/v1/principals").await.ok(200).json["items"].clone();
    s.post("/v1/principals", json!(["bob", "service", "admin"]))
        .await
        .invalid("body");
    s.patch("/v1/principals/admin", json!(["reader"]))
        .await
        .invalid("body");
    assert_eq!(
        s.get("/v1/principals").await.ok(200).json["items"],
        principals
    );
    s.post("/v1/organizations", json!(["evil"]))
        .await
        .invalid("body");
}

async fn trailing_content_after_the_body_is_refused(s: Server) {
    let resp = s
        .request(reqwest::Method::POST, "/v1/queues")
        .raw("application/json", r#"{"name": "q"} {"name": "r"}"#)
        .send()
        .await;
    resp.problem(400, "INVALID_ARGUMENT");
    assert_eq!(s.get("/v1/queues").await.ok(200).json["items"], json!([]));
}

async fn attempts_are_paginated_oldest_first_and_trimmed(backend: Backend) {
    let s = Server::start_with(backend, &["--max-attempts-kept", "3"]).await;
    let target = Target::start().await;
    s.create_queue_with(json!({"name": "q", "retry_config":
        {"min_backoff_ms": 1, "max_backoff_ms": 20, "max_attempts": 10}}))
        .await;
    s.create_task(
        "q",
        json!({"task_id": "flaky", "target": {"url": target.url("/fail/5/500")}}),
    )
    .await;
    let done = wait_state(&s, "q", "flaky", "succeeded", WITHIN).await;
    assert_eq!(done["attempt_count"], 6, "every attempt is counted: {done}");

    let first = s
        .get("/v1/queues/q/tasks/flaky/attempts?limit=2")
        .await
        .ok(200)
        .json
        .clone();
    let numbers = |page: &Value| -> Vec<u64> {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["attempt"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(numbers(&first), [4, 5], "the latest three, oldest first");
    let token = first["next_page_token"].as_str().expect("a second page");
    let second = s
        .get(&format!(
            "/v1/queues/q/tasks/flaky/attempts?limit=2&page_token={token}"
        ))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(numbers(&second), [6]);
    assert_eq!(second["next_page_token"], Value::Null);
    assert_eq!(second["items"][0]["status_code"], 200);

    s.get("/v1/queues/q/tasks/flaky/attempts?limit=0")
        .await
        .invalid("limit");
    s.get("/v1/queues/q/tasks/flaky/attempts?page_token=garbage")
        .await
        .invalid("page_token");
}

/// JSON Schema counts `30.0` as an integer; clients whose numbers are all
/// floats send it.
async fn integral_floats_are_integers_and_fractions_are_not(s: Server) {
    let queue = s
        .create_queue_with(json!({"name": "q", "dispatch_deadline_s": 30.0,
                                  "retry_config": {"max_attempts": 4e0}}))
        .await;
    assert_eq!(queue["dispatch_deadline_s"], json!(30));
    assert_eq!(queue["retry_config"]["max_attempts"], json!(4));
    s.patch("/v1/queues/q", json!({"dispatch_deadline_s": 30.5}))
        .await
        .invalid("dispatch_deadline_s");
    s.patch("/v1/queues/q", json!({"dedup_window_s": -1.0}))
        .await
        .invalid("dedup_window_s");
    assert_eq!(s.get_queue("q").await["dispatch_deadline_s"], json!(30));
}

/// The task-ID headers rank (`Idem-Task-Id`, then
/// `X-Fc-Stateful-Async-Invocation-Id`); one that is not a task ID is the
/// client's mistake even when the other outranks it.
async fn every_task_id_header_given_must_be_a_task_id(s: Server) {
    s.create_paused_queue("q").await;
    let resp = s
        .request(reqwest::Method::POST, "/v1/queues/q/tasks")
        .header("Idem-Task-Id", "good")
        .header("X-Fc-Stateful-Async-Invocation-Id", "not a task id")
        .json(&json!({"target": {"url": "http://127.0.0.1:9/"}}))
        .send()
        .await;
    resp.invalid("task_id");
    assert!(s.all_tasks("q", "").await.is_empty());
    let resp = s
        .request(reqwest::Method::POST, "/v1/queues/q/tasks")
        .header("Idem-Task-Id", "good")
        .header("X-Fc-Stateful-Async-Invocation-Id", "also-good")
        .json(&json!({"target": {"url": "http://127.0.0.1:9/"}}))
        .send()
        .await;
    resp.ok(201);
    assert_eq!(resp.json["task_id"], "good");
}
