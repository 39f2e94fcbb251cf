//! Credentials in a target's headers are written once: no API answer or
//! console page shows them again, to a reader or an admin, while every
//! delivery still carries them.

use crate::harness::Server;
use crate::harness::jobs::{create_job, wait_runs_of};
use crate::harness::target::Target;
use serde_json::{Value, json};
use std::time::Duration;

idem_testkit::store_tests!(
    Server::start;
    secret_header_values_are_never_shown_and_always_sent,
    an_event_body_and_a_callback_target_show_no_secret,
    a_job_target_keeps_its_secrets_too,
    bad_secret_header_names_are_refused_and_write_nothing,
);

const SECRETS: [&str; 3] = [
    "Bearer s3cret-token",
    "session=s3cret-cookie",
    "s3cret-api-key",
];

fn assert_redacted(target: &Value, context: &str) {
    let text = target.to_string();
    for secret in SECRETS {
        assert!(!text.contains(secret), "{context} shows a secret: {text}");
    }
    let headers = &target["headers"];
    assert_eq!(headers["Authorization"], "<redacted>", "{context}");
    assert_eq!(headers["Cookie"], "<redacted>", "{context}");
    assert_eq!(headers["X-Api-Key"], "<redacted>", "{context}");
    assert_eq!(headers["X-Plain"], "shown", "{context}: not a secret");
    assert_eq!(target["secret_headers"], json!(["x-api-key"]), "{context}");
}

fn secret_target(url: String) -> Value {
    json!({
        "url": url,
        "headers": {"Authorization": SECRETS[0], "Cookie": SECRETS[1],
                    "X-Api-Key": SECRETS[2], "X-Plain": "shown"},
        "secret_headers": ["X-Api-Key"],
    })
}

async fn secret_header_values_are_never_shown_and_always_sent(s: Server) {
    let target = Target::start().await;
    s.create_queue("q").await;
    let created = s
        .post(
            "/v1/queues/q/tasks",
            json!({"task_id": "t", "target": secret_target(target.url("/ok"))}),
        )
        .await
        .ok(201)
        .json
        .clone();
    assert_redacted(&created["target"], "the create's answer");

    let got = target.wait_for("t", 1, Duration::from_secs(10)).await;
    assert_eq!(got[0].header("authorization"), Some(SECRETS[0]));
    assert_eq!(got[0].header("cookie"), Some(SECRETS[1]));
    assert_eq!(got[0].header("x-api-key"), Some(SECRETS[2]));
    assert_eq!(got[0].header("x-plain"), Some("shown"));

    let reader = s.with_key(&s.key_with_role("reader").await);
    for (who, api) in [("admin", s.with_key(&s.admin_key)), ("reader", reader)] {
        let task = api.get("/v1/queues/q/tasks/t").await.ok(200).json.clone();
        assert_redacted(&task["target"], &format!("GET as {who}"));
        let list = api.get("/v1/queues/q/tasks").await.ok(200).json.clone();
        assert_redacted(&list["items"][0]["target"], &format!("the list as {who}"));
    }
    // The console shows what the API shows.
    let cookie = crate::console::login_cookie(s.base(), &s.admin_key, &[]).await;
    let page = reqwest::Client::new()
        .get(format!("{}/ui/queues/q/tasks/t", s.base()))
        .header("cookie", cookie.split(';').next().unwrap())
        .send()
        .await
        .expect("the task's page")
        .text()
        .await
        .expect("its HTML");
    for secret in SECRETS {
        assert!(!page.contains(secret), "the console shows {secret}");
    }
    assert!(
        page.contains("redacted"),
        "the console names no header: {page}"
    );
}

async fn a_job_target_keeps_its_secrets_too(s: Server) {
    let target = Target::start().await;
    let job = create_job(
        &s,
        json!({"name": "nightly", "schedule": "* * * * * *",
               "target": secret_target(target.url("/ok"))}),
    )
    .await;
    assert_redacted(&job["target"], "the job's create answer");
    assert_redacted(
        &s.get("/v1/jobs/nightly").await.ok(200).json["target"],
        "GET job",
    );
    let runs = wait_runs_of(&target, "nightly", 1, Duration::from_secs(10)).await;
    assert_eq!(runs[0].header("authorization"), Some(SECRETS[0]));
    assert_eq!(runs[0].header("x-api-key"), Some(SECRETS[2]));
}

async fn bad_secret_header_names_are_refused_and_write_nothing(s: Server) {
    s.create_queue("q").await;
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "bad", "target": {"url": "https://example.com/",
               "headers": {"X-Api-Key": "k"}, "secret_headers": ["X-Api-Key", "not a name"]}}),
    )
    .await
    .invalid("target.secret_headers[1]");
    s.get("/v1/queues/q/tasks/bad")
        .await
        .problem(404, "NOT_FOUND");
}

/// A completion event carries the task as GET shows it, secrets redacted;
/// the callback's own credentials are sent to it and shown to nobody.
async fn an_event_body_and_a_callback_target_show_no_secret(s: Server) {
    let target = Target::start().await;
    let events = Target::start().await;
    s.create_queue("q").await;
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "t", "target": secret_target(target.url("/ok")),
               "on_success": {"url": events.url("/ok"),
                              "headers": {"Authorization": "Bearer s3cret-callback"}}}),
    )
    .await
    .ok(201);
    let task = s.get("/v1/queues/q/tasks/t").await.ok(200).json.clone();
    assert_eq!(task["on_success"]["headers"]["Authorization"], "<redacted>");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let event = loop {
        if let Some(r) = events.received().into_iter().next() {
            break r;
        }
        assert!(std::time::Instant::now() < deadline, "no event delivered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        event.header("authorization"),
        Some("Bearer s3cret-callback")
    );
    let body: Value = serde_json::from_slice(&event.body).expect("a JSON event");
    let text = body.to_string();
    assert!(
        text.contains("\"task_id\":\"t\""),
        "not the task's event: {text}"
    );
    for secret in SECRETS.iter().chain(&["s3cret-callback"]) {
        assert!(!text.contains(secret), "the event shows {secret}: {text}");
    }
}
