//! Pull-queue drain throughput of a release `idem serve`, beside push
//! dispatch on the same node in the same run. Run through `bench/pull.sh`.
//!
//! On one store (`sqlite` or `postgres`, first argument), with N tasks:
//! - push: N tasks created in a paused push queue, the queue resumed, and
//!   the rate taken from first to last arrival at a local target that
//!   answers 200 at once (as `dispatch_bench`);
//! - pull: N tasks created in a pull queue (`tasks:batch`, 1,000 a call),
//!   then W workers, each running idem-client's worker loop
//!   (`Client::work_batch`: claim up to B tasks, run the handler for each,
//!   report their ends together with `tasks:end`), with a handler that
//!   does nothing; the rate is N over
//!   the time from the first claim to the last worker finding the queue
//!   empty. Every task must be worked exactly once.

mod bench_support;

use bench_support::{Arrivals, KEY, Node, arg, arrival_target, fill, push_rate};
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
    let workers: usize = arg(3, "16").parse().expect("workers");
    let batch: u32 = arg(4, "32").parse().expect("claim batch size");

    let node = Node::start(&store).await;
    let base = node.base.clone();

    let arrivals = Arc::new(Arrivals::default());
    let target_url = arrival_target(arrivals.clone()).await;
    let push = push_rate(&base, "pushed", &target_url, &arrivals, tasks).await;
    println!("push dispatch: {push:.0} deliveries/s ({tasks} tasks, first to last arrival)");

    let filled = Instant::now();
    fill(&base, "pulled", json!({}), 0, tasks).await;
    println!(
        "pull queue filled: {tasks} tasks in {:.2} s (tasks:batch, 1,000 a call)",
        filled.elapsed().as_secs_f64()
    );

    let client = Client::new(base.clone(), KEY).expect("client");
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
        running.push(tokio::spawn(async move {
            loop {
                let claimed = client
                    .work_batch("pulled", &options, |task| {
                        let worked = worked.clone();
                        async move {
                            let fresh = worked.lock().unwrap().insert(task.task_id.clone());
                            assert!(fresh, "{} was worked twice", task.task_id);
                            Ok(None)
                        }
                    })
                    .await
                    .expect("work a batch");
                if claimed == 0 {
                    return;
                }
            }
        }));
    }
    for w in running {
        w.await.unwrap();
    }
    let elapsed = started.elapsed();
    assert_eq!(worked.lock().unwrap().len(), tasks, "every task worked");
    let pull = tasks as f64 / elapsed.as_secs_f64();
    println!(
        "pull drain: {pull:.0} tasks/s ({tasks} tasks, {workers} workers claiming up to {batch}, \
         claim to last complete); {:.2}× push",
        pull / push
    );
    node.stop().await;
}
