//! Prometheus metrics (`GET /metrics`).
//!
//! One recorder per process, installed on first use; every `App` in the
//! process reports through it. Metric names are `idem_*`; the counters are
//! recorded where the events happen (the API, the Idempotency-Key layer,
//! the dispatcher, the sweeper); the queue depth gauge is refreshed by
//! [`run`].

use crate::App;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::watch;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// How often the queue depth gauge is recomputed (one grouped count per
/// refresh) and the recorder's histograms are drained.
const REFRESH_INTERVAL: Duration = Duration::from_secs(10);

/// Dispatch durations, in seconds: from a fast local target to the longest
/// dispatch deadline's order of magnitude.
const DISPATCH_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
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
         refreshed every 10 s."
    );
    metrics::describe_counter!(
        "idem_http_responses_total",
        "API responses, by status class."
    );
}

/// `GET /metrics`: the Prometheus text format.
pub async fn render() -> impl axum::response::IntoResponse {
    (
        [(
            http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle().render(),
    )
}

/// Refreshes the queue depth gauge and drains the histograms every
/// [`REFRESH_INTERVAL`] until `stop` turns true.
pub async fn run(app: Arc<App>, mut stop: watch::Receiver<bool>) {
    // Label sets reported by the previous refresh: one that disappears (its
    // queue emptied or deleted) is reset to zero rather than left stale.
    let mut reported: HashSet<(String, String, &'static str)> = HashSet::new();
    loop {
        handle().run_upkeep();
        match app.store.task_counts_by_state().await {
            Ok(counts) => {
                let mut now = HashSet::with_capacity(counts.len());
                for c in counts {
                    let labels = (c.org, c.queue, c.status.as_str());
                    queue_gauge(&labels).set(c.count as f64);
                    now.insert(labels);
                }
                for gone in reported.difference(&now) {
                    queue_gauge(gone).set(0.0);
                }
                reported = now;
            }
            Err(e) => tracing::warn!(error = %e, "counting tasks for the queue depth metric"),
        }
        tokio::select! {
            _ = tokio::time::sleep(REFRESH_INTERVAL) => {}
            _ = stop.changed() => return,
        }
    }
}

fn queue_gauge((org, queue, state): &(String, String, &'static str)) -> metrics::Gauge {
    metrics::gauge!(
        "idem_queue_tasks",
        "org" => org.clone(),
        "queue" => queue.clone(),
        "state" => *state
    )
}
