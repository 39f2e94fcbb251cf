//! Pull queues (API.md §11): workers claim tasks and act on their leases;
//! over HTTP, idem-client and the CLI, on both stores.

use crate::harness::target::*;
use crate::harness::{Server, unique, upload_form};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

async fn pull_queue(s: &Server, name: &str, extra: Value) {
    let mut body = json!({"name": name, "mode": "pull"});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    s.create_queue_with(body).await;
}

fn work(id: &str) -> Value {
    json!({"task_id": id, "payload": {"json": {"id": id}}})
}

async fn claim(s: &Server, queue: &str, body: Value) -> Vec<Value> {
    s.post(&format!("/v1/queues/{queue}/tasks:claim"), body)
        .await
        .ok(200)
        .json["tasks"]
        .as_array()
        .unwrap()
        .clone()
}

fn attempt_id(task: &Value) -> String {
    task["lease"]["attempt_id"].as_str().unwrap().to_string()
}

/// A principal of `kind` with `role`, and its key.
async fn principal(s: &Server, kind: &str, role: &str) -> (String, String) {
    let name = unique(kind);
    s.post(
        "/v1/principals",
        json!({"name": name, "kind": kind, "role": role}),
    )
    .await
    .ok(201);
    let key = s
        .post_empty(&format!("/v1/principals/{name}/keys"))
        .await
        .ok(201)
        .json["key"]
        .as_str()
        .unwrap()
        .to_string();
    (name, key)
}

async fn pull_tasks_carry_a_payload_and_no_target(s: Server) {
    pull_queue(&s, "work", json!({})).await;
    let queue = s.get_queue("work").await;
    assert_eq!(queue["mode"], "pull");
    // The mode is fixed: a well-formed PATCH the queue's state refuses.
    s.patch("/v1/queues/work", json!({"mode": "push"}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    s.create_queue("pushed").await;
    s.patch("/v1/queues/pushed", json!({"person_only": true}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    assert_eq!(s.get_queue("pushed").await["person_only"], false);
    let person_push = s
        .post("/v1/queues", json!({"name": "p", "person_only": true}))
        .await;
    person_push.ok(400);
    assert_eq!(
        person_push.json["extensions"]["errors"][0]["field"],
        "person_only"
    );

    let refused = s
        .post(
            "/v1/queues/work/tasks",
            json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/"}}),
        )
        .await;
    // A task of the other kind: well formed, not what the queue takes.
    refused.problem(409, "FAILED_PRECONDITION");
    s.create_queue("push").await;
    let refused = s.post("/v1/queues/push/tasks", work("t")).await;
    refused.problem(409, "FAILED_PRECONDITION");
    assert_eq!(s.get("/v1/queues/push/tasks/t").await.status, 404);

    let created = s
        .create_task(
            "work",
            json!({"task_id": "t", "payload": {"json": {"n": 1.50}}, "tag": "red"}),
        )
        .await;
    assert_eq!(created["target"], Value::Null);
    // Not leased: `lease` is there, null.
    assert_eq!(created.get("lease"), Some(&Value::Null), "{created}");
    assert_eq!(created["payload"]["json"], json!({"n": 1.50}));
    assert_eq!(created["tag"], "red");
    assert_eq!(created["state"], "queued");
    let again = s.post("/v1/queues/work/tasks", work("t")).await;
    again.ok(409);
    assert_eq!(again.json["type"], "TASK_ALREADY_EXISTS");

    // The push dispatcher never takes it: it waits for a worker.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.get_task("work", "t").await["state"], "queued");
    assert!(claim(&s, "work", json!({"tag": "blue"})).await.is_empty());
    let got = claim(&s, "work", json!({"tag": "red", "lease_s": 30})).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["state"], "running");
    assert_eq!(got[0]["lease"]["claimant"], "admin");
    assert_eq!(got[0]["attempt_count"], 1);
}

/// A pull queue's tasks come from a batch or an upload as from a single
/// create: the payload as given, read back by the worker that claims it.
async fn batches_and_uploads_create_pull_tasks(s: Server) {
    pull_queue(&s, "work", json!({})).await;
    let body = json!({"tasks": [
        {"task_id": "a", "payload": {"json": [1, "two"]}, "tag": "red"},
        {"task_id": "b", "payload": {"body": "plain text"}},
        {"task_id": "c", "target": {"url": "http://127.0.0.1:9/"}},
        {"task_id": "a", "payload": {"json": null}},
        {"task_id": "d", "payload": {"body": "x", "json": 1}},
    ]});
    let keyed = || {
        s.request(reqwest::Method::POST, "/v1/queues/work/tasks:batch")
            .header("Idempotency-Key", "pull-batch")
            .json(&body)
            .send()
    };
    let batch = keyed().await;
    batch.ok(200);
    // The replay answers each item as the batch did, the refused one too.
    let replay = keyed().await;
    replay.ok(200);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    let replayed: Vec<(u64, Value)> = replay.json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["status"].as_u64().unwrap(), r["problem"]["type"].clone()))
        .collect();
    assert_eq!(
        replayed[2],
        (409, json!("FAILED_PRECONDITION")),
        "{}",
        replay.json
    );
    assert_eq!(
        replayed.iter().map(|r| r.0).collect::<Vec<_>>(),
        [201, 201, 409, 409, 400]
    );
    let results = batch.json["results"].as_array().unwrap();
    let statuses: Vec<u64> = results
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [201, 201, 409, 409, 400], "{}", batch.json);
    assert_eq!(results[0]["task"]["payload"]["json"], json!([1, "two"]));
    assert_eq!(results[0]["task"]["tag"], "red");
    assert_eq!(results[0]["task"]["target"], Value::Null);
    assert_eq!(results[2]["problem"]["type"], "FAILED_PRECONDITION");
    assert!(
        results[2].get("task").is_none_or(Value::is_null),
        "{}",
        results[2]
    );
    let field = &results[4]["problem"]["extensions"]["errors"][0]["field"];
    assert!(
        field.as_str().unwrap().starts_with("tasks[4].payload"),
        "{field}"
    );
    assert_eq!(s.get("/v1/queues/work/tasks/c").await.status, 404);
    assert_eq!(s.get("/v1/queues/work/tasks/d").await.status, 404);

    let bytes: Vec<u8> = (0..=255u8).collect();
    let upload = s
        .request(reqwest::Method::POST, "/v1/queues/work/tasks")
        .multipart(upload_form(
            json!({"task_id": "up", "tag": "blue"}),
            bytes.clone(),
            "application/octet-stream",
        ))
        .send()
        .await;
    upload.ok(201);
    assert_eq!(
        upload.json["payload"]["body_base64"],
        STANDARD.encode(&bytes)
    );
    let both = s
        .request(reqwest::Method::POST, "/v1/queues/work/tasks")
        .multipart(upload_form(
            json!({"task_id": "both", "payload": {"body": "inline"}}),
            b"file".to_vec(),
            "text/plain",
        ))
        .send()
        .await;
    both.ok(400);
    assert_eq!(
        both.json["extensions"]["errors"][0]["field"],
        "payload.body"
    );
    assert_eq!(s.get("/v1/queues/work/tasks/both").await.status, 404);

    let red = claim(&s, "work", json!({"tag": "red"})).await;
    assert_eq!(red.len(), 1);
    assert_eq!(red[0]["payload"]["json"], json!([1, "two"]));
    let blue = claim(&s, "work", json!({"tag": "blue"})).await;
    assert_eq!(blue[0]["payload"]["body_base64"], STANDARD.encode(&bytes));
    let rest = claim(&s, "work", json!({"max_tasks": 10})).await;
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["task_id"], "b");
    assert_eq!(rest[0]["payload"]["body"], "plain text");
}

async fn claims_take_due_tasks_in_schedule_order_and_validate_their_bounds(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    for (id, offset) in [("c", -30), ("a", -10), ("b", -20), ("later", 3600)] {
        let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(offset);
        s.create_task(
            "q",
            json!({"task_id": id, "payload": {"body": id}, "schedule_time": at.to_string()}),
        )
        .await;
    }
    let got = claim(&s, "q", json!({"max_tasks": 100})).await;
    let ids: Vec<&str> = got.iter().map(|t| t["task_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["c", "b", "a"]);
    for bad in [
        json!({"max_tasks": 0}),
        json!({"max_tasks": 101}),
        json!({"wait_ms": 30001}),
        json!({"lease_s": 0}),
        json!({"lease_s": 3601}),
    ] {
        let field = bad.as_object().unwrap().keys().next().unwrap().clone();
        let r = s.post("/v1/queues/q/tasks:claim", bad).await;
        r.ok(400);
        assert_eq!(r.json["extensions"]["errors"][0]["field"], field.as_str());
    }
    assert_eq!(
        s.post("/v1/queues/nope/tasks:claim", json!({}))
            .await
            .status,
        404
    );
}

async fn a_retried_claim_is_already_claimed_and_the_task_shows_its_holder(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    s.create_task("q", work("t")).await;
    // Both carry one key: a key is ignored on work, so the second is not a
    // replay of the first (nor a 422 for its other body) but a claim of its
    // own.
    let first = s
        .request(reqwest::Method::POST, "/v1/queues/q/tasks/t/claim")
        .header("idempotency-key", "same-key")
        .json(&json!({"lease_s": 120}))
        .send()
        .await;
    let first = first.ok(200).json.clone();
    let again = s
        .request(reqwest::Method::POST, "/v1/queues/q/tasks/t/claim")
        .header("idempotency-key", "same-key")
        .send()
        .await;
    again.ok(409);
    assert_eq!(again.json["type"], "WORK_ALREADY_CLAIMED");
    assert_eq!(again.json["extensions"]["claim"]["claimant"], "admin");
    assert_eq!(
        again.json["extensions"]["claim"]["lease_expires_at"],
        first["lease"]["lease_expires_at"]
    );
    let read = s.get_task("q", "t").await;
    assert_eq!(read["lease"], first["lease"]);
    assert_eq!(read["state"], "running");
    assert_eq!(read["attempt_count"], 1);
}

async fn heartbeat_release_reassign_assign_and_lost_leases(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    s.create_task("q", work("t")).await;
    let (writer, writer_key) = principal(&s, "service", "writer").await;
    let (other, other_key) = principal(&s, "service", "writer").await;
    let w = s.with_key(&writer_key);
    let got = w
        .post("/v1/queues/q/tasks:claim", json!({"lease_s": 10}))
        .await
        .ok(200)
        .json["tasks"][0]
        .clone();
    let id = attempt_id(&got);

    let beat = w
        .post(
            "/v1/queues/q/tasks/t/heartbeat",
            json!({"attempt_id": id, "lease_s": 600}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert!(beat["lease"]["lease_expires_at"].as_str() > got["lease"]["lease_expires_at"].as_str());

    // A stale attempt ID changes nothing, whatever the action.
    for action in ["heartbeat", "complete", "fail", "release"] {
        let r = w
            .post(
                &format!("/v1/queues/q/tasks/t/{action}"),
                json!({"attempt_id": "not-mine"}),
            )
            .await;
        r.ok(409);
        assert_eq!(r.json["type"], "LEASE_LOST", "{action}");
    }
    assert_eq!(s.get_task("q", "t").await["lease"], beat["lease"]);

    // Another writer may not reassign; the holder may.
    let o = s.with_key(&other_key);
    let body = json!({"attempt_id": id, "principal": other});
    o.post("/v1/queues/q/tasks/t/reassign", body.clone())
        .await
        .ok(403);
    let moved = w
        .post("/v1/queues/q/tasks/t/reassign", body)
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(moved["lease"]["claimant"], other.as_str());
    // The token is the new holder's now: its old holder no longer sees it.
    assert_eq!(moved["lease"].get("attempt_id"), None, "{moved}");
    assert_eq!(
        s.get_task("q", "t").await["lease"]["attempt_id"],
        id.as_str()
    );
    let unknown = s
        .post(
            "/v1/queues/q/tasks/t/reassign",
            json!({"attempt_id": id, "principal": "nobody"}),
        )
        .await;
    // The principal named is a resource that does not exist.
    unknown.problem(404, "NOT_FOUND");
    assert!(
        unknown.json["detail"].as_str().unwrap().contains("nobody"),
        "{}",
        unknown.json
    );

    // Released: due again, the attempt does not count.
    let released = o
        .post("/v1/queues/q/tasks/t/release", json!({"attempt_id": id}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(released["state"], "queued");
    assert_eq!(released["lease"], Value::Null);
    assert_eq!(released["attempt_count"], 0);
    let after = o
        .post("/v1/queues/q/tasks/t/heartbeat", json!({"attempt_id": id}))
        .await;
    after.ok(409);
    assert_eq!(after.json["type"], "LEASE_LOST");

    // Assign: admins only, and only an unleased task.
    w.post("/v1/queues/q/tasks/t/assign", json!({"principal": writer}))
        .await
        .ok(403);
    let assigned = s
        .post("/v1/queues/q/tasks/t/assign", json!({"principal": writer}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(assigned["lease"]["claimant"], writer.as_str());
    assert_eq!(assigned["attempt_count"], 1);
    assert_ne!(attempt_id(&assigned), id);
    let twice = s
        .post("/v1/queues/q/tasks/t/assign", json!({"principal": other}))
        .await;
    twice.ok(409);
    assert_eq!(twice.json["type"], "WORK_ALREADY_CLAIMED");

    // Readers claim nothing.
    let reader = s.key_with_role("reader").await;
    s.with_key(&reader)
        .post("/v1/queues/q/tasks:claim", json!({}))
        .await
        .ok(403);

    // Failing an attempt retries it by the queue's policy; completing
    // records the result and ends it.
    let failed = w
        .post(
            "/v1/queues/q/tasks/t/fail",
            json!({"attempt_id": attempt_id(&assigned), "error": "no disk"}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(failed["state"], "queued");
    assert_eq!(failed["last_attempt"]["error"], "no disk");
    let deadline = Instant::now() + Duration::from_secs(10);
    let again = loop {
        let got = claim(&s, "q", json!({"wait_ms": 1000})).await;
        if let Some(t) = got.into_iter().next() {
            break t;
        }
        assert!(Instant::now() < deadline, "the retry never came due");
    };
    assert_eq!(again["attempt_count"], 2);
    let done = s
        .post(
            "/v1/queues/q/tasks/t/complete",
            json!({"attempt_id": attempt_id(&again), "result": {"ok": [1, 2.50]}}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(done["state"], "succeeded");
    assert_eq!(done["result"], json!({"ok": [1, 2.50]}));
    assert_eq!(
        s.get_task("q", "t").await["result"],
        json!({"ok": [1, 2.50]})
    );
    let attempts = s.get("/v1/queues/q/tasks/t/attempts").await.ok(200).json["items"].clone();
    assert_eq!(attempts.as_array().unwrap().len(), 2, "{attempts}");
    let late = s
        .post(
            "/v1/queues/q/tasks/t/complete",
            json!({"attempt_id": attempt_id(&again)}),
        )
        .await;
    late.ok(409);
    assert_eq!(late.json["type"], "LEASE_LOST");
    let big = "x".repeat(70 * 1024);
    s.create_task("q", work("big")).await;
    let t = claim(&s, "q", json!({})).await.remove(0);
    let r = s
        .post(
            "/v1/queues/q/tasks/big/complete",
            json!({"attempt_id": attempt_id(&t), "result": big}),
        )
        .await;
    r.ok(400);
    assert_eq!(r.json["extensions"]["errors"][0]["field"], "result");
}

/// A lease belongs to its holder (API.md §11): another writer naming the
/// right `attempt_id` changes nothing and is told `LEASE_LOST`, whatever
/// the action; the token is shown only to the holder and admins; and the
/// holder's repeated complete or fail, after an answer it lost, answers 200
/// with `Idempotent-Replayed: true` when it ends the attempt as it already
/// ended, and `LEASE_LOST` when it says otherwise.
async fn a_lease_is_its_holders_and_a_repeated_end_replays(s: Server) {
    pull_queue(&s, "q", json!({"retry_config": {"min_backoff_ms": 1}})).await;
    s.create_task("q", work("t")).await;
    let (holder, holder_key) = principal(&s, "service", "writer").await;
    let (_, other_key) = principal(&s, "service", "writer").await;
    let (h, o) = (s.with_key(&holder_key), s.with_key(&other_key));
    let reader = s.key_with_role("reader").await;
    let r = s.with_key(&reader);
    let got = h
        .post("/v1/queues/q/tasks:claim", json!({"lease_s": 600}))
        .await
        .ok(200)
        .json["tasks"][0]
        .clone();
    let id = attempt_id(&got);

    // Others see the lease and its holder, not its token.
    for api in [&o, &r] {
        let seen = api.get("/v1/queues/q/tasks/t").await.ok(200).json.clone();
        assert_eq!(seen["lease"]["claimant"], holder.as_str());
        assert_eq!(seen["lease"].get("attempt_id"), None, "{seen}");
        let listed = api.get("/v1/queues/q/tasks").await.ok(200).json.clone();
        assert_eq!(listed["items"][0]["lease"].get("attempt_id"), None);
    }
    let own = h.get("/v1/queues/q/tasks/t").await.ok(200).json.clone();
    assert_eq!(own["lease"]["attempt_id"], id.as_str());
    assert_eq!(s.get_task("q", "t").await["lease"], got["lease"]);

    // Another writer with the holder's token: nothing changes.
    for (action, body) in [
        ("heartbeat", json!({"attempt_id": id, "lease_s": 1})),
        (
            "complete",
            json!({"attempt_id": id, "result": {"stolen": true}}),
        ),
        ("fail", json!({"attempt_id": id, "error": "stolen"})),
        ("release", json!({"attempt_id": id})),
    ] {
        o.post(&format!("/v1/queues/q/tasks/t/{action}"), body)
            .await
            .problem(409, "LEASE_LOST");
    }
    let ended = o
        .post(
            "/v1/queues/q/tasks:end",
            json!({"ends": [{"task_id": "t", "attempt_id": id, "result": {}}]}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(ended["results"][0]["status"], 409);
    assert_eq!(ended["results"][0]["problem"]["type"], "LEASE_LOST");
    assert_eq!(s.get_task("q", "t").await["lease"], got["lease"]);
    // An admin may act on it: its heartbeat extends the holder's lease.
    let beat = s
        .post(
            "/v1/queues/q/tasks/t/heartbeat",
            json!({"attempt_id": id, "lease_s": 900}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(beat["lease"]["claimant"], holder.as_str());
    assert!(beat["lease"]["lease_expires_at"].as_str() > got["lease"]["lease_expires_at"].as_str());

    // The holder fails the attempt; its repeated fail is a replay, while
    // another error, a complete or a stranger's fail is not.
    let fail = json!({"attempt_id": id, "error": "disk full"});
    let failed = h.post("/v1/queues/q/tasks/t/fail", fail.clone()).await;
    failed.ok(200);
    assert_eq!(failed.header("idempotent-replayed"), None);
    assert_eq!(failed.json["state"], "queued");
    let again = h.post("/v1/queues/q/tasks/t/fail", fail.clone()).await;
    again.ok(200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json["attempt_count"], 1);
    assert_eq!(again.json["last_attempt"]["error"], "disk full");
    for (api, action, body) in [
        (
            &h,
            "fail",
            json!({"attempt_id": id, "error": "disk on fire"}),
        ),
        (&h, "complete", json!({"attempt_id": id})),
        (&o, "fail", fail.clone()),
    ] {
        api.post(&format!("/v1/queues/q/tasks/t/{action}"), body)
            .await
            .problem(409, "LEASE_LOST");
    }

    // Claimed again and completed: the holder's repeated complete, alone
    // or among ends reported together, is a replay (the same JSON, its
    // members in another order); an admin's too.
    let deadline = Instant::now() + Duration::from_secs(10);
    let second = loop {
        let got = h
            .post("/v1/queues/q/tasks:claim", json!({"wait_ms": 1000}))
            .await
            .ok(200)
            .json["tasks"]
            .clone();
        if let Some(t) = got.as_array().unwrap().first() {
            break t.clone();
        }
        assert!(Instant::now() < deadline, "the retry never came due");
    };
    let id2 = attempt_id(&second);
    let done = h
        .post(
            "/v1/queues/q/tasks/t/complete",
            json!({"attempt_id": id2, "result": {"a": 1, "b": [true]}}),
        )
        .await;
    done.ok(200);
    assert_eq!(done.header("idempotent-replayed"), None);
    let repeated = h
        .post(
            "/v1/queues/q/tasks/t/complete",
            json!({"attempt_id": id2, "result": {"b": [true], "a": 1}}),
        )
        .await;
    repeated.ok(200);
    assert_eq!(repeated.header("idempotent-replayed"), Some("true"));
    assert_eq!(repeated.json["state"], "succeeded");
    assert_eq!(repeated.json["result"], json!({"a": 1, "b": [true]}));
    let together = h
        .post(
            "/v1/queues/q/tasks:end",
            json!({"ends": [
                {"task_id": "t", "attempt_id": id2, "result": {"a": 1, "b": [true]}},
                {"task_id": "t", "attempt_id": id2, "result": {"a": 2}},
            ]}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(together["results"][0]["status"], 200);
    assert_eq!(together["results"][0]["replayed"], true);
    assert_eq!(together["results"][1]["status"], 409);
    assert_eq!(together["results"][1]["problem"]["type"], "LEASE_LOST");
    let by_admin = s
        .post(
            "/v1/queues/q/tasks/t/complete",
            json!({"attempt_id": id2, "result": {"a": 1, "b": [true]}}),
        )
        .await;
    by_admin.ok(200);
    assert_eq!(by_admin.header("idempotent-replayed"), Some("true"));
    for (api, body) in [
        (&h, json!({"attempt_id": id2, "result": {"a": 2}})),
        (&h, json!({"attempt_id": id2})),
        (
            &o,
            json!({"attempt_id": id2, "result": {"a": 1, "b": [true]}}),
        ),
    ] {
        api.post("/v1/queues/q/tasks/t/complete", body)
            .await
            .problem(409, "LEASE_LOST");
    }
    let attempts = s.get("/v1/queues/q/tasks/t/attempts").await.ok(200).json["items"].clone();
    assert_eq!(attempts.as_array().unwrap().len(), 2, "{attempts}");
}

async fn a_dead_workers_task_is_claimed_again_after_its_lease_with_the_attempt_counted(s: Server) {
    pull_queue(&s, "q", json!({"retry_config": {"min_backoff_ms": 1}})).await;
    s.create_task("q", work("t")).await;
    let first = claim(&s, "q", json!({"lease_s": 1})).await.remove(0);
    // The worker dies: no heartbeat, no answer.
    let deadline = Instant::now() + Duration::from_secs(15);
    let second = loop {
        let got = claim(&s, "q", json!({"wait_ms": 1000, "lease_s": 60})).await;
        if let Some(t) = got.into_iter().next() {
            break t;
        }
        assert!(
            Instant::now() < deadline,
            "the expired lease was never recovered"
        );
    };
    assert_eq!(second["attempt_count"], 2);
    assert_ne!(attempt_id(&second), attempt_id(&first));
    let attempts = s.get("/v1/queues/q/tasks/t/attempts").await.ok(200).json["items"].clone();
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .contains("lease expired"),
        "{attempts}"
    );
    let stale = s
        .post(
            "/v1/queues/q/tasks/t/complete",
            json!({"attempt_id": attempt_id(&first)}),
        )
        .await;
    stale.ok(409);
    assert_eq!(stale.json["type"], "LEASE_LOST");
}

async fn a_long_poll_returns_as_soon_as_a_task_is_created(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    let started = Instant::now();
    let poll = {
        let api = s.fresh_admin();
        tokio::spawn(async move {
            api.post("/v1/queues/q/tasks:claim", json!({"wait_ms": 20000}))
                .await
                .ok(200)
                .json["tasks"]
                .clone()
        })
    };
    tokio::time::sleep(Duration::from_millis(700)).await;
    s.create_task("q", work("t")).await;
    let got = poll.await.unwrap();
    assert_eq!(got[0]["task_id"], "t");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Nothing comes: the claim answers empty after its wait.
    let started = Instant::now();
    assert!(claim(&s, "q", json!({"wait_ms": 600})).await.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(600));
}

async fn a_person_only_queue_takes_completions_from_persons_only(s: Server) {
    pull_queue(&s, "approvals", json!({"person_only": true})).await;
    assert_eq!(s.get_queue("approvals").await["person_only"], true);
    s.create_task("approvals", work("t")).await;
    let (_, service) = principal(&s, "service", "writer").await;
    let (_, person) = principal(&s, "person", "writer").await;
    let svc = s.with_key(&service);
    let t = svc
        .post("/v1/queues/approvals/tasks:claim", json!({}))
        .await
        .ok(200)
        .json["tasks"][0]
        .clone();
    let id = attempt_id(&t);
    for action in ["complete", "fail"] {
        let r = svc
            .post(
                &format!("/v1/queues/approvals/tasks/t/{action}"),
                json!({"attempt_id": id}),
            )
            .await;
        r.ok(403);
        assert_eq!(r.json["type"], "USER_IDENTITY_REQUIRED");
    }
    assert_eq!(s.get_task("approvals", "t").await["state"], "running");
    // The service may hand it to a person, who completes it.
    let p = s.with_key(&person);
    let person_name = s.get("/v1/principals").await.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "person" && x["name"] != "admin")
        .unwrap()["name"]
        .clone();
    svc.post(
        "/v1/queues/approvals/tasks/t/reassign",
        json!({"attempt_id": id, "principal": person_name}),
    )
    .await
    .ok(200);
    let done = p
        .post(
            "/v1/queues/approvals/tasks/t/complete",
            json!({"attempt_id": id, "result": "approved"}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(done["state"], "succeeded");
}

async fn callbacks_fire_for_pull_completions(s: Server) {
    let callbacks = Target::start().await;
    pull_queue(
        &s,
        "q",
        json!({"on_success": {"url": callbacks.url("/ok")},
               "on_failure": {"url": callbacks.url("/ok")},
               "retry_config": {"max_attempts": 1}}),
    )
    .await;
    s.create_task("q", work("good")).await;
    s.create_task("q", work("bad")).await;
    for t in claim(&s, "q", json!({"max_tasks": 2})).await {
        let id = t["task_id"].as_str().unwrap().to_string();
        let action = if id == "good" { "complete" } else { "fail" };
        s.post(
            &format!("/v1/queues/q/tasks/{id}/{action}"),
            json!({"attempt_id": attempt_id(&t)}),
        )
        .await
        .ok(200);
    }
    assert_eq!(s.get_task("q", "bad").await["state"], "failed");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let events: Vec<Value> = callbacks
            .received()
            .iter()
            .filter_map(|r| serde_json::from_slice(&r.body).ok())
            .collect();
        let kinds: Vec<(String, String)> = events
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or("").to_string(),
                    e["task"]["task_id"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        if kinds.contains(&("task.succeeded".into(), "good".into()))
            && kinds.contains(&("task.failed".into(), "bad".into()))
        {
            let good = events
                .iter()
                .find(|e| e["task"]["task_id"] == "good")
                .unwrap();
            assert_eq!(good["task"]["payload"]["json"], json!({"id": "good"}));
            break;
        }
        assert!(Instant::now() < deadline, "events: {kinds:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The queue's statistics count them as any task.
    let stats = s.get_queue("q").await["stats"]["tasks"].clone();
    assert_eq!(
        (stats["succeeded"].as_u64(), stats["failed"].as_u64()),
        (Some(1), Some(1))
    );
}

async fn two_workers_racing_for_1000_tasks_complete_each_exactly_once(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    let client = s.client();
    let mut creates = tokio::task::JoinSet::new();
    for chunk in 0..20 {
        let client = client.clone();
        creates.spawn(async move {
            for i in chunk * 50..(chunk + 1) * 50 {
                let task = idem_client::NewTask::work(Some(idem_client::Body::Text(i.to_string())))
                    .task_id(format!("t{i}"));
                client.create_task("q", &task).await.unwrap();
            }
        });
    }
    while let Some(done) = creates.join_next().await {
        done.unwrap();
    }
    let seen: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let workers = (0..2).map(|_| {
        let client = s.client();
        let seen = seen.clone();
        tokio::spawn(async move {
            let options = idem_client::ClaimOptions {
                max_tasks: 100,
                ..Default::default()
            };
            loop {
                let seen = seen.clone();
                let n = client
                    .work_batch("q", &options, move |task| {
                        let seen = seen.clone();
                        async move {
                            *seen.lock().unwrap().entry(task.task_id).or_default() += 1;
                            Ok(None)
                        }
                    })
                    .await
                    .unwrap();
                if n == 0 {
                    return;
                }
            }
        })
    });
    for w in workers.collect::<Vec<_>>() {
        w.await.unwrap();
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1000);
    assert!(seen.values().all(|n| *n == 1), "a task was worked twice");
    let stats = s.get_queue("q").await["stats"]["tasks"].clone();
    assert_eq!(stats["succeeded"], 1000, "{stats}");
}

async fn a_shell_script_can_be_a_worker(s: Server) {
    s.idem(&["queue", "create", "jobs", "--mode", "pull"])
        .await
        .ok();
    s.idem(&[
        "task",
        "create",
        "jobs",
        "--task-id",
        "one",
        "--body-json",
        "{\"n\": 1}",
        "--tag",
        "t",
    ])
    .await
    .ok();
    let out = s
        .idem(&["task", "claim", "jobs", "--wait", "2s", "--tag", "t"])
        .await
        .ok();
    let line = out.stdout.trim().to_string();
    let parts: Vec<&str> = line.split('\t').collect();
    assert_eq!(parts[0], "one", "{line}");
    assert_eq!(parts[2], "{\"n\": 1}");
    s.idem(&[
        "task",
        "complete",
        "jobs",
        "one",
        "--attempt-id",
        parts[1],
        "--result",
        "{\"done\": true}",
    ])
    .await
    .ok();
    let got = s.get_task("jobs", "one").await;
    assert_eq!(got["state"], "succeeded");
    assert_eq!(got["result"], json!({"done": true}));
    let none = s
        .idem(&["task", "claim", "jobs", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(none["tasks"], json!([]));
}

async fn a_rejected_end_names_its_field_and_leaves_the_lease(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    s.post("/v1/queues/q/tasks", work("t")).await.ok(201);
    let leased = claim(&s, "q", json!({})).await.remove(0);
    let attempt = attempt_id(&leased);
    let fail = "/v1/queues/q/tasks/t/fail";
    s.post(
        fail,
        json!({"attempt_id": attempt, "error": "disk\u{0}full"}),
    )
    .await
    .invalid("error");
    s.post(
        fail,
        json!({"attempt_id": attempt, "error": "x".repeat(4097)}),
    )
    .await
    .invalid("error");
    let big = json!({"blob": "x".repeat(64 * 1024)});
    s.post(
        "/v1/queues/q/tasks/t/complete",
        json!({"attempt_id": attempt, "result": big}),
    )
    .await
    .invalid("result");
    let now = s.get_task("q", "t").await;
    assert_eq!(now["state"], "running");
    assert_eq!(now["lease"], leased["lease"]);
    assert_eq!(now["last_attempt"], leased["last_attempt"]);
    assert_eq!(now["attempt_count"], 1);
    // The lease still holds: the same attempt fails with a plain error.
    let failed = s
        .post(fail, json!({"attempt_id": attempt, "error": "disk full"}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(failed["last_attempt"]["error"], "disk full");
}

/// A claim's body may be left out (the defaults then) but not replaced by
/// something that is not JSON: whitespace is malformed, not absent, and
/// claims nothing. A bulk redrive's body is read the same way.
async fn a_body_that_may_be_left_out_is_absent_or_json(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    s.post("/v1/queues/q/tasks", work("t")).await.ok(201);
    for path in ["/v1/queues/q/tasks:claim", "/v1/queues/q/tasks/t/claim"] {
        for blank in ["\n", "  "] {
            s.request(reqwest::Method::POST, path)
                .raw("application/json", blank)
                .send()
                .await
                .problem(400, "INVALID_ARGUMENT");
        }
    }
    s.request(reqwest::Method::POST, "/v1/queues/q/tasks:redrive")
        .raw("application/json", " ")
        .send()
        .await
        .problem(400, "INVALID_ARGUMENT");
    assert_eq!(s.get_task("q", "t").await["state"], "queued");
    let claimed = s.post_empty("/v1/queues/q/tasks:claim").await.ok(200).json["tasks"].clone();
    assert_eq!(claimed.as_array().unwrap().len(), 1, "{claimed}");
    assert_eq!(claimed[0]["task_id"], "t");
    s.post_empty("/v1/queues/q/tasks:redrive").await.ok(200);
}

/// `tasks:end` reports many ends in one call: a malformed item, or a queue
/// that cannot take them, refuses the whole call and changes nothing;
/// otherwise each end is answered as its own complete or fail would be, in
/// order, and sending the call again changes nothing.
async fn ends_reported_together_are_answered_one_by_one(s: Server) {
    pull_queue(&s, "q", json!({"retry_config": {"max_attempts": 1}})).await;
    for id in ["a", "b", "c", "d"] {
        s.post("/v1/queues/q/tasks", work(id)).await.ok(201);
    }
    let leased = claim(&s, "q", json!({"max_tasks": 4})).await;
    let ids: HashMap<String, String> = leased
        .iter()
        .map(|t| (t["task_id"].as_str().unwrap().to_string(), attempt_id(t)))
        .collect();
    let tokens: std::collections::HashSet<&String> = ids.values().collect();
    assert_eq!(
        tokens.len(),
        4,
        "each task of a claim has its own token: {ids:?}"
    );
    let end = |id: &str| json!({"task_id": id, "attempt_id": ids[id]});
    let path = "/v1/queues/q/tasks:end";

    let refused = [
        (json!({"ends": []}), "ends"),
        (json!({"ends": vec![end("a"); 101]}), "ends"),
        (
            json!({"ends": [end("a"), {"task_id": "b", "attempt_id": ids["b"], "result": 1, "error": "x"}]}),
            "ends[1].result",
        ),
        (
            json!({"ends": [end("a"), {"task_id": "b", "attempt_id": ids["b"], "error": "disk\u{0}full"}]}),
            "ends[1].error",
        ),
        (
            json!({"ends": [{"task_id": "a", "attempt_id": ids["a"], "result": {"blob": "x".repeat(64 * 1024)}}]}),
            "ends[0].result",
        ),
        (
            json!({"ends": [{"task_id": "no/such", "attempt_id": "x"}, end("a")]}),
            "ends[0].task_id",
        ),
    ];
    for (body, field) in refused {
        s.post(path, body).await.invalid(field);
    }
    s.post(path, json!({"ends": [end("a")], "atomic": true}))
        .await
        .problem(400, "INVALID_ARGUMENT");
    s.post("/v1/queues/nope/tasks:end", json!({"ends": [end("a")]}))
        .await
        .problem(404, "NOT_FOUND");
    s.create_queue("pushed").await;
    s.post("/v1/queues/pushed/tasks:end", json!({"ends": [end("a")]}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    for id in ["a", "b", "c", "d"] {
        let now = s.get_task("q", id).await;
        assert_eq!(now["state"], "running", "{id}: {now}");
        assert_eq!(now["lease"]["attempt_id"], json!(ids[id]));
    }

    let call = json!({"ends": [
        {"task_id": "a", "attempt_id": ids["a"], "result": {"n": 1}},
        {"task_id": "b", "attempt_id": ids["b"], "error": "mail server refused"},
        {"task_id": "c", "attempt_id": ids["d"]},
        {"task_id": "ghost", "attempt_id": ids["a"]},
        {"task_id": "a", "attempt_id": ids["a"], "error": "too late"},
    ]});
    let answer = s.post(path, call.clone()).await.ok(200).json.clone();
    let results = answer["results"].as_array().unwrap();
    let statuses: Vec<u64> = results
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 200, 409, 404, 409], "{answer}");
    assert_eq!(results[0]["task"]["state"], "succeeded");
    assert_eq!(results[0]["task"]["result"], json!({"n": 1}));
    assert_eq!(results[1]["task"]["state"], "failed");
    assert_eq!(
        results[1]["task"]["last_attempt"]["error"],
        "mail server refused"
    );
    assert_eq!(results[2]["problem"]["type"], "LEASE_LOST");
    assert_eq!(results[3]["problem"]["type"], "NOT_FOUND");
    // Of two ends of one task, the first holds.
    assert_eq!(results[4]["problem"]["type"], "LEASE_LOST");
    let a = s.get_task("q", "a").await;
    assert_eq!(
        (a["state"].as_str(), &a["result"]),
        (Some("succeeded"), &json!({"n": 1}))
    );
    for id in ["c", "d"] {
        let now = s.get_task("q", id).await;
        assert_eq!(now["state"], "running", "{id}: {now}");
        assert_eq!(now["lease"]["attempt_id"], json!(ids[id]));
    }

    // Sent again (a retry whose answer was lost): the ends that were
    // written answer as replays, the rest as before, and nothing changes.
    let again = s.post(path, call).await.ok(200).json.clone();
    let statuses: Vec<(u64, bool)> = again["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["status"].as_u64().unwrap(), r["replayed"] == true))
        .collect();
    assert_eq!(
        statuses,
        [
            (200, true),
            (200, true),
            (409, false),
            (404, false),
            (409, false)
        ],
        "{again}"
    );
    let a_again = s.get_task("q", "a").await;
    assert_eq!(a_again["finished_at"], a["finished_at"]);
    assert_eq!(a_again["attempt_count"], 1);

    // A person-only queue refuses a service's key for the whole call.
    pull_queue(&s, "approvals", json!({"person_only": true})).await;
    s.post("/v1/queues/approvals/tasks", work("t"))
        .await
        .ok(201);
    let (_, service) = principal(&s, "service", "writer").await;
    let (_, person) = principal(&s, "person", "writer").await;
    // The person claims it: only the holder may end it.
    let t = s
        .with_key(&person)
        .post("/v1/queues/approvals/tasks:claim", json!({}))
        .await
        .ok(200)
        .json["tasks"][0]
        .clone();
    let approve = json!({"ends": [{"task_id": "t", "attempt_id": attempt_id(&t)}]});
    s.with_key(&service)
        .post("/v1/queues/approvals/tasks:end", approve.clone())
        .await
        .problem(403, "USER_IDENTITY_REQUIRED");
    assert_eq!(s.get_task("approvals", "t").await["state"], "running");
    let by_person = s
        .with_key(&person)
        .post("/v1/queues/approvals/tasks:end", approve)
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(by_person["results"][0]["status"], 200, "{by_person}");
    assert_eq!(s.get_task("approvals", "t").await["state"], "succeeded");
}

/// idem-client's worker loop reports its ends with `tasks:end`: a handler's
/// `Ok` completes the task with its result, its `Err` fails it with the
/// text.
async fn the_worker_loop_completes_and_fails_what_its_handler_says(s: Server) {
    pull_queue(&s, "q", json!({"retry_config": {"max_attempts": 1}})).await;
    for i in 0..10 {
        s.post("/v1/queues/q/tasks", work(&format!("t{i}")))
            .await
            .ok(201);
    }
    let client = s.client();
    let options = idem_client::ClaimOptions {
        max_tasks: 10,
        ..Default::default()
    };
    let n = client
        .work_batch("q", &options, |task| async move {
            let i: u32 = task.task_id[1..].parse().unwrap();
            if i.is_multiple_of(2) {
                let result = serde_json::value::to_raw_value(&json!({"i": i})).unwrap();
                Ok(Some(result))
            } else {
                // The odd ones finish later than the even ones: their ends
                // go in a call of their own.
                tokio::time::sleep(Duration::from_millis(200)).await;
                Err(format!("odd {i}"))
            }
        })
        .await
        .unwrap();
    assert_eq!(n, 10);
    for i in 0..10 {
        let t = s.get_task("q", &format!("t{i}")).await;
        if i % 2 == 0 {
            assert_eq!(t["state"], "succeeded", "{t}");
            assert_eq!(t["result"], json!({"i": i}));
        } else {
            assert_eq!(t["state"], "failed", "{t}");
            assert_eq!(t["last_attempt"]["error"], format!("odd {i}"));
        }
    }
}

/// Concurrent claims of one queue are gathered on the node (one claim for
/// the claims that waited, its tasks dealt out): each gets at most what it
/// asked for, no task goes to two claims, every lease is the caller's with
/// a token of its own, and claims of a queue that cannot be claimed each
/// hear why.
async fn concurrent_claims_share_the_due_tasks_without_overlap(s: Server) {
    pull_queue(&s, "q", json!({})).await;
    let tasks: Vec<Value> = (0..60).map(|i| work(&format!("t{i:02}"))).collect();
    s.post("/v1/queues/q/tasks:batch", json!({"tasks": tasks}))
        .await
        .ok(200);
    let mut claims = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let api = s.admin.clone();
        claims.spawn(async move {
            let answer = api
                .post("/v1/queues/q/tasks:claim", json!({"max_tasks": 5}))
                .await;
            answer.ok(200);
            answer.json["tasks"].as_array().unwrap().clone()
        });
    }
    let answers = claims.join_all().await;
    let mut ids = std::collections::HashSet::new();
    let mut tokens = std::collections::HashSet::new();
    for tasks in &answers {
        assert!(tasks.len() <= 5, "a claim took {} tasks", tasks.len());
        for t in tasks {
            assert!(
                ids.insert(t["task_id"].clone()),
                "{} claimed twice",
                t["task_id"]
            );
            assert!(tokens.insert(attempt_id(t)), "a token given twice");
            assert_eq!(t["state"], "running");
            assert_eq!(t["lease"]["claimant"], "admin");
        }
        // Each claim's share is in schedule order.
        // As instants, not as text (fractional digits vary).
        let times: Vec<jiff::Timestamp> = tasks
            .iter()
            .map(|t| t["schedule_time"].as_str().unwrap().parse().unwrap())
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    }
    // 16 claims of 5 ask for 80 of the 60 due tasks: all 60 are taken.
    assert_eq!(ids.len(), 60);
    assert_eq!(s.get_queue("q").await["stats"]["tasks"]["running"], 60);

    s.create_queue("pushed").await;
    for (queue, status, code) in [
        ("nope", 404, "NOT_FOUND"),
        ("pushed", 409, "FAILED_PRECONDITION"),
    ] {
        let mut claims = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let api = s.admin.clone();
            let path = format!("/v1/queues/{queue}/tasks:claim");
            claims.spawn(async move { api.post(&path, json!({"max_tasks": 2})).await });
        }
        for answer in claims.join_all().await {
            answer.problem(status, code);
        }
    }
}

idem_testkit::store_tests!(
    Server::start;
    pull_tasks_carry_a_payload_and_no_target,
    batches_and_uploads_create_pull_tasks,
    claims_take_due_tasks_in_schedule_order_and_validate_their_bounds,
    a_retried_claim_is_already_claimed_and_the_task_shows_its_holder,
    heartbeat_release_reassign_assign_and_lost_leases,
    a_lease_is_its_holders_and_a_repeated_end_replays,
    a_dead_workers_task_is_claimed_again_after_its_lease_with_the_attempt_counted,
    a_long_poll_returns_as_soon_as_a_task_is_created,
    a_person_only_queue_takes_completions_from_persons_only,
    callbacks_fire_for_pull_completions,
    two_workers_racing_for_1000_tasks_complete_each_exactly_once,
    a_shell_script_can_be_a_worker,
    a_rejected_end_names_its_field_and_leaves_the_lease,
    a_body_that_may_be_left_out_is_absent_or_json,
    ends_reported_together_are_answered_one_by_one,
    the_worker_loop_completes_and_fails_what_its_handler_says,
    concurrent_claims_share_the_due_tasks_without_overlap,
);
