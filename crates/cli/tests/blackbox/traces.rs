//! Traces (OTLP/HTTP): a task's attempt is a span in the trace of the
//! request that created it and sends its own `traceparent`; a job's run
//! starts a trace; `idem proxy` continues the sender's trace. Checked by
//! decoding what a real OTLP/HTTP receiver is sent.

use crate::harness;
use crate::harness::jobs::wait_runs_of;
use crate::harness::otlp::{Collector, SpanSeen};
use crate::harness::target::*;
use crate::harness::{
    Backend, Backing, PROXY_LISTENING_PREFIX, Process, command, install_tls_provider,
};
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER: &str = "00f067aa0ba902b7";
const TRACESTATE: &str = "congo=t61rcWkgMzE";

fn traceparent() -> String {
    format!("00-{TRACE}-{CALLER}-01")
}

/// `(trace ID, parent ID)` of a delivery's `traceparent`.
fn parent_of(received: &Received) -> (String, String) {
    let header = received
        .header("traceparent")
        .unwrap_or_else(|| panic!("no traceparent in {received:?}"));
    let parts: Vec<&str> = header.split('-').collect();
    assert_eq!(parts.len(), 4, "{header}");
    assert_eq!(parts[0], "00", "{header}");
    (parts[1].to_string(), parts[2].to_string())
}

fn span<'a>(spans: &'a [SpanSeen], id: &str) -> &'a SpanSeen {
    spans
        .iter()
        .find(|s| s.span_id == id)
        .unwrap_or_else(|| panic!("no span {id} in {spans:#?}"))
}

/// Batches leave every 100 ms rather than 5 s.
fn quick_export() -> Vec<(String, String)> {
    vec![("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into())]
}

async fn attempts_are_spans_in_the_trace_of_the_creating_request(kind: Backend) {
    install_tls_provider();
    let collector = Collector::start().await;
    let target = Target::start().await;
    let backing = Backing::new(kind).await;
    let key = harness::fresh_key();
    let mut args = backing.serve_args(&key);
    args.extend(["--otlp-endpoint".into(), collector.endpoint.clone()]);
    let server = Process::spawn(&args, &quick_export()).await;
    let api = server.api(Some(&key));
    api.create_queue("q").await;

    api.request(Method::POST, "/v1/queues/q/tasks")
        .header("traceparent", &traceparent())
        .header("tracestate", TRACESTATE)
        .json(&json!({"task_id": "traced", "target": {"url": target.url("/ok")}}))
        .send()
        .await
        .ok(201);
    let delivered = target.wait_for("traced", 1, Duration::from_secs(10)).await;
    let (trace, attempt_id) = parent_of(&delivered[0]);
    assert_eq!(trace, TRACE, "the delivery is in the caller's trace");
    assert_ne!(
        attempt_id, CALLER,
        "its parent is the attempt, not the caller"
    );
    assert_eq!(delivered[0].header("tracestate"), Some(TRACESTATE));

    api.post(
        "/v1/jobs",
        json!({"name": "traced-job", "schedule": "* * * * * *",
               "target": {"url": target.url("/ok")}}),
    )
    .await
    .ok(201);
    let run = wait_runs_of(&target, "traced-job", 1, Duration::from_secs(10)).await[0].clone();
    api.post_empty("/v1/jobs/traced-job/pause").await.ok(200);
    let (run_trace, run_attempt_id) = parent_of(&run);
    assert_ne!(run_trace, TRACE, "a run starts a trace of its own");

    let spans = collector
        .wait_for(
            "both attempts and the request",
            Duration::from_secs(15),
            |s| {
                let has = |id: &str| s.iter().any(|x| x.span_id == id);
                has(&attempt_id)
                    && has(&run_attempt_id)
                    && s.iter().any(|x| x.name == "request" && x.trace_id == TRACE)
            },
        )
        .await;
    let attempt = span(&spans, &attempt_id);
    assert_eq!(attempt.name, "attempt");
    assert_eq!(attempt.trace_id, TRACE);
    assert_eq!(attempt.service, "idem");
    assert_eq!(attempt.attr("org"), Some("default"), "{attempt:?}");
    assert_eq!(attempt.attr("queue"), Some("q"), "{attempt:?}");
    assert_eq!(attempt.attr("task_id"), Some("traced"), "{attempt:?}");
    assert_eq!(attempt.attr("attempt"), Some("1"), "{attempt:?}");
    assert_eq!(
        attempt.attr("http.response.status_code"),
        Some("200"),
        "{attempt:?}"
    );
    let request = span(&spans, &attempt.parent_id);
    assert_eq!(request.name, "request", "the attempt's parent: {request:?}");
    assert_eq!(request.trace_id, TRACE);
    assert_eq!(
        request.parent_id, CALLER,
        "the request continues the caller"
    );
    assert_eq!(request.attr("org"), Some("default"), "{request:?}");

    let run_attempt = span(&spans, &run_attempt_id);
    assert_eq!(run_attempt.name, "attempt");
    assert_eq!(
        run_attempt.parent_id, "",
        "a run's attempt is its trace's root"
    );
    assert_eq!(run_attempt.trace_id, run_trace);
    assert_eq!(
        run_attempt.attr("job"),
        Some("traced-job"),
        "{run_attempt:?}"
    );

    for request in collector.requests() {
        assert_eq!(request, "POST /v1/traces application/x-protobuf");
    }
}

/// Without an endpoint nothing is exported, and the caller's context still
/// reaches the target unchanged: its spans join the caller's trace.
async fn without_an_endpoint_the_callers_context_passes_on(kind: Backend) {
    let target = Target::start().await;
    let s = harness::Server::start_on(Backing::new(kind).await, harness::fresh_key(), &[]).await;
    s.create_queue("q").await;
    s.admin
        .request(Method::POST, "/v1/queues/q/tasks")
        .header("traceparent", &traceparent())
        .header("tracestate", TRACESTATE)
        .json(&json!({"task_id": "passed-on", "target": {"url": target.url("/ok")}}))
        .send()
        .await
        .ok(201);
    // An invalid traceparent is no error, and no context.
    s.admin
        .request(Method::POST, "/v1/queues/q/tasks")
        .header("traceparent", "00-not-a-trace-01")
        .json(&json!({"task_id": "untraced", "target": {"url": target.url("/ok")}}))
        .send()
        .await
        .ok(201);
    let delivered = target
        .wait_for("passed-on", 1, Duration::from_secs(10))
        .await;
    assert_eq!(
        delivered[0].header("traceparent"),
        Some(traceparent().as_str())
    );
    assert_eq!(delivered[0].header("tracestate"), Some(TRACESTATE));
    let untraced = target
        .wait_for("untraced", 1, Duration::from_secs(10))
        .await;
    assert_eq!(untraced[0].header("traceparent"), None);
}

idem_testkit::store_tests!(
    attempts_are_spans_in_the_trace_of_the_creating_request,
    without_an_endpoint_the_callers_context_passes_on
);

/// `idem proxy` continues the sender's trace: its request span, the claim,
/// the upstream call (whose context the upstream is sent) and the finish.
/// Configured by OpenTelemetry's own environment variables here.
#[tokio::test]
async fn the_proxy_continues_the_senders_trace() {
    install_tls_provider();
    let collector = Collector::start().await;
    let target = Target::start().await;
    let mut cmd = command();
    cmd.args([
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &target.url("/"),
        "--store",
        "memory",
        "--insecure-no-auth",
    ])
    .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint)
    .env("OTEL_SERVICE_NAME", "edge-proxy")
    .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    let proxy = Process::run(cmd, PROXY_LISTENING_PREFIX).await;
    let answer = reqwest::Client::new()
        .post(format!("{}/ok", proxy.base))
        .header("Idempotency-Key", "traced-run")
        .header("traceparent", traceparent())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "{}", proxy.stderr());
    let got = target.wait_total(1, Duration::from_secs(10)).await;
    let (trace, upstream_id) = parent_of(&got[0]);
    assert_eq!(trace, TRACE);
    assert_ne!(upstream_id, CALLER);

    let spans = collector
        .wait_for("the proxy's four spans", Duration::from_secs(15), |s| {
            ["proxy", "claim", "upstream", "finish"]
                .iter()
                .all(|name| s.iter().any(|x| &x.name == name && x.trace_id == TRACE))
        })
        .await;
    let named = |name: &str| {
        spans
            .iter()
            .find(|s| s.name == name && s.trace_id == TRACE)
            .unwrap()
    };
    let request = named("proxy");
    assert_eq!(request.parent_id, CALLER, "{request:?}");
    assert_eq!(request.service, "edge-proxy");
    for child in ["claim", "upstream", "finish"] {
        assert_eq!(
            named(child).parent_id,
            request.span_id,
            "{child} is under the request: {spans:#?}"
        );
    }
    let upstream = named("upstream");
    assert_eq!(upstream.span_id, upstream_id, "the upstream's parent");
    assert_eq!(upstream.attr("http.response.status_code"), Some("200"));
}
