//! Batch creates (API.md §3, "Batch create") through the binary, on both
//! stores: JSON and NDJSON bodies, per-item and all-or-nothing batches, the
//! size bounds, Idempotency-Key replays, `idem task create --from-file`,
//! durability across a SIGKILL, and the dispatcher woken only for work it
//! may claim.

use crate::harness::{Backend, Server, anonymous_task, command, task};
use reqwest::Method;
use serde_json::{Value, json};

fn statuses(answer: &Value) -> Vec<u64> {
    answer["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {answer}"))
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect()
}

fn error_fields(result: &Value) -> Vec<&str> {
    result["problem"]["extensions"]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no field errors in {result}"))
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect()
}

async fn task_ids(s: &Server, queue: &str) -> Vec<String> {
    let mut ids: Vec<String> = s
        .all_tasks(queue, "")
        .await
        .iter()
        .map(|t| t["task_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn ndjson(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Each item answered in request order: created, refused naming its own
/// fields under `tasks[i]`, or met by the task holding its ID (one made
/// before, or an earlier item); one commit made the created ones.
async fn a_json_batch_answers_each_item_in_order(s: Server) {
    s.create_paused_queue("q").await;
    let old = s.create_task("q", task("old")).await;
    let answer = s
        .post(
            "/v1/queues/q/tasks:batch",
            json!({"tasks": [
                task("a"),
                {"task_id": "b", "target": {"url": "ftp://example.com/"}},
                task("old"),
                task("a"),
                {"task_id": "c", "target": {"url": "http://127.0.0.1:9/"}, "bogus": 1},
                anonymous_task(),
            ]}),
        )
        .await;
    answer.ok(200);
    let answer = &answer.json;
    assert_eq!(statuses(answer), [201, 400, 409, 409, 400, 201]);
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results[0]["task"]["task_id"], "a");
    assert_eq!(results[0]["task"]["state"], "queued");
    assert_eq!(error_fields(&results[1]), ["tasks[1].target.url"]);
    assert_eq!(results[1]["problem"]["type"], "INVALID_ARGUMENT");
    assert_eq!(results[2]["problem"]["type"], "TASK_ALREADY_EXISTS");
    assert_eq!(results[2]["task"]["created_at"], old["created_at"]);
    assert_eq!(results[3]["problem"]["type"], "TASK_ALREADY_EXISTS");
    assert_eq!(results[3]["task"], results[0]["task"], "the earlier item");
    assert_eq!(error_fields(&results[4]), ["tasks[4].bogus"]);
    let generated = results[5]["task"]["task_id"].as_str().unwrap();
    assert!(crate::harness::is_uuid_v7(generated), "{generated}");
    // One instant for the batch: one commit.
    assert_eq!(
        results[0]["task"]["created_at"],
        results[5]["task"]["created_at"]
    );
    // Each item keeps its numbers' spelling, as a single create does.
    let exact = r#"{"tasks": [{"task_id": "exact",
        "target": {"url": "http://127.0.0.1:9/hook", "json": {"amount": 1.50}}}]}"#;
    s.request(Method::POST, "/v1/queues/q/tasks:batch")
        .raw("application/json", exact)
        .send()
        .await
        .ok(200);
    let stored = s.get("/v1/queues/q/tasks/exact").await;
    assert!(stored.text.contains("1.50"), "{}", stored.text);
    let mut expected = vec!["a", "exact", "old", generated];
    expected.sort();
    assert_eq!(task_ids(&s, "q").await, expected);
}

/// NDJSON: one task per line, `atomic` in the query, problems naming the
/// line (counted from 1); bad bodies and queries are the request's 400.
async fn an_ndjson_batch_names_lines(s: Server) {
    s.create_paused_queue("q").await;
    let body = ndjson(&[
        task("n1"),
        json!({"task_id": "n2", "target": {"url": "not a url"}}),
        task("n3"),
    ]);
    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks:batch")
        .raw("application/x-ndjson", body.clone())
        .send()
        .await;
    resp.ok(200);
    assert_eq!(statuses(&resp.json), [201, 400, 201]);
    assert_eq!(
        error_fields(&resp.json["results"][1]),
        ["line[2].target.url"]
    );
    assert_eq!(task_ids(&s, "q").await, ["n1", "n3"]);

    // All or nothing: the first bad line is the answer.
    let bad_url = json!({"task_id": "m3", "target": {"url": "ftp://x"}});
    let body = ndjson(&[task("m1"), task("m2"), bad_url]);
    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks:batch?atomic=true")
        .raw("application/x-ndjson", body)
        .send()
        .await;
    let problem = resp.invalid("line[3].target.url");
    assert_eq!(problem["extensions"]["index"], 2);
    assert_eq!(problem["extensions"]["line"], 3);
    assert_eq!(task_ids(&s, "q").await, ["n1", "n3"], "nothing written");

    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks:batch?atomic=maybe")
        .raw("application/x-ndjson", ndjson(&[task("x")]))
        .send()
        .await;
    resp.invalid("atomic");
    // A JSON batch is atomic when its query or its body says so.
    for (query, body_atomic) in [("?atomic=true", false), ("?atomic=false", true)] {
        let resp = s
            .request(Method::POST, &format!("/v1/queues/q/tasks:batch{query}"))
            .json(&json!({"tasks": [task("j1"), json!({"task_id": "j2", "target": {"url": "ftp://x"}})], "atomic": body_atomic}))
            .send()
            .await;
        let problem = resp.invalid("tasks[1].target.url");
        assert_eq!(problem["extensions"]["index"], 1, "{query}");
        assert_eq!(
            task_ids(&s, "q").await,
            ["n1", "n3"],
            "{query}: nothing written"
        );
    }
    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks:batch")
        .raw("text/plain", "hello")
        .send()
        .await;
    resp.problem(415, "UNSUPPORTED_MEDIA_TYPE");
    s.post("/v1/queues/q/tasks:batch", json!({"atomic": true}))
        .await
        .invalid("tasks");
    s.post(
        "/v1/queues/q/tasks:batch",
        json!({"tasks": [task("x")], "extra": 1}),
    )
    .await
    .invalid("extra");
    s.post("/v1/queues/q/tasks:batch", json!([task("x")]))
        .await
        .invalid("body");
    s.post("/v1/queues/nope/tasks:batch", json!({"tasks": [task("x")]}))
        .await
        .problem(404, "NOT_FOUND");
    assert_eq!(task_ids(&s, "q").await, ["n1", "n3"], "nothing written");
}

/// `"atomic": true`: every task or none; the answer is the first item's
/// problem, with its index.
async fn an_atomic_batch_creates_all_or_nothing(s: Server) {
    s.create_paused_queue("q").await;
    s.create_task("q", task("taken")).await;
    let resp = s
        .post(
            "/v1/queues/q/tasks:batch",
            json!({"atomic": true, "tasks": [task("a"), task("taken"), task("b")]}),
        )
        .await;
    let problem = resp.problem(409, "TASK_ALREADY_EXISTS");
    assert_eq!(problem["extensions"]["index"], 1);
    assert_eq!(problem["extensions"]["task"]["id"], "taken");
    let resp = s
        .post(
            "/v1/queues/q/tasks:batch",
            json!({"atomic": true, "tasks": [task("a"), {"task_id": "bad!", "target": {"url": "http://127.0.0.1:9/"}}]}),
        )
        .await;
    assert_eq!(resp.invalid("tasks[1].task_id")["extensions"]["index"], 1);
    assert_eq!(task_ids(&s, "q").await, ["taken"], "nothing written");
    let resp = s
        .post(
            "/v1/queues/q/tasks:batch",
            json!({"atomic": true, "tasks": [task("a"), task("b")]}),
        )
        .await;
    resp.ok(200);
    assert_eq!(statuses(&resp.json), [201, 201]);
    assert_eq!(task_ids(&s, "q").await, ["a", "b", "taken"]);
}

/// 1 to 1000 tasks: a thousand in one request, and 1001 or none refused
/// naming `tasks`, with nothing written.
async fn a_thousand_tasks_in_one_batch_and_not_one_more(s: Server) {
    s.create_paused_queue("q").await;
    let tasks: Vec<Value> = (0..1001).map(|i| task(&format!("t{i:04}"))).collect();
    s.post("/v1/queues/q/tasks:batch", json!({"tasks": tasks}))
        .await
        .invalid("tasks");
    s.post("/v1/queues/q/tasks:batch", json!({"tasks": []}))
        .await
        .invalid("tasks");
    assert!(task_ids(&s, "q").await.is_empty());
    let resp = s
        .post("/v1/queues/q/tasks:batch", json!({"tasks": &tasks[..1000]}))
        .await;
    resp.ok(200);
    let results = resp.json["results"].as_array().unwrap();
    assert_eq!(results.len(), 1000);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["status"], 201);
        assert_eq!(r["task"]["task_id"], format!("t{i:04}"));
    }
    assert_eq!(task_ids(&s, "q").await.len(), 1000);
    let stats = s.get_queue("q").await;
    assert_eq!(stats["stats"]["tasks"]["queued"], 1000, "{stats}");
}

/// The same key repeats the per-item statuses with the tasks as they are
/// now, creating nothing; the same key with another batch is refused.
async fn a_keyed_batch_replays_its_results(s: Server) {
    s.create_paused_queue("q").await;
    s.create_task("q", task("old")).await;
    let body = json!({"tasks": [
        task("a"),
        task("old"),
        {"task_id": "bad", "target": {"url": "ftp://x/"}},
    ]});
    let send = |body: Value| {
        s.request(Method::POST, "/v1/queues/q/tasks:batch")
            .header("idempotency-key", "batch-1")
            .json(&body)
            .send()
    };
    let first = send(body.clone()).await;
    first.ok(200);
    assert_eq!(statuses(&first.json), [201, 409, 400]);
    s.delete("/v1/queues/q/tasks/a").await.ok(200);
    let replay = send(body.clone()).await;
    replay.ok(200);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(statuses(&replay.json), [201, 409, 400]);
    let results = replay.json["results"].as_array().unwrap();
    assert_eq!(results[0]["task"]["state"], "cancelled", "as it is now");
    assert_eq!(
        results[0]["task"]["created_at"],
        first.json["results"][0]["task"]["created_at"]
    );
    assert_eq!(results[1]["task"]["task_id"], "old");
    assert_eq!(error_fields(&results[2]), ["tasks[2].target.url"]);
    assert_eq!(task_ids(&s, "q").await, ["a", "old"]);
    let other = send(json!({"tasks": [task("z")]})).await;
    other.problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    assert_eq!(task_ids(&s, "q").await, ["a", "old"]);
}

/// A 200 means every task created is durable: a SIGKILL right after
/// loses none.
async fn kill_after_200_loses_nothing(kind: Backend) {
    let s = Server::start(kind).await;
    s.create_paused_queue("durable").await;
    let mut created = Vec::new();
    for b in 0..3 {
        let tasks: Vec<Value> = (0..100)
            .map(|i| {
                let mut t = task(&format!("b{b}-{i}"));
                t["target"]["json"] = json!({"n": i});
                t
            })
            .collect();
        let resp = s
            .post("/v1/queues/durable/tasks:batch", json!({"tasks": tasks}))
            .await;
        resp.ok(200);
        for r in resp.json["results"].as_array().unwrap() {
            assert_eq!(r["status"], 201);
            created.push(r["task"].clone());
        }
    }
    let (backing, key) = s.kill().await;
    let s = Server::start_on(backing, key, &[]).await;
    for before in &created {
        let id = before["task_id"].as_str().unwrap();
        let after = s.get_task("durable", id).await;
        for field in ["task_id", "queue", "state", "target", "created_at"] {
            assert_eq!(after[field], before[field], "task {id}: {field}");
        }
    }
    assert_eq!(s.all_tasks("durable", "").await.len(), created.len());
}

async fn wakeups(s: &Server) -> f64 {
    let resp = s.anonymous().get("/metrics").await;
    resp.ok(200);
    resp.text
        .lines()
        .find_map(|l| l.strip_prefix("idem_dispatch_wakeups_total "))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

/// Creates wake the dispatcher only for work it may claim now: not for
/// tasks of a paused queue, nor for tasks due later; a batch wakes it once;
/// the resume of a paused queue wakes it.
async fn only_claimable_work_wakes_the_dispatcher(s: Server) {
    s.create_paused_queue("held").await;
    s.create_queue("live").await;
    let base = wakeups(&s).await;
    for i in 0..5 {
        s.create_task("held", task(&format!("h{i}"))).await;
    }
    let tasks: Vec<Value> = (0..20).map(|i| task(&format!("hb{i}"))).collect();
    s.post("/v1/queues/held/tasks:batch", json!({"tasks": tasks}))
        .await
        .ok(200);
    let mut later = task("later");
    later["schedule_time"] = json!(crate::harness::time_from_now(3600));
    s.create_task("live", later.clone()).await;
    let mut later_batch = later;
    later_batch["task_id"] = json!("later-b");
    s.post(
        "/v1/queues/live/tasks:batch",
        json!({"tasks": [later_batch]}),
    )
    .await
    .ok(200);
    assert_eq!(wakeups(&s).await, base, "nothing claimable was created");

    s.create_task("live", task("now")).await;
    assert_eq!(wakeups(&s).await, base + 1.0);
    let tasks: Vec<Value> = (0..20).map(|i| task(&format!("lb{i}"))).collect();
    s.post("/v1/queues/live/tasks:batch", json!({"tasks": tasks}))
        .await
        .ok(200);
    assert_eq!(wakeups(&s).await, base + 2.0, "once per batch");

    s.post_empty("/v1/queues/held/resume").await.ok(200);
    assert_eq!(wakeups(&s).await, base + 3.0, "a resume wakes it");
}

/// `idem task create --from-file`: NDJSON or a JSON array, in batches of
/// 1000, each task's result printed; exit 5 when some existed already.
async fn the_cli_creates_tasks_from_a_file(s: Server) {
    s.create_paused_queue("q").await;
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<Value> = (0..1500).map(|i| task(&format!("f{i:04}"))).collect();
    let path = dir.path().join("tasks.ndjson");
    std::fs::write(&path, ndjson(&lines)).unwrap();
    let path = path.to_str().unwrap();
    let out = s
        .idem(&["task", "create", "q", "--from-file", path])
        .await
        .ok();
    let rows: Vec<&str> = out.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 1500, "{}", out.stdout);
    assert!(
        rows[1499]
            .split_whitespace()
            .eq(["1500", "201", "f1499", "queued"])
    );
    assert_eq!(task_ids(&s, "q").await.len(), 1500);

    // Again: every task exists.
    let out = s.idem(&["task", "create", "q", "--from-file", path]).await;
    let out = out.fails(5, "1500 of the tasks exist already");
    assert!(out.stdout.contains("TASK_ALREADY_EXISTS"), "{}", out.stdout);

    // A JSON array, one refused, as JSON answers.
    let array = dir.path().join("tasks.json");
    std::fs::write(
        &array,
        json!([task("j1"), {"task_id": "j2", "target": {"url": "ftp://x/"}}]).to_string(),
    )
    .unwrap();
    let out = s
        .idem(&[
            "task",
            "create",
            "q",
            "--from-file",
            array.to_str().unwrap(),
            "--json",
        ])
        .await;
    let out = out.fails(3, "1 of the tasks were refused");
    let answer: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(statuses(&answer), [201, 400]);

    // From stdin, all or nothing.
    let mut cmd = command();
    cmd.env("IDEM_URL", s.base())
        .env("IDEM_API_KEY", &s.admin_key)
        .args(["task", "create", "q", "--from-file", "-", "--atomic"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(ndjson(&[task("s1"), task("j1")]).as_bytes())
            .await
            .unwrap();
    }
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert!(s.get("/v1/queues/q/tasks/s1").await.status == 404, "atomic");
}

idem_testkit::store_tests!(
    Server::start;
    a_json_batch_answers_each_item_in_order,
    an_ndjson_batch_names_lines,
    an_atomic_batch_creates_all_or_nothing,
    a_thousand_tasks_in_one_batch_and_not_one_more,
    a_keyed_batch_replays_its_results,
    only_claimable_work_wakes_the_dispatcher,
    the_cli_creates_tasks_from_a_file,
);

mod durability {
    use super::*;
    idem_testkit::store_tests!(kill_after_200_loses_nothing);
}
