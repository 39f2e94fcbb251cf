//! A server shared by organizations: fair dispatch slots, per-organization
//! quotas, and the cap on the signatures a delivery carries.

use crate::harness::target::*;
use crate::harness::{Api, Backend, Resp, Server, unique};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

const WITHIN: Duration = Duration::from_secs(10);

/// A new organization's admin.
async fn organization(s: &Server) -> Api {
    let created = s
        .post("/v1/organizations", json!({"name": unique("org")}))
        .await
        .ok(201)
        .json
        .clone();
    s.with_key(created["admin_key"].as_str().unwrap())
}

async fn a_slow_organization_cannot_take_another_organizations_slots(kind: Backend) {
    let target = Target::start().await;
    let s = Server::start_with(kind, &["--max-in-flight", "4"]).await;
    let slow = organization(&s).await;
    slow.create_queue_with(json!({"name": "slow", "dispatch_deadline_s": 60}))
        .await;
    for i in 0..12 {
        slow.create_task(
            "slow",
            json!({"task_id": format!("slow-{i}"), "target": {"url": target.url("/hold/60000")}}),
        )
        .await;
    }
    // Every slot the slow organization may take, it takes at once; give
    // any further claim time to happen.
    target.wait_total(1, WITHIN).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let held = target.received().len();

    s.create_queue("fast").await;
    let done = s
        .request(Method::POST, "/v1/queues/fast/tasks?wait_ms=5000")
        .json(&json!({"task_id": "fast-1", "target": {"url": target.url("/ok")}}))
        .send()
        .await;
    let done = &done.ok(200).json;
    assert_eq!(done["state"], "succeeded", "{done}");

    let slow_received: Vec<String> = target
        .received()
        .iter()
        .map(|r| r.task_id().to_string())
        .filter(|id| id.starts_with("slow-"))
        .collect();
    assert!(
        (1..4).contains(&slow_received.len()),
        "the slow organization held {slow_received:?} of 4 slots ({held} before the other came)"
    );
    for id in &slow_received {
        let task = slow.get_task("slow", id).await;
        assert_eq!(task["state"], "running", "still in flight: {task}");
    }
}

fn exhausted(resp: &Resp, quota: &str, flag: &str, limit: u64) {
    let p = resp.problem(429, "RESOURCE_EXHAUSTED");
    let detail = p["detail"].as_str().unwrap();
    assert!(detail.contains(quota), "{detail}");
    assert!(detail.contains(flag), "{detail}");
    assert_eq!(p["extensions"], json!({"limit": quota, "max": limit}));
}

fn job(name: &str) -> Value {
    json!({"name": name, "schedule": "0 0 1 1 *", "target": {"url": "http://127.0.0.1:9/"}})
}

async fn each_quota_answers_429_naming_it_and_writes_nothing(kind: Backend) {
    let s = Server::start_with(
        kind,
        &[
            "--max-queues-per-org",
            "2",
            "--max-jobs-per-org",
            "1",
            "--max-principals-per-org",
            "2",
            "--max-api-keys-per-org",
            "2",
            "--max-signing-secrets-per-org",
            "2",
        ],
    )
    .await;

    // The job's queue, made by its first job, is not one of the queues.
    s.post("/v1/jobs", job("j1")).await.ok(201);
    exhausted(
        &s.post("/v1/jobs", job("j2")).await,
        "jobs_per_org",
        "--max-jobs-per-org",
        1,
    );
    s.get("/v1/jobs/j2").await.problem(404, "NOT_FOUND");

    s.create_queue("q1").await;
    s.create_queue("q2").await;
    exhausted(
        &s.post("/v1/queues", json!({"name": "q3"})).await,
        "queues_per_org",
        "--max-queues-per-org",
        2,
    );
    s.get("/v1/queues/q3").await.problem(404, "NOT_FOUND");

    // `admin` is the first principal, with the first key.
    s.post(
        "/v1/principals",
        json!({"name": "p1", "kind": "service", "role": "writer"}),
    )
    .await
    .ok(201);
    exhausted(
        &s.post(
            "/v1/principals",
            json!({"name": "p2", "kind": "service", "role": "writer"}),
        )
        .await,
        "principals_per_org",
        "--max-principals-per-org",
        2,
    );
    let names: Vec<Value> = s
        .collect_pages("/v1/principals")
        .await
        .into_iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(names, [json!("admin"), json!("p1")]);

    s.post_empty("/v1/principals/p1/keys").await.ok(201);
    exhausted(
        &s.post_empty("/v1/principals/p1/keys").await,
        "api_keys_per_org",
        "--max-api-keys-per-org",
        2,
    );
    assert_eq!(s.collect_pages("/v1/principals/p1/keys").await.len(), 1);

    s.post_empty("/v1/signing-secrets/rotate").await.ok(201);
    exhausted(
        &s.post_empty("/v1/signing-secrets/rotate").await,
        "signing_secrets_per_org",
        "--max-signing-secrets-per-org",
        2,
    );
    let secrets = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    assert_eq!(secrets["secrets"].as_array().unwrap().len(), 2);

    // Deleting one makes room again.
    let oldest = secrets["secrets"][1]["id"].as_str().unwrap().to_string();
    s.delete(&format!("/v1/signing-secrets/{oldest}"))
        .await
        .ok(204);
    s.post_empty("/v1/signing-secrets/rotate").await.ok(201);

    // Quotas are per organization.
    let other = organization(&s).await;
    other.create_queue("q1").await;
    other.create_queue("q2").await;
    other.post("/v1/jobs", job("j1")).await.ok(201);
    other.post_empty("/v1/signing-secrets/rotate").await.ok(201);
}

async fn deliver(s: &Server, target: &Target, task_id: &str) -> Received {
    s.create_task(
        "q",
        json!({"task_id": task_id, "target": {"url": target.url("/ok")}}),
    )
    .await;
    target.wait_for(task_id, 1, WITHIN).await.remove(0)
}

fn signatures(r: &Received) -> usize {
    r.header("webhook-signature").unwrap().split(' ').count()
}

async fn deliveries_carry_at_most_the_cap_of_signatures(kind: Backend) {
    let target = Target::start().await;
    let s = Server::start_with(kind, &["--max-signing-secrets-per-org", "4"]).await;
    s.create_queue("q").await;
    for _ in 0..3 {
        s.post_empty("/v1/signing-secrets/rotate").await.ok(201);
    }
    s.post_empty("/v1/signing-secrets/rotate")
        .await
        .problem(429, "RESOURCE_EXHAUSTED");
    let r = deliver(&s, &target, "four").await;
    assert_eq!(signatures(&r), 4);

    // Restarted with a lower cap, the organization keeps its four secrets
    // but deliveries are signed with the newest two only.
    let (backing, key) = s.kill().await;
    let s = Server::start_on(backing, key, &["--max-signing-secrets-per-org", "2"]).await;
    let secrets = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    let secrets: Vec<&str> = secrets["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["secret"].as_str().unwrap())
        .collect();
    assert_eq!(secrets.len(), 4);
    let r = deliver(&s, &target, "two").await;
    assert_eq!(signatures(&r), 2);
    assert!(signature_verifies(secrets[0], &r), "the newest signs");
    assert!(
        signature_verifies(secrets[1], &r),
        "the second newest signs"
    );
    assert!(!signature_verifies(secrets[3], &r), "the oldest does not");
    s.post_empty("/v1/signing-secrets/rotate")
        .await
        .problem(429, "RESOURCE_EXHAUSTED");
}

/// Live tasks and stored bytes per organization: a create past either is
/// refused 429 and writes nothing, a batch as a whole; finished tasks stop
/// counting as live (but their bytes stay, until they are deleted); each
/// organization has its own count.
async fn task_quotas_hold_live_tasks_and_stored_bytes(kind: Backend) {
    let target = Target::start().await;
    let s = Server::start_with(
        kind,
        &[
            "--max-tasks-per-org",
            "3",
            "--max-task-bytes-per-org",
            "4KiB",
        ],
    )
    .await;
    let task = |id: &str| json!({"task_id": id, "target": {"url": target.url("/ok")}});
    s.create_paused_queue("held").await;
    for id in ["t0", "t1", "t2"] {
        s.create_task("held", task(id)).await;
    }
    exhausted(
        &s.post("/v1/queues/held/tasks", task("t3")).await,
        "tasks_per_org",
        "--max-tasks-per-org",
        3,
    );
    s.get("/v1/queues/held/tasks/t3")
        .await
        .problem(404, "NOT_FOUND");
    exhausted(
        &s.post(
            "/v1/queues/held/tasks:batch",
            json!({"tasks": [task("b0"), task("b1")]}),
        )
        .await,
        "tasks_per_org",
        "--max-tasks-per-org",
        3,
    );
    s.get("/v1/queues/held/tasks/b0")
        .await
        .problem(404, "NOT_FOUND");

    // Another organization's tasks are its own.
    let other = organization(&s).await;
    other.create_queue_with(json!({"name": "q"})).await;
    other.post("/v1/queues/q/tasks", task("o0")).await.ok(201);

    // Delivered, they are no longer live: room again once the count is
    // read anew (at most a second later).
    s.post_empty("/v1/queues/held/resume").await.ok(200);
    for id in ["t0", "t1", "t2"] {
        wait_state(&s, "held", id, "succeeded", WITHIN).await;
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    s.post("/v1/queues/held/tasks", task("t3")).await.ok(201);

    // Bytes count what is stored, finished tasks included: a payload
    // larger than what is left is refused.
    let big = json!({"task_id": "big",
                     "target": {"url": target.url("/ok"), "body": "x".repeat(4000)}});
    exhausted(
        &s.post("/v1/queues/held/tasks", big).await,
        "task_bytes_per_org",
        "--max-task-bytes-per-org",
        4096,
    );
    s.get("/v1/queues/held/tasks/big")
        .await
        .problem(404, "NOT_FOUND");
}

idem_testkit::store_tests!(
    task_quotas_hold_live_tasks_and_stored_bytes,
    a_slow_organization_cannot_take_another_organizations_slots,
    each_quota_answers_429_naming_it_and_writes_nothing,
    deliveries_carry_at_most_the_cap_of_signatures,
);
