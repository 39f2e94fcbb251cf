//! Queue statistics: the `stats` of the queue resource agree with the tasks
//! listed, after a mixed workload through the real binary, on both stores
//! and with two nodes on one PostgreSQL database.

use crate::harness::target::*;
use crate::harness::{Api, Server, TwoNodes, parse_time, time_from_now};
use idem_testkit::Backend;
use serde_json::{Value, json};
use std::time::Duration;

const WITHIN: Duration = Duration::from_secs(20);

/// Sweeps every 200 ms, so that tombstones of a zero window go quickly.
async fn start(backend: Backend) -> Server {
    Server::start_with(backend, &["--sweep-interval", "200ms"]).await
}

idem_testkit::store_tests!(
    start;
    stats_match_the_listed_tasks_after_a_mixed_workload,
);

/// Fast retries: two attempts, 100 ms apart.
fn fast(name: &str, dedup_window_s: u64) -> Value {
    json!({"name": name, "dedup_window_s": dedup_window_s,
           "retry_config": {"max_attempts": 2, "min_backoff_ms": 100, "max_backoff_ms": 100}})
}

/// The `stats` a queue should show, counted from its tasks as listed.
fn counted(tasks: &[Value]) -> Value {
    let mut per_state = json!({"scheduled": 0, "queued": 0, "running": 0,
                                "succeeded": 0, "failed": 0, "cancelled": 0});
    let mut attempts = 0;
    for t in tasks {
        let state = t["state"].as_str().expect("state");
        per_state[state] = json!(per_state[state].as_u64().unwrap() + 1);
        attempts += t["attempt_count"].as_u64().unwrap();
    }
    json!({"tasks": per_state, "attempts": attempts})
}

/// Waits until no listed task of `queue` is queued or running, then checks
/// that the queue's stats (read through GET, the list of queues and a PATCH
/// answer) match the tasks listed. Every attempt of these tests starts
/// within their first minute, so the attempts listed are those dispatched
/// in the last minute.
async fn assert_settled_stats_match(api: &Api, queue: &str) -> Value {
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let tasks = api.all_tasks(queue, "limit=7").await;
        let busy = tasks
            .iter()
            .any(|t| t["state"] == "queued" || t["state"] == "running");
        if !busy {
            let expected = counted(&tasks);
            let got = api.get_queue(queue).await;
            let stats = &got["stats"];
            assert_eq!(stats["tasks"], expected["tasks"], "{queue}: {got}");
            assert_eq!(
                stats["dispatched_last_minute"], expected["attempts"],
                "{queue}: {got}"
            );
            assert_eq!(stats["in_flight"], 0, "{queue}: {got}");
            assert_eq!(stats["oldest_due_time"], Value::Null, "{queue}: {got}");
            let listed = api.collect_pages("/v1/queues?limit=2").await;
            let listed = listed.iter().find(|q| q["name"] == queue).expect("listed");
            assert_eq!(listed["stats"], *stats, "the list shows the same stats");
            return stats.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{queue} still busy: {tasks:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn stats_match_the_listed_tasks_after_a_mixed_workload(s: Server) {
    let target = Target::start().await;
    let created = s.create_queue_with(fast("q", 600)).await;
    assert_eq!(
        created["stats"],
        json!({"tasks": {"scheduled": 0, "queued": 0, "running": 0, "succeeded": 0,
                         "failed": 0, "cancelled": 0},
               "oldest_due_time": null, "dispatched_last_minute": 0, "in_flight": 0,
               "groups_with_due": 0}),
        "a new queue: {created}"
    );

    // Successes, successes after a retry, failures after their attempts,
    // tasks scheduled an hour ahead, and duplicates that change nothing.
    let (ok, retried, failing) = (
        target.url("/ok"),
        target.url("/fail/1/500"),
        target.url("/fail/9/500"),
    );
    for i in 0..5 {
        s.create_task(
            "q",
            json!({"task_id": format!("ok-{i}"), "target": {"url": ok}}),
        )
        .await;
    }
    for i in 0..3 {
        s.create_task(
            "q",
            json!({"task_id": format!("retried-{i}"), "target": {"url": retried}}),
        )
        .await;
    }
    for i in 0..2 {
        s.create_task(
            "q",
            json!({"task_id": format!("failing-{i}"), "target": {"url": failing}}),
        )
        .await;
    }
    let ahead = time_from_now(3600);
    for i in 0..4 {
        s.create_task(
            "q",
            json!({"task_id": format!("later-{i}"), "target": {"url": ok}, "schedule_time": ahead}),
        )
        .await;
    }
    let keyed = json!({"task_id": "keyed", "target": {"url": ok}});
    for _ in 0..2 {
        let r = s
            .request(reqwest::Method::POST, "/v1/queues/q/tasks")
            .header("Idempotency-Key", "stats-keyed-create")
            .json(&keyed)
            .send()
            .await;
        r.ok(201);
    }
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "ok-0", "target": {"url": ok}}),
    )
    .await
    .ok(409);
    s.delete("/v1/queues/q/tasks/later-3").await.ok(200);

    let stats = assert_settled_stats_match(&s, "q").await;
    assert_eq!(
        stats["tasks"],
        json!({"scheduled": 3, "queued": 0, "running": 0, "succeeded": 9,
               "failed": 2, "cancelled": 1})
    );
    assert_eq!(stats["dispatched_last_minute"], 5 + 1 + 3 * 2 + 2 * 2);

    // A task run now is due: queued until dispatched, then succeeded.
    s.post_empty("/v1/queues/q/tasks/later-0/run").await.ok(200);
    wait_state(&s, "q", "later-0", "succeeded", WITHIN).await;
    let stats = assert_settled_stats_match(&s, "q").await;
    assert_eq!(stats["tasks"]["scheduled"], 2);
    assert_eq!(stats["tasks"]["succeeded"], 10);

    // The CLI shows them.
    let shown = s.idem(&["queue", "get", "q"]).await.ok();
    assert_eq!(
        shown.field("tasks"),
        "2 scheduled, 0 queued, 0 running, 10 succeeded, 2 failed, 1 cancelled"
    );
    assert_eq!(shown.field("oldest due"), "none");
    assert_eq!(
        shown.field("dispatch"),
        "17 in the last minute, 0 in flight"
    );

    // A PATCH answers with the stats too.
    let patched = s
        .patch("/v1/queues/q", json!({"dispatch_deadline_s": 30}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(patched["stats"], stats);

    // A paused queue holds due tasks: they are queued, the oldest due time
    // is their schedule time; a purge cancels them.
    s.create_queue_with(fast("held", 600)).await;
    s.post_empty("/v1/queues/held/pause").await.ok(200);
    let first = s
        .create_task("held", json!({"task_id": "h-0", "target": {"url": ok}}))
        .await;
    for i in 1..4 {
        s.create_task(
            "held",
            json!({"task_id": format!("h-{i}"), "target": {"url": ok}}),
        )
        .await;
    }
    let held = s.get_queue("held").await;
    assert_eq!(held["stats"]["tasks"]["queued"], 4, "{held}");
    assert_eq!(
        parse_time(&held["stats"]["oldest_due_time"]),
        parse_time(&first["schedule_time"]),
        "{held}"
    );
    s.post_empty("/v1/queues/held/purge").await.ok(200);
    let stats = assert_settled_stats_match(&s, "held").await;
    assert_eq!(stats["tasks"]["cancelled"], 4);

    // With no dedup window (and no retention of failures), finished tasks
    // are swept and leave the counts.
    let mut brief = fast("brief", 0);
    brief["failed_retention_s"] = json!(0);
    s.create_queue_with(brief).await;
    for i in 0..3 {
        s.create_task(
            "brief",
            json!({"task_id": format!("b-{i}"), "target": {"url": ok}}),
        )
        .await;
    }
    s.create_task(
        "brief",
        json!({"task_id": "b-fail", "target": {"url": failing}}),
    )
    .await;
    let deadline = std::time::Instant::now() + WITHIN;
    while !s.all_tasks("brief", "").await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "never swept");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let swept = s.get_queue("brief").await;
    assert_eq!(
        swept["stats"]["tasks"],
        json!({"scheduled": 0, "queued": 0, "running": 0, "succeeded": 0,
               "failed": 0, "cancelled": 0}),
        "{swept}"
    );
    assert_eq!(swept["stats"]["dispatched_last_minute"], 3 + 2, "{swept}");

    // A queue deleted and made again starts from nothing.
    s.delete("/v1/queues/q").await.ok(204);
    s.get("/v1/queues/q").await.ok(404);
    let again = s.create_queue_with(fast("q", 600)).await;
    assert_eq!(again["stats"]["tasks"]["succeeded"], 0, "{again}");
    assert_eq!(again["stats"]["dispatched_last_minute"], 0, "{again}");
}

/// Both nodes take creates (concurrently, duplicates included) and deliver;
/// each node's answer agrees with the tasks listed.
#[tokio::test]
async fn two_nodes_keep_one_set_of_stats() {
    let target = Target::start().await;
    let nodes = TwoNodes::start().await;
    let apis = &nodes.apis;
    apis[0].create_queue_with(fast("q", 600)).await;
    let (ok, failing) = (target.url("/ok"), target.url("/fail/9/500"));
    let mut creators = Vec::new();
    for worker in 0..8 {
        let api = apis[worker % 2].clone();
        let (ok, failing) = (ok.clone(), failing.clone());
        creators.push(tokio::spawn(async move {
            for i in (worker..200).step_by(8) {
                let url = if i % 10 == 0 { &failing } else { &ok };
                api.create_task(
                    "q",
                    json!({"task_id": format!("t{i}"), "target": {"url": url}}),
                )
                .await;
            }
        }));
    }
    for c in creators {
        c.await.unwrap();
    }
    // Each node refuses an ID the other created.
    for (i, api) in apis.iter().enumerate() {
        api.post(
            "/v1/queues/q/tasks",
            json!({"task_id": format!("t{i}"), "target": {"url": ok}}),
        )
        .await
        .ok(409);
        api.create_task(
            "q",
            json!({"task_id": format!("later-{i}"), "target": {"url": ok},
                   "schedule_time": time_from_now(3600)}),
        )
        .await;
    }
    apis[1].delete("/v1/queues/q/tasks/later-1").await.ok(200);
    let stats = assert_settled_stats_match(&apis[0], "q").await;
    assert_eq!(
        stats["tasks"],
        json!({"scheduled": 1, "queued": 0, "running": 0, "succeeded": 180,
               "failed": 20, "cancelled": 1})
    );
    assert_eq!(stats["dispatched_last_minute"], 180 + 20 * 2);
    assert_eq!(apis[1].get_queue("q").await["stats"], stats);
    drop(nodes);
}
