//! [`DispatchStore`] on SQLite.
//!
//! A claim and a batch of completions are each one job of the group-commit
//! writer: a claim takes every due task its limits allow in one write, and
//! the dispatcher hands results over in batches, so the write rate stays far
//! below the delivery rate.
//!
//! What is durable when: a claim (lease, attempt row) commits before the
//! dispatcher sends the request, because the committed `running` row is what
//! keeps a second claim (and the queue's concurrency limit) from handing the
//! same task out again while the request is in flight; one fsync per claim
//! batch, not per delivery. A completion may be lost (crash before its batch
//! commits): the lease then expires and the task is delivered again, which
//! at-least-once allows. The attempt row stays written at claim time so that
//! an in-flight attempt is listed (`GET …/attempts`); with statements no
//! longer re-prepared (see `writer.rs`) its insert is a small share of the
//! writer's time.

use super::SqliteStore;
use crate::Result;
use crate::dispatch::*;
use crate::tables::dispatch as table;
use async_trait::async_trait;

#[async_trait]
impl DispatchStore for SqliteStore {
    async fn dispatch_claim(&self, params: DispatchClaim) -> Result<ClaimedBatch> {
        let max_secrets = self.quotas().signing_secrets;
        let events = self.events();
        let (batch, now) = self
            .write(None, async move |c, now, _| {
                Ok((
                    table::claim(c, now, params, max_secrets, &*events).await?,
                    now,
                ))
            })
            .await?;
        // Committed: count the attempts started, per queue (a batch holds
        // each queue's tasks together).
        let mut i = 0;
        while let Some(first) = batch.tasks.get(i) {
            let n = batch.tasks[i..]
                .iter()
                .take_while(|t| t.org == first.org && t.task.queue == first.task.queue)
                .count();
            self.inner
                .dispatched
                .record(&first.org, &first.task.queue, now, n as u64);
            i += n;
        }
        Ok(batch)
    }

    async fn dispatch_complete(&self, results: Vec<AttemptResult>) -> Result<Vec<AttemptOutcome>> {
        let events = self.events();
        self.write(None, async move |c, now, _| {
            // Each result reads its task as the previous ones left it.
            let mut outcomes = Vec::with_capacity(results.len());
            for result in &results {
                let row = table::running(c, &result.task_uid).await?;
                outcomes.push(table::complete(c, now, row.as_ref(), result, &*events).await?);
            }
            Ok(outcomes)
        })
        .await
    }

    async fn dispatch_release(&self, attempts: Vec<(String, u32)>) -> Result<u64> {
        if attempts.is_empty() {
            return Ok(0);
        }
        self.write(None, async move |c, now, _| {
            table::release(c, now, &attempts).await
        })
        .await
    }

    async fn dispatch_notify_work(&self) -> Result<()> {
        Ok(())
    }

    async fn dispatch_leases_lost(
        &self,
        attempts: Vec<(String, u32)>,
    ) -> Result<Vec<(String, u32)>> {
        self.read(async move |c, _| table::leases_lost(c, &attempts).await)
            .await
    }

    async fn dispatch_listen(&self) -> Result<Option<tokio::sync::mpsc::Receiver<DispatchSignal>>> {
        Ok(None)
    }
}
