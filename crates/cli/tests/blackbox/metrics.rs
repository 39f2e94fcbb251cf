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

    /// Whether any sample carries label `key` (with `value`, if given).
    fn has_label(&self, key: &str, value: Option<&str>) -> bool {
        self.0.iter().any(|s| {
            s.labels
                .get(key)
                .is_some_and(|v| value.is_none_or(|want| v == want))
        })
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

/// A server whose series name organizations and queues.
async fn labelled(kind: harness::Backend) -> Server {
    Server::start_with(kind, &["--metrics-labels", "org-queue"]).await
}

idem_testkit::store_tests!(labelled; counters_move_by_the_activity);

/// The gauges and the background work's counters: queue depth by state
/// (cron runs under `~jobs`), scheduler lag and runs, sweeper deletions.
async fn depth_scheduler_and_sweeper_metrics(kind: harness::Backend) {
    install_tls_provider();
    let target = Target::start().await;
    let s = Server::start_with(
        kind,
        &[
            "--sweep-interval",
            "200ms",
            "--metrics-labels",
            "org-queue",
            "--metrics-refresh",
            "0s",
        ],
    )
    .await;
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

/// A paused queue named `name` holding one task per ID: tasks that stay
/// pending, so the depth is known.
async fn held(s: &Server, name: &str, ids: &[&str]) {
    s.create_paused_queue(name).await;
    for id in ids {
        s.create_task(
            name,
            json!({"task_id": id, "target": {"url": "http://127.0.0.1:9/"}}),
        )
        .await;
    }
}

/// By default a scrape names no organization and no queue: totals only.
async fn no_tenant_names_without_the_label_flag(s: Server) {
    held(&s, "secret-payroll", &["a", "b"]).await;
    let resp = s.anonymous().get("/metrics").await;
    resp.ok(200);
    assert!(!resp.text.contains("secret-payroll"), "{}", resp.text);
    assert!(!resp.text.contains("\"default\""), "{}", resp.text);
    let scrape = Scrape(parse(&resp.text));
    assert!(!scrape.has_label("org", None) && !scrape.has_label("queue", None));
    assert_eq!(scrape.value("idem_tasks_created_total", &[]), 2.0);
    assert_eq!(
        scrape.value("idem_queue_tasks", &[("state", "pending")]),
        2.0
    );
}

/// `--metrics-labels org` names organizations, never queues.
async fn org_labels_name_organizations_only(kind: harness::Backend) {
    let s = Server::start_with(kind, &["--metrics-labels", "org"]).await;
    held(&s, "secret-payroll", &["a"]).await;
    let resp = s.anonymous().get("/metrics").await;
    resp.ok(200);
    assert!(!resp.text.contains("secret-payroll"), "{}", resp.text);
    let scrape = Scrape(parse(&resp.text));
    assert!(!scrape.has_label("queue", None));
    assert_eq!(
        scrape.value("idem_tasks_created_total", &[("org", "default")]),
        1.0
    );
    assert_eq!(
        scrape.value(
            "idem_queue_tasks",
            &[("org", "default"), ("state", "pending")]
        ),
        1.0
    );
}

/// `--metrics-labels org-queue` names queues; once a queue is deleted,
/// none of its series remains.
async fn a_deleted_queues_series_disappear(kind: harness::Backend) {
    let s = Server::start_with(
        kind,
        &["--metrics-labels", "org-queue", "--metrics-refresh", "0s"],
    )
    .await;
    held(&s, "doomed", &["a", "b"]).await;
    held(&s, "kept", &["a"]).await;
    s.post(
        "/v1/queues/doomed/tasks",
        json!({"task_id": "a", "target": {"url": "http://127.0.0.1:9/"}}),
    )
    .await
    .problem(409, "TASK_ALREADY_EXISTS");
    let before = Scrape::take(&s).await;
    let doomed = [("org", "default"), ("queue", "doomed")];
    assert_eq!(before.value("idem_tasks_created_total", &doomed), 2.0);
    assert_eq!(before.value("idem_tasks_deduplicated_total", &doomed), 1.0);
    assert_eq!(
        before.value(
            "idem_queue_tasks",
            &[("queue", "doomed"), ("state", "pending")]
        ),
        2.0
    );

    s.delete("/v1/queues/doomed").await.ok(204);
    let after = Scrape::take(&s).await;
    assert!(
        !after.has_label("queue", Some("doomed")),
        "series of the deleted queue remain: {:?}",
        after
            .0
            .iter()
            .filter(|x| x.labels.get("queue").is_some_and(|q| q == "doomed"))
            .collect::<Vec<_>>()
    );
    let kept = [("org", "default"), ("queue", "kept")];
    assert_eq!(after.value("idem_tasks_created_total", &kept), 1.0);
    assert_eq!(
        after.value(
            "idem_queue_tasks",
            &[("queue", "kept"), ("state", "pending")]
        ),
        1.0
    );
}

/// With `--metrics-token`, `/metrics` answers only a scrape bearing it:
/// neither an anonymous one, nor a wrong token, nor an API key.
async fn a_metrics_token_guards_the_scrape(kind: harness::Backend) {
    let s = Server::start_with(kind, &["--metrics-token", "scrape-s3cret"]).await;
    let scrape = |auth: Option<String>| {
        let mut req = s.anonymous().request(Method::GET, "/metrics");
        if let Some(auth) = auth {
            req = req.header("Authorization", &auth);
        }
        req.send()
    };
    let resp = scrape(None).await;
    resp.problem(401, "UNAUTHENTICATED");
    assert_eq!(
        resp.header("www-authenticate"),
        Some("Bearer realm=\"metrics\"")
    );
    assert!(!resp.text.contains("idem_"), "{}", resp.text);
    for wrong in [
        "Bearer scrape-s3cre".to_string(),
        "Bearer scrape-s3cret-too".to_string(),
        "Basic scrape-s3cret".to_string(),
        format!("Bearer {}", s.admin_key),
    ] {
        scrape(Some(wrong.clone()))
            .await
            .problem(401, "UNAUTHENTICATED");
    }
    let resp = scrape(Some("Bearer scrape-s3cret".into())).await;
    resp.ok(200);
    assert!(resp.text.contains("idem_queue_tasks"), "{}", resp.text);
    // The API itself is untouched by the metrics token.
    s.get("/v1/queues").await.ok(200);
}

/// `IDEM_METRICS_TOKEN` sets the token as the flag does.
async fn the_metrics_token_may_come_from_the_environment(kind: harness::Backend) {
    let backing = harness::Backing::new(kind).await;
    let args = backing.serve_args(&harness::fresh_key());
    let envs = [("IDEM_METRICS_TOKEN".to_string(), "env-s3cret".to_string())];
    let server = harness::Process::spawn(&args, &envs).await;
    let anonymous = server.api(None);
    anonymous
        .get("/metrics")
        .await
        .problem(401, "UNAUTHENTICATED");
    anonymous
        .request(Method::GET, "/metrics")
        .header("Authorization", "Bearer env-s3cret")
        .send()
        .await
        .ok(200);
}

/// The depth gauge is counted at most once per `--metrics-refresh`: a
/// scrape within it reports the same count, from the same instant, while
/// the counters it carries are live.
async fn scrapes_within_the_refresh_interval_reuse_one_count(kind: harness::Backend) {
    let s = Server::start_with(kind, &["--metrics-refresh", "1h"]).await;
    held(&s, "q", &["a"]).await;
    let first = Scrape::take(&s).await;
    held(&s, "r", &["b", "c"]).await;
    let second = Scrape::take(&s).await;
    let pending = [("state", "pending")];
    assert_eq!(first.value("idem_queue_tasks", &pending), 1.0);
    assert_eq!(second.value("idem_queue_tasks", &pending), 1.0);
    let counted_at = |s: &Scrape| s.value("idem_queue_tasks_counted_at_seconds", &[]);
    assert!(counted_at(&first) > 0.0);
    assert_eq!(counted_at(&first), counted_at(&second));
    assert_eq!(second.value("idem_tasks_created_total", &[]), 3.0);
}

mod tenancy {
    use super::*;
    idem_testkit::store_tests!(Server::start; no_tenant_names_without_the_label_flag);
}

/// The queue age: how long a running queue's oldest due task has waited
/// (a pull queue's, with no worker claiming, ages); paused queues and
/// queues with nothing due read 0.
async fn the_oldest_due_task_gives_the_queue_its_age(kind: harness::Backend) {
    let s = Server::start_with(
        kind,
        &["--metrics-labels", "org-queue", "--metrics-refresh", "0s"],
    )
    .await;
    s.create_queue_with(json!({"name": "waiting", "mode": "pull"}))
        .await;
    s.create_task("waiting", json!({"task_id": "w1"})).await;
    held(&s, "paused", &["p1"]).await;
    s.create_queue("empty").await;
    let waited = Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let scrape = Scrape::take(&s).await;
    let age = |queue| {
        scrape.value(
            "idem_queue_oldest_due_age_seconds",
            &[("org", "default"), ("queue", queue)],
        )
    };
    let bound = waited.elapsed().as_secs_f64() + 1.0;
    assert!(
        (1.4..bound).contains(&age("waiting")),
        "the waiting task's age: {}",
        age("waiting")
    );
    assert_eq!(age("paused"), 0.0);
    assert_eq!(age("empty"), 0.0);
    assert!(
        scrape
            .0
            .iter()
            .any(|x| x.name == "idem_queue_oldest_due_age_seconds"
                && x.labels.get("queue").map(String::as_str) == Some("empty"))
    );

    // Claimed, it no longer waits.
    s.post("/v1/queues/waiting/tasks:claim", json!({"max_tasks": 1}))
        .await
        .ok(200);
    assert_eq!(
        Scrape::take(&s).await.value(
            "idem_queue_oldest_due_age_seconds",
            &[("org", "default"), ("queue", "waiting")]
        ),
        0.0
    );
}

mod exposure {
    use super::*;
    idem_testkit::store_tests!(
        the_oldest_due_task_gives_the_queue_its_age,
        org_labels_name_organizations_only,
        a_deleted_queues_series_disappear,
        a_metrics_token_guards_the_scrape,
        the_metrics_token_may_come_from_the_environment,
        scrapes_within_the_refresh_interval_reuse_one_count,
    );
}
