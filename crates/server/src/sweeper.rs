//! Deletes what has outlived its purpose: task tombstones past their dedup
//! window and Idempotency-Key records past their retention. Works in bounded batches so that a large backlog never holds one
//! long transaction (on SQLite, the single writer) hostage.

use crate::App;
use std::sync::Arc;
use tokio::sync::watch;

/// Sweeps every `sweep_interval` until `stop` turns true.
pub async fn run(app: Arc<App>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(app.options.sweep_interval) => {}
            _ = stop.changed() => return,
        }
        match sweep_once(&app).await {
            Ok(0) => {}
            Ok(n) => {
                metrics::counter!("idem_sweeper_deleted_total").increment(n);
                tracing::info!(deleted = n, "swept expired tombstones and key records");
            }
            Err(e) => tracing::warn!(error = %e, "sweeping tombstones"),
        }
    }
}

/// Deletes every expired tombstone and Idempotency-Key record, a batch at a
/// time; returns how many.
pub async fn sweep_once(app: &App) -> Result<u64, idem_store::Error> {
    let mut total = 0;
    loop {
        let batch = app.options.sweep_batch;
        let n = app.store.task_sweep_tombstones(batch).await?
            + app.store.idempotency_sweep(batch).await?;
        total += n;
        if n < u64::from(batch) {
            return Ok(total);
        }
        // Let other writers in between batches.
        tokio::task::yield_now().await;
    }
}
