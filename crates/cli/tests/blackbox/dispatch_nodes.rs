//! Several nodes on one PostgreSQL database share the work.

use crate::harness::TwoNodes;
use crate::harness::target::*;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

const TASKS: usize = 1000;

#[tokio::test]
async fn two_nodes_deliver_each_task_exactly_once() {
    let target = Target::start().await;
    let nodes = TwoNodes::start().await;
    let apis = &nodes.apis;
    apis[0]
        .create_queue_with(json!({"name": "q", "rate_limits": {
            "max_dispatches_per_second": 100000, "max_burst_size": 100000}}))
        .await;

    // Both nodes take creates, eight at a time each.
    let url = target.url("/ok");
    let mut creators = Vec::new();
    for worker in 0..16 {
        let api = apis[worker % 2].clone();
        let url = url.clone();
        creators.push(tokio::spawn(async move {
            for i in (worker..TASKS).step_by(16) {
                api.create_task(
                    "q",
                    json!({"task_id": format!("t{i}"), "target": {"url": url}}),
                )
                .await;
            }
        }));
    }
    for c in creators {
        c.await.unwrap();
    }
    let got = target.wait_total(TASKS, Duration::from_secs(30)).await;
    // Duplicates would arrive shortly after: give them the time.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = target.received().len().max(got.len());
    let mut per_task: HashMap<String, usize> = HashMap::new();
    for r in target.received() {
        *per_task.entry(r.task_id().to_string()).or_default() += 1;
    }
    assert_eq!(per_task.len(), TASKS);
    let repeated: Vec<_> = per_task.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        repeated.is_empty(),
        "delivered more than once: {repeated:?}"
    );
    assert_eq!(got, TASKS);
    drop(nodes);
}
