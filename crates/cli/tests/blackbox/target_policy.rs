//! `--target-policy deny-private` and its `--target-allow` exceptions: IP
//! literals are refused at create, names on the address they resolve to,
//! for tasks and job runs, on both stores; and the attempt errors tenants
//! read.

use crate::harness::jobs::create_job;
use crate::harness::target::*;
use crate::harness::{Backend, Backing, Process, Server, command, fresh_key};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const WITHIN: Duration = Duration::from_secs(10);
const REFUSED: &str = "refused by target policy";

async fn deny_private(backend: Backend, allow: &[&str]) -> Server {
    let mut flags = vec!["--target-policy", "deny-private"];
    for a in allow {
        flags.extend(["--target-allow", a]);
    }
    Server::start_with(backend, &flags).await
}

fn port_of(target: &Target) -> u16 {
    let url = reqwest::Url::parse(&target.url("/")).unwrap();
    url.port().unwrap()
}

/// The test target by name: `localhost` is the one name that resolves to
/// a private address without the internet.
fn localhost_url(target: &Target, path: &str) -> String {
    format!("http://localhost:{}{path}", port_of(target))
}

fn task(id: &str, url: &str) -> Value {
    json!({"task_id": id, "target": {"url": url}})
}

/// A queue that would retry a failure many times, quickly: a refused task
/// that ends after one attempt was not retried.
async fn retrying_queue(s: &Server) {
    s.create_queue_with(json!({"name": "q",
        "retry_config": {"max_attempts": 20, "min_backoff_ms": 100, "max_backoff_ms": 100}}))
        .await;
}

async fn literal_private_addresses_are_refused_at_create(backend: Backend) {
    let s = deny_private(backend, &[]).await;
    let target = Target::start().await;
    let port = port_of(&target);
    retrying_queue(&s).await;
    for (id, url) in [
        ("loopback", target.url("/ok")),
        (
            "metadata",
            "http://169.254.169.254/latest/meta-data/".to_string(),
        ),
        ("v6-loopback", format!("http://[::1]:{port}/ok")),
        ("mapped", format!("http://[::ffff:127.0.0.1]:{port}/ok")),
        (
            "translated",
            format!("http://[::ffff:0:127.0.0.1]:{port}/ok"),
        ),
        ("decimal", format!("http://2130706433:{port}/ok")),
        ("private", "https://10.1.2.3/hook".to_string()),
        ("cgnat", "https://100.64.0.1/hook".to_string()),
        ("unique-local", "https://[fd00::1]/hook".to_string()),
    ] {
        s.post("/v1/queues/q/tasks", task(id, &url))
            .await
            .invalid("target.url");
        s.get(&format!("/v1/queues/q/tasks/{id}"))
            .await
            .problem(404, "NOT_FOUND");
    }
    // Other errors of the same request are reported with it.
    let both = s
        .post(
            "/v1/queues/q/tasks",
            json!({"task_id": "both", "dispatch_deadline_s": 0,
                   "target": {"url": target.url("/ok")}}),
        )
        .await
        .invalid("target.url")
        .clone();
    assert!(both.to_string().contains("dispatch_deadline_s"), "{both}");

    // Jobs: create and update alike.
    let job = json!({"name": "nightly", "schedule": "0 3 * * *",
                     "target": {"url": "http://169.254.169.254/"}});
    s.post("/v1/jobs", job).await.invalid("target.url");
    s.get("/v1/jobs/nightly").await.problem(404, "NOT_FOUND");
    create_job(
        &s,
        json!({"name": "nightly", "schedule": "0 3 * * *",
               "target": {"url": "https://example.com/hook"}}),
    )
    .await;
    s.patch(
        "/v1/jobs/nightly",
        json!({"target": {"url": format!("http://[::1]:{port}/")}}),
    )
    .await
    .invalid("target.url");
    assert_eq!(
        s.get("/v1/jobs/nightly").await.ok(200).json["target"]["url"],
        "https://example.com/hook",
        "a refused update wrote nothing"
    );

    // A public literal is not the policy's business at create.
    s.create_task(
        "q",
        json!({"task_id": "public", "schedule_time": "2099-01-01T00:00:00Z",
               "target": {"url": "https://8.8.8.8/hook"}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(target.received().is_empty());
}

async fn a_name_resolving_to_a_private_address_fails_at_connect(backend: Backend) {
    let s = deny_private(backend, &[]).await;
    let target = Target::start().await;
    retrying_queue(&s).await;
    s.create_task("q", task("by-name", &localhost_url(&target, "/ok")))
        .await;
    let failed = wait_state(&s, "q", "by-name", "failed", WITHIN).await;
    assert_eq!(failed["attempt_count"], 1, "a refusal is not retried");
    assert_eq!(failed["last_attempt"]["error"], REFUSED);
    assert!(failed["last_attempt"]["status_code"].is_null());
    let attempts = s
        .get("/v1/queues/q/tasks/by-name/attempts")
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(attempts["items"][0]["error"], REFUSED, "{attempts}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(target.received().is_empty(), "the target received nothing");
}

async fn a_job_run_to_a_private_address_fails(backend: Backend) {
    let s = deny_private(backend, &[]).await;
    let target = Target::start().await;
    create_job(
        &s,
        json!({"name": "sync", "schedule": "0 3 * * *",
               "retry_config": {"retry_count": 5, "min_backoff_ms": 100},
               "target": {"url": localhost_url(&target, "/ok")}}),
    )
    .await;
    let run = s.post_empty("/v1/jobs/sync/run").await.ok(201).json.clone();
    let path = format!("/v1/jobs/sync/runs/{}", run["run_id"].as_str().unwrap());
    let deadline = Instant::now() + WITHIN;
    let run = loop {
        let run = s.get(&path).await.ok(200).json.clone();
        if run["state"] == "failed" {
            break run;
        }
        assert!(Instant::now() < deadline, "run not failed: {run}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(run["attempt_count"], 1);
    assert_eq!(run["last_attempt"]["error"], REFUSED);
    assert!(target.received().is_empty());
}

async fn an_allowed_address_is_delivered(backend: Backend) {
    let s = deny_private(backend, &["127.0.0.1"]).await;
    let target = Target::start().await;
    let port = port_of(&target);
    retrying_queue(&s).await;
    s.create_task("q", task("literal", &target.url("/ok")))
        .await;
    // localhost's ::1 is dropped, its 127.0.0.1 kept.
    s.create_task("q", task("by-name", &localhost_url(&target, "/ok")))
        .await;
    target.wait_for("literal", 1, WITHIN).await;
    target.wait_for("by-name", 1, WITHIN).await;
    wait_state(&s, "q", "by-name", "succeeded", WITHIN).await;
    // The exception is one address, not loopback.
    s.post(
        "/v1/queues/q/tasks",
        task("v6", &format!("http://[::1]:{port}/")),
    )
    .await
    .invalid("target.url");
    s.post(
        "/v1/queues/q/tasks",
        task("other", &format!("http://127.0.0.2:{port}/")),
    )
    .await
    .invalid("target.url");
}

async fn an_allowed_network_is_delivered(backend: Backend) {
    let s = deny_private(backend, &["127.0.0.0/8"]).await;
    let target = Target::start().await;
    retrying_queue(&s).await;
    s.create_task("q", task("literal", &target.url("/ok")))
        .await;
    s.create_task("q", task("by-name", &localhost_url(&target, "/ok")))
        .await;
    target.wait_for("literal", 1, WITHIN).await;
    target.wait_for("by-name", 1, WITHIN).await;
    s.post(
        "/v1/queues/q/tasks",
        task("metadata", "http://169.254.169.254/"),
    )
    .await
    .invalid("target.url");
}

async fn an_allowed_host_is_delivered_by_name_only(backend: Backend) {
    let s = deny_private(backend, &["LocalHost"]).await;
    let target = Target::start().await;
    retrying_queue(&s).await;
    s.create_task("q", task("by-name", &localhost_url(&target, "/ok")))
        .await;
    target.wait_for("by-name", 1, WITHIN).await;
    s.post("/v1/queues/q/tasks", task("literal", &target.url("/ok")))
        .await
        .invalid("target.url");
}

async fn environment_twins_set_the_policy(backend: Backend) {
    let backing = Backing::new(backend).await;
    let key = fresh_key();
    let env = |k: &str, v: &str| (k.to_string(), v.to_string());
    let process = Process::spawn(
        &backing.serve_args(&key),
        &[
            env("IDEM_TARGET_POLICY", "deny-private"),
            env("IDEM_TARGET_ALLOW", "10.0.0.0/8,192.168.1.1"),
        ],
    )
    .await;
    let api = process.api(Some(&key));
    api.create_queue_with(json!({"name": "q"})).await;
    let later = |id: &str, url: &str| {
        json!({"task_id": id, "schedule_time": "2099-01-01T00:00:00Z",
               "target": {"url": url}})
    };
    api.create_task("q", later("ten", "http://10.9.8.7/")).await;
    api.create_task("q", later("one", "http://192.168.1.1/"))
        .await;
    api.post("/v1/queues/q/tasks", later("two", "http://192.168.1.2/"))
        .await
        .invalid("target.url");
    api.post("/v1/queues/q/tasks", later("loop", "http://127.0.0.1/"))
        .await
        .invalid("target.url");
}

async fn a_bad_exception_stops_the_server(backend: Backend) {
    let backing = Backing::new(backend).await;
    let mut cmd = command();
    cmd.arg("serve")
        .args(backing.serve_args(&fresh_key()))
        .args(["--target-policy", "deny-private"])
        .args(["--target-allow", "10.0.0.0/33"]);
    let out = crate::harness::Out::of(cmd).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--target-allow"), "{}", out.stderr);
    assert!(out.stderr.contains("10.0.0.0/33"), "{}", out.stderr);
}

/// What a tenant reads of a failed attempt is the kind of failure, not the
/// network internals behind it.
async fn attempt_errors_name_the_kind_of_failure_only(backend: Backend) {
    let s = Server::start(backend).await;
    let target = Target::start().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    s.create_queue_with(json!({"name": "q", "retry_config": {"max_attempts": 1}}))
        .await;
    s.create_task("q", task("closed", &format!("http://127.0.0.1:{closed}/")))
        .await;
    s.create_task("q", task("reset", &target.reset_url())).await;
    let closed = wait_state(&s, "q", "closed", "failed", WITHIN).await;
    assert_eq!(closed["last_attempt"]["error"], "connection refused");
    let reset = wait_state(&s, "q", "reset", "failed", WITHIN).await;
    let error = reset["last_attempt"]["error"].as_str().unwrap();
    assert!(
        ["connection reset", "connection closed before the answer"].contains(&error),
        "{error}"
    );
}

idem_testkit::store_tests!(
    literal_private_addresses_are_refused_at_create,
    a_name_resolving_to_a_private_address_fails_at_connect,
    a_job_run_to_a_private_address_fails,
    an_allowed_address_is_delivered,
    an_allowed_network_is_delivered,
    an_allowed_host_is_delivered_by_name_only,
    environment_twins_set_the_policy,
    a_bad_exception_stops_the_server,
    attempt_errors_name_the_kind_of_failure_only,
);
