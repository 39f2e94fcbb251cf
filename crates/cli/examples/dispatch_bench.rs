//! Dispatch throughput and latency of a release `idem serve`, against a
//! local target that answers 200 at once. Run through `bench/dispatch.sh`.
//!
//! Measures, on one store (`sqlite` or `postgres`, first argument):
//! - baseline: the target's raw request rate through a client configured
//!   like the dispatcher's, at the same concurrency;
//! - deliveries per second: N tasks created in a paused queue, then the
//!   queue resumed; first to last arrival at the target;
//! - create-to-delivery latency on an idle server: one task at a time,
//!   from sending the create to the target receiving the delivery.

mod bench_support;

use axum::http::HeaderMap;
use axum::routing::any;
use bench_support::{KEY, Node, arg, raw_client, raw_pass, serve_target};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

#[derive(Default)]
struct Arrivals {
    at: Mutex<HashMap<String, Instant>>,
    changed: Notify,
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = arg(1, "sqlite");
    let tasks: usize = arg(2, "20000").parse().expect("task count");
    let samples: usize = arg(3, "300").parse().expect("latency samples");

    let arrivals = Arc::new(Arrivals::default());
    let target = {
        let arrivals = arrivals.clone();
        axum::Router::new().route(
            "/{*path}",
            any(move |headers: HeaderMap| {
                let arrivals = arrivals.clone();
                async move {
                    if let Some(id) = headers.get("idem-task-id").and_then(|v| v.to_str().ok()) {
                        arrivals
                            .at
                            .lock()
                            .unwrap()
                            .insert(id.to_string(), Instant::now());
                        arrivals.changed.notify_waiters();
                    }
                    "ok"
                }
            }),
        )
    };
    let target_url = serve_target(target).await;

    let baseline = tasks as f64
        / raw_pass(&raw_client(), &target_url, tasks, 64)
            .await
            .as_secs_f64();
    println!(
        "baseline: target raw rate {baseline:.0} requests/s ({tasks} requests, 64 concurrent)"
    );

    let node = Node::start(&store).await;
    let (base, key) = (node.base.clone(), KEY.to_string());
    let http = reqwest::Client::new();
    let post = |path: String, body: serde_json::Value| {
        let req = http
            .post(format!("{base}{path}"))
            .bearer_auth(&key)
            .json(&body);
        async move {
            let r = req.send().await.unwrap();
            assert!(r.status().is_success(), "{path}: {}", r.status());
        }
    };
    let limits = json!({"max_dispatches_per_second": 100000, "max_burst_size": 100000,
                        "max_concurrent_dispatches": 10000});
    post(
        "/v1/queues".into(),
        json!({"name": "bulk", "rate_limits": limits}),
    )
    .await;
    post("/v1/queues/bulk/pause".into(), json!({})).await;

    let created = Instant::now();
    let url = format!("{target_url}/hook");
    let mut creators = Vec::new();
    for worker in 0..32 {
        let (http, base, key, url) = (http.clone(), base.clone(), key.clone(), url.clone());
        creators.push(tokio::spawn(async move {
            for i in (worker..tasks).step_by(32) {
                let r = http
                    .post(format!("{base}/v1/queues/bulk/tasks"))
                    .bearer_auth(&key)
                    .json(&json!({"task_id": format!("b{i}"), "target": {"url": url}}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201);
            }
        }));
    }
    for c in creators {
        c.await.unwrap();
    }
    let create_rate = tasks as f64 / created.elapsed().as_secs_f64();
    println!("creates: {create_rate:.0}/s ({tasks} tasks, 32 concurrent clients)");

    post("/v1/queues/bulk/resume".into(), json!({})).await;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let notified = arrivals.changed.notified();
        if arrivals.at.lock().unwrap().len() >= tasks {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "deliveries did not finish in 300 s"
        );
        let _ = tokio::time::timeout(Duration::from_millis(50), notified).await;
    }
    let (first, last) = {
        let at = arrivals.at.lock().unwrap();
        (*at.values().min().unwrap(), *at.values().max().unwrap())
    };
    let rate = (tasks - 1) as f64 / last.duration_since(first).as_secs_f64();
    println!("deliveries: {rate:.0}/s ({tasks} tasks, first to last arrival)");

    post("/v1/queues".into(), json!({"name": "idle"})).await;
    let mut latencies = Vec::with_capacity(samples);
    for i in 0..samples {
        let id = format!("l{i}");
        let sent = Instant::now();
        post(
            "/v1/queues/idle/tasks".into(),
            json!({"task_id": id, "target": {"url": url}}),
        )
        .await;
        let arrived = loop {
            let notified = arrivals.changed.notified();
            if let Some(at) = arrivals.at.lock().unwrap().get(&id) {
                break *at;
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), notified).await;
        };
        latencies.push(arrived.duration_since(sent));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "create-to-delivery (idle, {samples} samples): p50 {:.2} ms, p99 {:.2} ms",
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3
    );
    node.stop().await;
}
