//! Idempotency-Key on Idem's own API (API.md §2), against the real binary on
//! both stores.

use crate::harness;
use crate::harness::{Api, Backend, Backing, Server, unique};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

fn tasks_path(queue: &str) -> String {
    format!("/v1/queues/{queue}/tasks")
}

async fn keyed_post(api: &Api, path: &str, key: &str, body: &Value) -> harness::Resp {
    api.request(Method::POST, path)
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
}

fn replayed(r: &harness::Resp) -> bool {
    r.header("idempotent-replayed") == Some("true")
}

async fn replay_returns_the_original_status_and_the_resource_as_it_is_now(s: Server) {
    let api = s.admin.clone();
    let name = unique("q");
    let body = json!({"name": name, "dedup_window_s": 60});
    let first = keyed_post(&api, "/v1/queues", "create-q", &body).await;
    first.ok(201);
    assert!(!replayed(&first), "the original answer is not marked");
    api.patch(
        &format!("/v1/queues/{name}"),
        json!({"dedup_window_s": 120}),
    )
    .await
    .ok(200);
    let again = keyed_post(&api, "/v1/queues", "create-q", &body).await;
    again.ok(201);
    assert!(replayed(&again));
    assert_eq!(
        again.json["dedup_window_s"], 120,
        "re-read, not a stored copy"
    );
    assert_eq!(
        again.header("location"),
        Some(format!("/v1/queues/{name}").as_str())
    );
    assert_eq!(api.collect_pages("/v1/queues").await.len(), 1);
}

async fn a_task_create_retried_with_its_key_is_created_once(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    api.create_queue(&q).await;
    // No task ID: without the key every retry would create a new task.
    let body = json!({"target": {"url": "http://127.0.0.1:9/x", "json": {"amount": 100}}});
    let first = keyed_post(&api, &tasks_path(&q), "pay-1", &body).await;
    first.ok(201);
    let retry = keyed_post(&api, &tasks_path(&q), "pay-1", &body).await;
    retry.ok(201);
    assert!(replayed(&retry));
    assert_eq!(retry.json["task_id"], first.json["task_id"]);
    assert_eq!(retry.header("location"), first.header("location"));
    assert_eq!(api.all_tasks(&q, "").await.len(), 1);
}

async fn mismatch_is_422_naming_what_differs(s: Server) {
    let api = s.admin.clone();
    let (q1, q2) = (unique("q"), unique("q"));
    api.create_queue(&q1).await;
    api.create_queue(&q2).await;
    let body = json!({"task_id": "a", "target": {"url": "http://127.0.0.1:9/x", "json": {"n": 1}}});
    keyed_post(&api, &tasks_path(&q1), "k", &body).await.ok(201);

    let other_body =
        json!({"task_id": "a", "target": {"url": "http://127.0.0.1:9/x", "json": {"n": 2}}});
    let r = keyed_post(&api, &tasks_path(&q1), "k", &other_body).await;
    r.problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    assert_eq!(
        r.json["extensions"]["idempotency"]["differs"],
        json!(["body"])
    );

    let r = keyed_post(&api, &tasks_path(&q2), "k", &body).await;
    r.problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    assert_eq!(
        r.json["extensions"]["idempotency"]["differs"],
        json!(["path"])
    );

    let r = api
        .request(Method::POST, &format!("{}?wait_ms=5", tasks_path(&q1)))
        .header("Idempotency-Key", "k")
        .json(&body)
        .send()
        .await;
    r.problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    assert_eq!(
        r.json["extensions"]["idempotency"]["differs"],
        json!(["query"])
    );
    assert_eq!(
        api.all_tasks(&q2, "").await.len(),
        0,
        "a mismatch executes nothing"
    );
}

async fn json_is_compared_as_a_document_but_numbers_as_written(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    api.create_queue(&q).await;
    let path = tasks_path(&q);
    let send = |text: &'static str| {
        let api = api.clone();
        let path = path.clone();
        async move {
            api.request(Method::POST, &path)
                .header("Idempotency-Key", "doc")
                .raw("application/json", text)
                .send()
                .await
        }
    };
    send(r#"{"task_id":"t","target":{"url":"http://127.0.0.1:9/x","json":{"amount":1.0,"currency":"EUR"}}}"#)
        .await
        .ok(201);
    // Other key order, whitespace and escapes: the same request.
    let same = send(
        "{ \"target\" : {\"json\": {\"currency\":\"\\u0045UR\", \"amount\":1.0}, \"url\":\"http:\\/\\/127.0.0.1:9\\/x\"},\n \"task_id\":\"t\" }",
    )
    .await;
    same.ok(201);
    assert!(replayed(&same));
    // 1 is not 1.0.
    let respelled = send(r#"{"task_id":"t","target":{"url":"http://127.0.0.1:9/x","json":{"amount":1,"currency":"EUR"}}}"#).await;
    respelled.problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    let duplicate =
        send(r#"{"task_id":"t","task_id":"u","target":{"url":"http://127.0.0.1:9/x"}}"#).await;
    duplicate.problem(400, "INVALID_ARGUMENT");
}

async fn invalid_keys_are_refused_and_nothing_runs(s: Server) {
    let api = s.admin.clone();
    let long = "k".repeat(256);
    for key in ["", "a,b", long.as_str(), "\"unterminated"] {
        let name = unique("q");
        let r = api
            .request(Method::POST, "/v1/queues")
            .header("Idempotency-Key", key)
            .json(&json!({"name": name}))
            .send()
            .await;
        r.problem(400, "IDEMPOTENCY_KEY_INVALID");
        api.get(&format!("/v1/queues/{name}"))
            .await
            .problem(404, "NOT_FOUND");
    }
    // Sent twice.
    let name = unique("q");
    let r = api
        .request(Method::POST, "/v1/queues")
        .header("Idempotency-Key", "a")
        .header("Idempotency-Key", "b")
        .json(&json!({"name": name}))
        .send()
        .await;
    r.problem(400, "IDEMPOTENCY_KEY_INVALID");
    // The structured-fields string form is the same key as the bare one.
    let name = unique("q");
    let body = json!({"name": name});
    keyed_post(&api, "/v1/queues", "\"quoted\"", &body)
        .await
        .ok(201);
    let bare = keyed_post(&api, "/v1/queues", "quoted", &body).await;
    bare.ok(201);
    assert!(replayed(&bare));
    // Ignored where it does not apply: a GET with a malformed key is fine.
    api.request(Method::GET, "/v1/queues")
        .header("Idempotency-Key", "")
        .send()
        .await
        .ok(200);
}

async fn failures_leave_no_record(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    let body = json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/x"}});
    keyed_post(&api, &tasks_path(&q), "retry-me", &body)
        .await
        .problem(404, "NOT_FOUND");
    api.get("/v1/idempotency-keys/retry-me")
        .await
        .problem(404, "NOT_FOUND");
    api.create_queue(&q).await;
    let fixed = keyed_post(&api, &tasks_path(&q), "retry-me", &body).await;
    fixed.ok(201);
    assert!(!replayed(&fixed), "the fixed request executes");
}

async fn keys_belong_to_their_principal(s: Server) {
    let admin = s.admin.clone();
    let q = unique("q");
    admin.create_queue(&q).await;
    let w1 = s.with_key(&admin.key_with_role("writer").await);
    let w2 = s.with_key(&admin.key_with_role("writer").await);
    let body = json!({"target": {"url": "http://127.0.0.1:9/x"}});
    let a = keyed_post(&w1, &tasks_path(&q), "shared", &body).await;
    let b = keyed_post(&w2, &tasks_path(&q), "shared", &body).await;
    a.ok(201);
    b.ok(201);
    assert!(!replayed(&b));
    assert_ne!(a.json["task_id"], b.json["task_id"]);
    let seen = w1.get("/v1/idempotency-keys/shared").await;
    seen.ok(200);
    assert_eq!(seen.json["state"], "completed");
    assert_eq!(seen.json["status"], 201);
    assert_eq!(seen.json["resource"]["kind"], "task");
    assert!(seen.json["expires_at"].is_string());
    s.admin
        .clone()
        .get("/v1/idempotency-keys/shared")
        .await
        .problem(404, "NOT_FOUND");
}

async fn concurrent_requests_with_one_key_execute_once(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    api.create_queue(&q).await;
    let body = json!({"target": {"url": "http://127.0.0.1:9/x"}});
    let runs: Vec<_> = (0..32)
        .map(|_| {
            let (api, path, body) = (api.clone(), tasks_path(&q), body.clone());
            tokio::spawn(async move { keyed_post(&api, &path, "once", &body).await })
        })
        .collect();
    let (mut originals, mut replays, mut busy) = (0, 0, 0);
    for r in runs {
        let r = r.await.unwrap();
        match r.status {
            201 if replayed(&r) => replays += 1,
            201 => originals += 1,
            409 => {
                r.problem(409, "IDEMPOTENCY_KEY_IN_PROGRESS");
                assert_eq!(r.header("retry-after"), Some("1"));
                busy += 1;
            }
            other => panic!("unexpected {other}: {}", r.text),
        }
    }
    assert_eq!(originals, 1, "replays {replays}, busy {busy}");
    assert_eq!(api.all_tasks(&q, "").await.len(), 1);
}

/// A create refused for its task ID records nothing: the key stays free for
/// another request.
async fn a_refused_create_leaves_its_key_reusable(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    api.create_queue(&q).await;
    let taken = json!({"task_id": "taken", "target": {"url": "http://127.0.0.1:9/x"}});
    api.post(&tasks_path(&q), taken.clone()).await.ok(201);
    keyed_post(&api, &tasks_path(&q), "dup", &taken)
        .await
        .problem(409, "TASK_ALREADY_EXISTS");
    api.get("/v1/idempotency-keys/dup")
        .await
        .problem(404, "NOT_FOUND");
    let other = json!({"task_id": "free", "target": {"url": "http://127.0.0.1:9/x"}});
    let r = keyed_post(&api, &tasks_path(&q), "dup", &other).await;
    r.ok(201);
    assert!(!replayed(&r));
}

/// A create refused before it reaches the store (a body that does not
/// validate) under a key already used answers from that key's record, as
/// when the record was looked at first.
async fn a_refused_request_under_a_used_key_answers_from_its_record(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    api.create_queue(&q).await;
    let body = json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/x"}});
    keyed_post(&api, &tasks_path(&q), "used", &body)
        .await
        .ok(201);
    let invalid = json!({"task_id": "t", "target": {"url": "not a url"}});
    let r = keyed_post(&api, &tasks_path(&q), "used", &invalid).await;
    r.problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    assert_eq!(
        r.json["extensions"]["idempotency"]["differs"],
        json!(["body"])
    );
    // Unused, the same key is the body's own error.
    keyed_post(&api, &tasks_path(&q), "unused", &invalid)
        .await
        .problem(400, "INVALID_ARGUMENT");
}

/// A create and another route sending one key at once: exactly one of the
/// two runs, the other is told the key is in use (409) or was used for
/// another request (422).
async fn a_create_and_another_route_racing_for_one_key_execute_once(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    api.create_queue(&q).await;
    let rounds = 16;
    let runs: Vec<_> = (0..rounds)
        .map(|i| {
            let api = api.clone();
            let path = tasks_path(&q);
            let key = format!("race-{i}");
            let name = format!("{q}-{i}");
            tokio::spawn(async move {
                let task =
                    json!({"task_id": format!("t{i}"), "target": {"url": "http://127.0.0.1:9/x"}});
                let named = json!({"name": name});
                let create = keyed_post(&api, &path, &key, &task);
                let queue = keyed_post(&api, "/v1/queues", &key, &named);
                let (a, b) = tokio::join!(create, queue);
                (a.status, b.status)
            })
        })
        .collect();
    for (i, r) in runs.into_iter().enumerate() {
        let (task, queue) = r.await.unwrap();
        let ran = [task, queue].iter().filter(|s| **s == 201).count();
        assert_eq!(ran, 1, "round {i}: task {task}, queue {queue}");
        for status in [task, queue] {
            assert!([201, 409, 422].contains(&status), "round {i}: {status}");
        }
        let task_exists = api.get(&format!("{}/t{i}", tasks_path(&q))).await.status == 200;
        let queue_exists = api.get(&format!("/v1/queues/{q}-{i}")).await.status == 200;
        assert_eq!((task_exists, queue_exists), (task == 201, queue == 201));
    }
}

async fn replay_does_not_recheck_the_write(s: Server) {
    let admin = s.admin.clone();
    let q = unique("q");
    admin.create_queue(&q).await;
    let name = unique("svc");
    admin
        .post(
            "/v1/principals",
            json!({"name": name, "kind": "service", "role": "writer"}),
        )
        .await
        .ok(201);
    let key = admin
        .post_empty(&format!("/v1/principals/{name}/keys"))
        .await
        .ok(201)
        .json["key"]
        .as_str()
        .unwrap()
        .to_string();
    let writer = s.with_key(&key);
    let body = json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/x"}});
    keyed_post(&writer, &tasks_path(&q), "w", &body)
        .await
        .ok(201);
    admin
        .patch(&format!("/v1/principals/{name}"), json!({"role": "reader"}))
        .await
        .ok(200);
    let replay = keyed_post(&writer, &tasks_path(&q), "w", &body).await;
    replay.ok(201);
    assert!(
        replayed(&replay),
        "a reader still gets its earlier write's answer"
    );
    // A new write is refused.
    keyed_post(&writer, &tasks_path(&q), "w2", &body)
        .await
        .problem(403, "PERMISSION_DENIED");
}

async fn replay_of_a_deleted_resource_is_gone(s: Server) {
    let api = s.admin.clone();
    let name = unique("q");
    let body = json!({"name": name});
    keyed_post(&api, "/v1/queues", "gone", &body).await.ok(201);
    api.delete(&format!("/v1/queues/{name}")).await.ok(204);
    let r = keyed_post(&api, "/v1/queues", "gone", &body).await;
    r.problem(410, "IDEMPOTENT_RESOURCE_GONE");
    assert_eq!(
        r.json["extensions"]["idempotency"],
        json!({"resource_kind": "queue", "resource_id": name})
    );
}

/// A resource deleted and made again under the same name is another
/// resource: the old key answers 410, never the newcomer.
async fn a_replay_never_names_a_resource_made_again_under_the_same_name(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    keyed_post(&api, "/v1/queues", "q-old", &json!({"name": q}))
        .await
        .ok(201);
    api.delete(&format!("/v1/queues/{q}")).await.ok(204);
    api.post("/v1/queues", json!({"name": q})).await.ok(201);
    keyed_post(&api, "/v1/queues", "q-old", &json!({"name": q}))
        .await
        .problem(410, "IDEMPOTENT_RESOURCE_GONE");

    let j = unique("j");
    let job = json!({"name": j, "schedule": "0 0 1 1 *", "target": {"url": "http://127.0.0.1:9/"}});
    keyed_post(&api, "/v1/jobs", "j-old", &job).await.ok(201);
    api.delete(&format!("/v1/jobs/{j}")).await.ok(204);
    api.post("/v1/jobs", job.clone()).await.ok(201);
    keyed_post(&api, "/v1/jobs", "j-old", &job)
        .await
        .problem(410, "IDEMPOTENT_RESOURCE_GONE");

    // A task ID reused after its window is another task.
    let tq = unique("q");
    api.post("/v1/queues", json!({"name": tq, "dedup_window_s": 0}))
        .await
        .ok(201);
    let task = json!({"task_id": "t", "schedule_time": "2099-01-01T00:00:00Z",
                      "target": {"url": "http://127.0.0.1:9/"}});
    let path = format!("/v1/queues/{tq}/tasks");
    keyed_post(&api, &path, "t-old", &task).await.ok(201);
    api.delete(&format!("/v1/queues/{tq}/tasks/t"))
        .await
        .ok(200);
    api.post(&path, task.clone()).await.ok(201);
    keyed_post(&api, &path, "t-old", &task)
        .await
        .problem(410, "IDEMPOTENT_RESOURCE_GONE");
}

/// A lost answer to a secret-bearing creation is recoverable: the same
/// caller, key and request get the same secret again while the record
/// lives, and the record's inspection never shows it.
async fn a_retried_secret_bearing_creation_gets_the_same_secret(s: Server) {
    let api = s.admin.clone();
    let p = unique("p");
    api.post(
        "/v1/principals",
        json!({"name": p, "kind": "service", "role": "reader"}),
    )
    .await
    .ok(201);
    let path = format!("/v1/principals/{p}/keys");
    let first = keyed_post(&api, &path, "k-secret", &Value::Null).await;
    first.ok(201);
    let again = keyed_post(&api, &path, "k-secret", &Value::Null).await;
    again.ok(201);
    assert!(replayed(&again));
    assert_eq!(again.json, first.json, "the same key, id and metadata");
    let key = first.json["key"].as_str().unwrap();
    let location = first.header("location").unwrap().to_string();
    let read = api.get(&location).await;
    read.ok(200);
    assert_eq!(read.json["id"], first.json["id"]);
    assert!(read.json.get("key").is_none(), "a read never shows the key");
    let record = api.get("/v1/idempotency-keys/k-secret").await;
    record.ok(200);
    assert!(
        !record.text.contains(key),
        "the record's inspection shows no secret"
    );
    // Revoked, the key is gone, and so is its replay.
    api.delete(&location).await.ok(204);
    keyed_post(&api, &path, "k-secret", &Value::Null)
        .await
        .problem(410, "IDEMPOTENT_RESOURCE_GONE");

    let org = json!({"name": unique("org")});
    let first = keyed_post(&api, "/v1/organizations", "o-secret", &org).await;
    first.ok(201);
    assert_eq!(first.header("location"), None);
    let again = keyed_post(&api, "/v1/organizations", "o-secret", &org).await;
    again.ok(201);
    assert!(replayed(&again));
    assert_eq!(again.json, first.json);

    let rotated = keyed_post(&api, "/v1/signing-secrets/rotate", "s-1", &Value::Null).await;
    rotated.ok(201);
    let read = api.get(rotated.header("location").unwrap()).await;
    read.ok(200);
    assert_eq!(read.json, rotated.json);
}

async fn every_keyed_operation_replays(s: Server) {
    let api = s.admin.clone();
    let q = unique("q");
    let p = unique("p");
    let j = unique("j");
    let ops: Vec<(&str, String, Value, u16)> = vec![
        ("POST", "/v1/queues".into(), json!({"name": q}), 201),
        (
            "PATCH",
            format!("/v1/queues/{q}"),
            json!({"dedup_window_s": 5}),
            200,
        ),
        ("POST", format!("/v1/queues/{q}/pause"), Value::Null, 200),
        ("POST", format!("/v1/queues/{q}/resume"), Value::Null, 200),
        (
            "POST",
            format!("/v1/queues/{q}/tasks"),
            json!({"task_id": "t", "schedule_time": "2099-01-01T00:00:00Z", "target": {"url": "http://127.0.0.1:9/"}}),
            201,
        ),
        (
            "POST",
            format!("/v1/queues/{q}/tasks/t/run"),
            Value::Null,
            200,
        ),
        ("POST", format!("/v1/queues/{q}/purge"), Value::Null, 200),
        (
            "POST",
            "/v1/principals".into(),
            json!({"name": p, "kind": "person", "role": "reader"}),
            201,
        ),
        (
            "PATCH",
            format!("/v1/principals/{p}"),
            json!({"role": "writer"}),
            200,
        ),
        ("POST", format!("/v1/principals/{p}/keys"), Value::Null, 201),
        (
            "POST",
            "/v1/signing-secrets/rotate".into(),
            Value::Null,
            201,
        ),
        (
            "POST",
            "/v1/organizations".into(),
            json!({"name": unique("org")}),
            201,
        ),
        (
            "POST",
            "/v1/jobs".into(),
            json!({"name": j, "schedule": "0 0 1 1 *", "target": {"url": "http://127.0.0.1:9/"}}),
            201,
        ),
        (
            "PATCH",
            format!("/v1/jobs/{j}"),
            json!({"schedule": "0 0 2 1 *"}),
            200,
        ),
        ("POST", format!("/v1/jobs/{j}/pause"), Value::Null, 200),
        ("POST", format!("/v1/jobs/{j}/resume"), Value::Null, 200),
        ("POST", format!("/v1/jobs/{j}/run"), Value::Null, 201),
    ];
    for (i, (method, path, body, status)) in ops.into_iter().enumerate() {
        let key = format!("op-{i}");
        let send = || {
            let mut req = api
                .request(Method::from_bytes(method.as_bytes()).unwrap(), &path)
                .header("Idempotency-Key", &key);
            if !body.is_null() {
                req = req.json(&body);
            }
            req.send()
        };
        let first = send().await;
        first.ok(status);
        let again = send().await;
        again.ok(status);
        assert!(
            replayed(&again),
            "{method} {path} did not replay: {}",
            again.text
        );
        if path.ends_with("/purge") {
            assert_eq!(again.json, first.json, "a purge replays its count");
        }
    }
    // The replays changed nothing: one rotation, one key created.
    let secrets = api.get("/v1/signing-secrets").await.ok(200).json["secrets"].clone();
    assert_eq!(secrets.as_array().unwrap().len(), 2);
    let keys = api.collect_pages(&format!("/v1/principals/{p}/keys")).await;
    assert_eq!(keys.len(), 1);
    let runs = api.collect_pages(&format!("/v1/jobs/{j}/runs")).await;
    assert_eq!(runs.len(), 1, "one manual run, replayed once");
}

async fn a_required_key_is_enforced(kind: Backend) {
    let s = Server::start_with(kind, &["--require-idempotency-key"]).await;
    let api = s.admin.clone();
    api.post("/v1/queues", json!({"name": unique("q")}))
        .await
        .problem(400, "IDEMPOTENCY_KEY_MISSING");
    api.get("/v1/queues").await.ok(200);
    keyed_post(&api, "/v1/queues", "k", &json!({"name": unique("q")}))
        .await
        .ok(201);
}

async fn records_expire_after_the_ttl(kind: Backend) {
    let s = Server::start_with(kind, &["--idempotency-ttl", "1s"]).await;
    let api = s.admin.clone();
    keyed_post(&api, "/v1/queues", "short", &json!({"name": unique("q")}))
        .await
        .ok(201);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Past retention the key is free: another request with it executes.
    let r = keyed_post(&api, "/v1/queues", "short", &json!({"name": unique("q")})).await;
    r.ok(201);
    assert!(!replayed(&r));
}

/// `--cors-origin '*'` starts (it used to panic) and allows any origin,
/// without credentials: the API authenticates by bearer key, not cookie.
async fn any_origin_is_allowed_with_a_star(kind: Backend) {
    let s = Server::start_with(kind, &["--cors-origin", "*"]).await;
    let r = s
        .anonymous()
        .request(Method::OPTIONS, "/v1/queues")
        .header("Origin", "https://anywhere.example")
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "idempotency-key")
        .send()
        .await;
    assert!(r.status == 200 || r.status == 204, "{}", r.text);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.header("access-control-allow-credentials"), None);
}

async fn browsers_may_send_keys_and_read_replays(kind: Backend) {
    let s = Server::start_with(kind, &["--cors-origin", "https://app.example"]).await;
    let r = s
        .anonymous()
        .request(Method::OPTIONS, "/v1/queues")
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "idempotency-key, authorization",
        )
        .send()
        .await;
    assert!(r.status == 200 || r.status == 204, "{}", r.text);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let allowed = r
        .header("access-control-allow-headers")
        .unwrap_or("")
        .to_lowercase();
    for h in [
        "idempotency-key",
        "idem-task-id",
        "x-fc-stateful-async-invocation-id",
        "x-fc-request-id",
    ] {
        assert!(allowed.contains(h), "{h} not in {allowed}");
    }
    let get = s
        .admin
        .request(Method::GET, "/v1/queues")
        .header("Origin", "https://app.example")
        .send()
        .await;
    let exposed = get
        .header("access-control-expose-headers")
        .unwrap_or("")
        .to_lowercase();
    for h in [
        "idempotent-replayed",
        "retry-after",
        "location",
        "idem-request-id",
    ] {
        assert!(exposed.contains(h), "{h} not exposed: {exposed}");
    }
}

/// Kills the server with SIGKILL while keyed creates are in flight, restarts
/// it, and retries every request with its key: each key yields exactly one
/// task, and every request that had been answered 201 replays.
async fn crash_between_effect_and_record_is_impossible(kind: Backend) {
    let backing = Backing::new(kind).await;
    let key = harness::fresh_key();
    let s = Server::start_on(backing, key.clone(), &[]).await;
    let q = unique("q");
    s.admin.clone().create_queue(&q).await;
    let api = s.admin.clone();
    let total = 200;
    let body = json!({"target": {"url": "http://127.0.0.1:9/x"}});
    let runs: Vec<_> = (0..total)
        .map(|i| {
            let (api, path, body) = (api.clone(), tasks_path(&q), body.clone());
            tokio::spawn(async move {
                let r = api
                    .request(Method::POST, &path)
                    .header("Idempotency-Key", &format!("crash-{i}"))
                    .json(&body)
                    .try_send()
                    .await;
                r.ok()
                    .filter(|r| r.status == 201)
                    .map(|r| r.json["task_id"].clone())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let (backing, key) = s.kill().await;
    let mut answered = Vec::new();
    for r in runs {
        answered.push(r.await.unwrap());
    }
    let s = Server::start_on(backing, key, &[]).await;
    let api = s.admin.clone();
    for (i, first) in answered.iter().enumerate() {
        // A create's key is written only by the commit that holds its task:
        // a request cut off before it leaves nothing that blocks the retry.
        let r = keyed_post(&api, &tasks_path(&q), &format!("crash-{i}"), &body).await;
        r.ok(201);
        if let Some(id) = first {
            assert!(
                replayed(&r),
                "request {i} was answered 201 but did not replay"
            );
            assert_eq!(&r.json["task_id"], id);
        }
    }
    let tasks = api.all_tasks(&q, "").await;
    assert_eq!(tasks.len(), total, "one task per key, no more, no less");
}

/// Keyed creates on two nodes sharing one database: one execution per key,
/// whatever node each request reaches; a key held in progress by a request
/// on another node (its lock row) is 409 to the same request and 422 to
/// another, until that lock runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_creates_on_two_nodes_execute_once() {
    let nodes = harness::TwoNodes::start().await;
    let q = unique("q");
    nodes.apis[0].create_queue(&q).await;
    let body = json!({"target": {"url": "http://127.0.0.1:9/x"}});
    let runs: Vec<_> = (0..32)
        .map(|i| {
            let (api, path, body) = (nodes.apis[i % 2].clone(), tasks_path(&q), body.clone());
            tokio::spawn(async move { keyed_post(&api, &path, "once", &body).await })
        })
        .collect();
    let mut originals = 0;
    for r in runs {
        let r = r.await.unwrap();
        match r.status {
            201 if replayed(&r) => {}
            201 => originals += 1,
            409 => {
                r.problem(409, "IDEMPOTENCY_KEY_IN_PROGRESS");
            }
            other => panic!("unexpected {other}: {}", r.text),
        }
    }
    assert_eq!(originals, 1);
    assert_eq!(nodes.apis[1].all_tasks(&q, "").await.len(), 1);

    // Another node's request in flight, as its lock row shows it.
    let (db, conn) = tokio_postgres::connect(nodes.database_url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    db.execute(
        "INSERT INTO idempotency_keys (org, principal, key, fingerprint, state, token, \
         created_at, locked_until, expires_at) \
         SELECT org, principal, 'held', fingerprint, 'in_progress', 'elsewhere', created_at, \
         (extract(epoch FROM clock_timestamp()) * 1e6)::bigint + 3600000000, \
         (extract(epoch FROM clock_timestamp()) * 1e6)::bigint + 7200000000 \
         FROM idempotency_keys WHERE key = 'once'",
        &[],
    )
    .await
    .unwrap();
    for api in &nodes.apis {
        let r = keyed_post(api, &tasks_path(&q), "held", &body).await;
        r.problem(409, "IDEMPOTENCY_KEY_IN_PROGRESS");
        assert_eq!(r.header("retry-after"), Some("1"));
        let other = json!({"task_id": "other", "target": {"url": "http://127.0.0.1:9/x"}});
        keyed_post(api, &tasks_path(&q), "held", &other)
            .await
            .problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    }
    assert_eq!(nodes.apis[0].all_tasks(&q, "").await.len(), 1);
    // The holder never finished: its lock runs out, and the key is free.
    db.execute(
        "UPDATE idempotency_keys SET locked_until = 0 WHERE key = 'held'",
        &[],
    )
    .await
    .unwrap();
    let r = keyed_post(&nodes.apis[1], &tasks_path(&q), "held", &body).await;
    r.ok(201);
    assert!(!replayed(&r));
    assert_eq!(nodes.apis[0].all_tasks(&q, "").await.len(), 2);
}

/// Keyed creates of one task ID sent at once from many clients, among
/// creates of IDs of their own (so that the batches they share hold
/// others): one creates the task and every other answers 409, each other
/// create is made, and every key then replays what it answered (a 409
/// leaves no record: sent again, it answers 409 again).
async fn keyed_creates_racing_for_one_id_settle_each_one(s: Server) {
    let q = unique("q");
    s.admin.create_queue(&q).await;
    for round in 0..10 {
        let mut sent = tokio::task::JoinSet::new();
        for i in 0..32 {
            let api = s.admin.clone();
            let path = tasks_path(&q);
            let id = if i % 2 == 0 {
                format!("dup{round}")
            } else {
                format!("own{round}-{i}")
            };
            let key = format!("k{round}-{i}");
            sent.spawn(async move {
                let body = json!({"task_id": id, "target": {"url": "http://127.0.0.1:9/x"}});
                let first = keyed_post(&api, &path, &key, &body).await;
                (id, key, body, first.status)
            });
        }
        let answers = sent.join_all().await;
        let dup = format!("dup{round}");
        let won: Vec<_> = answers
            .iter()
            .filter(|a| a.0 == dup && a.3 == 201)
            .collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: {:?}",
            answers.iter().map(|a| a.3).collect::<Vec<_>>()
        );
        for (id, key, body, status) in &answers {
            let want = if id == &dup && status != &201 {
                409
            } else {
                201
            };
            assert_eq!(*status, want, "round {round}: {id} under {key}");
            let again = keyed_post(&s.admin, &tasks_path(&q), key, body).await;
            again.ok(want);
            assert_eq!(replayed(&again), want == 201, "{id} under {key}");
        }
    }
    assert_eq!(s.admin.all_tasks(&q, "").await.len(), 10 * 17);
}

idem_testkit::store_tests!(
    Server::start;
    replay_returns_the_original_status_and_the_resource_as_it_is_now,
    a_task_create_retried_with_its_key_is_created_once,
    mismatch_is_422_naming_what_differs,
    json_is_compared_as_a_document_but_numbers_as_written,
    invalid_keys_are_refused_and_nothing_runs,
    failures_leave_no_record,
    keys_belong_to_their_principal,
    concurrent_requests_with_one_key_execute_once,
    a_refused_create_leaves_its_key_reusable,
    a_refused_request_under_a_used_key_answers_from_its_record,
    a_create_and_another_route_racing_for_one_key_execute_once,
    replay_does_not_recheck_the_write,
    replay_of_a_deleted_resource_is_gone,
    a_replay_never_names_a_resource_made_again_under_the_same_name,
    a_retried_secret_bearing_creation_gets_the_same_secret,
    every_keyed_operation_replays,
    keyed_creates_racing_for_one_id_settle_each_one,
);

mod per_store {
    use super::*;
    idem_testkit::store_tests!(
        a_required_key_is_enforced,
        records_expire_after_the_ttl,
        browsers_may_send_keys_and_read_replays,
        any_origin_is_allowed_with_a_star,
        crash_between_effect_and_record_is_impossible,
    );
}
