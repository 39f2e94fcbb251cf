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

use bench_support::{Arrivals, Node, arg, arrival_target, post, push_rate, raw_client, raw_pass};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = arg(1, "sqlite");
    let tasks: usize = arg(2, "20000").parse().expect("task count");
    let samples: usize = arg(3, "300").parse().expect("latency samples");

    let arrivals = Arc::new(Arrivals::default());
    let target_url = arrival_target(arrivals.clone()).await;

    let baseline = tasks as f64
        / raw_pass(&raw_client(), &target_url, tasks, 64)
            .await
            .as_secs_f64();
    println!(
        "baseline: target raw rate {baseline:.0} requests/s ({tasks} requests, 64 concurrent)"
    );

    let node = Node::start(&store).await;
    let base = node.base.clone();
    let rate = push_rate(&base, "bulk", &target_url, &arrivals, tasks).await;
    println!("deliveries: {rate:.0}/s ({tasks} tasks, first to last arrival)");

    let http = reqwest::Client::new();
    let url = format!("{target_url}/hook");
    post(&http, &base, "/v1/queues", json!({"name": "idle"})).await;
    let mut latencies = Vec::with_capacity(samples);
    for i in 0..samples {
        let id = format!("l{i}");
        let sent = Instant::now();
        post(
            &http,
            &base,
            "/v1/queues/idle/tasks",
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
