//! Groups inside a queue (API.md §13), each figure beside its baseline
//! without groups on the same node in the same run. Run through
//! `bench/groups.sh`.
//!
//! On one store (`sqlite` or `postgres`, first argument):
//! - push: N no-op tasks without groups created in a paused queue, the
//!   queue resumed, first to last arrival at a local target (as
//!   `dispatch_bench`); then N tasks spread over G groups in a queue with
//!   `group_concurrency: L`;
//! - pull: N tasks drained by W workers claiming up to B at a time
//!   (idem-client's worker loop, as `pull_bench`), without groups, then
//!   spread over G groups with the same limit;
//! - each of those two figures from P pairs of runs (ninth argument,
//!   default 3) with and without groups, in alternating order, as each
//!   pair's ratio and their median;
//! - the first claim after a start: a pull queue of M due tasks in H
//!   groups, the node restarted, then, once it answers `/readyz`, one
//!   claim of B timed from request to answer (and the next few, for the
//!   warm figure).

mod bench_support;

use bench_support::{
    Arrivals, KEY, Node, arg, arrival_target, fill, push_rate, push_rate_in_groups,
};
use idem_client::{ClaimOptions, Client};
use serde_json::json;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = arg(1, "sqlite");
    let tasks: usize = arg(2, "20000").parse().expect("task count");
    let groups: usize = arg(3, "1000").parse().expect("groups");
    let limit: u32 = arg(4, "4").parse().expect("group limit");
    let workers: usize = arg(5, "16").parse().expect("workers");
    let batch: u32 = arg(6, "32").parse().expect("claim batch size");
    let big: usize = arg(7, "1000000").parse().expect("tasks of the large queue");
    let big_groups: usize = arg(8, "10000").parse().expect("groups of the large queue");
    let pairs: usize = arg(9, "3").parse().expect("pairs of runs");

    let node = Node::start(&store).await;
    let base = node.base.clone();
    let arrivals = Arc::new(Arrivals::default());
    let target_url = arrival_target(arrivals.clone()).await;

    // Each figure is a median of `pairs` runs with and without groups,
    // their order alternating from pair to pair: the second run of a pair
    // finds the first's finished tasks and WAL, which must not count
    // against either side.
    let mut push = Vec::new();
    for pair in 0..pairs {
        let mut rates = [0.0; 2];
        for side in order(pair) {
            let queue = format!("{}-{pair}", ["plain", "grouped"][side]);
            rates[side] = if side == 0 {
                push_rate(&base, &queue, &target_url, &arrivals, tasks).await
            } else {
                push_rate_in_groups(
                    &base,
                    &queue,
                    json!({"group_concurrency": limit}),
                    groups,
                    &target_url,
                    &arrivals,
                    tasks,
                )
                .await
            };
        }
        push.push(rates);
    }
    report(
        "push dispatch",
        "deliveries/s",
        &push,
        &format!("in {groups} groups of limit {limit}"),
    );

    let mut pull = Vec::new();
    for pair in 0..pairs {
        let mut rates = [0.0; 2];
        for side in order(pair) {
            let queue = format!("{}-{pair}", ["pulled", "pulled-grouped"][side]);
            let (settings, g) = match side {
                0 => (json!({}), 0),
                _ => (json!({"group_concurrency": limit}), groups),
            };
            rates[side] = pull_rate(&base, &queue, settings, g, tasks, workers, batch).await;
        }
        pull.push(rates);
    }
    report(
        "pull claims",
        "tasks/s",
        &pull,
        &format!("in {groups} groups of limit {limit} ({workers} workers claiming up to {batch})"),
    );

    let filled = Instant::now();
    fill(&base, "large", json!({}), big_groups, big).await;
    println!(
        "large queue: {big} due tasks in {big_groups} groups, filled in {:.1} s",
        filled.elapsed().as_secs_f64()
    );
    let node = node.restart().await;
    // The claim is timed once the node answers `/readyz`, as a load
    // balancer would send it; how long that took after the node printed
    // its address is printed beside it.
    let started = Instant::now();
    let http = bench_support::raw_client();
    while !http
        .get(format!("{}/readyz", node.base))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let ready = started.elapsed();
    let client = Client::new(node.base.clone(), KEY).expect("client");
    let options = ClaimOptions {
        max_tasks: batch,
        wait: Duration::ZERO,
        lease: Duration::from_secs(600),
        tag: None,
    };
    let mut took = Vec::new();
    for _ in 0..6 {
        let asked = Instant::now();
        let claimed = client.claim_tasks("large", &options).await.expect("claim");
        took.push(asked.elapsed());
        assert_eq!(claimed.value.tasks.len(), batch as usize, "a full claim");
    }
    let ms = |d: &Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    println!(
        "ready {} ms after its address; first claim after a restart: {} ms; the next: {} ms",
        ms(&ready),
        ms(&took[0]),
        took[1..].iter().map(ms).collect::<Vec<_>>().join(", ")
    );
    node.stop().await;
}

/// The order of a pair's two runs (0 without groups, 1 with): alternating.
fn order(pair: usize) -> [usize; 2] {
    if pair.is_multiple_of(2) {
        [0, 1]
    } else {
        [1, 0]
    }
}

/// Prints each pair's rates and ratio, then the median ratio.
fn report(what: &str, unit: &str, pairs: &[[f64; 2]], grouped: &str) {
    let mut ratios: Vec<f64> = pairs.iter().map(|[plain, g]| g / plain).collect();
    for (i, [plain, g]) in pairs.iter().enumerate() {
        println!(
            "{what}, pair {i}: {plain:.0} {unit} without groups, {g:.0} {grouped}: {:.2}×",
            g / plain
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "{what}: median {:.2}× of the same workload without groups ({} pairs, {grouped})",
        ratios[ratios.len() / 2],
        ratios.len()
    );
}

/// Fills a pull queue as [`fill`] does, then drains it with `workers`
/// worker loops claiming up to `batch`: tasks per second from the first
/// claim to the last worker finding the queue empty. Every task must be
/// worked exactly once.
async fn pull_rate(
    base: &str,
    queue: &str,
    settings: serde_json::Value,
    groups: usize,
    tasks: usize,
    workers: usize,
    batch: u32,
) -> f64 {
    fill(base, queue, settings, groups, tasks).await;
    let client = Client::new(base.to_string(), KEY).expect("client");
    let options = ClaimOptions {
        max_tasks: batch,
        wait: Duration::ZERO,
        lease: Duration::from_secs(60),
        tag: None,
    };
    let worked = Arc::new(Mutex::new(HashSet::with_capacity(tasks)));
    let started = Instant::now();
    let mut running = Vec::new();
    for _ in 0..workers {
        let (client, options, worked) = (client.clone(), options.clone(), worked.clone());
        let queue = queue.to_string();
        running.push(tokio::spawn(async move {
            // With a group limit, a claim may find nothing while other
            // workers hold every group's slots: a worker stops only once
            // the queue is empty.
            let mut idle = 0;
            loop {
                let claimed = client
                    .work_batch(&queue, &options, |task| {
                        let worked = worked.clone();
                        async move {
                            let fresh = worked.lock().unwrap().insert(task.task_id.clone());
                            assert!(fresh, "{} was worked twice", task.task_id);
                            Ok(None)
                        }
                    })
                    .await
                    .expect("work a batch");
                if claimed > 0 {
                    idle = 0;
                    continue;
                }
                if worked.lock().unwrap().len() == tasks {
                    return;
                }
                idle += 1;
                assert!(idle < 10_000, "the queue never drained");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }));
    }
    for w in running {
        w.await.unwrap();
    }
    let elapsed = started.elapsed();
    assert_eq!(worked.lock().unwrap().len(), tasks, "every task worked");
    tasks as f64 / elapsed.as_secs_f64()
}
