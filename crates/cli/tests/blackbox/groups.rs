//! Groups, ordering and priority inside a queue (API.md §17), through the
//! real binary: a group's limit across two nodes, FIFO through a retry and
//! a SIGKILL, fair turns (100,000 tasks of one group and 10 of another),
//! priority, pull claims under the same rules, a limit changed while tasks
//! run, the list of groups, and bad fields refused by name.

use crate::harness;
use crate::harness::target::*;
use crate::harness::{Api, Backend, Backing, Server, TwoNodes};
use serde_json::{Value, json};
use std::time::Duration;

/// High rate and concurrency, so that only the group rules hold tasks back.
fn open_queue(name: &str, extra: Value) -> Value {
    let mut body = json!({"name": name, "rate_limits": {
        "max_dispatches_per_second": 100000, "max_burst_size": 100000,
        "max_concurrent_dispatches": 1000}});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    body
}

/// Creates `n` tasks of `group` in batches of 1000, their IDs
/// `{prefix}{i}`, each from `task(i)`.
async fn create_many(api: &Api, queue: &str, n: usize, task: impl Fn(usize) -> Value) {
    let items: Vec<Value> = (0..n).map(task).collect();
    for chunk in items.chunks(1000) {
        let r = api
            .post(
                &format!("/v1/queues/{queue}/tasks:batch"),
                json!({"tasks": chunk}),
            )
            .await;
        r.ok(200);
        let created = r.json["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["status"] == 201)
            .count();
        assert_eq!(created, chunk.len(), "{}", r.text);
    }
}

async fn claim(api: &Api, queue: &str, max_tasks: u32) -> Vec<Value> {
    api.post(
        &format!("/v1/queues/{queue}/tasks:claim"),
        json!({"max_tasks": max_tasks}),
    )
    .await
    .ok(200)
    .json["tasks"]
        .as_array()
        .unwrap()
        .clone()
}

async fn complete(api: &Api, queue: &str, task: &Value) {
    api.post(
        &format!(
            "/v1/queues/{queue}/tasks/{}/complete",
            task["task_id"].as_str().unwrap()
        ),
        json!({"attempt_id": task["lease"]["attempt_id"]}),
    )
    .await
    .ok(200);
}

fn ids(tasks: &[Value]) -> Vec<&str> {
    tasks
        .iter()
        .map(|t| t["task_id"].as_str().unwrap())
        .collect()
}

/// Two PostgreSQL nodes dispatch one queue with `group_concurrency: 2`:
/// the target never has a third task of a group in flight, while the
/// groups run beside each other. The tasks are all due when the queue
/// resumes, so that both nodes claim at once and each group has more
/// than its limit waiting however slowly the creates go (created into a
/// running queue on a loaded machine, each could end before the next of
/// its group came).
#[tokio::test]
async fn a_group_limit_holds_across_two_nodes() {
    let target = Target::start().await;
    let nodes = TwoNodes::start().await;
    let apis = &nodes.apis;
    apis[0]
        .create_queue_with(open_queue("q", json!({"group_concurrency": 2})))
        .await;
    apis[0].post_empty("/v1/queues/q/pause").await.ok(200);
    let groups = ["acct:1", "acct:2", "acct:3"];
    let per_group = 10;
    for i in 0..per_group {
        for (n, g) in groups.iter().enumerate() {
            apis[(i + n) % 2]
                .create_task(
                    "q",
                    json!({"task_id": format!("{}-{i}", g.replace(':', "_")), "group": g,
                           "target": {"url": target.url(&format!("/group/{g}/150"))}}),
                )
                .await;
        }
    }
    apis[1].post_empty("/v1/queues/q/resume").await.ok(200);
    target
        .wait_total(groups.len() * per_group, Duration::from_secs(60))
        .await;
    for g in groups {
        assert_eq!(target.max_in_flight_of(g), 2, "group {g}");
    }
    assert!(
        target.max_in_flight() > 2,
        "the groups ran beside each other: {}",
        target.max_in_flight()
    );
}

/// 100,000 due tasks of group A created before 10 of group B: all 10 of
/// B start before 200 of A.
async fn fair_turns_start_a_small_group_before_a_large_backlog(kind: Backend) {
    let target = Target::start().await;
    let s = Server::start(kind).await;
    // The default limits: a claim takes what the token bucket's burst
    // allows, and the target sees the starts of one claim in the order
    // its connections happen to open.
    s.create_paused_queue("q").await;
    let url = target.url("/ok");
    create_many(
        &s,
        "q",
        100_000,
        |i| json!({"task_id": format!("a{i}"), "group": "A", "target": {"url": url}}),
    )
    .await;
    create_many(
        &s,
        "q",
        10,
        |i| json!({"task_id": format!("b{i}"), "group": "B", "target": {"url": url}}),
    )
    .await;
    let queue = s.get_queue("q").await;
    assert_eq!(queue["stats"]["groups_with_due"], 2, "{queue}");
    s.post_empty("/v1/queues/q/resume").await.ok(200);
    target.wait_total(300, Duration::from_secs(60)).await;
    s.post_empty("/v1/queues/q/pause").await.ok(200);
    let order: Vec<String> = target
        .received()
        .iter()
        .map(|r| r.task_id().to_string())
        .collect();
    let last_b = order
        .iter()
        .rposition(|id| id.starts_with('b'))
        .expect("group B started");
    let b = order.iter().filter(|id| id.starts_with('b')).count();
    let a_before = order[..last_b]
        .iter()
        .filter(|id| id.starts_with('a'))
        .count();
    assert_eq!(b, 10, "{order:?}");
    assert!(
        a_before < 200,
        "{a_before} of A started before B's last: {:?}",
        &order[..last_b + 1]
    );
}

/// The same for a worker's claims of a pull queue.
async fn fair_turns_hold_for_pull_claims(kind: Backend) {
    let s = Server::start(kind).await;
    s.create_queue_with(open_queue("w", json!({"mode": "pull"})))
        .await;
    create_many(
        &s,
        "w",
        100_000,
        |i| json!({"task_id": format!("a{i}"), "group": "A", "payload": {"json": {}}}),
    )
    .await;
    create_many(
        &s,
        "w",
        10,
        |i| json!({"task_id": format!("b{i}"), "group": "B", "payload": {"json": {}}}),
    )
    .await;
    let mut order = Vec::new();
    while order
        .iter()
        .filter(|id: &&String| id.starts_with('b'))
        .count()
        < 10
    {
        let got = claim(&s, "w", 16).await;
        assert!(!got.is_empty(), "claims ran dry: {order:?}");
        order.extend(ids(&got).into_iter().map(str::to_string));
        assert!(order.len() < 400, "B is still waiting: {order:?}");
    }
    let a = order.iter().filter(|id| id.starts_with('a')).count();
    assert!(a < 200, "{a} of A claimed before all of B");
}

/// A FIFO group's tasks reach the target one after another in schedule
/// order: the second waits out the first's retry, and a node killed
/// during the second's attempt holds the group until its lease expires
/// and the retry succeeds. Another group runs meanwhile.
async fn fifo_holds_through_a_retry_and_a_sigkill(kind: Backend) {
    let target = Target::start().await;
    let flags = ["--lease-grace", "1s"];
    let s = Server::start_on(Backing::new(kind).await, harness::fresh_key(), &flags).await;
    s.create_paused_queue_with(open_queue(
        "q",
        json!({"group_order": "fifo", "dispatch_deadline_s": 2,
               "retry_config": {"min_backoff_ms": 300, "max_backoff_ms": 300}}),
    ))
    .await;
    let base = "2026-01-01T00:00:00Z".parse::<jiff::Timestamp>().unwrap();
    let at = |s: i64| (base + jiff::SignedDuration::from_secs(s)).to_string();
    // Created out of order: FIFO is (schedule time, creation).
    for (id, path, t) in [
        ("l3", "/ok", 3),
        ("l1", "/fail/1/500", 1),
        ("l2", "/block-first", 2),
        ("l4", "/ok", 3),
    ] {
        s.create_task(
            "q",
            json!({"task_id": id, "group": "ledger", "schedule_time": at(t),
                   "target": {"url": target.url(path)}}),
        )
        .await;
    }
    s.create_task(
        "q",
        json!({"task_id": "o1", "group": "other", "target": {"url": target.url("/ok")}}),
    )
    .await;
    s.post_empty("/v1/queues/q/resume").await.ok(200);
    target.wait_for("l2", 1, Duration::from_secs(20)).await;
    target.wait_for("o1", 1, Duration::from_secs(5)).await;
    // l2's first attempt never answers: SIGKILL the node during it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        target.received_for("l3").len(),
        0,
        "l3 went before l2 ended"
    );
    let (backing, key) = s.kill().await;
    let s = Server::start_on(backing, key, &flags).await;
    wait_state(&s, "q", "l4", "succeeded", Duration::from_secs(30)).await;
    let ledger: Vec<String> = target
        .received()
        .iter()
        .map(|r| r.task_id().to_string())
        .filter(|id| id.starts_with('l'))
        .collect();
    assert_eq!(ledger, ["l1", "l1", "l2", "l2", "l3", "l4"]);
    let l2 = target.received_for("l2");
    let l3 = target.received_for("l3");
    assert!(l3[0].at > l2[1].at, "l3 started before l2's retry");
    let task = s.get_task("q", "l2").await;
    assert_eq!(task["attempt_count"], 2, "{task}");
}

/// Within a group, higher priority first; the task shows its group and
/// priority.
async fn priority_orders_a_groups_tasks(kind: Backend) {
    let target = Target::start().await;
    let s = Server::start(kind).await;
    s.create_paused_queue_with(json!({"name": "q",
        "rate_limits": {"max_concurrent_dispatches": 1}}))
        .await;
    for (id, priority) in [("low", -10), ("mid", 0), ("high", 50)] {
        let created = s
            .create_task(
                "q",
                json!({"task_id": id, "group": "g", "priority": priority,
                       "target": {"url": target.url("/ok")}}),
            )
            .await;
        assert_eq!(created["group"], "g");
        assert_eq!(created["priority"], priority);
    }
    s.post_empty("/v1/queues/q/resume").await.ok(200);
    let got = target.wait_total(3, Duration::from_secs(20)).await;
    let order: Vec<&str> = got.iter().map(|r| r.task_id()).collect();
    assert_eq!(order, ["high", "mid", "low"]);
}

/// A pull queue's claims hold a group's limit (a lease holds its slot)
/// and take turns; a completion frees the slot.
async fn pull_claims_hold_the_group_limit(kind: Backend) {
    let s = Server::start(kind).await;
    s.create_queue_with(open_queue(
        "w",
        json!({"mode": "pull", "group_concurrency": 1}),
    ))
    .await;
    for (id, group) in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("u1", "")] {
        let mut task = json!({"task_id": id, "payload": {"json": {}}});
        if !group.is_empty() {
            task["group"] = json!(group);
        }
        s.create_task("w", task).await;
    }
    let mut first = ids(&claim(&s, "w", 10).await)
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    first.sort();
    assert_eq!(first, ["a1", "b1", "u1"]);
    assert!(claim(&s, "w", 10).await.is_empty(), "a holds its one slot");
    let a1 = s.get_task("w", "a1").await;
    assert!(a1["lease"]["attempt_id"].is_string(), "{a1}");
    complete(&s, "w", &a1).await;
    assert_eq!(ids(&claim(&s, "w", 10).await), ["a2"]);
}

/// A queue's group limit changed while its tasks run applies to the next
/// start: raised from 1 to 3, the group runs three at a time, never more.
async fn a_limit_changed_while_tasks_run_applies_to_the_next_start(kind: Backend) {
    let target = Target::start().await;
    let s = Server::start(kind).await;
    s.create_queue_with(open_queue("q", json!({"group_concurrency": 1})))
        .await;
    for i in 0..8 {
        s.create_task(
            "q",
            json!({"task_id": format!("t{i}"), "group": "g",
                   "target": {"url": target.url("/group/g/400")}}),
        )
        .await;
    }
    target.wait_total(1, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(target.received().len(), 1, "one at a time");
    let updated = s
        .patch("/v1/queues/q", json!({"group_concurrency": 3}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(updated["group_concurrency"], 3);
    target.wait_total(8, Duration::from_secs(20)).await;
    assert_eq!(target.max_in_flight_of("g"), 3);
    let cleared = s
        .patch("/v1/queues/q", json!({"group_concurrency": null}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(cleared["group_concurrency"], Value::Null);
}

/// The list of groups shows each group with live tasks, by name, paged
/// and by prefix; the CLI creates grouped tasks and lists the groups.
async fn groups_are_listed_through_the_api_and_the_cli(kind: Backend) {
    let s = Server::start(kind).await;
    s.create_paused_queue_with(json!({"name": "q", "group_order": "fifo"}))
        .await;
    let later = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(3600)).to_string();
    for (id, group, at) in [
        ("e1", "eu:1", None),
        ("e2", "eu:1", None),
        ("e3", "eu:2", Some(later.clone())),
        ("u1", "us:1", None),
    ] {
        let mut task = json!({"task_id": id, "group": group,
                              "target": {"url": "http://127.0.0.1:9/"}});
        if let Some(at) = at {
            task["schedule_time"] = json!(at);
        }
        s.create_task("q", task).await;
    }
    s.create_task(
        "q",
        json!({"task_id": "plain", "target": {"url": "http://127.0.0.1:9/"}}),
    )
    .await;
    let page = s
        .get("/v1/queues/q/groups?limit=2")
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(
        page["items"],
        json!([{"group": "eu:1", "running": 0, "due": 2, "scheduled": 0},
               {"group": "eu:2", "running": 0, "due": 0, "scheduled": 1}])
    );
    let token = page["next_page_token"].as_str().unwrap();
    let rest = s
        .get(&format!("/v1/queues/q/groups?limit=2&page_token={token}"))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(
        rest["items"],
        json!([{"group": "us:1", "running": 0, "due": 1, "scheduled": 0}])
    );
    assert!(rest["next_page_token"].is_null(), "{rest}");
    let eu = s
        .get("/v1/queues/q/groups?id_prefix=eu:")
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(eu["items"].as_array().unwrap().len(), 2, "{eu}");
    let queue = s.get_queue("q").await;
    assert_eq!(queue["group_order"], "fifo");
    assert_eq!(queue["stats"]["groups_with_due"], 2, "{queue}");
    s.get("/v1/queues/nope/groups")
        .await
        .problem(404, "NOT_FOUND");

    let out = s
        .idem(&[
            "task",
            "create",
            "q",
            "--task-id",
            "cli",
            "--url",
            "http://127.0.0.1:9/",
            "--group",
            "us:2",
            "--priority",
            "-7",
            "--json",
        ])
        .await
        .json();
    assert_eq!(
        (out["group"].clone(), out["priority"].clone()),
        (json!("us:2"), json!(-7))
    );
    let table = s
        .idem(&["queue", "groups", "q", "--prefix", "us"])
        .await
        .ok();
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(lines[0].starts_with("GROUP"), "{}", table.stdout);
    assert!(
        lines[1].starts_with("us:1") && lines[2].starts_with("us:2"),
        "{}",
        table.stdout
    );
    let updated = s
        .idem(&[
            "queue",
            "update",
            "q",
            "--group-concurrency",
            "5",
            "--group-order",
            "none",
            "--json",
        ])
        .await
        .json();
    assert_eq!(updated["group_concurrency"], 5);
    assert_eq!(updated["group_order"], "none");
}

/// Bad group fields get a 400 naming each, and change nothing.
async fn bad_group_fields_are_refused_by_name(kind: Backend) {
    let s = Server::start(kind).await;
    s.create_paused_queue("q").await;
    let url = "http://127.0.0.1:9/";
    for (body, field) in [
        (json!({"group": ""}), "group"),
        (json!({"group": "a b"}), "group"),
        (json!({"group": "a/b"}), "group"),
        (json!({"group": "g".repeat(201)}), "group"),
        (json!({"priority": 101}), "priority"),
        (json!({"priority": -101}), "priority"),
    ] {
        let mut task = json!({"task_id": "t", "target": {"url": url}});
        task.as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        s.post("/v1/queues/q/tasks", task).await.invalid(field);
    }
    let r = s
        .post(
            "/v1/queues/q/tasks",
            json!({"task_id": "t", "priority": "high", "target": {"url": url}}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let batch = s
        .post(
            "/v1/queues/q/tasks:batch",
            json!({"tasks": [{"task_id": "ok", "group": "g", "target": {"url": url}},
                             {"task_id": "bad", "group": "x y", "target": {"url": url}}]}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(batch["results"][0]["status"], 201, "{batch}");
    assert_eq!(batch["results"][1]["status"], 400, "{batch}");
    let errors = &batch["results"][1]["problem"]["extensions"]["errors"];
    assert!(
        errors
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["field"] == "tasks[1].group"),
        "{batch}"
    );
    for (body, field) in [
        (json!({"group_concurrency": 0}), "group_concurrency"),
        (json!({"group_concurrency": 10001}), "group_concurrency"),
    ] {
        s.patch("/v1/queues/q", body).await.invalid(field);
        let mut create = json!({"name": "q2"});
        create
            .as_object_mut()
            .unwrap()
            .extend(json!({field: 0}).as_object().unwrap().clone());
        s.post("/v1/queues", create).await.invalid(field);
    }
    let r = s
        .patch("/v1/queues/q", json!({"group_order": "lifo"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    for bad in ["a%20b", ""] {
        s.get(&format!("/v1/queues/q/groups?id_prefix={bad}"))
            .await
            .invalid("id_prefix");
    }
    let queue = s.get_queue("q").await;
    assert_eq!(queue["group_concurrency"], Value::Null);
    assert_eq!(queue["group_order"], "none");
    assert_eq!(
        queue["stats"]["tasks"]["queued"], 1,
        "only the batch's good item: {queue}"
    );
    s.get("/v1/queues/q2").await.problem(404, "NOT_FOUND");
}

idem_testkit::store_tests!(
    fair_turns_start_a_small_group_before_a_large_backlog,
    fair_turns_hold_for_pull_claims,
    fifo_holds_through_a_retry_and_a_sigkill,
    priority_orders_a_groups_tasks,
    pull_claims_hold_the_group_limit,
    a_limit_changed_while_tasks_run_applies_to_the_next_start,
    groups_are_listed_through_the_api_and_the_cli,
    bad_group_fields_are_refused_by_name,
);
