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

use super::{Lite, SqliteStore};
use crate::Result;
use crate::dispatch::*;
use crate::driver::{Conn, args};
use crate::events::EventRenderer;
use crate::sql::{self as rows, Row as _};
use crate::tables::dispatch::{self as table, *};
use async_trait::async_trait;

#[async_trait]
impl DispatchStore for SqliteStore {
    async fn dispatch_claim(&self, params: DispatchClaim) -> Result<ClaimedBatch> {
        let max_secrets = self.quotas().signing_secrets;
        let events = self.events();
        let (batch, now) = self
            .write(None, async move |c, now, _| {
                Ok((claim(c, now, params, max_secrets, &*events).await?, now))
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

/// Claims queue by queue, least recently claimed first, so a large backlog
/// in one queue cannot starve the others when the caller has few free
/// slots, and no organization takes more than its share of them. The writer
/// runs one claim at a time: no row needs a lock.
async fn claim(
    c: &Lite<'_>,
    now: i64,
    params: DispatchClaim,
    max_secrets: u32,
    events: &dyn EventRenderer,
) -> Result<ClaimedBatch> {
    let kept = params.attempts_kept;
    let mut claim = Claim::start(c, now, params, max_secrets, events).await?;
    let queues = c
        .query(
            "SELECT q.org, q.name, q.config, q.dispatch_tokens, q.dispatch_refilled_at \
             FROM queues q WHERE q.state = 'running' AND q.mode = 'push' AND EXISTS (SELECT 1 FROM tasks t \
             WHERE t.org = q.org AND t.queue = q.name AND t.status = 'pending' \
             AND t.next_attempt_at <= $1) \
             ORDER BY COALESCE(q.dispatch_refilled_at, 0), q.org, q.name",
            &args![now],
            |r| Ok((r.text(0)?, r.text(1)?, ClaimQueue::read(r, 2)?)),
        )
        .await?;
    claim
        .share(c, queues.iter().map(|(org, _, _)| org.as_str()))
        .await?;
    for (org, queue, q) in &queues {
        if claim.remaining == 0 {
            break;
        }
        let Some((n, mut bucket)) = claim.size(c, org, queue, q).await? else {
            continue;
        };
        let claim_sql = format!(
            "UPDATE tasks SET status = 'running', attempt_count = attempt_count + 1, \
             first_attempt_at = COALESCE(first_attempt_at, $1), \
             lease_expires_at = $1 + dispatch_deadline_s * 1000000 + $2 \
             WHERE uid IN (SELECT uid FROM tasks WHERE org = $3 AND queue = $4 \
             AND status = 'pending' AND next_attempt_at <= $1 \
             ORDER BY next_attempt_at, uid LIMIT $5) \
             RETURNING {}, lease_expires_at",
            rows::TASK_COLUMNS
        );
        let mut claimed = c
            .query(
                &claim_sql,
                &args![now, claim.grace, org, queue, i64::from(n)],
                |r| claimed_task(r, org),
            )
            .await?;
        in_schedule_order(&mut claimed);
        let started: Vec<(&str, u32)> = claimed
            .iter()
            .map(|t| (t.task.uid.as_str(), t.attempt))
            .collect();
        table::record_started(c, &started, now, kept).await?;
        bucket.take(claimed.len());
        debit(c, &bucket, org, queue).await?;
        claim.took(c, org, q, &bucket, n, claimed).await?;
    }
    claim.finish(c).await
}
