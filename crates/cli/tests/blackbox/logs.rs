//! Structured logs (`--log-format json`): each line of a request's work
//! carries its request ID, each line of a delivery its task or run.

use crate::harness;
use crate::harness::target::*;
use crate::harness::{Backend, Backing, Process, install_tls_provider};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The JSON lines of the server's stderr that carry `field` = `value` at
/// their top level, where the fields of the spans they were logged in are.
fn lines_with(stderr: &str, field: &str, value: &str) -> Vec<Value> {
    stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|line| line[field] == value)
        .collect()
}

async fn json_lines_name_the_request_task_and_run(kind: Backend) {
    install_tls_provider();
    let target = Target::start().await;
    let backing = Backing::new(kind).await;
    let key = harness::fresh_key();
    let mut args = backing.serve_args(&key);
    args.extend(["--log-format".into(), "json".into()]);
    let server = Process::spawn(&args, &[("IDEM_LOG".into(), "idem_server=debug".into())]).await;
    let api = server.api(Some(&key));

    let resp = api.get("/v1/queues").await;
    resp.ok(200);
    let request_id = resp.request_id().to_string();
    api.create_queue("q").await;
    api.create_task(
        "q",
        json!({"task_id": "t-logged", "target": {"url": target.url("/ok")}}),
    )
    .await;
    api.post(
        "/v1/jobs",
        json!({"name": "logged", "schedule": "* * * * * *", "target": {"url": target.url("/ok")}}),
    )
    .await
    .ok(201);
    let got = target
        .wait_for("t-logged", 1, Duration::from_secs(10))
        .await;
    assert_eq!(got.len(), 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    let run = loop {
        if let Some(r) = target
            .received()
            .into_iter()
            .find(|r| r.header("idem-job") == Some("logged"))
        {
            break r;
        }
        assert!(Instant::now() < deadline, "the job did not fire");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    api.post_empty("/v1/jobs/logged/pause").await.ok(200);
    let run_id = run.header("idempotency-key").unwrap().to_string();
    // The attempt's own line is written as it ends, just after the target
    // answered.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let stderr = server.stderr();
        let request = lines_with(&stderr, "request_id", &request_id);
        let task = lines_with(&stderr, "task_id", "t-logged");
        let runs = lines_with(&stderr, "run_id", &run_id);
        if (!request.is_empty() && !task.is_empty() && !runs.is_empty())
            || Instant::now() > deadline
        {
            let served = request
                .iter()
                .find(|l| l["message"] == "request served" && l["status"] == 200)
                .unwrap_or_else(|| panic!("no access line for request {request_id}:\n{stderr}"));
            assert_eq!(served["org"], "default", "{served}");
            assert_eq!(served["level"], "DEBUG", "{served}");
            let at = served["timestamp"].as_str().expect("a timestamp");
            assert!(
                at.parse::<jiff::Timestamp>().is_ok(),
                "an RFC 3339 timestamp: {served}"
            );
            let attempt = task
                .iter()
                .find(|l| l["status_code"] == 200)
                .unwrap_or_else(|| panic!("no attempt line for task t-logged:\n{stderr}"));
            assert_eq!(attempt["org"], "default", "{attempt}");
            assert_eq!(attempt["queue"], "q", "{attempt}");
            assert_eq!(attempt["attempt"], 1, "{attempt}");
            assert!(
                runs.iter().any(|l| l["job"] == "logged"),
                "no attempt line for run {run_id}:\n{stderr}"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

idem_testkit::store_tests!(json_lines_name_the_request_task_and_run);

/// Text logs written to a pipe or a file carry no colour codes, from
/// `idem serve` and `idem proxy` alike (their stderr here is a pipe).
#[tokio::test]
async fn text_logs_carry_no_colour_codes_when_not_a_terminal() {
    let server = harness::Server::start(Backend::Sqlite).await;
    server.create_queue("q").await;
    let mut cmd = harness::command();
    cmd.args([
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        server.base(),
        "--store",
        "memory",
        "--insecure-no-auth",
    ])
    .env("IDEM_LOG", "debug");
    let proxy = Process::run(cmd, harness::PROXY_LISTENING_PREFIX).await;
    reqwest::get(format!("{}/healthz", proxy.base))
        .await
        .expect("through the proxy");
    for (who, stderr) in [("serve", server.stderr()), ("proxy", proxy.stderr())] {
        assert!(
            stderr.contains("INFO") || stderr.contains("DEBUG"),
            "{who} logged nothing to judge: {stderr}"
        );
        assert!(
            !stderr.contains('\u{1b}'),
            "{who} wrote colour codes: {stderr:?}"
        );
    }
}
