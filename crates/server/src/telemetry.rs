//! Prometheus metrics (`GET /metrics`).
//!
//! One recorder per process, installed on first use; every `App` in the
//! process reports through it. Metric names are `idem_*`; the counters are
//! recorded where the events happen (the API, the Idempotency-Key layer,
//! the sweeper).

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first call.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new().build_recorder();
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
        "Rows deleted by the sweeper (tombstones and expired Idempotency-Key records)."
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
