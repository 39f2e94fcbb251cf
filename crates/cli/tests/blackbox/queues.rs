//! Queues: creation with defaults, validation, listing, PATCH, DELETE,
//! pause, resume and purge.

use crate::harness;
use crate::harness::{Server, parse_time, task, time_from_now};
use serde_json::{Value, json};

idem_testkit::store_tests!(
    Server::start;
    create_applies_the_documented_defaults,
    create_keeps_every_given_field,
    duplicate_queue_is_a_conflict,
    queue_names_are_validated,
    out_of_range_values_are_rejected_and_nothing_is_written,
    range_boundaries_are_accepted,
    unknown_fields_are_rejected_by_dotted_path,
    wrong_types_name_the_field,
    list_is_ordered_by_name_and_paginates,
    list_limit_and_page_token_are_validated,
    patch_updates_only_the_given_fields,
    patch_rejects_name_unknown_fields_and_bad_values,
    delete_removes_the_queue_and_its_tasks,
    pause_and_resume_set_the_state,
    paused_queue_accepts_tasks,
    purge_cancels_every_unfinished_task,
    operations_on_unknown_queue_are_not_found,
    empty_patch_changes_nothing,
    concurrent_creates_of_one_queue_make_one_queue,
    queue_being_dispatched_can_be_deleted,
    queue_being_dispatched_can_be_purged,
);

fn assert_defaults(q: &Value) {
    assert_eq!(
        q["rate_limits"],
        json!({"max_dispatches_per_second": 500, "max_burst_size": 100,
               "max_concurrent_dispatches": 1000}),
        "rate_limits defaults: {q}"
    );
    assert_eq!(
        q["retry_config"],
        json!({"max_attempts": 100, "max_retry_duration_s": 0, "min_backoff_ms": 100,
               "max_backoff_ms": 3600000, "max_doublings": 16}),
        "retry_config defaults: {q}"
    );
    assert_eq!(q["dispatch_deadline_s"], json!(600), "{q}");
    assert_eq!(q["dedup_window_s"], json!(86400), "{q}");
}

/// Numbers compare by value: `500` and `500.0` are the same rate.
fn same_number(a: &Value, b: &Value) -> bool {
    a.as_f64().is_some() && a.as_f64() == b.as_f64()
}

fn assert_rate_limits(q: &Value, expected: Value) {
    for (k, v) in expected.as_object().expect("object") {
        assert!(
            same_number(&q["rate_limits"][k], v),
            "rate_limits.{k}: expected {v}, got {q}"
        );
    }
}

async fn create_applies_the_documented_defaults(s: Server) {
    let resp = s.post("/v1/queues", json!({"name": "payments"})).await;
    resp.ok(201);
    assert_eq!(resp.header("location"), Some("/v1/queues/payments"));
    let q = &resp.json;
    assert_eq!(q["name"], "payments");
    assert_eq!(q["state"], "running");
    assert_rate_limits(
        q,
        json!({"max_dispatches_per_second": 500, "max_burst_size": 100,
               "max_concurrent_dispatches": 1000}),
    );
    let mut normalized = q.clone();
    normalized["rate_limits"]["max_dispatches_per_second"] = json!(500);
    assert_defaults(&normalized);
    let created = parse_time(&q["created_at"]);
    let updated = parse_time(&q["updated_at"]);
    assert!(updated >= created);
    assert!(
        (created / 1_000_000_000 - i128::from(harness::unix_now())).abs() < 120,
        "created_at is not now: {q}"
    );
    assert_eq!(
        &s.get_queue("payments").await,
        q,
        "GET differs from the 201 body"
    );
}

async fn create_keeps_every_given_field(s: Server) {
    let body = json!({
        "name": "custom_Queue-1",
        "rate_limits": {"max_dispatches_per_second": 2.5, "max_burst_size": 7,
                        "max_concurrent_dispatches": 3},
        "retry_config": {"max_attempts": 4, "max_retry_duration_s": 60,
                         "min_backoff_ms": 250, "max_backoff_ms": 5000,
                         "max_doublings": 2},
        "dispatch_deadline_s": 30,
        "dedup_window_s": 0
    });
    let q = s.create_queue_with(body.clone()).await;
    for field in [
        "name",
        "retry_config",
        "dispatch_deadline_s",
        "dedup_window_s",
    ] {
        assert_eq!(q[field], body[field], "{field}: {q}");
    }
    assert_rate_limits(&q, body["rate_limits"].clone());
    assert_eq!(s.get_queue("custom_Queue-1").await, q);

    // Partial nested objects take the defaults for what they leave out.
    let q = s
        .create_queue_with(json!({"name": "partial", "retry_config": {"max_attempts": 3}}))
        .await;
    assert_eq!(
        q["retry_config"],
        json!({"max_attempts": 3, "max_retry_duration_s": 0, "min_backoff_ms": 100,
               "max_backoff_ms": 3600000, "max_doublings": 16})
    );
}

async fn duplicate_queue_is_a_conflict(s: Server) {
    s.create_queue_with(json!({"name": "q", "dispatch_deadline_s": 10}))
        .await;
    s.post(
        "/v1/queues",
        json!({"name": "q", "dispatch_deadline_s": 20}),
    )
    .await
    .problem(409, "QUEUE_ALREADY_EXISTS");
    assert_eq!(s.get_queue("q").await["dispatch_deadline_s"], json!(10));
    // Names are case-sensitive identifiers, not a conflict.
    s.create_queue("Q").await;
}

async fn queue_names_are_validated(s: Server) {
    let too_long = "a".repeat(101);
    for bad in [
        "",
        "has space",
        "dot.ted",
        "slash/ed",
        "é",
        too_long.as_str(),
    ] {
        s.post("/v1/queues", json!({ "name": bad }))
            .await
            .invalid("name");
    }
    s.post("/v1/queues", json!({})).await.invalid("name");
    assert!(s.collect_pages("/v1/queues").await.is_empty());

    let longest = "b".repeat(100);
    let q = s.create_queue(&longest).await;
    assert_eq!(q["name"], json!(longest));
    s.create_queue("x").await;
    s.create_queue("A-z_0-9").await;
}

async fn out_of_range_values_are_rejected_and_nothing_is_written(s: Server) {
    let cases = [
        (json!({"dispatch_deadline_s": 0}), "dispatch_deadline_s"),
        (json!({"dispatch_deadline_s": 1801}), "dispatch_deadline_s"),
        (json!({"dedup_window_s": -1}), "dedup_window_s"),
        (json!({"dedup_window_s": 2_592_001}), "dedup_window_s"),
        (
            json!({"rate_limits": {"max_dispatches_per_second": 0}}),
            "rate_limits.max_dispatches_per_second",
        ),
        (
            json!({"rate_limits": {"max_dispatches_per_second": -5}}),
            "rate_limits.max_dispatches_per_second",
        ),
        (
            json!({"rate_limits": {"max_dispatches_per_second": 100_001}}),
            "rate_limits.max_dispatches_per_second",
        ),
        (
            json!({"rate_limits": {"max_burst_size": 0}}),
            "rate_limits.max_burst_size",
        ),
        (
            json!({"rate_limits": {"max_burst_size": 100_001}}),
            "rate_limits.max_burst_size",
        ),
        (
            json!({"rate_limits": {"max_concurrent_dispatches": 0}}),
            "rate_limits.max_concurrent_dispatches",
        ),
        (
            json!({"rate_limits": {"max_concurrent_dispatches": 100_001}}),
            "rate_limits.max_concurrent_dispatches",
        ),
    ];
    for (extra, field) in cases {
        let mut body = extra.clone();
        body["name"] = json!("q");
        s.post("/v1/queues", body).await.invalid(field);
    }
    s.get("/v1/queues/q").await.problem(404, "NOT_FOUND");
    assert!(s.collect_pages("/v1/queues").await.is_empty());
    // max_backoff_ms caps every wait, a min above it included: kept as
    // given, every retry then waits max_backoff_ms.
    let capped = s
        .create_queue_with(
            json!({"name": "q", "retry_config": {"min_backoff_ms": 5000, "max_backoff_ms": 1000}}),
        )
        .await;
    assert_eq!(capped["retry_config"]["min_backoff_ms"], 5000);
    assert_eq!(capped["retry_config"]["max_backoff_ms"], 1000);
}

async fn range_boundaries_are_accepted(s: Server) {
    let low = s
        .create_queue_with(json!({
            "name": "low",
            "dispatch_deadline_s": 1,
            "dedup_window_s": 0,
            "rate_limits": {"max_dispatches_per_second": 0.001, "max_burst_size": 1,
                            "max_concurrent_dispatches": 1},
            "retry_config": {"min_backoff_ms": 500, "max_backoff_ms": 500}
        }))
        .await;
    assert_eq!(low["dispatch_deadline_s"], json!(1));
    assert_eq!(low["dedup_window_s"], json!(0));
    assert_rate_limits(
        &low,
        json!({"max_dispatches_per_second": 0.001, "max_burst_size": 1,
               "max_concurrent_dispatches": 1}),
    );
    let high = s
        .create_queue_with(json!({
            "name": "high",
            "dispatch_deadline_s": 1800,
            "dedup_window_s": 2_592_000,
            "rate_limits": {"max_dispatches_per_second": 100_000, "max_burst_size": 100_000,
                            "max_concurrent_dispatches": 100_000}
        }))
        .await;
    assert_eq!(high["dispatch_deadline_s"], json!(1800));
    assert_eq!(high["dedup_window_s"], json!(2_592_000));
    assert_rate_limits(
        &high,
        json!({"max_dispatches_per_second": 100_000, "max_burst_size": 100_000,
               "max_concurrent_dispatches": 100_000}),
    );
}

async fn unknown_fields_are_rejected_by_dotted_path(s: Server) {
    s.post("/v1/queues", json!({"name": "q", "colour": "blue"}))
        .await
        .invalid("colour");
    s.post(
        "/v1/queues",
        json!({"name": "q", "rate_limits": {"bogus": 1}}),
    )
    .await
    .invalid("rate_limits.bogus");
    s.post(
        "/v1/queues",
        json!({"name": "q", "retry_config": {"max_attempts": 3, "jitter": true}}),
    )
    .await
    .invalid("retry_config.jitter");
    assert!(s.collect_pages("/v1/queues").await.is_empty());
}

async fn wrong_types_name_the_field(s: Server) {
    let cases = [
        (json!({"name": 5}), "name"),
        (
            json!({"name": "q", "dispatch_deadline_s": "ten"}),
            "dispatch_deadline_s",
        ),
        (
            json!({"name": "q", "dedup_window_s": 1.5}),
            "dedup_window_s",
        ),
        (json!({"name": "q", "rate_limits": 3}), "rate_limits"),
        (
            json!({"name": "q", "rate_limits": {"max_burst_size": "many"}}),
            "rate_limits.max_burst_size",
        ),
        (
            json!({"name": "q", "retry_config": {"max_attempts": "3"}}),
            "retry_config.max_attempts",
        ),
    ];
    for (body, field) in cases {
        s.post("/v1/queues", body).await.invalid(field);
    }
    assert!(s.collect_pages("/v1/queues").await.is_empty());
}

async fn list_is_ordered_by_name_and_paginates(s: Server) {
    let empty = s.get("/v1/queues").await;
    empty.ok(200);
    assert_eq!(empty.json, json!({"items": [], "next_page_token": null}));

    for name in ["delta", "alpha", "echo", "charlie", "bravo"] {
        s.create_queue(name).await;
    }
    let sorted = ["alpha", "bravo", "charlie", "delta", "echo"];

    let all = s.get("/v1/queues").await.ok(200).json.clone();
    let names: Vec<_> = all["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|q| q["name"].clone())
        .collect();
    assert_eq!(names, sorted.map(|n| json!(n)).to_vec());
    assert_eq!(all["next_page_token"], Value::Null);
    assert_eq!(
        all["items"][0],
        s.get_queue("alpha").await,
        "listed queue differs from GET"
    );

    let first = s.get("/v1/queues?limit=2").await.ok(200).json.clone();
    assert_eq!(first["items"].as_array().map(Vec::len), Some(2));
    assert!(
        first["next_page_token"].is_string(),
        "no token after a full page: {first}"
    );
    let paged: Vec<_> = s
        .collect_pages("/v1/queues?limit=2")
        .await
        .iter()
        .map(|q| q["name"].clone())
        .collect();
    assert_eq!(paged, sorted.map(|n| json!(n)).to_vec());
}

async fn list_limit_and_page_token_are_validated(s: Server) {
    s.create_queue("q").await;
    for bad in ["0", "1001", "-1", "many"] {
        s.get(&format!("/v1/queues?limit={bad}"))
            .await
            .invalid("limit");
    }
    s.get("/v1/queues?limit=1000").await.ok(200);
    s.get("/v1/queues?limit=1").await.ok(200);
    s.get("/v1/queues?page_token=a%0Ab")
        .await
        .invalid("page_token");
    // A token is the position a page starts after: any other is one too.
    s.create_queue("r").await;
    let after_p = s.get("/v1/queues?page_token=p").await;
    let names: Vec<&str> = after_p.ok(200).json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["q", "r"]);
    let after_q = s.get("/v1/queues?page_token=q").await;
    assert_eq!(after_q.ok(200).json["items"][0]["name"], "r");
}

async fn patch_updates_only_the_given_fields(s: Server) {
    let original = s
        .create_queue_with(json!({
            "name": "q",
            "rate_limits": {"max_dispatches_per_second": 10, "max_burst_size": 20,
                            "max_concurrent_dispatches": 30},
            "retry_config": {"max_attempts": 7, "min_backoff_ms": 200},
            "dedup_window_s": 120
        }))
        .await;
    let resp = s
        .patch(
            "/v1/queues/q",
            json!({"dispatch_deadline_s": 45, "rate_limits": {"max_burst_size": 5}}),
        )
        .await;
    resp.ok(200);
    let q = resp.json.clone();
    assert_eq!(q["name"], "q");
    assert_eq!(q["dispatch_deadline_s"], json!(45));
    assert_rate_limits(
        &q,
        json!({"max_dispatches_per_second": 10, "max_burst_size": 5,
               "max_concurrent_dispatches": 30}),
    );
    assert_eq!(q["retry_config"], original["retry_config"]);
    assert_eq!(q["dedup_window_s"], json!(120));
    assert_eq!(q["state"], "running");
    assert_eq!(q["created_at"], original["created_at"]);
    assert!(parse_time(&q["updated_at"]) >= parse_time(&original["updated_at"]));
    assert_eq!(
        s.get_queue("q").await,
        q,
        "GET differs from the PATCH answer"
    );

    let q = s
        .patch(
            "/v1/queues/q",
            json!({"retry_config": {"max_attempts": 2}, "dedup_window_s": 0}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(q["retry_config"]["max_attempts"], json!(2));
    assert_eq!(q["retry_config"]["min_backoff_ms"], json!(200));
    assert_eq!(q["dedup_window_s"], json!(0));
    assert_eq!(q["dispatch_deadline_s"], json!(45));
}

async fn patch_rejects_name_unknown_fields_and_bad_values(s: Server) {
    let original = s.create_queue("q").await;
    s.patch("/v1/queues/q", json!({"name": "renamed"}))
        .await
        .invalid("name");
    s.patch("/v1/queues/q", json!({"colour": "blue"}))
        .await
        .invalid("colour");
    s.patch("/v1/queues/q", json!({"rate_limits": {"bogus": 1}}))
        .await
        .invalid("rate_limits.bogus");
    s.patch(
        "/v1/queues/q",
        json!({"dispatch_deadline_s": 1801, "dedup_window_s": 5}),
    )
    .await
    .invalid("dispatch_deadline_s");
    s.patch(
        "/v1/queues/q",
        json!({"rate_limits": {"max_burst_size": 0}}),
    )
    .await
    .invalid("rate_limits.max_burst_size");
    s.patch(
        "/v1/queues/q",
        json!({"retry_config": {"min_backoff_ms": 0}}),
    )
    .await
    .invalid("retry_config.min_backoff_ms");
    s.patch("/v1/queues/q", json!({"dedup_window_s": "long"}))
        .await
        .invalid("dedup_window_s");
    s.get("/v1/queues/renamed").await.problem(404, "NOT_FOUND");
    assert_eq!(
        s.get_queue("q").await,
        original,
        "a rejected PATCH changed the queue"
    );
}

async fn delete_removes_the_queue_and_its_tasks(s: Server) {
    s.create_paused_queue("q").await;
    s.create_paused_queue("other").await;
    s.create_task("q", task("t1")).await;
    s.create_task("q", task("t2")).await;
    s.create_task("other", task("t1")).await;

    let resp = s.delete("/v1/queues/q").await;
    resp.ok(204);
    assert!(resp.text.is_empty(), "204 with a body: {}", resp.text);
    s.get("/v1/queues/q").await.problem(404, "NOT_FOUND");
    s.get("/v1/queues/q/tasks").await.problem(404, "NOT_FOUND");
    s.get("/v1/queues/q/tasks/t1")
        .await
        .problem(404, "NOT_FOUND");
    s.post("/v1/queues/q/tasks", task("t3"))
        .await
        .problem(404, "NOT_FOUND");
    s.delete("/v1/queues/q").await.problem(404, "NOT_FOUND");
    let names: Vec<_> = s
        .collect_pages("/v1/queues")
        .await
        .iter()
        .map(|q| q["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("other")]);

    // The other queue kept its task; a queue made again under the name is empty.
    assert_eq!(s.get_task("other", "t1").await["state"], "queued");
    s.create_queue("q").await;
    assert!(s.all_tasks("q", "").await.is_empty());
}

async fn pause_and_resume_set_the_state(s: Server) {
    s.create_queue_with(json!({"name": "q", "dispatch_deadline_s": 33}))
        .await;
    let paused = s.post_empty("/v1/queues/q/pause").await;
    paused.ok(200);
    assert_eq!(paused.json["state"], "paused");
    assert_eq!(paused.json["name"], "q");
    assert_eq!(paused.json["dispatch_deadline_s"], json!(33));
    assert_eq!(s.get_queue("q").await["state"], "paused");
    let listed = s.collect_pages("/v1/queues").await;
    assert_eq!(listed[0]["state"], "paused");

    // Pausing twice leaves it paused.
    s.post_empty("/v1/queues/q/pause").await.ok(200);
    assert_eq!(s.get_queue("q").await["state"], "paused");

    let resumed = s.post_empty("/v1/queues/q/resume").await;
    resumed.ok(200);
    assert_eq!(resumed.json["state"], "running");
    assert_eq!(s.get_queue("q").await["state"], "running");
    // A PATCH does not touch the state.
    s.post_empty("/v1/queues/q/pause").await.ok(200);
    let patched = s
        .patch("/v1/queues/q", json!({"dispatch_deadline_s": 44}))
        .await;
    patched.ok(200);
    assert_eq!(patched.json["state"], "paused");
}

async fn paused_queue_accepts_tasks(s: Server) {
    s.create_queue("q").await;
    s.post_empty("/v1/queues/q/pause").await.ok(200);
    let t = s.create_task("q", task("t1")).await;
    assert_eq!(t["state"], "queued");
    assert_eq!(s.get_task("q", "t1").await["state"], "queued");
}

async fn purge_cancels_every_unfinished_task(s: Server) {
    s.create_paused_queue("q").await;
    s.create_paused_queue("bystander").await;
    s.create_task("q", task("queued-1")).await;
    s.create_task("q", task("queued-2")).await;
    let mut later = task("scheduled-1");
    later["schedule_time"] = json!(time_from_now(3600));
    assert_eq!(s.create_task("q", later).await["state"], "scheduled");
    s.create_task("q", task("already-cancelled")).await;
    let cancelled_before = s
        .delete("/v1/queues/q/tasks/already-cancelled")
        .await
        .ok(200)
        .json
        .clone();
    s.create_task("bystander", task("queued-1")).await;

    let resp = s.post_empty("/v1/queues/q/purge").await;
    resp.ok(200);
    assert_eq!(
        resp.json["cancelled"],
        json!(3),
        "purge answer: {}",
        resp.json
    );

    for id in ["queued-1", "queued-2", "scheduled-1"] {
        let t = s.get_task("q", id).await;
        assert_eq!(t["state"], "cancelled", "{id}: {t}");
        parse_time(&t["finished_at"]);
    }
    let again = s.get_task("q", "already-cancelled").await;
    assert_eq!(again["finished_at"], cancelled_before["finished_at"]);
    assert_eq!(s.get_task("bystander", "queued-1").await["state"], "queued");

    let second = s.post_empty("/v1/queues/q/purge").await;
    second.ok(200);
    assert_eq!(second.json["cancelled"], json!(0));
    // The queue itself stays, in its state, and accepts new tasks.
    assert_eq!(s.get_queue("q").await["state"], "paused");
    s.create_task("q", task("after-purge")).await;
}

async fn operations_on_unknown_queue_are_not_found(s: Server) {
    let attempts = [
        s.get("/v1/queues/ghost").await,
        s.patch("/v1/queues/ghost", json!({"dispatch_deadline_s": 5}))
            .await,
        s.delete("/v1/queues/ghost").await,
        s.post_empty("/v1/queues/ghost/pause").await,
        s.post_empty("/v1/queues/ghost/resume").await,
        s.post_empty("/v1/queues/ghost/purge").await,
        s.get("/v1/queues/ghost/tasks").await,
        s.post("/v1/queues/ghost/tasks", task("t1")).await,
    ];
    for resp in &attempts {
        resp.problem(404, "NOT_FOUND");
    }
    s.get("/v1/queues/ghost").await.problem(404, "NOT_FOUND");
}

async fn empty_patch_changes_nothing(s: Server) {
    let original = s
        .create_queue_with(json!({"name": "q", "dispatch_deadline_s": 12}))
        .await;
    let resp = s.patch("/v1/queues/q", json!({})).await;
    resp.ok(200);
    for field in [
        "name",
        "state",
        "rate_limits",
        "retry_config",
        "dispatch_deadline_s",
        "dedup_window_s",
        "created_at",
    ] {
        assert_eq!(resp.json[field], original[field], "{field}");
    }
}

async fn concurrent_creates_of_one_queue_make_one_queue(s: Server) {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..10 {
        let api = s.admin.clone();
        set.spawn(async move {
            api.post(
                "/v1/queues",
                json!({"name": "contended", "dispatch_deadline_s": 10 + i}),
            )
            .await
        });
    }
    let mut created = Vec::new();
    while let Some(resp) = set.join_next().await {
        let resp = resp.expect("join");
        if resp.status == 201 {
            created.push(resp.json.clone());
        } else {
            resp.problem(409, "QUEUE_ALREADY_EXISTS");
        }
    }
    assert_eq!(
        created.len(),
        1,
        "one name, {} queues created",
        created.len()
    );
    assert_eq!(s.get_queue("contended").await, created[0]);
}

/// Deleting a queue whose tasks are being dispatched (attempts in flight,
/// retries being scheduled) must still succeed, whatever the dispatcher is
/// doing at that moment.
async fn queue_being_dispatched_can_be_deleted(s: Server) {
    for round in 0..20 {
        let name = format!("busy-{round}");
        s.create_queue_with(
            json!({"name": name, "retry_config": {"min_backoff_ms": 10, "max_backoff_ms": 50}}),
        )
        .await;
        for i in 0..4 {
            // Port 9 (discard) refuses connections: every attempt fails fast
            // and the task goes back for a retry.
            s.create_task(&name, task(&format!("t{i}"))).await;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let t = s.get_task(&name, "t0").await;
            if t["attempt_count"].as_i64().unwrap_or(0) >= 1 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the task was never attempted: {t}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        s.delete(&format!("/v1/queues/{name}")).await.ok(204);
        s.get(&format!("/v1/queues/{name}"))
            .await
            .problem(404, "NOT_FOUND");
    }
}

/// Same race for purge and for cancelling single tasks: 200 every time.
async fn queue_being_dispatched_can_be_purged(s: Server) {
    for round in 0..10 {
        let name = format!("busy-{round}");
        s.create_queue_with(
            json!({"name": name, "retry_config": {"min_backoff_ms": 10, "max_backoff_ms": 50}}),
        )
        .await;
        for i in 0..4 {
            s.create_task(&name, task(&format!("t{i}"))).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(30 * (round % 3))).await;
        s.delete(&format!("/v1/queues/{name}/tasks/t0"))
            .await
            .ok(200);
        let purged = s.post_empty(&format!("/v1/queues/{name}/purge")).await;
        purged.ok(200);
        assert!(
            purged.json["cancelled"]
                .as_i64()
                .is_some_and(|n| (0..=3).contains(&n)),
            "{}",
            purged.json
        );
    }
}
