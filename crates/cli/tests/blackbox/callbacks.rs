//! Completion callbacks and organization event webhooks (API.md §12), on
//! both stores: each event arrives signed (checked with `idem-webhooks`),
//! once per final state, retried under one run key, to the task's own
//! callback before its queue's.

use crate::harness;
use crate::harness::Server;
use crate::harness::target::*;
use idem_testkit::Backend;
use idem_webhooks::{Signed, SigningSecret, Verifier};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::Duration;

const WITHIN: Duration = Duration::from_secs(15);

fn sha256_hex(input: &str) -> String {
    Sha256::digest(input.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The event's run key as API.md §12 defines it, computed here from the
/// task's run key (API.md §4).
fn event_key(task: &Value, event: &str) -> String {
    let run_key = expected_run_key(
        "default",
        task["queue"].as_str().unwrap(),
        task["task_id"].as_str().unwrap(),
        task["created_at"].as_str().unwrap(),
    );
    sha256_hex(&format!("{run_key}/{event}"))
}

async fn secrets(s: &Server) -> Vec<SigningSecret> {
    let listed = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    listed["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| SigningSecret::parse(x["secret"].as_str().unwrap()).unwrap())
        .collect()
}

/// Panics unless the delivery verifies under the organization's secrets.
fn assert_signed(secrets: &[SigningSecret], r: &Received) {
    let signed = Signed {
        id: r.header("webhook-id").expect("webhook-id"),
        timestamp: r.header("webhook-timestamp").expect("webhook-timestamp"),
        signatures: r.header("webhook-signature").expect("webhook-signature"),
        body: &r.body,
    };
    Verifier::new(secrets)
        .verify(&signed, harness::unix_now())
        .unwrap_or_else(|e| panic!("event not signed: {e}"));
}

fn body(r: &Received) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

/// The event deliveries a target received: those without a task ID.
fn events(target: &Target) -> Vec<Received> {
    target
        .received()
        .into_iter()
        .filter(|r| r.header("idem-task-id").is_none())
        .collect()
}

async fn wait_events(target: &Target, n: usize) -> Vec<Received> {
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let got = events(target);
        if got.len() >= n {
            return got;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} event deliveries after {WITHIN:?}, expected {n}: {got:?}",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn with_key<'a>(got: &'a [Received], key: &str) -> Vec<&'a Received> {
    got.iter()
        .filter(|r| r.header("webhook-id") == Some(key))
        .collect()
}

async fn callbacks_arrive_signed_once_per_final_state(s: Server) {
    let work = Target::start().await;
    let callbacks = Target::start().await;
    let own = Target::start().await;
    // Each callback target fails its first delivery, so every event is
    // retried; the queue's retry policy is the events' too.
    s.create_queue_with(json!({
        "name": "q",
        "retry_config": {"max_attempts": 4, "min_backoff_ms": 100, "max_backoff_ms": 200},
        "on_success": {"url": callbacks.url("/fail/1/503")},
        "on_failure": {"url": callbacks.url("/fail/1/500"), "headers": {"X-Source": "queue"}},
    }))
    .await;
    let queue = s.get("/v1/queues/q").await.ok(200).json.clone();
    assert_eq!(queue["on_success"]["url"], callbacks.url("/fail/1/503"));
    assert_eq!(queue["on_success"]["method"], "POST");

    let ok = s
        .create_task(
            "q",
            json!({"task_id": "ok", "target": {"url": work.url("/ok")}}),
        )
        .await;
    let bad = s
        .create_task(
            "q",
            json!({"task_id": "bad", "target": {"url": work.url("/fail/99/500")},
                   "retry_config": {"max_attempts": 1}}),
        )
        .await;
    let mine = s
        .create_task(
            "q",
            json!({"task_id": "mine", "target": {"url": work.url("/ok")},
                   "on_success": {"url": own.url("/fail/1/502")}, "on_failure": null}),
        )
        .await;
    assert_eq!(mine["on_success"]["url"], own.url("/fail/1/502"));
    assert_eq!(mine["on_failure"], Value::Null);
    assert_eq!(ok["on_success"], Value::Null, "the queue's applies");
    wait_state(&s, "q", "ok", "succeeded", WITHIN).await;
    wait_state(&s, "q", "bad", "failed", WITHIN).await;
    wait_state(&s, "q", "mine", "succeeded", WITHIN).await;

    // Two deliveries of each event: the failed first one and its retry.
    let got = wait_events(&callbacks, 4).await;
    let own_got = wait_events(&own, 2).await;
    let secrets = secrets(&s).await;
    for (event, task, status) in [("task.succeeded", &ok, 200), ("task.failed", &bad, 500)] {
        let key = event_key(task, event);
        let deliveries = with_key(&got, &key);
        assert_eq!(deliveries.len(), 2, "{event}: {got:?}");
        for r in &deliveries {
            assert_signed(&secrets, r);
            assert_eq!(r.method, "POST");
            assert_eq!(r.header("idempotency-key"), Some(key.as_str()));
            assert_eq!(r.header("content-type"), Some("application/json"));
            let b = body(r);
            assert_eq!(b["type"], event);
            assert_eq!(b["queue"], "q");
            assert_eq!(b["task"]["task_id"], task["task_id"]);
            assert_eq!(b["task"]["state"], event.trim_start_matches("task."));
            assert_eq!(b["task"]["last_attempt"]["status_code"], status);
        }
        assert_eq!(deliveries[0].header("idem-retry-count"), Some("0"));
        assert_eq!(deliveries[1].header("idem-retry-count"), Some("1"));
    }
    let failed = with_key(&got, &event_key(&bad, "task.failed"));
    assert_eq!(failed[0].header("x-source"), Some("queue"));

    // The task's own callback wins over its queue's.
    let key = event_key(&mine, "task.succeeded");
    assert!(
        with_key(&got, &key).is_empty(),
        "the queue's callback got it"
    );
    let own_deliveries = with_key(&own_got, &key);
    assert_eq!(own_deliveries.len(), 2, "{own_got:?}");
    for r in own_deliveries {
        assert_signed(&secrets, r);
        assert_eq!(body(r)["task"]["task_id"], "mine");
    }

    // Once per final state: nothing more arrives, and events are no tasks
    // of the user.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(events(&callbacks).len(), 4);
    assert_eq!(events(&own).len(), 2);
    let listed = s.get("/v1/queues/q/tasks").await.ok(200).json.clone();
    assert_eq!(listed["items"].as_array().unwrap().len(), 3);
    let queues = s.get("/v1/queues").await.ok(200).json.clone();
    assert_eq!(queues["items"].as_array().unwrap().len(), 1, "{queues}");
    s.get("/v1/queues/~events/tasks")
        .await
        .problem(404, "NOT_FOUND");
}

async fn callbacks_are_validated_and_can_be_removed(s: Server) {
    let p = s
        .post(
            "/v1/queues",
            json!({"name": "q", "on_success": {"url": "ftp://x", "body": "no"},
                   "on_failure": {"url": "http://127.0.0.1:9/", "method": "GET"}}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT")
        .clone();
    let fields: Vec<&str> = p["extensions"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    for f in ["on_success.url", "on_success.body", "on_failure.method"] {
        assert!(fields.contains(&f), "{f} not named: {p}");
    }
    s.get("/v1/queues/q").await.problem(404, "NOT_FOUND");

    s.create_queue_with(json!({"name": "q", "on_failure": {"url": "http://127.0.0.1:9/f"}}))
        .await;
    let cleared = s
        .patch("/v1/queues/q", json!({"on_failure": null}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(cleared["on_failure"], Value::Null);
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/"},
               "on_failure": {"url": "not a url"}}),
    )
    .await
    .problem(400, "INVALID_ARGUMENT");
    s.get("/v1/queues/q/tasks/t")
        .await
        .problem(404, "NOT_FOUND");
}

async fn an_organization_webhook_receives_task_failed_and_job_run_failed(s: Server) {
    let work = Target::start().await;
    let hooks = Target::start().await;
    let created = s
        .post(
            "/v1/webhooks",
            json!({"url": hooks.url("/ok"), "events": ["task.failed", "job.run_failed"]}),
        )
        .await
        .ok(201)
        .json
        .clone();
    let id = created["id"].as_str().unwrap().to_string();
    let listed = s.get("/v1/webhooks").await.ok(200).json.clone();
    assert_eq!(listed["items"][0]["id"], id.as_str());
    assert_eq!(
        listed["items"][0]["events"],
        json!(["task.failed", "job.run_failed"])
    );

    s.create_queue_with(json!({"name": "q", "retry_config": {"max_attempts": 1}}))
        .await;
    let bad = s
        .create_task(
            "q",
            json!({"task_id": "bad", "target": {"url": work.url("/fail/9/500")}}),
        )
        .await;
    s.create_task(
        "q",
        json!({"task_id": "good", "target": {"url": work.url("/ok")}}),
    )
    .await;
    s.post(
        "/v1/jobs",
        json!({"name": "nightly", "schedule": "0 0 1 1 *",
               "target": {"url": work.url("/fail/9/500")}, "retry_config": {"retry_count": 0}}),
    )
    .await
    .ok(201);
    let run = s
        .post_empty("/v1/jobs/nightly/run")
        .await
        .ok(201)
        .json
        .clone();

    let got = wait_events(&hooks, 2).await;
    let secrets = secrets(&s).await;
    for r in &got {
        assert_signed(&secrets, r);
    }
    let failed: Vec<&Received> = got
        .iter()
        .filter(|r| body(r)["type"] == "task.failed")
        .collect();
    assert_eq!(failed.len(), 1, "{got:?}");
    let b = body(failed[0]);
    assert_eq!(b["task"]["task_id"], "bad");
    assert_eq!(b["task"]["created_at"], bad["created_at"]);
    let run_failed: Vec<&Received> = got
        .iter()
        .filter(|r| body(r)["type"] == "job.run_failed")
        .collect();
    assert_eq!(run_failed.len(), 1, "{got:?}");
    let b = body(run_failed[0]);
    assert_eq!(b["job"], "nightly");
    assert_eq!(b["run"]["run_id"], run["run_id"]);
    assert_eq!(b["run"]["state"], "failed");
    assert_eq!(b["run"]["last_attempt"]["status_code"], 500);

    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(events(&hooks).len(), 2, "a success raises no webhook event");

    // Without the webhook, a failure tells nobody.
    s.delete(&format!("/v1/webhooks/{id}")).await.ok(204);
    s.get(&format!("/v1/webhooks/{id}"))
        .await
        .problem(404, "NOT_FOUND");
    s.create_task(
        "q",
        json!({"task_id": "bad-2", "target": {"url": work.url("/fail/9/500")}}),
    )
    .await;
    wait_state(&s, "q", "bad-2", "failed", WITHIN).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(events(&hooks).len(), 2);
}

async fn webhooks_are_validated_capped_and_admin_only(kind: Backend) {
    let s = Server::start_with(kind, &["--max-webhooks-per-org", "1"]).await;
    let p = s
        .post(
            "/v1/webhooks",
            json!({"url": "ftp://nowhere", "events": ["task.succeeded"]}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT")
        .clone();
    let fields: Vec<&str> = p["extensions"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"url") && fields.contains(&"events"), "{p}");
    s.post(
        "/v1/webhooks",
        json!({"url": "http://127.0.0.1:9/", "events": []}),
    )
    .await
    .problem(400, "INVALID_ARGUMENT");
    s.post(
        "/v1/webhooks",
        json!({"url": "http://127.0.0.1:9/", "events": ["task.failed"]}),
    )
    .await
    .ok(201);
    let p = s
        .post(
            "/v1/webhooks",
            json!({"url": "http://127.0.0.1:9/b", "events": ["job.run_failed"]}),
        )
        .await
        .problem(429, "RESOURCE_EXHAUSTED")
        .clone();
    assert_eq!(
        p["extensions"],
        json!({"limit": "webhooks_per_org", "max": 1})
    );
    let listed = s.get("/v1/webhooks").await.ok(200).json.clone();
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);

    let writer = s.key_with_role("writer").await;
    s.with_key(&writer)
        .get("/v1/webhooks")
        .await
        .problem(403, "PERMISSION_DENIED");
}

/// An event shows the task it reports exactly as `GET` shows it once the
/// task is final, and a failed run as `GET` shows the run: one view, however
/// much either shows. The tasks give every field a view has something to
/// show for (a target with headers and a JSON body, a text body, a pull
/// task's payload, tag and result, their own callbacks, retry policy,
/// deadline and header style). Nothing of a final task changes between the
/// event's transaction and the `GET` (no lease, a state that no longer
/// depends on the time), so the whole objects compare, field by field.
async fn an_event_shows_the_task_and_the_run_as_get_shows_them(s: Server) {
    let work = Target::start().await;
    let callbacks = Target::start().await;
    let hooks = Target::start().await;
    s.post(
        "/v1/webhooks",
        json!({"url": hooks.url("/ok"), "events": ["job.run_failed"]}),
    )
    .await
    .ok(201);
    s.create_queue_with(json!({
        "name": "push",
        "retry_config": {"max_attempts": 2, "min_backoff_ms": 100, "max_backoff_ms": 100},
        "on_failure": {"url": callbacks.url("/ok")},
    }))
    .await;
    s.create_task(
        "push",
        json!({
            "task_id": "ok",
            "target": {"url": work.url("/ok"), "method": "PUT",
                       "headers": {"X-Order": "42"}, "json": {"amount": 1250, "currency": "EUR"}},
            "dispatch_deadline_s": 30,
            "retry_config": {"max_attempts": 3},
            "header_style": "cloud_tasks",
            "on_success": {"url": callbacks.url("/ok"), "headers": {"X-Hook": "own"}},
        }),
    )
    .await;
    s.create_task(
        "push",
        json!({"task_id": "bad", "target": {"url": work.url("/fail/9/500"), "body": "plain text"}}),
    )
    .await;
    s.create_queue_with(json!({
        "name": "pull", "mode": "pull", "on_success": {"url": callbacks.url("/ok")},
    }))
    .await;
    s.create_task(
        "pull",
        json!({"task_id": "done", "payload": {"json": {"id": 7}}, "tag": "red"}),
    )
    .await;
    let claimed = s
        .post("/v1/queues/pull/tasks:claim", json!({"tag": "red"}))
        .await
        .ok(200)
        .json["tasks"][0]
        .clone();
    s.post(
        "/v1/queues/pull/tasks/done/complete",
        json!({"attempt_id": claimed["lease"]["attempt_id"], "result": {"ok": [1, 2.5]}}),
    )
    .await
    .ok(200);
    s.post(
        "/v1/jobs",
        json!({"name": "nightly", "schedule": "0 0 1 1 *",
               "target": {"url": work.url("/fail/9/500")}, "retry_config": {"retry_count": 0}}),
    )
    .await
    .ok(201);
    let run = s
        .post_empty("/v1/jobs/nightly/run")
        .await
        .ok(201)
        .json
        .clone();

    let got: Vec<Value> = wait_events(&callbacks, 3).await.iter().map(body).collect();
    assert_eq!(got.len(), 3, "{got:?}");
    for (queue, task_id) in [("push", "ok"), ("push", "bad"), ("pull", "done")] {
        let event = got
            .iter()
            .find(|b| b["task"]["task_id"] == task_id)
            .unwrap_or_else(|| panic!("no event about {task_id}: {got:?}"));
        assert_eq!(event["queue"], queue);
        let shown = s
            .get(&format!("/v1/queues/{queue}/tasks/{task_id}"))
            .await
            .ok(200)
            .json
            .clone();
        assert_eq!(event["task"], shown, "{queue}/{task_id}");
    }

    let raised = wait_events(&hooks, 1).await;
    let event = body(&raised[0]);
    assert_eq!(event["type"], "job.run_failed");
    assert_eq!(event["job"], "nightly");
    let run_id = run["run_id"].as_str().unwrap();
    let shown = s
        .get(&format!("/v1/jobs/nightly/runs/{run_id}"))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(event["run"], shown);
}

idem_testkit::store_tests!(
    Server::start;
    callbacks_arrive_signed_once_per_final_state,
    callbacks_are_validated_and_can_be_removed,
    an_organization_webhook_receives_task_failed_and_job_run_failed,
    the_cli_and_the_client_manage_callbacks_and_webhooks,
    an_event_shows_the_task_and_the_run_as_get_shows_them,
);

/// `idem webhook …`, `--on-success`/`--on-failure`, and idem-client.
async fn the_cli_and_the_client_manage_callbacks_and_webhooks(s: Server) {
    let created = s
        .idem(&[
            "webhook",
            "create",
            "http://127.0.0.1:9/events",
            "--event",
            "task.failed",
            "--event",
            "job.run_failed",
            "--json",
        ])
        .await
        .json();
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["events"], json!(["task.failed", "job.run_failed"]));
    let table = s.idem(&["webhook", "ls"]).await.ok();
    assert!(table.stdout.contains(&id), "{}", table.stdout);
    assert!(
        table.stdout.contains("task.failed,job.run_failed"),
        "{}",
        table.stdout
    );
    s.idem(&[
        "webhook",
        "create",
        "http://127.0.0.1:9/x",
        "--event",
        "task.succeeded",
    ])
    .await
    .fails(3, "INVALID_ARGUMENT");

    let queue = s
        .idem(&[
            "queue",
            "create",
            "q",
            "--on-failure",
            "http://127.0.0.1:9/failed",
            "--json",
        ])
        .await
        .json();
    assert_eq!(queue["on_failure"]["url"], "http://127.0.0.1:9/failed");
    assert_eq!(queue["on_success"], Value::Null);
    let task = s
        .idem(&[
            "task",
            "create",
            "q",
            "--url",
            "http://127.0.0.1:9/work",
            "--on-success",
            "http://127.0.0.1:9/done",
            "--schedule-time",
            "+1h",
            "--json",
        ])
        .await
        .json();
    assert_eq!(task["on_success"]["url"], "http://127.0.0.1:9/done");

    let client = s.client();
    let hooks = client
        .list_webhooks(&Default::default())
        .await
        .unwrap()
        .value;
    assert_eq!(hooks.items.len(), 1);
    let hook = client
        .create_webhook(
            "http://127.0.0.1:9/runs",
            &[idem_client::EventType::JobRunFailed],
        )
        .await
        .unwrap()
        .value;
    assert_eq!(client.get_webhook(&hook.id).await.unwrap().value, hook);
    let made = client
        .create_task(
            "q",
            &idem_client::NewTask::new(idem_client::NewTarget::new("http://127.0.0.1:9/w"))
                .on_failure(idem_client::NewTarget::new("http://127.0.0.1:9/mine"))
                .schedule_time(idem_client::Timestamp::now() + jiff::SignedDuration::from_hours(1)),
        )
        .await
        .unwrap()
        .value;
    assert_eq!(made.on_failure.unwrap().url, "http://127.0.0.1:9/mine");
    client.delete_webhook(&hook.id).await.unwrap();
    s.idem(&["webhook", "rm", &id]).await.ok();
    assert!(
        client
            .list_webhooks(&Default::default())
            .await
            .unwrap()
            .value
            .items
            .is_empty()
    );
}

/// `kill -9` while tasks finish: every task that ends succeeded has its
/// event delivered, under the key derived from its own.
async fn a_crash_while_tasks_end_loses_no_event(kind: Backend) {
    let work = Target::start().await;
    let callbacks = Target::start().await;
    let flags = ["--lease-grace", "1s"];
    let s = Server::start_on(
        harness::Backing::new(kind).await,
        harness::fresh_key(),
        &flags,
    )
    .await;
    s.create_queue_with(json!({
        "name": "q", "dispatch_deadline_s": 2,
        "retry_config": {"min_backoff_ms": 100, "max_backoff_ms": 200},
        "on_success": {"url": callbacks.url("/ok")},
    }))
    .await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        tasks.push(
            s.create_task(
                "q",
                json!({"task_id": format!("t{i}"), "target": {"url": work.url("/hold/150")}}),
            )
            .await,
        );
    }
    work.wait_total(10, WITHIN).await;
    let (backing, key) = s.kill().await;
    let s = Server::start_on(backing, key, &flags).await;
    for t in &tasks {
        wait_state(&s, "q", t["task_id"].as_str().unwrap(), "succeeded", WITHIN).await;
    }
    let keys: Vec<String> = tasks
        .iter()
        .map(|t| event_key(t, "task.succeeded"))
        .collect();
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let got = events(&callbacks);
        let missing: Vec<&String> = keys
            .iter()
            .filter(|k| with_key(&got, k).is_empty())
            .collect();
        if missing.is_empty() {
            for r in &got {
                let id = r.header("webhook-id").unwrap_or_default().to_string();
                assert!(keys.contains(&id), "an event nobody raised: {id}");
            }
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} events never arrived",
            missing.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The tests that start a server with flags of their own.
mod own_server {
    use super::*;
    idem_testkit::store_tests!(
        webhooks_are_validated_capped_and_admin_only,
        a_crash_while_tasks_end_loses_no_event,
    );
}
