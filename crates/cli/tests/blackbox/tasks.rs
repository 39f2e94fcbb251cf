//! Tasks: creation, task ID sources and dedup, target validation, uploads,
//! listing, attempts, cancel and run.

use crate::harness;
use crate::harness::{
    Server, anonymous_task, header_in, is_uuid_v7, parse_time, task, time_from_now, upload_form,
};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

idem_testkit::store_tests!(
    Server::start;
    minimal_task_gets_a_uuid_v7_and_is_queued,
    create_keeps_every_given_field,
    task_id_sources_follow_the_documented_order,
    invalid_task_ids_are_rejected,
    task_in_unknown_queue_is_not_found,
    duplicate_task_id_is_a_conflict_naming_the_task,
    task_ids_are_unique_per_queue_only,
    cancelled_task_id_is_taken_for_the_dedup_window,
    zero_dedup_window_frees_the_id_at_once,
    target_url_must_be_http_or_https,
    target_takes_at_most_one_body,
    reserved_target_headers_are_refused,
    unknown_and_mistyped_fields_are_rejected,
    target_reads_back_in_the_form_given,
    multipart_upload_becomes_the_target_body,
    multipart_task_part_must_not_carry_a_body,
    schedule_time_decides_scheduled_or_queued,
    list_filters_by_state,
    list_paginates_and_validates_its_parameters,
    new_task_has_no_attempts,
    delete_cancels_the_task,
    run_queues_a_scheduled_task_now,
    run_refuses_a_cancelled_task,
    unknown_task_is_not_found,
    list_returns_50_tasks_by_default,
    body_limit_applies_to_uploads,
    concurrent_creates_of_one_task_id_make_one_task,
    concurrent_creates_of_distinct_tasks_all_succeed,
    json_target_takes_any_json_value,
    times_are_answered_in_utc_with_z,
    upload_content_type_replaces_the_task_parts_header,
    a_header_task_id_is_part_of_the_key_fingerprint,
    a_multipart_create_takes_its_task_id_from_a_header,
);

fn later(id: &str) -> Value {
    let mut body = task(id);
    body["schedule_time"] = json!(time_from_now(3600));
    body
}

fn ids(tasks: &[Value]) -> BTreeSet<String> {
    tasks
        .iter()
        .map(|t| t["task_id"].as_str().expect("task_id").to_string())
        .collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

async fn minimal_task_gets_a_uuid_v7_and_is_queued(s: Server) {
    s.create_paused_queue("q").await;
    let resp = s.post("/v1/queues/q/tasks", anonymous_task()).await;
    resp.ok(201);
    let t = resp.json.clone();
    let id = t["task_id"].as_str().expect("task_id");
    assert!(is_uuid_v7(id), "generated task_id {id:?} is not a UUIDv7");
    assert_eq!(
        resp.header("location").map(str::to_string),
        Some(format!("/v1/queues/q/tasks/{id}"))
    );
    assert_eq!(t["queue"], "q");
    assert_eq!(t["state"], "queued");
    assert_eq!(t["target"]["url"], "http://127.0.0.1:9/hook");
    assert_eq!(
        t["target"]["method"], "POST",
        "method defaults to POST: {t}"
    );
    assert_eq!(t["attempt_count"], json!(0));
    assert_eq!(t["finished_at"], Value::Null);
    assert_eq!(t["last_attempt"], Value::Null);
    for field in [
        "schedule_time",
        "dispatch_deadline_s",
        "retry_config",
        "finished_at",
        "last_attempt",
    ] {
        assert!(t.get(field).is_some(), "task without {field}: {t}");
    }
    let created = parse_time(&t["created_at"]);
    assert!(
        (created / 1_000_000_000 - i128::from(harness::unix_now())).abs() < 120,
        "created_at is not now: {t}"
    );
    assert_eq!(
        s.get_task("q", id).await,
        t,
        "GET differs from the 201 body"
    );

    let other = s.create_task("q", anonymous_task()).await;
    assert_ne!(other["task_id"], t["task_id"], "generated IDs repeat");
    assert!(is_uuid_v7(other["task_id"].as_str().expect("id")));
}

async fn create_keeps_every_given_field(s: Server) {
    s.create_paused_queue("payments").await;
    let when = time_from_now(7200);
    let body = json!({
        "task_id": "payment-12345",
        "target": {"url": "https://pay.internal/charge", "method": "PUT",
                   "headers": {"Content-Type": "application/json", "X-Tenant": "acme"},
                   "body": "{\"amount\": 100}"},
        "schedule_time": when,
        "dispatch_deadline_s": 30,
        "retry_config": {"max_attempts": 5}
    });
    let resp = s.post("/v1/queues/payments/tasks", body.clone()).await;
    resp.ok(201);
    assert_eq!(
        resp.header("location"),
        Some("/v1/queues/payments/tasks/payment-12345")
    );
    let t = resp.json.clone();
    assert_eq!(t["task_id"], "payment-12345");
    assert_eq!(t["queue"], "payments");
    assert_eq!(t["state"], "scheduled");
    assert_eq!(t["target"]["url"], body["target"]["url"]);
    assert_eq!(t["target"]["method"], "PUT");
    assert_eq!(t["target"]["body"], body["target"]["body"]);
    assert_eq!(
        header_in(&t["target"]["headers"], "x-tenant"),
        Some(&json!("acme")),
        "{t}"
    );
    assert_eq!(
        header_in(&t["target"]["headers"], "content-type"),
        Some(&json!("application/json")),
        "{t}"
    );
    assert_eq!(parse_time(&t["schedule_time"]), parse_time(&json!(when)));
    assert_eq!(t["dispatch_deadline_s"], json!(30));
    assert_eq!(t["retry_config"]["max_attempts"], json!(5));
    assert_eq!(s.get_task("payments", "payment-12345").await, t);
}

async fn task_id_sources_follow_the_documented_order(s: Server) {
    s.create_paused_queue("q").await;
    let post = |headers: &[(&str, &str)], body: Value| {
        let mut req = s.request(Method::POST, "/v1/queues/q/tasks").json(&body);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        req.send()
    };
    let all = [
        ("Idem-Task-Id", "from-idem-header"),
        ("X-Fc-Stateful-Async-Invocation-Id", "from-fc-header"),
        ("X-Fc-Request-Id", "from-request-id"),
    ];
    let resp = post(&all, task("from-body")).await;
    resp.ok(201);
    assert_eq!(resp.json["task_id"], "from-body");

    let resp = post(&all, anonymous_task()).await;
    resp.ok(201);
    assert_eq!(resp.json["task_id"], "from-idem-header");

    let resp = post(&all[1..], anonymous_task()).await;
    resp.ok(201);
    assert_eq!(resp.json["task_id"], "from-fc-header");

    let resp = post(&all[2..], anonymous_task()).await;
    resp.ok(201);
    assert_eq!(resp.json["task_id"], "from-request-id");
    assert_eq!(
        resp.header("location"),
        Some("/v1/queues/q/tasks/from-request-id")
    );

    // The header-given ID dedups like a body-given one.
    post(&all[2..], anonymous_task())
        .await
        .problem(409, "TASK_ALREADY_EXISTS");

    // A request ID that ingresses inject is not a task ID source unless
    // the operator names its header.
    let resp = post(&[("X-Request-Id", "injected-by-ingress")], anonymous_task()).await;
    resp.ok(201);
    let generated = resp.json["task_id"].as_str().unwrap().to_string();
    assert!(is_uuid_v7(&generated));

    let listed = s.all_tasks("q", "").await;
    assert_eq!(
        ids(&listed),
        set(&[
            "from-body",
            "from-idem-header",
            "from-fc-header",
            "from-request-id",
            &generated
        ])
    );
}

async fn invalid_task_ids_are_rejected(s: Server) {
    s.create_paused_queue("q").await;
    let too_long = "t".repeat(501);
    for bad in [
        "",
        "has space",
        "dot.ted",
        "slash/ed",
        "ünï",
        too_long.as_str(),
    ] {
        s.post("/v1/queues/q/tasks", task(bad))
            .await
            .invalid("task_id");
    }
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": 17, "target": {"url": "http://h/"}}),
    )
    .await
    .invalid("task_id");
    s.request(Method::POST, "/v1/queues/q/tasks")
        .header("Idem-Task-Id", "has space")
        .json(&anonymous_task())
        .send()
        .await
        .invalid("task_id");
    assert!(
        s.all_tasks("q", "").await.is_empty(),
        "a rejected task was created"
    );
    // A request ID that cannot be a task ID is ignored, never an error.
    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks")
        .header("X-Fc-Request-Id", "dot.ted")
        .json(&anonymous_task())
        .send()
        .await;
    resp.ok(201);
    assert!(is_uuid_v7(resp.json["task_id"].as_str().unwrap()));

    let longest = "t".repeat(500);
    assert_eq!(
        s.create_task("q", task(&longest)).await["task_id"],
        json!(longest)
    );
    s.create_task("q", task("A-z_0-9")).await;
}

async fn task_in_unknown_queue_is_not_found(s: Server) {
    s.post("/v1/queues/ghost/tasks", task("t1"))
        .await
        .problem(404, "NOT_FOUND");
    s.get("/v1/queues/ghost").await.problem(404, "NOT_FOUND");
}

/// A `TASK_ALREADY_EXISTS` answer's task names `original`, still queued.
fn names_the_queued_task(existing: &Value, original: &Value) {
    assert_eq!(existing["id"], original["task_id"], "{existing}");
    assert_eq!(existing["state"], "queued", "{existing}");
    assert_eq!(
        parse_time(&existing["created_at"]) / 1000,
        parse_time(&original["created_at"]) / 1000,
        "{existing} against {original}"
    );
    assert!(
        existing.get("finished_at").is_some_and(Value::is_null),
        "{existing}"
    );
}

async fn duplicate_task_id_is_a_conflict_naming_the_task(s: Server) {
    s.create_paused_queue("q").await;
    let original = s.create_task("q", task("payment-12345")).await;

    let mut again = task("payment-12345");
    again["target"]["url"] = json!("http://127.0.0.1:9/other");
    let resp = s.post("/v1/queues/q/tasks", again).await;
    let doc = resp.problem(409, "TASK_ALREADY_EXISTS");
    names_the_queued_task(&doc["extensions"]["task"], &original);

    // Nothing was created or changed.
    assert_eq!(s.all_tasks("q", "").await.len(), 1);
    assert_eq!(s.get_task("q", "payment-12345").await, original);
}

async fn task_ids_are_unique_per_queue_only(s: Server) {
    s.create_paused_queue("a").await;
    s.create_paused_queue("b").await;
    s.create_task("a", task("same")).await;
    let t = s.create_task("b", task("same")).await;
    assert_eq!(t["queue"], "b");
    assert_eq!(s.get_task("a", "same").await["queue"], "a");
}

async fn cancelled_task_id_is_taken_for_the_dedup_window(s: Server) {
    s.create_paused_queue_with(json!({"name": "q", "dedup_window_s": 1}))
        .await;
    let first = s.create_task("q", task("t")).await;
    let cancelled = s.delete("/v1/queues/q/tasks/t").await.ok(200).json.clone();
    assert_eq!(cancelled["state"], "cancelled");
    let finished = parse_time(&cancelled["finished_at"]);

    let resp = s.post("/v1/queues/q/tasks", task("t")).await;
    let doc = resp.problem(409, "TASK_ALREADY_EXISTS");
    let existing = &doc["extensions"]["task"];
    assert_eq!(existing["id"], "t", "{doc}");
    assert_eq!(existing["state"], "cancelled", "{doc}");
    assert_eq!(
        parse_time(&existing["finished_at"]) / 1000,
        finished / 1000,
        "{doc}"
    );
    assert_eq!(
        parse_time(&existing["created_at"]) / 1000,
        parse_time(&first["created_at"]) / 1000,
        "{doc}"
    );
    // Still readable while the window lasts.
    assert_eq!(s.get_task("q", "t").await["state"], "cancelled");

    tokio::time::sleep(Duration::from_millis(2200)).await;
    let second = s.create_task("q", task("t")).await;
    assert_eq!(second["state"], "queued");
    assert_eq!(second["finished_at"], Value::Null);
    assert!(
        parse_time(&second["created_at"]) > parse_time(&first["created_at"]),
        "the ID did not create a new task: {second}"
    );
    let read = s.get_task("q", "t").await;
    assert_eq!(read["state"], "queued");
    assert_eq!(read["created_at"], second["created_at"]);
}

async fn zero_dedup_window_frees_the_id_at_once(s: Server) {
    s.create_paused_queue_with(json!({"name": "q", "dedup_window_s": 0}))
        .await;
    let first = s.create_task("q", task("t")).await;
    // While the task exists the ID is taken, window or not.
    s.post("/v1/queues/q/tasks", task("t"))
        .await
        .problem(409, "TASK_ALREADY_EXISTS");
    s.delete("/v1/queues/q/tasks/t").await.ok(200);
    let second = s.create_task("q", task("t")).await;
    assert_eq!(second["state"], "queued");
    assert!(parse_time(&second["created_at"]) >= parse_time(&first["created_at"]));
}

async fn target_url_must_be_http_or_https(s: Server) {
    s.create_paused_queue("q").await;
    for url in [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "not a url",
        "",
        "//host/x",
    ] {
        s.post(
            "/v1/queues/q/tasks",
            json!({"task_id": "t", "target": {"url": url}}),
        )
        .await
        .invalid("target.url");
    }
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "t", "target": {"method": "POST"}}),
    )
    .await
    .invalid("target.url");
    // Without a target it is a pull queue's task: well formed, but not
    // what a push queue takes.
    s.post("/v1/queues/q/tasks", json!({"task_id": "t"}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    assert!(s.all_tasks("q", "").await.is_empty());

    // Private addresses are allowed: this is self-hosted.
    for (id, url) in [
        ("a", "http://10.0.0.1:8080/hook"),
        ("b", "https://localhost/hook"),
        ("c", "http://192.168.1.2/x?y=z"),
    ] {
        let t = s
            .create_task("q", json!({"task_id": id, "target": {"url": url}}))
            .await;
        assert_eq!(t["target"]["url"], url);
    }
}

async fn target_takes_at_most_one_body(s: Server) {
    s.create_paused_queue("q").await;
    let url = "http://127.0.0.1:9/hook";
    let cases = [
        json!({"url": url, "body": "a", "json": {"a": 1}}),
        json!({"url": url, "body": "a", "body_base64": "YQ=="}),
        json!({"url": url, "body_base64": "YQ==", "json": 1}),
        json!({"url": url, "body": "a", "body_base64": "YQ==", "json": [1]}),
    ];
    for target in cases {
        s.post(
            "/v1/queues/q/tasks",
            json!({"task_id": "t", "target": target}),
        )
        .await
        .invalid_under("target");
    }
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "t", "target": {"url": url, "body_base64": "not base64!"}}),
    )
    .await
    .invalid("target.body_base64");
    assert!(s.all_tasks("q", "").await.is_empty());
}

async fn reserved_target_headers_are_refused(s: Server) {
    s.create_paused_queue("q").await;
    for name in [
        "Idempotency-Key",
        "IDEMPOTENCY-KEY",
        "Idem-Task-Id",
        "idem-signature",
        "Webhook-Signature",
        "Webhook-Id",
        "webhook-timestamp",
    ] {
        let body = json!({
            "task_id": "t",
            "target": {"url": "http://127.0.0.1:9/hook", "headers": { name: "x" }}
        });
        s.post("/v1/queues/q/tasks", body)
            .await
            .invalid(&format!("target.headers.{name}"));
    }
    assert!(s.all_tasks("q", "").await.is_empty());
    // A header that merely contains a reserved word is fine.
    let t = s
        .create_task(
            "q",
            json!({"task_id": "t", "target": {"url": "http://127.0.0.1:9/hook",
                   "headers": {"X-Idem-Trace": "1", "X-Webhook": "2"}}}),
        )
        .await;
    assert_eq!(
        header_in(&t["target"]["headers"], "x-idem-trace"),
        Some(&json!("1"))
    );
}

async fn unknown_and_mistyped_fields_are_rejected(s: Server) {
    s.create_paused_queue("q").await;
    let url = "http://127.0.0.1:9/hook";
    let cases = [
        (
            json!({"task_id": "t", "target": {"url": url}, "urgency": 1}),
            "urgency",
        ),
        (
            json!({"task_id": "t", "target": {"url": url, "foo": 1}}),
            "target.foo",
        ),
        (
            json!({"task_id": "t", "target": {"url": url}, "retry_config": {"bogus": 1}}),
            "retry_config.bogus",
        ),
        (
            json!({"task_id": "t", "target": {"url": url}, "schedule_time": "tomorrow"}),
            "schedule_time",
        ),
        (
            json!({"task_id": "t", "target": {"url": url}, "schedule_time": "2026-10-16 12:00:00"}),
            "schedule_time",
        ),
        (
            json!({"task_id": "t", "target": {"url": url}, "dispatch_deadline_s": "ten"}),
            "dispatch_deadline_s",
        ),
        (json!({"task_id": "t", "target": "http://h/"}), "target"),
        (json!({"task_id": "t", "target": {"url": 42}}), "target.url"),
        (
            json!({"task_id": "t", "target": {"url": url, "body": {"not": "text"}}}),
            "target.body",
        ),
    ];
    for (body, field) in cases {
        s.post("/v1/queues/q/tasks", body).await.invalid(field);
    }
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "t", "target": {"url": url, "headers": {"X-A": 5}}}),
    )
    .await
    .invalid_under("target.headers");
    assert!(s.all_tasks("q", "").await.is_empty());
}

async fn target_reads_back_in_the_form_given(s: Server) {
    s.create_paused_queue("q").await;
    let url = "http://127.0.0.1:9/hook";
    let text = s
        .create_task(
            "q",
            json!({"task_id": "text", "target": {"url": url, "body": "héllo\n"}}),
        )
        .await;
    let b64 = s
        .create_task(
            "q",
            json!({"task_id": "b64", "target": {"url": url, "body_base64": "AAH+/w=="}}),
        )
        .await;
    let value = json!({"amount": 100, "items": [1, "two", null], "nested": {"ok": true}});
    let js = s
        .create_task(
            "q",
            json!({"task_id": "json", "target": {"url": url, "json": value}}),
        )
        .await;
    let none = s
        .create_task(
            "q",
            json!({"task_id": "none", "target": {"url": url, "method": "GET"}}),
        )
        .await;

    for (t, key, expected) in [
        (&text, "body", json!("héllo\n")),
        (&b64, "body_base64", json!("AAH+/w==")),
        (&js, "json", value.clone()),
    ] {
        assert_eq!(t["target"][key], expected, "{t}");
        for other in ["body", "body_base64", "json"] {
            if other != key {
                assert!(
                    t["target"].get(other).is_none_or(Value::is_null),
                    "{key} task also shows {other}: {t}"
                );
            }
        }
        let id = t["task_id"].as_str().expect("id");
        assert_eq!(s.get_task("q", id).await["target"], t["target"]);
    }
    assert_eq!(none["target"]["method"], "GET");
    for field in ["body", "body_base64", "json"] {
        assert!(
            none["target"].get(field).is_none_or(Value::is_null),
            "{none}"
        );
    }
}

async fn multipart_upload_becomes_the_target_body(s: Server) {
    s.create_paused_queue("q").await;
    let bytes: Vec<u8> = (0..=255u8).chain([0, 0xff, 0x80]).collect();
    let form = upload_form(
        json!({"task_id": "upload-1",
               "target": {"url": "http://127.0.0.1:9/img", "method": "PUT",
                          "headers": {"X-Kind": "thumbnail"}}}),
        bytes.clone(),
        "image/png",
    );
    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks")
        .multipart(form)
        .send()
        .await;
    resp.ok(201);
    assert_eq!(resp.header("location"), Some("/v1/queues/q/tasks/upload-1"));
    let t = resp.json.clone();
    assert_eq!(t["task_id"], "upload-1");
    assert_eq!(t["state"], "queued");
    assert_eq!(t["target"]["method"], "PUT");
    assert_eq!(
        t["target"]["body_base64"],
        json!(STANDARD.encode(&bytes)),
        "{t}"
    );
    assert_eq!(
        header_in(&t["target"]["headers"], "content-type"),
        Some(&json!("image/png")),
        "{t}"
    );
    assert_eq!(
        header_in(&t["target"]["headers"], "x-kind"),
        Some(&json!("thumbnail")),
        "{t}"
    );
    assert_eq!(s.get_task("q", "upload-1").await["target"], t["target"]);
}

async fn multipart_task_part_must_not_carry_a_body(s: Server) {
    s.create_paused_queue("q").await;
    let form = upload_form(
        json!({"task_id": "upload-2",
               "target": {"url": "http://127.0.0.1:9/img", "body": "inline"}}),
        b"file".to_vec(),
        "text/plain",
    );
    s.request(Method::POST, "/v1/queues/q/tasks")
        .multipart(form)
        .send()
        .await
        .problem(400, "INVALID_ARGUMENT");
    // A multipart create without its task part is refused too.
    let form = Form::new().part(
        "body",
        Part::bytes(b"file".to_vec())
            .file_name("f.bin")
            .mime_str("application/octet-stream")
            .expect("mime"),
    );
    s.request(Method::POST, "/v1/queues/q/tasks")
        .multipart(form)
        .send()
        .await
        .problem(400, "INVALID_ARGUMENT");
    assert!(s.all_tasks("q", "").await.is_empty());
}

async fn schedule_time_decides_scheduled_or_queued(s: Server) {
    s.create_paused_queue("q").await;
    let future = s.create_task("q", later("future")).await;
    assert_eq!(future["state"], "scheduled");
    assert!(parse_time(&future["schedule_time"]) > parse_time(&future["created_at"]));

    let mut past = task("past");
    past["schedule_time"] = json!(time_from_now(-3600));
    assert_eq!(s.create_task("q", past).await["state"], "queued");

    let mut fractional = task("fractional");
    fractional["schedule_time"] = json!("2099-01-02T03:04:05.678Z");
    let t = s.create_task("q", fractional).await;
    assert_eq!(t["state"], "scheduled");
    assert_eq!(
        parse_time(&t["schedule_time"]),
        parse_time(&json!("2099-01-02T03:04:05.678Z"))
    );

    assert_eq!(s.create_task("q", task("now")).await["state"], "queued");
    assert_eq!(s.get_task("q", "future").await["state"], "scheduled");
}

async fn list_filters_by_state(s: Server) {
    s.create_paused_queue("q").await;
    s.create_paused_queue("elsewhere").await;
    s.create_task("q", task("q1")).await;
    s.create_task("q", task("q2")).await;
    s.create_task("q", later("s1")).await;
    s.create_task("q", task("c1")).await;
    s.delete("/v1/queues/q/tasks/c1").await.ok(200);
    s.create_task("elsewhere", task("e1")).await;

    let all = s.all_tasks("q", "").await;
    assert_eq!(ids(&all), set(&["q1", "q2", "s1", "c1"]));
    for t in &all {
        assert_eq!(t["queue"], "q");
    }
    assert_eq!(
        ids(&s.all_tasks("q", "state=queued").await),
        set(&["q1", "q2"])
    );
    assert_eq!(
        ids(&s.all_tasks("q", "state=scheduled").await),
        set(&["s1"])
    );
    assert_eq!(
        ids(&s.all_tasks("q", "state=cancelled").await),
        set(&["c1"])
    );
    assert!(s.all_tasks("q", "state=succeeded").await.is_empty());
    assert!(s.all_tasks("q", "state=failed").await.is_empty());
    assert!(s.all_tasks("q", "state=running").await.is_empty());

    s.get("/v1/queues/q/tasks?state=done")
        .await
        .invalid("state");
    s.get("/v1/queues/q/tasks?state=QUEUED")
        .await
        .invalid("state");
}

async fn list_paginates_and_validates_its_parameters(s: Server) {
    s.create_paused_queue("q").await;
    let empty = s.get("/v1/queues/q/tasks").await;
    empty.ok(200);
    assert_eq!(empty.json, json!({"items": [], "next_page_token": null}));

    let mut expected = Vec::new();
    for i in 0..7 {
        let id = format!("t{i}");
        s.create_task("q", task(&id)).await;
        expected.push(id);
    }
    let first = s
        .get("/v1/queues/q/tasks?limit=3")
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(first["items"].as_array().map(Vec::len), Some(3));
    assert!(first["next_page_token"].is_string(), "{first}");

    let paged = s.all_tasks("q", "limit=3").await;
    assert_eq!(
        paged.len(),
        7,
        "pages repeat or skip tasks: {:?}",
        ids(&paged)
    );
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    assert_eq!(ids(&paged), set(&expected));
    assert_eq!(
        ids(&s.all_tasks("q", "limit=1&state=queued").await).len(),
        7
    );
    assert_eq!(s.all_tasks("q", "limit=1000").await.len(), 7);

    for bad in ["0", "1001", "-3", "x"] {
        s.get(&format!("/v1/queues/q/tasks?limit={bad}"))
            .await
            .invalid("limit");
    }
    s.get("/v1/queues/q/tasks?page_token=%7F")
        .await
        .invalid("page_token");
}

async fn new_task_has_no_attempts(s: Server) {
    s.create_paused_queue("q").await;
    s.create_task("q", later("t1")).await;
    let resp = s.get("/v1/queues/q/tasks/t1/attempts").await;
    resp.ok(200);
    assert_eq!(resp.json, json!({"items": [], "next_page_token": null}));
    s.get("/v1/queues/q/tasks/ghost/attempts")
        .await
        .problem(404, "NOT_FOUND");
}

async fn delete_cancels_the_task(s: Server) {
    s.create_paused_queue("q").await;
    let before = s.create_task("q", later("t1")).await;
    s.create_task("q", task("t2")).await;
    let resp = s.delete("/v1/queues/q/tasks/t1").await;
    resp.ok(200);
    let t = resp.json.clone();
    assert_eq!(t["task_id"], "t1");
    assert_eq!(t["state"], "cancelled");
    assert!(parse_time(&t["finished_at"]) >= parse_time(&before["created_at"]));
    assert_eq!(t["created_at"], before["created_at"]);
    assert_eq!(s.get_task("q", "t1").await, t);

    let queued = s.delete("/v1/queues/q/tasks/t2").await;
    queued.ok(200);
    assert_eq!(queued.json["state"], "cancelled");
    parse_time(&queued.json["finished_at"]);
}

async fn run_queues_a_scheduled_task_now(s: Server) {
    s.create_paused_queue("q").await;
    s.create_task("q", later("t1")).await;
    let resp = s.post_empty("/v1/queues/q/tasks/t1/run").await;
    resp.ok(200);
    assert_eq!(resp.json["task_id"], "t1");
    assert_eq!(resp.json["state"], "queued");
    assert_eq!(s.get_task("q", "t1").await["state"], "queued");
    assert_eq!(ids(&s.all_tasks("q", "state=scheduled").await), set(&[]));
}

async fn run_refuses_a_cancelled_task(s: Server) {
    s.create_paused_queue("q").await;
    s.create_task("q", later("t1")).await;
    let cancelled = s.delete("/v1/queues/q/tasks/t1").await.ok(200).json.clone();
    s.post_empty("/v1/queues/q/tasks/t1/run")
        .await
        .problem(409, "FAILED_PRECONDITION");
    let after = s.get_task("q", "t1").await;
    assert_eq!(after["state"], "cancelled");
    assert_eq!(after["finished_at"], cancelled["finished_at"]);
}

async fn unknown_task_is_not_found(s: Server) {
    s.create_paused_queue("q").await;
    s.get("/v1/queues/q/tasks/ghost")
        .await
        .problem(404, "NOT_FOUND");
    s.delete("/v1/queues/q/tasks/ghost")
        .await
        .problem(404, "NOT_FOUND");
    s.post_empty("/v1/queues/q/tasks/ghost/run")
        .await
        .problem(404, "NOT_FOUND");
    s.get("/v1/queues/ghost/tasks/ghost")
        .await
        .problem(404, "NOT_FOUND");
}

async fn list_returns_50_tasks_by_default(s: Server) {
    s.create_paused_queue("q").await;
    for i in 0..55 {
        s.create_task("q", task(&format!("t{i:02}"))).await;
    }
    let first = s.get("/v1/queues/q/tasks").await.ok(200).json.clone();
    assert_eq!(
        first["items"].as_array().map(Vec::len),
        Some(50),
        "default page size"
    );
    let token = first["next_page_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no next_page_token after 50 of 55 tasks"));
    let rest = s
        .get(&format!(
            "/v1/queues/q/tasks?page_token={}",
            harness::encode_query(token)
        ))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(rest["items"].as_array().map(Vec::len), Some(5));
    assert_eq!(rest["next_page_token"], Value::Null);
}

async fn body_limit_applies_to_uploads(s: Server) {
    s.create_paused_queue("q").await;
    let form = upload_form(
        json!({"task_id": "huge", "target": {"url": "http://127.0.0.1:9/x"}}),
        vec![7u8; 1_048_576 + 4096],
        "application/octet-stream",
    );
    s.request(Method::POST, "/v1/queues/q/tasks")
        .multipart(form)
        .send()
        .await
        .problem(413, "PAYLOAD_TOO_LARGE");
    s.fresh_admin()
        .get("/v1/queues/q/tasks/huge")
        .await
        .problem(404, "NOT_FOUND");
}

/// Task-ID dedup holds under a race: one create wins, the rest get 409.
async fn concurrent_creates_of_one_task_id_make_one_task(s: Server) {
    s.create_paused_queue("q").await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..12 {
        let api = s.admin.clone();
        set.spawn(async move {
            let mut body = task("contended");
            body["target"]["json"] = json!({ "writer": i });
            api.post("/v1/queues/q/tasks", body).await
        });
    }
    let mut created = Vec::new();
    let mut named = Vec::new();
    while let Some(resp) = set.join_next().await {
        let resp = resp.expect("join");
        if resp.status == 201 {
            created.push(resp.json.clone());
        } else {
            // Each loser names the task that won, whether its create met it
            // in the same group commit or read it after.
            let doc = resp.problem(409, "TASK_ALREADY_EXISTS");
            named.push(doc["extensions"]["task"].clone());
        }
    }
    assert_eq!(
        created.len(),
        1,
        "one task ID, {} tasks created",
        created.len()
    );
    assert_eq!(s.all_tasks("q", "").await.len(), 1);
    assert_eq!(created[0]["task_id"], "contended");
    for task in &named {
        names_the_queued_task(task, &created[0]);
    }
}

async fn concurrent_creates_of_distinct_tasks_all_succeed(s: Server) {
    s.create_paused_queue("q").await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..30 {
        let api = s.admin.clone();
        set.spawn(async move { api.post("/v1/queues/q/tasks", task(&format!("t{i}"))).await });
    }
    while let Some(resp) = set.join_next().await {
        resp.expect("join").ok(201);
    }
    assert_eq!(s.all_tasks("q", "").await.len(), 30);
}

/// API.md §3: `json` is any JSON value, `null` and other falsy values included;
/// each reads back as given.
async fn json_target_takes_any_json_value(s: Server) {
    s.create_paused_queue("q").await;
    for (i, value) in [
        json!(false),
        json!(0),
        json!(""),
        json!([]),
        json!({}),
        Value::Null,
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("j{i}");
        let t = s
            .create_task(
                "q",
                json!({"task_id": id, "target": {"url": "http://127.0.0.1:9/", "json": value}}),
            )
            .await;
        assert_eq!(
            t["target"].get("json"),
            Some(&value),
            "json {value} did not read back: {t}"
        );
        assert_eq!(s.get_task("q", &id).await["target"], t["target"]);
    }
    // `null` is a body like any other: it cannot be combined with `body`.
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "both", "target": {"url": "http://127.0.0.1:9/", "json": null, "body": "x"}}),
    )
    .await
    .invalid_under("target");
}

/// API.md §1: times are RFC 3339 in UTC with `Z`, whatever offset a client used.
async fn times_are_answered_in_utc_with_z(s: Server) {
    s.create_paused_queue("q").await;
    let resp = s
        .post(
            "/v1/queues/q/tasks",
            json!({"task_id": "tz", "target": {"url": "http://127.0.0.1:9/"},
                   "schedule_time": "2099-10-16T14:00:00+02:00"}),
        )
        .await;
    if resp.status == 201 {
        assert_eq!(
            parse_time(&resp.json["schedule_time"]),
            parse_time(&json!("2099-10-16T12:00:00Z")),
            "{}",
            resp.json
        );
        let read = s.get_task("q", "tz").await;
        parse_time(&read["schedule_time"]);
        parse_time(&read["created_at"]);
    } else {
        resp.invalid("schedule_time");
    }
}

async fn upload_content_type_replaces_the_task_parts_header(s: Server) {
    s.create_paused_queue("q").await;
    let form = upload_form(
        json!({"task_id": "upload-3",
               "target": {"url": "http://127.0.0.1:9/img",
                          "headers": {"content-type": "text/plain"}}}),
        b"\x00\x01bytes".to_vec(),
        "image/jpeg",
    );
    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks")
        .multipart(form)
        .send()
        .await;
    resp.ok(201);
    let headers = resp.json["target"]["headers"]
        .as_object()
        .unwrap_or_else(|| panic!("no headers: {}", resp.json));
    let types: Vec<_> = headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.clone())
        .collect();
    assert_eq!(types, vec![json!("image/jpeg")], "{}", resp.json);
}

/// API.md §3: the task ID taken from a header is part of the
/// Idempotency-Key fingerprint, as if it were in the body.
async fn a_header_task_id_is_part_of_the_key_fingerprint(s: Server) {
    s.create_paused_queue("q").await;
    let post = |key: &str, header: (&str, &str), body: Value| {
        s.request(Method::POST, "/v1/queues/q/tasks")
            .header("Idempotency-Key", key)
            .header(header.0, header.1)
            .json(&body)
            .send()
    };
    let first = post("k1", ("Idem-Task-Id", "from-header-a"), anonymous_task()).await;
    first.ok(201);
    assert_eq!(first.json["task_id"], "from-header-a");
    let replay = post("k1", ("Idem-Task-Id", "from-header-a"), anonymous_task()).await;
    replay.ok(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    let other = post("k1", ("Idem-Task-Id", "from-header-b"), anonymous_task()).await;
    let problem = other.problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    assert_eq!(
        problem["extensions"]["idempotency"]["differs"],
        json!(["body"])
    );
    let fc = post(
        "k1",
        ("X-Fc-Stateful-Async-Invocation-Id", "from-header-b"),
        anonymous_task(),
    )
    .await;
    fc.problem(422, "IDEMPOTENCY_KEY_MISMATCH");

    // A header the body's own ID overrides is not used, and changes
    // nothing: a varying request ID never turns a retry into a 422.
    post("k2", ("X-Fc-Request-Id", "r1"), task("from-body"))
        .await
        .ok(201);
    let retried = post("k2", ("X-Fc-Request-Id", "r2"), task("from-body")).await;
    retried.ok(201);
    assert_eq!(retried.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        ids(&s.all_tasks("q", "").await),
        set(&["from-header-a", "from-body"])
    );
}

async fn a_multipart_create_takes_its_task_id_from_a_header(s: Server) {
    s.create_paused_queue("q").await;
    let form = || {
        Form::new()
            .part(
                "task",
                Part::text(r#"{"target": {"url": "http://127.0.0.1:9/upload"}}"#)
                    .mime_str("application/json")
                    .unwrap(),
            )
            .part("body", Part::bytes(vec![0u8, 1, 2]).file_name("b.bin"))
    };
    let send = |key: &str, id: &str| {
        s.request(Method::POST, "/v1/queues/q/tasks")
            .header("Idempotency-Key", key)
            .header("Idem-Task-Id", id)
            .multipart(form())
            .send()
    };
    let created = send("m1", "upload-a").await;
    created.ok(201);
    assert_eq!(created.json["task_id"], "upload-a");
    let replay = send("m1", "upload-a").await;
    replay.ok(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    send("m1", "upload-b")
        .await
        .problem(422, "IDEMPOTENCY_KEY_MISMATCH");
    assert_eq!(ids(&s.all_tasks("q", "").await), set(&["upload-a"]));
}

mod operator_flags {
    use super::*;

    idem_testkit::store_tests!(the_request_id_header_is_chosen_by_the_operator);

    async fn the_request_id_header_is_chosen_by_the_operator(kind: idem_testkit::Backend) {
        let s = Server::start_with(kind, &["--request-id-header", "X-Request-Id"]).await;
        s.create_paused_queue("q").await;
        let resp = s
            .request(Method::POST, "/v1/queues/q/tasks")
            .header("X-Request-Id", "from-request-id")
            .header("X-Fc-Request-Id", "not-the-named-header")
            .json(&anonymous_task())
            .send()
            .await;
        resp.ok(201);
        assert_eq!(resp.json["task_id"], "from-request-id");
    }
}
