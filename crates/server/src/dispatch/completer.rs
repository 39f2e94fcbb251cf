//! The completer: writes attempt results in batches, whatever arrived while
//! the previous write was committing going into the next one, then
//! announces the tasks that became final and wakes the claim loop.

use crate::App;
use idem_store::Status;
use idem_store::dispatch::{AttemptOutcome, AttemptResult};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Most results one completion write carries.
const MAX_COMPLETION_BATCH: usize = 512;
/// How long to keep retrying a completion write the store refuses; after
/// that the leases expire and the tasks are delivered again.
const COMPLETION_RETRIES: u32 = 6;

/// An attempt's result with the names its metrics and logs need.
pub(super) struct Reported {
    pub(super) org: String,
    pub(super) queue: String,
    pub(super) task_id: String,
    pub(super) result: AttemptResult,
}

/// Writes results until every sender is gone.
pub(super) async fn run(app: Arc<App>, mut results: mpsc::UnboundedReceiver<Reported>) {
    while let Some(first) = results.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_COMPLETION_BATCH {
            match results.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let mut failures = 0;
        let completions = loop {
            let results = batch.iter().map(|r| r.result.clone()).collect();
            match app.store.dispatch_complete(results).await {
                Ok(c) => break Some(c),
                Err(e) if failures < COMPLETION_RETRIES => {
                    failures += 1;
                    tracing::warn!(error = %e, "recording attempt results; retrying");
                    tokio::time::sleep(Duration::from_millis(50 << failures)).await;
                }
                Err(e) => {
                    tracing::error!(
                        error = %e,
                        results = batch.len(),
                        "attempt results not recorded; the tasks are retried when their leases expire"
                    );
                    break None;
                }
            }
        };
        // Completions answer in the order the results were given.
        for (reported, completion) in batch.iter().zip(completions.into_iter().flatten()) {
            let outcome = match &completion {
                AttemptOutcome::Applied(f) => match f.status {
                    Status::Succeeded => "succeeded",
                    Status::Pending => "failed_retrying",
                    Status::Failed => "failed_final",
                    Status::Cancelled => "cancelled",
                    Status::Running => "running",
                },
                AttemptOutcome::Stale { .. } => "stale",
            };
            app.metrics.count(
                "idem_dispatch_attempts_total",
                &reported.org,
                &reported.queue,
                Some(("outcome", outcome)),
                1,
            );
            match completion {
                AttemptOutcome::Applied(f) => {
                    tracing::debug!(
                        queue = %reported.queue,
                        task_id = %reported.task_id,
                        attempt = reported.result.attempt,
                        outcome,
                        "attempt recorded"
                    );
                    app.dispatch.publish(f)
                }
                AttemptOutcome::Stale { task_uid } => tracing::info!(
                    queue = %reported.queue,
                    task_id = %reported.task_id,
                    attempt = reported.result.attempt,
                    %task_uid,
                    "late result of an attempt whose lease was lost; ignored"
                ),
            }
        }
        // Finished attempts freed concurrency in the store.
        app.dispatch.local_work.notify_one();
    }
}
