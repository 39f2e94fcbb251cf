//! Delivery to real local targets: outcomes, backoff, headers, signatures
//! and queue limits, on both stores.

use crate::harness;
use crate::harness::Server;
use crate::harness::target::*;
use serde_json::{Value, json};
use std::time::Duration;

const WITHIN: Duration = Duration::from_secs(10);

async fn queue(s: &Server, name: &str, extra: Value) {
    let mut body = json!({"name": name});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    s.create_queue_with(body).await;
}

fn task(id: &str, url: &str) -> Value {
    json!({"task_id": id, "target": {"url": url}})
}

async fn delivers_with_identity_headers_and_signatures(s: Server) {
    let target = Target::start().await;
    queue(&s, "q", json!({})).await;
    s.post_empty("/v1/signing-secrets/rotate").await.ok(201);
    let created = s
        .create_task(
            "q",
            json!({"task_id": "pay-1", "target": {"url": target.url("/ok"),
                   "headers": {"X-Custom": "kept"}, "json": {"amount": 100}}}),
        )
        .await;
    let got = target.wait_for("pay-1", 1, WITHIN).await;
    let r = &got[0];
    assert_eq!(r.method, "POST");
    assert_eq!(&r.body[..], br#"{"amount":100}"#);
    assert_eq!(r.header("x-custom"), Some("kept"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("idem-queue"), Some("q"));
    assert_eq!(r.header("idem-task-id"), Some("pay-1"));
    let key = expected_run_key(
        "default",
        "q",
        "pay-1",
        created["created_at"].as_str().unwrap(),
    );
    assert_eq!(r.header("idempotency-key"), Some(key.as_str()));
    assert_eq!(r.header("webhook-id"), Some(key.as_str()));
    assert_eq!(
        r.header("idem-schedule-time"),
        created["schedule_time"].as_str()
    );
    assert_eq!(r.header("idem-retry-count"), Some("0"));
    assert_eq!(r.header("idem-previous-response"), None);
    let ts: i64 = r.header("webhook-timestamp").unwrap().parse().unwrap();
    assert!((ts - harness::unix_now()).abs() < 30, "timestamp {ts}");

    let secrets = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    let secrets: Vec<&str> = secrets["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["secret"].as_str().unwrap())
        .collect();
    assert_eq!(secrets.len(), 2);
    assert_eq!(
        r.header("webhook-signature").unwrap().split(' ').count(),
        2,
        "one signature per current secret"
    );
    for secret in &secrets {
        assert!(signature_verifies(secret, r), "signed with {secret}");
    }
    let other = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    assert!(!signature_verifies(other, r), "a foreign secret fails");

    let done = wait_state(&s, "q", "pay-1", "succeeded", WITHIN).await;
    assert_eq!(done["attempt_count"], 1);
    assert_eq!(done["last_attempt"]["status_code"], 200);
    assert!(done["finished_at"].is_string());
    let attempts = s
        .get("/v1/queues/q/tasks/pay-1/attempts")
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(attempts["items"].as_array().unwrap().len(), 1);
    assert_eq!(attempts["items"][0]["status_code"], 200);
}

async fn retries_follow_the_backoff_formula(s: Server) {
    let target = Target::start().await;
    queue(
        &s,
        "q",
        json!({"retry_config": {"min_backoff_ms": 200, "max_backoff_ms": 1000,
                                "max_doublings": 2, "max_attempts": 10}}),
    )
    .await;
    s.create_task("q", task("flaky", &target.url("/fail/3/500")))
        .await;
    let got = target.wait_for("flaky", 4, WITHIN).await;
    // Retries 1, 2 wait 200 and 400 ms (doubling); retry 3 grows linearly
    // by 200·2² = 800 ms.
    let gaps = gaps_ms(&got);
    for (gap, expected) in gaps.iter().zip([200u128, 400, 800]) {
        assert!(
            *gap + 15 >= expected && *gap <= expected + 400,
            "gaps {gaps:?}, expected about [200, 400, 800]"
        );
    }
    let key = got[0].header("idempotency-key").unwrap();
    let schedule = got[0].header("idem-schedule-time").unwrap();
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.header("idempotency-key"), Some(key));
        assert_eq!(r.header("idem-schedule-time"), Some(schedule));
        assert_eq!(r.header("idem-retry-count"), Some(i.to_string().as_str()));
        let previous = (i > 0).then_some("500");
        assert_eq!(r.header("idem-previous-response"), previous);
    }
    let done = wait_state(&s, "q", "flaky", "succeeded", WITHIN).await;
    assert_eq!(done["attempt_count"], 4);
    let attempts = s
        .get("/v1/queues/q/tasks/flaky/attempts")
        .await
        .ok(200)
        .json
        .clone();
    let codes: Vec<&Value> = attempts["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["status_code"])
        .collect();
    assert_eq!(codes, [&json!(500), &json!(500), &json!(500), &json!(200)]);
}

async fn conflicts_are_retried_until_attempts_run_out(s: Server) {
    let target = Target::start().await;
    queue(
        &s,
        "q",
        json!({"retry_config": {"min_backoff_ms": 100, "max_attempts": 3}}),
    )
    .await;
    s.create_task("q", task("busy", &target.url("/fail/99/409")))
        .await;
    let done = wait_state(&s, "q", "busy", "failed", WITHIN).await;
    assert_eq!(done["attempt_count"], 3);
    assert_eq!(done["last_attempt"]["status_code"], 409);
    assert!(done["finished_at"].is_string());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        target.received_for("busy").len(),
        3,
        "no attempt after failing"
    );
}

async fn the_deadline_and_resets_are_failures(s: Server) {
    let target = Target::start().await;
    queue(
        &s,
        "q",
        json!({"retry_config": {"min_backoff_ms": 100, "max_attempts": 2}}),
    )
    .await;
    s.create_task(
        "q",
        json!({"task_id": "slow", "dispatch_deadline_s": 1,
               "target": {"url": target.url("/hold/5000")}}),
    )
    .await;
    s.create_task("q", task("reset", &target.reset_url())).await;
    let reset = wait_state(&s, "q", "reset", "failed", WITHIN).await;
    assert_eq!(reset["attempt_count"], 2);
    assert!(reset["last_attempt"]["status_code"].is_null());
    assert!(reset["last_attempt"]["error"].as_str().unwrap().len() > 5);

    let slow = wait_state(&s, "q", "slow", "failed", WITHIN).await;
    assert_eq!(target.received_for("slow").len(), 2);
    let last = &slow["last_attempt"];
    assert!(last["status_code"].is_null());
    assert!(
        last["error"].as_str().unwrap().contains("deadline"),
        "{last}"
    );
    let ms = last["duration_ms"].as_u64().unwrap();
    assert!((900..2500).contains(&ms), "duration {ms} ms");
}

async fn retry_after_longer_than_the_backoff_wins(s: Server) {
    let target = Target::start().await;
    queue(&s, "q", json!({"retry_config": {"min_backoff_ms": 100}})).await;
    s.create_task("q", task("throttled", &target.url("/throttle/1")))
        .await;
    let got = target.wait_for("throttled", 2, WITHIN).await;
    let gap = gaps_ms(&got)[0];
    assert!(
        (985..1700).contains(&gap),
        "gap {gap} ms after Retry-After: 1"
    );
    assert_eq!(got[1].header("idem-previous-response"), Some("429"));
    wait_state(&s, "q", "throttled", "succeeded", WITHIN).await;
}

async fn concurrency_limit_holds_at_the_target(s: Server) {
    let target = Target::start().await;
    queue(
        &s,
        "q",
        json!({"rate_limits": {"max_concurrent_dispatches": 2}}),
    )
    .await;
    for i in 0..6 {
        s.create_task("q", task(&format!("t{i}"), &target.url("/hold/300")))
            .await;
    }
    target.wait_total(6, WITHIN).await;
    for i in 0..6 {
        wait_state(&s, "q", &format!("t{i}"), "succeeded", WITHIN).await;
    }
    assert_eq!(target.max_in_flight(), 2);
}

async fn rate_limit_spaces_deliveries(s: Server) {
    let target = Target::start().await;
    queue(
        &s,
        "q",
        json!({"rate_limits": {"max_dispatches_per_second": 5, "max_burst_size": 1}}),
    )
    .await;
    s.post_empty("/v1/queues/q/pause").await.ok(200);
    for i in 0..5 {
        s.create_task("q", task(&format!("t{i}"), &target.url("/ok")))
            .await;
    }
    s.post_empty("/v1/queues/q/resume").await.ok(200);
    let got = target.wait_total(5, WITHIN).await;
    // A token bucket bounds how many deliveries start by each instant, not
    // each gap: one delivery sent late may be followed closely by the next.
    // So the k-th arrival comes at least k·200 ms after the first (less a
    // little for arrival jitter), and the whole run is not held back.
    let since_first: Vec<u128> = got
        .iter()
        .map(|r| r.at.duration_since(got[0].at).as_millis())
        .collect();
    for (k, t) in since_first.iter().enumerate() {
        assert!(
            *t + 80 >= k as u128 * 200,
            "5/s with burst 1: arrival {k} came {t} ms after the first: {since_first:?}"
        );
    }
    assert!(
        since_first[4] < 4 * 200 + 600,
        "deliveries held back: {since_first:?}"
    );
    let order: Vec<&str> = got.iter().map(|r| r.task_id()).collect();
    assert_eq!(order, ["t0", "t1", "t2", "t3", "t4"], "schedule order");
}

async fn paused_queues_hold_and_run_now_dispatches(s: Server) {
    let target = Target::start().await;
    queue(&s, "q", json!({})).await;
    s.post_empty("/v1/queues/q/pause").await.ok(200);
    s.create_task("q", task("held", &target.url("/ok"))).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        target.received().is_empty(),
        "a paused queue dispatches none"
    );
    s.post_empty("/v1/queues/q/resume").await.ok(200);
    target.wait_for("held", 1, WITHIN).await;

    let later = harness::time_from_now(3600);
    s.create_task(
        "q",
        json!({"task_id": "later", "schedule_time": later,
               "target": {"url": target.url("/ok")}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(target.received_for("later").is_empty());
    let asked = std::time::Instant::now();
    s.post_empty("/v1/queues/q/tasks/later/run").await.ok(200);
    let got = target.wait_for("later", 1, WITHIN).await;
    let waited = got[0].at.duration_since(asked);
    assert!(
        waited < Duration::from_millis(300),
        "run now took {waited:?}"
    );
    assert_eq!(got[0].header("idem-schedule-time"), Some(later.as_str()));
}

/// A failed attempt keeps what the target answered: its content type and
/// the first 1 KiB of its body, marked when there was more; a success and
/// an attempt without an answer keep nothing.
async fn a_failed_attempt_keeps_the_start_of_the_answer(s: Server) {
    let target = Target::start().await;
    queue(
        &s,
        "q",
        json!({"retry_config": {"min_backoff_ms": 100, "max_backoff_ms": 100, "max_attempts": 1}}),
    )
    .await;
    s.create_task("q", task("short", &target.url("/declined")))
        .await;
    s.create_task("q", task("long", &target.url("/answer/503/5000")))
        .await;
    s.create_task("q", task("fine", &target.url("/ok"))).await;
    s.create_task("q", task("nobody", &target.reset_url()))
        .await;

    let short = wait_state(&s, "q", "short", "failed", WITHIN).await;
    let answer = &short["last_attempt"]["response"];
    assert_eq!(answer["content_type"], "application/json", "{short}");
    assert_eq!(
        answer["body"],
        r#"{"error":"card_declined","decline_code":"insufficient_funds"}"#
    );
    assert_eq!(answer["truncated"], false);
    let attempts = s
        .get("/v1/queues/q/tasks/short/attempts")
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(attempts["items"][0]["status_code"], 402);
    assert_eq!(attempts["items"][0]["response"], *answer);

    let long = wait_state(&s, "q", "long", "failed", WITHIN).await;
    let answer = &long["last_attempt"]["response"];
    let body = answer["body"].as_str().unwrap();
    assert_eq!(body.len(), 1024);
    assert!(body.starts_with("refused with 503\n"), "{body}");
    assert_eq!(answer["truncated"], true);
    assert_eq!(answer["content_type"], "text/plain; charset=utf-8");

    let fine = wait_state(&s, "q", "fine", "succeeded", WITHIN).await;
    assert_eq!(fine["last_attempt"]["response"], Value::Null);
    let nobody = wait_state(&s, "q", "nobody", "failed", WITHIN).await;
    assert_eq!(nobody["last_attempt"]["response"], Value::Null);
    assert!(nobody["last_attempt"]["error"].is_string());
}

idem_testkit::store_tests!(
    Server::start;
    a_failed_attempt_keeps_the_start_of_the_answer,
    delivers_with_identity_headers_and_signatures,
    retries_follow_the_backoff_formula,
    conflicts_are_retried_until_attempts_run_out,
    the_deadline_and_resets_are_failures,
    retry_after_longer_than_the_backoff_wins,
    concurrency_limit_holds_at_the_target,
    rate_limit_spaces_deliveries,
    paused_queues_hold_and_run_now_dispatches,
);
