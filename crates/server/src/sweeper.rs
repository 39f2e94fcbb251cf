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
            Ok(Swept {
                tombstones: 0,
                idempotency_records: 0,
            }) => {}
            Ok(swept) => tracing::info!(
                tombstones = swept.tombstones,
                idempotency_records = swept.idempotency_records,
                "swept expired tombstones and key records"
            ),
            Err(e) => tracing::warn!(error = %e, "sweeping tombstones"),
        }
    }
}

/// What one sweep deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    pub tombstones: u64,
    pub idempotency_records: u64,
}

/// Deletes every expired tombstone and Idempotency-Key record, a batch at a
/// time; returns how many of each. Counted in the metrics batch by batch, so
/// that a sweep failing halfway still reports what it deleted.
pub async fn sweep_once(app: &App) -> Result<Swept, idem_store::Error> {
    let mut total = Swept::default();
    loop {
        let batch = app.options.sweep_batch;
        let tombstones = app.store.task_sweep_tombstones(batch).await?;
        deleted("tombstone", tombstones);
        let records = app.store.idempotency_sweep(batch).await?;
        deleted("idempotency_record", records);
        total.tombstones += tombstones;
        total.idempotency_records += records;
        if tombstones + records < u64::from(batch) {
            return Ok(total);
        }
        // Let other writers in between batches.
        tokio::task::yield_now().await;
    }
}

fn deleted(kind: &'static str, n: u64) {
    if n > 0 {
        metrics::counter!("idem_sweeper_deleted_total", "kind" => kind).increment(n);
    }
}
