//! Operating a queue after a bad day: redrive of failed (and cancelled)
//! tasks, one or in bulk, the retention of failed tasks past their dedup
//! window, and the task list's filters; over HTTP, idem-client and the CLI,
//! on both stores.

use crate::harness::target::*;
use crate::harness::{Backend, PROXY_LISTENING_PREFIX, Process, Server, command, encode_query};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const WITHIN: Duration = Duration::from_secs(10);

/// A queue whose tasks fail at their first failed attempt.
async fn one_shot_queue(s: &Server, name: &str, extra: Value) {
    let mut body = json!({"name": name, "retry_config": {"max_attempts": 1}});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    s.create_queue_with(body).await;
}

fn task(id: &str, url: &str) -> Value {
    json!({"task_id": id, "target": {"url": url}})
}

fn ids(tasks: &[Value]) -> Vec<&str> {
    tasks
        .iter()
        .map(|t| t["task_id"].as_str().unwrap())
        .collect()
}

/// The headers that make a delivery's identity (API.md §4): the same on
/// every delivery of one task, redriven or not.
const IDENTITY: &[&str] = &[
    "idem-queue",
    "idem-task-id",
    "idem-schedule-time",
    "idempotency-key",
    "webhook-id",
];

async fn a_redriven_task_keeps_its_id_and_run_key_and_is_delivered_once_more(s: Server) {
    let target = Target::start().await;
    one_shot_queue(&s, "q", json!({})).await;
    // The target fails the first request of the task and accepts the next.
    let created = s
        .create_task("q", task("pay-1", &target.url("/fail/1/500")))
        .await;
    let failed = wait_state(&s, "q", "pay-1", "failed", WITHIN).await;
    assert_eq!(failed["attempt_count"], 1);

    let path = "/v1/queues/q/tasks/pay-1/redrive";
    let redriven = s
        .request(Method::POST, path)
        .header("idempotency-key", "redrive-pay-1")
        .send()
        .await;
    let redriven = redriven.ok(200).json.clone();
    assert_eq!(redriven["task_id"], "pay-1");
    assert_eq!(redriven["created_at"], created["created_at"]);
    assert_eq!(redriven["schedule_time"], created["schedule_time"]);
    assert_eq!(redriven["finished_at"], Value::Null);
    assert!(
        ["queued", "running", "succeeded"].contains(&redriven["state"].as_str().unwrap()),
        "{redriven}"
    );

    let got = target.wait_for("pay-1", 2, WITHIN).await;
    let key = expected_run_key(
        "default",
        "q",
        "pay-1",
        created["created_at"].as_str().unwrap(),
    );
    assert_eq!(got[0].header("idempotency-key"), Some(key.as_str()));
    for name in IDENTITY {
        assert_eq!(
            got[1].header(name),
            got[0].header(name),
            "{name} differs between the first delivery and the redriven one"
        );
    }
    assert_eq!(got[1].header("idem-retry-count"), Some("1"));
    assert_eq!(got[1].header("idem-previous-response"), Some("500"));

    let done = wait_state(&s, "q", "pay-1", "succeeded", WITHIN).await;
    assert_eq!(done["attempt_count"], 2);
    let attempts = s.collect_pages("/v1/queues/q/tasks/pay-1/attempts").await;
    let seen: Vec<(i64, i64)> = attempts
        .iter()
        .map(|a| {
            (
                a["attempt"].as_i64().unwrap(),
                a["status_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [(1, 500), (2, 200)]);

    // The same key replays the redrive: the task as it is now, and no
    // third delivery.
    let replay = s
        .request(Method::POST, path)
        .header("idempotency-key", "redrive-pay-1")
        .send()
        .await;
    replay.ok(200);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json["state"], "succeeded");
    // Without the key it is a new redrive, of a task that succeeded.
    s.post_empty(path).await.problem(409, "FAILED_PRECONDITION");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(target.received_for("pay-1").len(), 2, "delivered once more");
}

async fn redrive_of_a_task_that_has_not_ended_is_a_conflict(s: Server) {
    let target = Target::start().await;
    one_shot_queue(&s, "q", json!({})).await;
    s.create_paused_queue("held").await;
    s.create_task("held", task("queued", &target.url("/ok")))
        .await;
    s.create_task(
        "q",
        json!({"task_id": "scheduled", "target": {"url": target.url("/ok")},
               "schedule_time": "2099-01-01T00:00:00Z"}),
    )
    .await;
    s.create_task("q", task("running", &target.url("/hold/3000")))
        .await;
    s.create_task("q", task("done", &target.url("/ok"))).await;
    wait_state(&s, "q", "running", "running", WITHIN).await;
    wait_state(&s, "q", "done", "succeeded", WITHIN).await;
    for (queue, id, state) in [
        ("held", "queued", "queued"),
        ("q", "scheduled", "scheduled"),
        ("q", "running", "running"),
        ("q", "done", "succeeded"),
    ] {
        let r = s
            .post_empty(&format!("/v1/queues/{queue}/tasks/{id}/redrive"))
            .await;
        let problem = r.problem(409, "FAILED_PRECONDITION");
        assert!(
            problem["detail"].as_str().unwrap().contains(id),
            "{problem}"
        );
        assert_eq!(
            s.get_task(queue, id).await["state"],
            state,
            "{id} unchanged"
        );
    }
    s.post_empty("/v1/queues/q/tasks/missing/redrive")
        .await
        .problem(404, "NOT_FOUND");
    s.post_empty("/v1/queues/nope/tasks/x/redrive")
        .await
        .problem(404, "NOT_FOUND");
    let reader = s.with_key(&s.key_with_role("reader").await);
    reader
        .post_empty("/v1/queues/q/tasks/done/redrive")
        .await
        .problem(403, "PERMISSION_DENIED");
    reader
        .post_empty("/v1/queues/q/tasks:redrive")
        .await
        .problem(403, "PERMISSION_DENIED");

    // The CLI says so with the conflict exit code, and redrives what ended.
    s.idem(&["task", "redrive", "q", "done"])
        .await
        .fails(5, "FAILED_PRECONDITION (409): ");
    s.delete("/v1/queues/held/tasks/queued").await.ok(200);
    let out = s
        .idem(&["task", "redrive", "held", "queued", "--json"])
        .await
        .json();
    assert_eq!(out["state"], "queued");
    assert_eq!(out["finished_at"], Value::Null);
    let out = s.idem(&["task", "redrive", "held", "queued"]).await;
    out.fails(5, "FAILED_PRECONDITION (409): ");
}

async fn bulk_redrive_replayed_with_its_key_redrives_nothing_again(s: Server) {
    let target = Target::start().await;
    one_shot_queue(&s, "q", json!({})).await;
    for id in ["f1", "f2", "f3"] {
        s.create_task("q", task(id, &target.url("/fail/1/500")))
            .await;
    }
    s.create_task("q", task("ok", &target.url("/ok"))).await;
    for id in ["f1", "f2", "f3"] {
        wait_state(&s, "q", id, "failed", WITHIN).await;
    }
    wait_state(&s, "q", "ok", "succeeded", WITHIN).await;

    let path = "/v1/queues/q/tasks:redrive";
    let body = json!({"state": "failed"});
    let first = s
        .request(Method::POST, path)
        .header("idempotency-key", "bulk-1")
        .json(&body)
        .send()
        .await;
    assert_eq!(first.ok(200).json, json!({"redriven": 3}), "{}", first.text);
    assert_eq!(first.header("idempotent-replayed"), None);
    for id in ["f1", "f2", "f3"] {
        wait_state(&s, "q", id, "succeeded", WITHIN).await;
        assert_eq!(target.received_for(id).len(), 2, "{id}");
    }

    // A task that fails after the redrive is not the replay's business.
    s.create_task("q", task("late", &target.url("/fail/1/500")))
        .await;
    wait_state(&s, "q", "late", "failed", WITHIN).await;
    let replay = s
        .request(Method::POST, path)
        .header("idempotency-key", "bulk-1")
        .json(&body)
        .send()
        .await;
    assert_eq!(replay.ok(200).json, json!({"redriven": 3}));
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.get_task("q", "late").await["state"], "failed");
    for id in ["f1", "f2", "f3"] {
        assert_eq!(target.received_for(id).len(), 2, "{id} not redriven again");
    }
    // The same key with another filter is another request.
    s.request(Method::POST, path)
        .header("idempotency-key", "bulk-1")
        .json(&json!({"state": "cancelled"}))
        .send()
        .await
        .problem(422, "IDEMPOTENCY_KEY_MISMATCH");

    // idem-client, with a time range that leaves "late" out, then without.
    let c = s.client();
    let late_finished: idem_client::Timestamp = s.get_task("q", "late").await["finished_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let before_late = idem_client::RedriveOptions {
        finished_before: Some(late_finished),
        ..Default::default()
    };
    let none = c.redrive_tasks("q", &before_late).await.unwrap().value;
    assert_eq!(none.redriven, 0);
    let all = c
        .redrive_tasks("q", &idem_client::RedriveOptions::default())
        .await
        .unwrap()
        .value;
    assert_eq!(all.redriven, 1);
    wait_state(&s, "q", "late", "succeeded", WITHIN).await;

    // The CLI: cancelled tasks of a paused queue.
    s.create_paused_queue("held").await;
    for id in ["c1", "c2"] {
        s.create_task("held", task(id, &target.url("/ok"))).await;
        s.delete(&format!("/v1/queues/held/tasks/{id}"))
            .await
            .ok(200);
    }
    let out = s
        .idem(&[
            "task",
            "redrive-all",
            "held",
            "--state",
            "cancelled",
            "--json",
        ])
        .await
        .json();
    assert_eq!(out, json!({"redriven": 2}));
    let queued = s.all_tasks("held", "state=queued").await;
    assert_eq!(ids(&queued), ["c1", "c2"]);
    let out = s.idem(&["task", "redrive-all", "held"]).await.ok();
    assert_eq!(out.stdout.trim(), "redrove 0 task(s) in queue held");

    // No body at all means every failed task.
    s.post_empty(path).await.ok(200);
    // Bad requests name the field and change nothing.
    s.post(path, json!({"state": "succeeded"}))
        .await
        .invalid("state");
    s.post(path, json!({"finished_after": "yesterday"}))
        .await
        .invalid("finished_after");
    // An empty interval selects nothing.
    let resp = s
        .post(
            path,
            json!({"finished_after": "2026-01-02T00:00:00Z", "finished_before": "2026-01-01T00:00:00Z"}),
        )
        .await;
    resp.ok(200);
    assert_eq!(resp.json["redriven"], 0);
    s.post(path, json!({"unknown": 1})).await.invalid("unknown");
    s.post("/v1/queues/nope/tasks:redrive", json!({}))
        .await
        .problem(404, "NOT_FOUND");
}

/// The reason redrive keeps the run key: a target behind `idem proxy` that
/// finished the work after Idem gave up on the attempt (slower than the
/// deadline) answers the redriven delivery from its record, and the work
/// is not done twice.
async fn a_guarded_target_replays_its_recorded_success_to_a_redrive(s: Server) {
    let upstream = Target::start().await;
    let listed = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    let secret = listed["secrets"][0]["secret"].as_str().unwrap().to_string();
    let mut cmd = command();
    cmd.args([
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream.base,
    ])
    .args(["--store", "memory", "--signing-secret", &secret])
    .args(["--lease", "60s", "--retention", "10m"]);
    let proxy = Process::run(cmd, PROXY_LISTENING_PREFIX).await;
    one_shot_queue(&s, "q", json!({"dispatch_deadline_s": 1})).await;
    // The upstream takes 2 s: Idem's only attempt times out after 1 s.
    s.create_task("q", task("charge-1", &format!("{}/hold/2000", proxy.base)))
        .await;
    let failed = wait_state(&s, "q", "charge-1", "failed", WITHIN).await;
    assert_eq!(failed["attempt_count"], 1);
    // The upstream finishes; the proxy records its success.
    upstream.wait_for("charge-1", 1, WITHIN).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;

    s.post_empty("/v1/queues/q/tasks/charge-1/redrive")
        .await
        .ok(200);
    let done = wait_state(&s, "q", "charge-1", "succeeded", WITHIN).await;
    assert_eq!(done["attempt_count"], 2);
    assert_eq!(done["last_attempt"]["status_code"], 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        upstream.received_for("charge-1").len(),
        1,
        "the redriven delivery was answered from the proxy's record"
    );
    proxy.kill().await;
}

async fn sweeping(kind: Backend) -> Server {
    Server::start_with(kind, &["--sweep-interval", "200ms"]).await
}

async fn failed_tasks_outlive_the_dedup_window_and_go_after_their_retention(s: Server) {
    let target = Target::start().await;
    let queue = s
        .create_queue_with(json!({"name": "q", "retry_config": {"max_attempts": 1},
                                  "dedup_window_s": 1, "failed_retention_s": 4}))
        .await;
    assert_eq!(queue["failed_retention_s"], 4);
    s.create_task("q", task("bad", &target.url("/fail/9/500")))
        .await;
    s.create_task("q", task("ok", &target.url("/ok"))).await;
    let failed = wait_state(&s, "q", "bad", "failed", WITHIN).await;
    wait_state(&s, "q", "ok", "succeeded", WITHIN).await;
    let ended = Instant::now();

    // Past the window and a few sweeps: the success is gone, the failure
    // stays, and its ID is still taken.
    let deadline = ended + WITHIN;
    while s.get("/v1/queues/q/tasks/ok").await.status != 404 {
        assert!(
            Instant::now() < deadline,
            "the succeeded task was never swept"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let kept = s.get_task("q", "bad").await;
    assert_eq!(kept["state"], "failed");
    assert_eq!(kept["finished_at"], failed["finished_at"]);
    let taken = s
        .post("/v1/queues/q/tasks", task("bad", &target.url("/ok")))
        .await;
    taken.problem(409, "TASK_ALREADY_EXISTS");
    s.create_task("q", task("ok", &target.url("/ok"))).await;

    // Gone after its own retention, and its ID free again.
    while s.get("/v1/queues/q/tasks/bad").await.status != 404 {
        assert!(Instant::now() < deadline, "the failed task was never swept");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ended.elapsed() >= Duration::from_millis(3500),
        "swept {:?} after it failed, before its retention",
        ended.elapsed()
    );
    s.create_task("q", task("bad", &target.url("/ok"))).await;

    // The retention is a queue setting with bounds.
    let patched = s
        .patch("/v1/queues/q", json!({"failed_retention_s": 86400}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(patched["failed_retention_s"], 86400);
    s.patch("/v1/queues/q", json!({"failed_retention_s": 7_776_001}))
        .await
        .invalid("failed_retention_s");
    s.patch("/v1/queues/q", json!({"failed_retention_s": -1}))
        .await
        .invalid("failed_retention_s");
    s.post(
        "/v1/queues",
        json!({"name": "q2", "failed_retention_s": "long"}),
    )
    .await
    .invalid("failed_retention_s");
    assert_eq!(s.get("/v1/queues/q2").await.status, 404, "nothing written");
    assert_eq!(s.get_queue("q").await["failed_retention_s"], 86400);
    let defaults = s.create_queue("q3").await;
    assert_eq!(defaults["failed_retention_s"], 604800);
    let cli = s
        .idem(&[
            "queue",
            "create",
            "q4",
            "--failed-retention",
            "48h",
            "--json",
        ])
        .await
        .json();
    assert_eq!(cli["failed_retention_s"], 172800);
}

async fn task_lists_filter_by_state_id_prefix_and_creation_time(s: Server) {
    s.create_paused_queue("q").await;
    let url = "http://127.0.0.1:9/hook";
    let mut first = Vec::new();
    for id in ["inv-2", "ord-1", "inv-1"] {
        first.push(s.create_task("q", task(id, url)).await);
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let second_at = s.create_task("q", task("inv-3", url)).await["created_at"]
        .as_str()
        .unwrap()
        .to_string();
    for id in ["ord-2", "inv", "inv_x"] {
        s.create_task("q", task(id, url)).await;
    }
    s.delete("/v1/queues/q/tasks/inv-2").await.ok(200);

    let list = |query: String| {
        let s = &s;
        async move { s.all_tasks("q", &query).await }
    };
    assert_eq!(
        ids(&list("id_prefix=inv-".into()).await),
        ["inv-1", "inv-2", "inv-3"]
    );
    assert_eq!(
        ids(&list("id_prefix=inv-&state=cancelled".into()).await),
        ["inv-2"]
    );
    assert_eq!(
        ids(&list("id_prefix=inv-&state=queued&limit=1".into()).await),
        ["inv-1", "inv-3"]
    );
    let at = encode_query(&second_at);
    // With a creation bound the list goes by creation time, then ID.
    let newer = list(format!("created_after={at}&limit=1")).await;
    assert_eq!(
        ids(&newer),
        ["inv-3", "ord-2", "inv", "inv_x"],
        "as created"
    );
    // As instants: RFC 3339 text with a varying count of fractional digits
    // does not sort as its instants do ("…50.706Z" after "…50.706931Z").
    let created: Vec<jiff::Timestamp> = newer
        .iter()
        .map(|t| t["created_at"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(created.windows(2).all(|w| w[0] <= w[1]), "{created:?}");
    let older = list(format!("created_before={at}")).await;
    let mut older_ids = ids(&older);
    older_ids.sort();
    assert_eq!(older_ids, ["inv-1", "inv-2", "ord-1"]);
    assert_eq!(
        ids(&list(format!("created_before={at}&id_prefix=ord&state=queued")).await),
        ["ord-1"]
    );

    for (query, field) in [
        ("state=nope", "state"),
        ("id_prefix=a%20b", "id_prefix"),
        ("created_after=yesterday", "created_after"),
        ("created_before=2026-13-01T00:00:00Z", "created_before"),
    ] {
        s.get(&format!("/v1/queues/q/tasks?{query}"))
            .await
            .invalid(field);
    }

    // idem-client and the CLI pass the same filters.
    let c = s.client();
    let filter = idem_client::TaskFilter {
        id_prefix: Some("ord".into()),
        created_after: Some(second_at.parse().unwrap()),
        ..Default::default()
    };
    let page = c
        .list_tasks("q", &filter, &idem_client::ListOptions::default())
        .await
        .unwrap()
        .value;
    let got: Vec<&str> = page.items.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(got, ["ord-2"]);
    let out = s
        .idem(&[
            "task",
            "ls",
            "q",
            "--id-prefix",
            "inv-",
            "--state",
            "cancelled",
            "--json",
        ])
        .await
        .json();
    assert_eq!(ids(out["items"].as_array().unwrap()), ["inv-2"]);
    let out = s
        .idem(&["task", "ls", "q", "--created-after", &second_at, "--json"])
        .await
        .json();
    assert_eq!(out["items"].as_array().unwrap().len(), 4);
    let out = s
        .idem(&["task", "ls", "q", "--created-after", "-1h", "--json"])
        .await
        .json();
    assert_eq!(out["items"].as_array().unwrap().len(), 7, "an hour ago");
    let out = s
        .idem(&["task", "ls", "q", "--created-before", "-1h", "--json"])
        .await
        .json();
    assert_eq!(out["items"], json!([]));
}

/// A bulk redrive obeys the task list's filters too (ID prefix, creation
/// range), so that what a filtered list shows is exactly what a redrive
/// runs again; a dry run counts them and changes nothing.
async fn bulk_redrive_runs_again_exactly_what_the_filter_matches(s: Server) {
    let target = Target::start().await;
    one_shot_queue(&s, "q", json!({})).await;
    for id in [
        "report-broken-1",
        "report-broken-2",
        "report-other-1",
        "invoice-1",
    ] {
        s.create_task("q", task(id, &target.url("/fail/1/500")))
            .await;
    }
    for id in [
        "report-broken-1",
        "report-broken-2",
        "report-other-1",
        "invoice-1",
    ] {
        wait_state(&s, "q", id, "failed", WITHIN).await;
    }
    let path = "/v1/queues/q/tasks:redrive";
    let dry = s
        .post(path, json!({"id_prefix": "report-broken", "dry_run": true}))
        .await;
    assert_eq!(dry.ok(200).json, json!({"redriven": 0, "matching": 2}));
    let dry = s
        .post(path, json!({"id_prefix": "report-", "dry_run": true}))
        .await;
    assert_eq!(dry.ok(200).json["matching"], 3);
    // Created an hour ago or before: none.
    let an_hour_ago = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1)).to_string();
    let dry = s
        .post(
            path,
            json!({"created_before": an_hour_ago, "dry_run": true}),
        )
        .await;
    assert_eq!(dry.ok(200).json["matching"], 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    for id in ["report-broken-1", "report-broken-2"] {
        assert_eq!(s.get_task("q", id).await["state"], "failed", "a dry run");
    }

    let done = s
        .post(
            path,
            json!({"id_prefix": "report-broken", "created_after": an_hour_ago}),
        )
        .await;
    assert_eq!(done.ok(200).json, json!({"redriven": 2}));
    for id in ["report-broken-1", "report-broken-2"] {
        wait_state(&s, "q", id, "succeeded", WITHIN).await;
    }
    for id in ["report-other-1", "invoice-1"] {
        assert_eq!(s.get_task("q", id).await["state"], "failed", "{id}");
        assert_eq!(target.received_for(id).len(), 1, "{id}");
    }

    // The CLI: a dry run prints the count.
    let out = s
        .idem(&[
            "task",
            "redrive-all",
            "q",
            "--id-prefix",
            "invoice-",
            "--dry-run",
        ])
        .await
        .ok();
    assert_eq!(out.stdout.trim(), "1 task(s) in queue q would be redriven");
    assert_eq!(s.get_task("q", "invoice-1").await["state"], "failed");

    // Bad filters name their field and change nothing.
    s.post(path, json!({"id_prefix": ""}))
        .await
        .invalid("id_prefix");
    s.post(path, json!({"created_after": "yesterday"}))
        .await
        .invalid("created_after");
    s.post(path, json!({"dry_run": "yes"}))
        .await
        .invalid("dry_run");
    assert_eq!(s.get_task("q", "invoice-1").await["state"], "failed");
}

idem_testkit::store_tests!(
    Server::start;
    a_redriven_task_keeps_its_id_and_run_key_and_is_delivered_once_more,
    redrive_of_a_task_that_has_not_ended_is_a_conflict,
    bulk_redrive_replayed_with_its_key_redrives_nothing_again,
    bulk_redrive_runs_again_exactly_what_the_filter_matches,
    task_lists_filter_by_state_id_prefix_and_creation_time,
    a_guarded_target_replays_its_recorded_success_to_a_redrive,
);

mod retention {
    use super::*;
    idem_testkit::store_tests!(
        sweeping;
        failed_tasks_outlive_the_dedup_window_and_go_after_their_retention,
    );
}
