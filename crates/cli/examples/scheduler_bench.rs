//! Scheduler lag of a release `idem serve`: N cron jobs all due every
//! minute, against a local target that answers 200 at once. Run through
//! `bench/scheduler.sh`.
//!
//! Usage: `scheduler_bench <sqlite|postgres> [jobs] [rounds]` with
//! `IDEM_BIN` naming the binary (PostgreSQL: a fresh database on the server
//! `IDEM_TEST_DATABASE_URL` points at).
//!
//! Measures, on one store:
//! - baseline: how long a plain pooled client takes to send N requests to
//!   the same target with at most 2,000 in flight (the dispatcher's
//!   default `dispatch_max_in_flight`), once on fresh connections and once
//!   on warm ones: the floor any dispatcher faces for the last arrival;
//! - job creation: N jobs `* * * * *` through the API, 16 concurrent
//!   clients;
//! - lag: for each of `rounds` minute boundaries after creation finished
//!   (one closer than 10 s to its end is skipped), the wall-clock time the
//!   target received each job's delivery minus its `Idem-Schedule-Time`;
//!   p50/p90/p99/max per round and overall, every job checked to fire
//!   exactly once per instant;
//! - where the time goes: each run's `created_at` (start of the scheduler
//!   pass that created it) and `last_attempt.started_at` (start of the
//!   dispatcher claim that took it), read back as each job's `last_run`
//!   through `GET /v1/jobs` after each round, as lags from the instant
//!   (negative for runs created ahead of it: the server's
//!   `--schedule-lookahead`, passed on through `IDEM_SCHEDULE_LOOKAHEAD`);
//!   and per round what the server's `idem_scheduler_lag_seconds` (instant
//!   to run created, zero when ahead) counted.

mod bench_support;

use axum::http::HeaderMap;
use axum::routing::any;
use bench_support::{KEY, Node, arg, raw_client, raw_pass, serve_target};
use jiff::{SignedDuration, Timestamp};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Concurrent API clients creating the jobs.
const CREATORS: usize = 16;
/// In-flight requests of the baseline client: the dispatcher's default.
const BASELINE_IN_FLIGHT: usize = 2000;
/// A minute boundary closer than this to the end of job creation is not
/// measured: the server's default schedule lookahead (5 s, runs are
/// created that long before their instant) plus 5 s.
const MARGIN: SignedDuration = SignedDuration::from_secs(10);
/// Longest wait for one round's deliveries, from its instant.
const ROUND_TIMEOUT: SignedDuration = SignedDuration::from_secs(55);
/// Wait after the last round for late duplicates.
const GRACE: Duration = Duration::from_secs(10);

/// One delivery of a run, as the target saw it.
struct Arrival {
    job: String,
    schedule: Timestamp,
    at: Timestamp,
}

#[derive(Default)]
struct Arrivals {
    list: Mutex<Vec<Arrival>>,
    per_instant: Mutex<HashMap<Timestamp, usize>>,
    changed: Notify,
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = arg(1, "sqlite");
    let jobs: usize = arg(2, "10000").parse().expect("job count");
    let rounds: usize = arg(3, "2").parse().expect("round count");
    assert!(jobs > 0 && rounds > 0, "jobs and rounds must be positive");

    let arrivals = Arc::new(Arrivals::default());
    let target = {
        let arrivals = arrivals.clone();
        axum::Router::new().route(
            "/{*path}",
            any(move |headers: HeaderMap| {
                let arrivals = arrivals.clone();
                async move {
                    let at = Timestamp::now();
                    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
                    if let (Some(job), Some(schedule)) =
                        (text("idem-job"), text("idem-schedule-time"))
                    {
                        let schedule: Timestamp =
                            schedule.parse().expect("Idem-Schedule-Time is RFC 3339");
                        *arrivals
                            .per_instant
                            .lock()
                            .unwrap()
                            .entry(schedule)
                            .or_default() += 1;
                        arrivals.list.lock().unwrap().push(Arrival {
                            job: job.to_string(),
                            schedule,
                            at,
                        });
                        arrivals.changed.notify_waiters();
                    }
                    "ok"
                }
            }),
        )
    };
    let target_url = serve_target(target).await;

    let client = raw_client();
    let cold = raw_pass(&client, &target_url, jobs, BASELINE_IN_FLIGHT).await;
    let warm = raw_pass(&client, &target_url, jobs, BASELINE_IN_FLIGHT).await;
    println!(
        "baseline: {jobs} requests, at most {BASELINE_IN_FLIGHT} in flight: \
         {:.3} s on fresh connections, {:.3} s on warm ones",
        cold.as_secs_f64(),
        warm.as_secs_f64()
    );

    // An organization holds 1,000 jobs unless told otherwise.
    let node = Node::start_with(&store, &["--max-jobs-per-org", &jobs.to_string()]).await;
    let (base, key) = (node.base.clone(), KEY.to_string());
    let http = reqwest::Client::new();
    println!(
        "server: {store}, schedule lookahead {} (IDEM_SCHEDULE_LOOKAHEAD)",
        std::env::var("IDEM_SCHEDULE_LOOKAHEAD").unwrap_or_else(|_| "default".into())
    );

    let created = Instant::now();
    let url = format!("{target_url}/hook");
    let mut creators = Vec::new();
    for worker in 0..CREATORS {
        let (http, base, key, url) = (http.clone(), base.clone(), key.clone(), url.clone());
        creators.push(tokio::spawn(async move {
            for i in (worker..jobs).step_by(CREATORS) {
                let r = http
                    .post(format!("{base}/v1/jobs"))
                    .bearer_auth(&key)
                    .json(&json!({"name": job_name(i), "schedule": "* * * * *",
                                  "target": {"url": url}}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201, "create job {i}");
            }
        }));
    }
    for c in creators {
        c.await.unwrap();
    }
    let took = created.elapsed();
    let done = Timestamp::now();
    println!(
        "creates: {:.0}/s ({jobs} jobs in {:.1} s, {CREATORS} concurrent clients), done at {done}",
        jobs as f64 / took.as_secs_f64(),
        took.as_secs_f64()
    );

    let mut first = next_minute(done);
    if first.duration_since(done) < MARGIN {
        println!("skipping {first}: closer than {MARGIN:#} to the end of creation");
        first += SignedDuration::from_secs(60);
    }
    let instants: Vec<Timestamp> = (0..rounds as i64)
        .map(|r| first + SignedDuration::from_secs(60 * r))
        .collect();

    let mut phases = Vec::new();
    for &instant in &instants {
        // Before the runs of this instant are created (the lookahead), after
        // the previous round's.
        sleep_until(instant - SignedDuration::from_secs(30)).await;
        let previous = scrape(&http, &base).await;
        sleep_until(instant).await;
        let deadline = instant + ROUND_TIMEOUT;
        let seen = loop {
            let notified = arrivals.changed.notified();
            let seen = arrivals
                .per_instant
                .lock()
                .unwrap()
                .get(&instant)
                .copied()
                .unwrap_or(0);
            if seen >= jobs || Timestamp::now() >= deadline {
                break seen;
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), notified).await;
        };
        let metrics = scrape(&http, &base).await;
        // The instant's runs are the jobs' last runs until the next instant.
        phases.extend(last_runs(&http, &base, &key).await);
        let runs = metrics.count.saturating_sub(previous.count);
        let mean = (runs > 0).then(|| (metrics.sum - previous.sum) / runs as f64);
        println!(
            "round {instant}: {seen} deliveries seen; server idem_scheduler_lag_seconds: \
             {runs} runs, mean {}; load average {}",
            ms(mean),
            load_average()
        );
    }
    tokio::time::sleep(GRACE).await;
    node.stop().await;

    // Every job once per measured instant; lag of the first delivery.
    let list = std::mem::take(&mut *arrivals.list.lock().unwrap());
    let mut per_instant: BTreeMap<Timestamp, HashMap<&str, Vec<Timestamp>>> = BTreeMap::new();
    let mut earlier = 0usize;
    let mut later = 0usize;
    for a in &list {
        if a.schedule < first {
            earlier += 1;
        } else if instants.contains(&a.schedule) {
            per_instant
                .entry(a.schedule)
                .or_default()
                .entry(a.job.as_str())
                .or_default()
                .push(a.at);
        } else {
            later += 1;
        }
    }
    println!(
        "deliveries outside the measured instants: {earlier} before the first \
         (jobs created before a skipped boundary), {later} after the last"
    );
    println!();
    println!("Delivered: from the instant to the target receiving the run.");
    println!();
    println!(
        "| store | instant | runs | missed | duplicates | first | p50 | p90 | p99 | max (last) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut all = Vec::new();
    let mut all_phases: [Vec<f64>; 2] = Default::default();
    let mut phase_rows = Vec::new();
    let mut all_passes = Passes::default();
    let (mut all_missed, mut all_duplicates) = (0, 0);
    for &instant in &instants {
        let empty = HashMap::new();
        let seen = per_instant.get(&instant).unwrap_or(&empty);
        let missed = (0..jobs)
            .filter(|&i| !seen.contains_key(job_name(i).as_str()))
            .count();
        let duplicates: usize = seen.values().map(|v| v.len() - 1).sum();
        let unknown = seen
            .keys()
            .filter(|j| {
                j.strip_prefix('j')
                    .and_then(|n| n.parse::<usize>().ok())
                    .is_none_or(|n| n >= jobs)
            })
            .count();
        assert_eq!(unknown, 0, "deliveries for jobs the bench did not create");
        let mut lags: Vec<f64> = seen
            .values()
            .map(|v| lag(*v.iter().min().unwrap(), instant))
            .collect();
        lags.sort_by(f64::total_cmp);
        println!(
            "| {store} | {} | {} | {missed} | {duplicates} | {} | {} | {} | {} | {} |",
            instant.strftime("%H:%M"),
            lags.len(),
            ms(lags.first().copied()),
            ms(pct(&lags, 0.50)),
            ms(pct(&lags, 0.90)),
            ms(pct(&lags, 0.99)),
            ms(lags.last().copied()),
        );
        let mut created = Vec::new();
        let mut claimed = Vec::new();
        for (job, schedule, c, s) in &phases {
            if *schedule == instant && seen.contains_key(job.as_str()) {
                created.push(lag(*c, instant));
                if let Some(s) = s {
                    claimed.push(lag(*s, instant));
                }
            }
        }
        created.sort_by(f64::total_cmp);
        claimed.sort_by(f64::total_cmp);
        // Runs of one scheduler pass share its created_at.
        let mut starts = created.clone();
        starts.dedup();
        let passes = Passes {
            count: starts.len(),
            intervals: starts.len().saturating_sub(1),
            span: starts
                .last()
                .zip(starts.first())
                .map_or(0.0, |(l, f)| l - f),
        };
        all_passes.count += passes.count;
        all_passes.intervals += passes.intervals;
        all_passes.span += passes.span;
        phase_rows.push(phase_row(
            &store,
            &instant.strftime("%H:%M").to_string(),
            passes,
            &created,
            &claimed,
            &lags,
        ));
        all_phases[0].extend(created);
        all_phases[1].extend(claimed);
        all_missed += missed;
        all_duplicates += duplicates;
        all.extend(lags);
    }
    all.sort_by(f64::total_cmp);
    println!(
        "| {store} | all {rounds} | {} | {all_missed} | {all_duplicates} | {} | {} | {} | {} | {} |",
        all.len(),
        ms(all.first().copied()),
        ms(pct(&all, 0.50)),
        ms(pct(&all, 0.90)),
        ms(pct(&all, 0.99)),
        ms(all.last().copied()),
    );
    for v in &mut all_phases {
        v.sort_by(f64::total_cmp);
    }
    phase_rows.push(phase_row(
        &store,
        &format!("all {rounds}"),
        all_passes,
        &all_phases[0],
        &all_phases[1],
        &all,
    ));
    println!();
    println!(
        "Phases, as lags from the instant: created = start of the scheduler pass that \
         created the run, claimed = start of the dispatcher claim that took it, \
         delivered = the target received it; passes = scheduler passes that created \
         the runs, per pass = first to last pass start over the intervals."
    );
    println!();
    println!(
        "| store | instant | runs read back | passes | per pass | created p50 | created p99 | \
         created max | claimed p50 | claimed p99 | claimed max | delivered p50 | delivered p99 |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for row in phase_rows {
        println!("{row}");
    }
    println!();
    let verdict = if all_missed == 0 && all_duplicates == 0 {
        "every job fired exactly once per instant"
    } else {
        "NOT exactly once: see missed and duplicates"
    };
    println!("{verdict}");
    if all_missed + all_duplicates > 0 {
        std::process::exit(1);
    }
}

/// The scheduler passes that created a round's runs: how many, and the
/// time from the first one's start to the last one's (seconds) over the
/// intervals between them.
#[derive(Clone, Copy, Default)]
struct Passes {
    count: usize,
    intervals: usize,
    span: f64,
}

fn phase_row(
    store: &str,
    label: &str,
    passes: Passes,
    created: &[f64],
    claimed: &[f64],
    delivered: &[f64],
) -> String {
    format!(
        "| {store} | {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        created.len(),
        passes.count,
        ms((passes.intervals > 0).then(|| passes.span / passes.intervals as f64)),
        ms(pct(created, 0.50)),
        ms(pct(created, 0.99)),
        ms(created.last().copied()),
        ms(pct(claimed, 0.50)),
        ms(pct(claimed, 0.99)),
        ms(claimed.last().copied()),
        ms(pct(delivered, 0.50)),
        ms(pct(delivered, 0.99)),
    )
}

/// Every job's last run (the newest whose instant has come) as the job
/// list shows it: job, schedule time, `created_at` and the latest
/// attempt's `started_at`. A thousand jobs per request.
async fn last_runs(
    http: &reqwest::Client,
    base: &str,
    key: &str,
) -> Vec<(String, Timestamp, Timestamp, Option<Timestamp>)> {
    let time = |v: &serde_json::Value| v.as_str().and_then(|t| t.parse().ok());
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut url = format!("{base}/v1/jobs?limit=1000");
        if let Some(t) = &token {
            url.push_str(&format!("&page_token={t}"));
        }
        let page: serde_json::Value = http
            .get(url)
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for job in page["items"].as_array().expect("a list of jobs") {
            let run = &job["last_run"];
            if run.is_null() {
                continue;
            }
            out.push((
                job["name"].as_str().expect("name").to_string(),
                time(&run["schedule_time"]).expect("schedule_time"),
                time(&run["created_at"]).expect("created_at"),
                time(&run["last_attempt"]["started_at"]),
            ));
        }
        match page["next_page_token"].as_str() {
            Some(t) => token = Some(t.to_string()),
            None => return out,
        }
    }
}

/// The first three fields of `/proc/loadavg`, where there is one: the
/// machine is shared, and a busy minute shows in the figures.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn job_name(i: usize) -> String {
    format!("j{i:05}")
}

/// The first whole minute strictly after `t`.
fn next_minute(t: Timestamp) -> Timestamp {
    let s = t.as_second().div_euclid(60) * 60 + 60;
    Timestamp::from_second(s).unwrap()
}

async fn sleep_until(t: Timestamp) {
    let wait = t.duration_since(Timestamp::now());
    if let Ok(wait) = Duration::try_from(wait) {
        tokio::time::sleep(wait).await;
    }
}

fn lag(at: Timestamp, instant: Timestamp) -> f64 {
    at.duration_since(instant).as_secs_f64()
}

fn pct(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i])
}

fn ms(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{:.0} ms", v * 1e3),
        None => "–".into(),
    }
}

/// What `/metrics` says of `idem_scheduler_lag_seconds`: its cumulative
/// count and sum.
#[derive(Default)]
struct LagMetric {
    count: u64,
    sum: f64,
}

async fn scrape(http: &reqwest::Client, base: &str) -> LagMetric {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut m = LagMetric::default();
    for line in text.lines() {
        let value = |name: &str| {
            line.strip_prefix(name)
                .and_then(|v| v.trim().parse::<f64>().ok())
        };
        if let Some(v) = value("idem_scheduler_lag_seconds_count ") {
            m.count = v as u64;
        } else if let Some(v) = value("idem_scheduler_lag_seconds_sum ") {
            m.sum = v;
        }
    }
    m
}
