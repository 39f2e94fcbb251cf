//! Prometheus metrics (`GET /metrics`).
//!
//! One recorder per process, installed on first use; every `App` in the
//! process reports through it. Metric names are `idem_*`; the counters are
//! recorded where the events happen (the API, the Idempotency-Key layer,
//! the dispatcher, the scheduler, the sweeper); the queue depth gauge is
//! recomputed on each scrape, so it is never older than the scrape.

use crate::App;
use axum::extract::State;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::watch;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// How often the recorder's histograms are drained.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(10);

/// Dispatch durations, in seconds: from a fast local target to the longest
/// dispatch deadline's order of magnitude.
const DISPATCH_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
];

/// Scheduler lag, in seconds: sub-second when healthy, minutes when the
/// store was unreachable or a catch-up fired old instants.
const LAG_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 300.0,
];

/// The process's recorder, installed on first call.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        // Without buckets the exporter renders histograms as summaries,
        // which cannot be aggregated across nodes.
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("idem_dispatch_duration_seconds".into()),
                DISPATCH_BUCKETS,
            )
            .expect("the bucket list is not empty")
            .set_buckets_for_metric(
                Matcher::Full("idem_scheduler_lag_seconds".into()),
                LAG_BUCKETS,
            )
            .expect("the bucket list is not empty")
            .set_buckets_for_metric(
                Matcher::Full("idem_scheduler_dispatch_lag_seconds".into()),
                LAG_BUCKETS,
            )
            .expect("the bucket list is not empty")
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder may own the process already (an embedding
        // application's); ours then renders only its own registrations.
        let _ = metrics::set_global_recorder(recorder);
        describe();
        handle
    })
}

fn describe() {
    metrics::describe_counter!("idem_tasks_created_total", "Tasks created, by queue.");
    metrics::describe_counter!(
        "idem_tasks_deduplicated_total",
        "Task creates refused because the task ID was taken, by queue and reason."
    );
    metrics::describe_counter!(
        "idem_idempotency_total",
        "Idempotency-Key outcomes other than a first execution: replayed, mismatch, in_progress."
    );
    metrics::describe_counter!(
        "idem_sweeper_deleted_total",
        "Rows deleted by the sweeper, by kind: tombstone, idempotency_record."
    );
    metrics::describe_counter!(
        "idem_dispatch_attempts_total",
        "Dispatch attempts, by queue and outcome: succeeded, failed_retrying, failed_final, \
         cancelled, lease_expired, stale (a late result of a lost lease)."
    );
    metrics::describe_histogram!(
        "idem_dispatch_duration_seconds",
        metrics::Unit::Seconds,
        "Duration of dispatch attempts' HTTP exchanges, by queue."
    );
    metrics::describe_gauge!(
        "idem_queue_tasks",
        "Tasks per organization, queue and state (final tasks held as tombstones included); \
         the runs of cron jobs are counted under queue `~jobs`."
    );
    metrics::describe_histogram!(
        "idem_scheduler_lag_seconds",
        metrics::Unit::Seconds,
        "From a cron instant to the creation of its run: 0 for runs created ahead of their \
         instant (see --schedule-lookahead)."
    );
    metrics::describe_histogram!(
        "idem_scheduler_dispatch_lag_seconds",
        metrics::Unit::Seconds,
        "From a cron instant to the start of its run's first delivery attempt."
    );
    metrics::describe_counter!(
        "idem_scheduler_runs_total",
        "Scheduled runs created by this node's scheduler."
    );
    metrics::describe_counter!(
        "idem_http_responses_total",
        "API responses, by status class."
    );
}

/// `GET /metrics`: the Prometheus text format, the queue depth gauge
/// counted afresh (one grouped read).
pub async fn render(State(app): State<Arc<App>>) -> impl axum::response::IntoResponse {
    match app.store.task_counts_by_state().await {
        Ok(counts) => {
            let now: HashSet<Labels> = counts
                .into_iter()
                .map(|c| {
                    let labels = (c.org, c.queue, c.status.as_str());
                    queue_gauge(&labels).set(c.count as f64);
                    labels
                })
                .collect();
            // A label set that disappeared (its queue emptied or deleted) is
            // reset to zero rather than left stale.
            let mut reported = REPORTED.lock().expect("reported gauges");
            for gone in reported.iter().flatten().filter(|l| !now.contains(*l)) {
                queue_gauge(gone).set(0.0);
            }
            *reported = Some(now);
        }
        Err(e) => tracing::warn!(error = %e, "counting tasks for the queue depth metric"),
    }
    (
        [(
            http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle().render(),
    )
}

type Labels = (String, String, &'static str);

/// Label sets of the queue depth gauge the previous scrape reported.
static REPORTED: Mutex<Option<HashSet<Labels>>> = Mutex::new(None);

/// Drains the histograms every [`UPKEEP_INTERVAL`] until `stop` turns true.
pub async fn run(mut stop: watch::Receiver<bool>) {
    loop {
        handle().run_upkeep();
        tokio::select! {
            _ = tokio::time::sleep(UPKEEP_INTERVAL) => {}
            _ = stop.changed() => return,
        }
    }
}

fn queue_gauge((org, queue, state): &Labels) -> metrics::Gauge {
    metrics::gauge!(
        "idem_queue_tasks",
        "org" => org.clone(),
        "queue" => queue.clone(),
        "state" => *state
    )
}
