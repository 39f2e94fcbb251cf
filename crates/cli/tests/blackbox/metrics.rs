//! `GET /metrics` after known activity: each counter moves by exactly what
//! the activity caused. Every test runs its own server process, so the
//! counters start from nothing; the first scrape is the baseline anyway.

use crate::harness;
use crate::harness::target::*;
use crate::harness::{Server, install_tls_provider};
use reqwest::Method;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const WITHIN: Duration = Duration::from_secs(10);

/// One sample of the Prometheus text format.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a sample has a value");
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, parse_labels(rest.trim_end_matches('}'))),
                None => (series, BTreeMap::new()),
            };
            Sample {
                name: name.to_string(),
                labels,
                value: value.parse().expect("a numeric sample value"),
            }
        })
        .collect()
}

/// `a="x",b="y"`; the label values used here contain no quotes or commas.
fn parse_labels(s: &str) -> BTreeMap<String, String> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').expect("label=value");
            (k.to_string(), v.trim_matches('"').to_string())
        })
        .collect()
}

struct Scrape(Vec<Sample>);

impl Scrape {
    async fn take(s: &Server) -> Scrape {
        let resp = s.anonymous().get("/metrics").await;
        resp.ok(200);
        Scrape(parse(&resp.text))
    }

    /// The sum of the samples of `name` carrying all of `labels`; 0 when
    /// none exists yet (a counter appears on its first increment).
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.0
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.value)
            .sum()
    }
}

fn delta(before: &Scrape, after: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    after.value(name, labels) - before.value(name, labels)
}

async fn counters_move_by_the_activity(s: Server) {
    let target = Target::start().await;
    // Tasks in a paused queue stay put: only `d` delivers.
    s.create_paused_queue("m").await;
    s.create_queue("d").await;
    let before = Scrape::take(&s).await;

    s.create_task(
        "m",
        json!({"task_id": "t1", "target": {"url": target.url("/ok")}}),
    )
    .await;
    s.create_task(
        "m",
        json!({"task_id": "t2", "target": {"url": target.url("/ok")}}),
    )
    .await;
    s.post(
        "/v1/queues/m/tasks",
        json!({"task_id": "t1", "target": {"url": target.url("/ok")}}),
    )
    .await
    .problem(409, "TASK_ALREADY_EXISTS");
    let keyed = json!({"task_id": "t3", "target": {"url": target.url("/ok")}});
    for replay in [false, true] {
        let resp = s
            .request(Method::POST, "/v1/queues/m/tasks")
            .header("Idempotency-Key", "create-t3")
            .json(&keyed)
            .send()
            .await;
        resp.ok(201);
        assert_eq!(
            resp.header("idempotent-replayed") == Some("true"),
            replay,
            "only the second keyed request is a replay"
        );
    }
    s.create_task(
        "d",
        json!({"task_id": "d1", "target": {"url": target.url("/ok")}}),
    )
    .await;
    wait_state(&s, "d", "d1", "succeeded", WITHIN).await;

    // The attempt's counter moves once its result is committed, a moment
    // after the task reads as succeeded.
    let deadline = Instant::now() + WITHIN;
    let after = loop {
        let scrape = Scrape::take(&s).await;
        let attempts = scrape.value("idem_dispatch_attempts_total", &[("queue", "d")]);
        if attempts >= 1.0 || Instant::now() >= deadline {
            break scrape;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    let d = |name: &str, labels: &[(&str, &str)]| delta(&before, &after, name, labels);
    assert_eq!(d("idem_tasks_created_total", &[("queue", "m")]), 3.0);
    assert_eq!(d("idem_tasks_created_total", &[("queue", "d")]), 1.0);
    assert_eq!(
        d(
            "idem_tasks_deduplicated_total",
            &[("queue", "m"), ("reason", "task_id")]
        ),
        1.0
    );
    assert_eq!(d("idem_tasks_deduplicated_total", &[("queue", "d")]), 0.0);
    assert_eq!(d("idem_idempotency_total", &[("outcome", "replayed")]), 1.0);
    assert_eq!(d("idem_idempotency_total", &[("outcome", "mismatch")]), 0.0);
    assert_eq!(
        d("idem_idempotency_total", &[("outcome", "in_progress")]),
        0.0
    );
    assert_eq!(
        d(
            "idem_dispatch_attempts_total",
            &[("queue", "d"), ("outcome", "succeeded")]
        ),
        1.0
    );
    assert_eq!(d("idem_dispatch_attempts_total", &[("queue", "d")]), 1.0);
    assert_eq!(d("idem_dispatch_attempts_total", &[("queue", "m")]), 0.0);
    assert_eq!(
        d("idem_dispatch_duration_seconds_count", &[("queue", "d")]),
        1.0
    );
    let spent = d("idem_dispatch_duration_seconds_sum", &[("queue", "d")]);
    assert!(spent > 0.0 && spent < WITHIN.as_secs_f64(), "{spent}");
    // Buckets are configured: the attempt falls in the unbounded one.
    assert_eq!(
        d(
            "idem_dispatch_duration_seconds_bucket",
            &[("queue", "d"), ("le", "+Inf")]
        ),
        1.0
    );
    // The duplicate is the only client error.
    assert_eq!(d("idem_http_responses_total", &[("class", "4xx")]), 1.0);
}

idem_testkit::store_tests!(Server::start; counters_move_by_the_activity);

/// The gauges and the background work's counters: queue depth by state
/// (cron runs under `~jobs`), scheduler lag and runs, sweeper deletions.
async fn depth_scheduler_and_sweeper_metrics(kind: harness::Backend) {
    install_tls_provider();
    let target = Target::start().await;
    let s = Server::start_with(kind, &["--sweep-interval", "200ms"]).await;
    let before = Scrape::take(&s).await;

    s.create_paused_queue("held").await;
    for id in ["h1", "h2"] {
        s.create_task(
            "held",
            json!({"task_id": id, "target": {"url": target.url("/ok")}}),
        )
        .await;
    }
    // A window of 0: the finished task's tombstone is swept at once.
    s.create_queue_with(json!({"name": "brief", "dedup_window_s": 0}))
        .await;
    s.create_task(
        "brief",
        json!({"task_id": "b1", "target": {"url": target.url("/ok")}}),
    )
    .await;
    s.post(
        "/v1/jobs",
        json!({"name": "tick", "schedule": "* * * * * *",
               "target": {"url": target.url("/ok")}}),
    )
    .await
    .ok(201);
    let deadline = Instant::now() + WITHIN;
    while target
        .received()
        .iter()
        .filter(|r| r.header("idem-job") == Some("tick"))
        .count()
        < 2
    {
        assert!(Instant::now() < deadline, "the job did not fire twice");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    s.post_empty("/v1/jobs/tick/pause").await.ok(200);
    let ticks = || {
        target
            .received()
            .iter()
            .filter(|r| r.header("idem-job") == Some("tick"))
            .count() as f64
    };
    // A run's attempt starts before the target sees it: attempts seen
    // before the scrape were counted by it, and it counted no attempt the
    // target does not see by a moment later.
    let delivered_before = ticks();
    let deadline = Instant::now() + WITHIN;
    let after = loop {
        let scrape = Scrape::take(&s).await;
        let swept = delta(
            &before,
            &scrape,
            "idem_sweeper_deleted_total",
            &[("kind", "tombstone")],
        );
        if swept >= 1.0 || Instant::now() >= deadline {
            break scrape;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let runs = s.get("/v1/jobs/tick/runs?limit=1000").await.ok(200).json["items"]
        .as_array()
        .unwrap()
        .len() as f64;

    let d = |name: &str, labels: &[(&str, &str)]| delta(&before, &after, name, labels);
    assert_eq!(
        d("idem_sweeper_deleted_total", &[("kind", "tombstone")]),
        1.0,
        "the one expired tombstone; runs are kept"
    );
    assert_eq!(
        after.value(
            "idem_queue_tasks",
            &[("queue", "held"), ("state", "pending")]
        ),
        2.0
    );
    assert_eq!(after.value("idem_queue_tasks", &[("queue", "brief")]), 0.0);
    assert_eq!(after.value("idem_queue_tasks", &[("queue", "~jobs")]), runs);
    // Runs are created ahead of their instant; the pause deleted those
    // whose instant had not come, so more were created than are listed.
    let fired = d("idem_scheduler_runs_total", &[]);
    assert!(
        fired >= runs && runs >= 2.0,
        "{fired} created, {runs} listed"
    );
    assert_eq!(d("idem_scheduler_lag_seconds_count", &[]), fired);
    let lag = d("idem_scheduler_lag_seconds_sum", &[]) / fired;
    assert!((0.0..1.0).contains(&lag), "mean scheduler lag {lag} s");
    assert_eq!(
        d("idem_scheduler_lag_seconds_bucket", &[("le", "+Inf")]),
        fired
    );
    // Each delivered run's first attempt, from its instant.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let delivered_after = ticks();
    let started = d("idem_scheduler_dispatch_lag_seconds_count", &[]);
    assert!(
        delivered_before >= 2.0 && delivered_before <= started && started <= delivered_after,
        "{started} first attempts against {delivered_before}..{delivered_after} deliveries"
    );
    let lag = d("idem_scheduler_dispatch_lag_seconds_sum", &[]) / started;
    assert!((0.0..1.0).contains(&lag), "mean dispatch lag {lag} s");
}

mod per_store {
    use super::*;
    idem_testkit::store_tests!(depth_scheduler_and_sweeper_metrics);
}
