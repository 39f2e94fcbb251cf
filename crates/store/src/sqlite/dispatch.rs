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

use super::{SqliteStore, collect};
use crate::dispatch::*;
use crate::sql::{self as rows, Row as _};
use crate::{Error, Result};
use async_trait::async_trait;
use idem_core::clock::from_micros;
use idem_core::queue::QueueConfig;
use rusqlite::{Connection, OptionalExtension, params};

#[async_trait]
impl DispatchStore for SqliteStore {
    async fn dispatch_claim(&self, params: DispatchClaim) -> Result<ClaimedBatch> {
        self.write(move |conn, now| claim(conn, now, params)).await
    }

    async fn dispatch_complete(&self, results: Vec<AttemptResult>) -> Result<Vec<Completion>> {
        self.write(move |conn, now| {
            results
                .iter()
                .map(|result| complete(conn, now, result))
                .collect()
        })
        .await
    }

    async fn dispatch_notify_work(&self) -> Result<()> {
        Ok(())
    }

    async fn dispatch_listen(&self) -> Result<Option<tokio::sync::mpsc::Receiver<DispatchSignal>>> {
        Ok(None)
    }
}

const RUNNING_ROW: &str = "SELECT t.org, t.queue, t.task_id, t.uid, t.status, t.attempt_count, \
     t.cancel_requested, t.retry_config, t.first_attempt_at, a.started_at, q.config \
     FROM tasks t JOIN queues q ON q.org = t.org AND q.name = t.queue \
     LEFT JOIN attempts a ON a.task_uid = t.uid AND a.attempt = t.attempt_count";

fn complete(conn: &Connection, now: i64, result: &AttemptResult) -> Result<Completion> {
    let row = conn
        .prepare_cached(&format!("{RUNNING_ROW} WHERE t.uid = $1"))?
        .query_row(params![result.task_uid], |r| Ok(running_row(r)))
        .optional()?
        .transpose()?;
    match row {
        Some(row) if row.holds(result.attempt) => {
            Ok(Completion::Applied(apply(conn, now, &row, result)?))
        }
        _ => Ok(Completion::Stale {
            task_uid: result.task_uid.clone(),
        }),
    }
}

/// Records the attempt and moves the task on; the caller checked the lease.
fn apply(
    conn: &Connection,
    now: i64,
    row: &RunningRow,
    result: &AttemptResult,
) -> Result<Finished> {
    let outcome = row.outcome(result, now);
    conn.prepare_cached(
        "UPDATE tasks SET status = $1, next_attempt_at = COALESCE($2, next_attempt_at), \
         finished_at = $3, dedup_expires_at = $4, lease_expires_at = NULL, last_attempt = $5 \
         WHERE uid = $6",
    )?
    .execute(params![
        outcome.status.as_str(),
        outcome.next_attempt_at,
        outcome.finished_at,
        outcome.dedup_expires_at,
        rows::to_json(&outcome.attempt),
        row.uid
    ])?;
    conn.prepare_cached(
        "UPDATE attempts SET finished_at = $1, status_code = $2, error = $3, duration_ms = $4 \
         WHERE task_uid = $5 AND attempt = $6",
    )?
    .execute(params![
        now,
        outcome.attempt.status_code,
        outcome.attempt.error,
        outcome.attempt.duration_ms.map(|d| d as i64),
        row.uid,
        row.attempt_count
    ])?;
    Ok(row.finished(outcome.status))
}

fn claim(conn: &Connection, now: i64, params: DispatchClaim) -> Result<ClaimedBatch> {
    let mut batch = ClaimedBatch::default();
    let mut stmt = conn.prepare_cached(&format!(
        "{RUNNING_ROW} WHERE t.status = 'running' AND t.lease_expires_at <= $1 \
         ORDER BY t.lease_expires_at LIMIT $2"
    ))?;
    let expired = collect(&mut stmt, params![now, MAX_RECOVERED_PER_CLAIM], |r| {
        running_row(r)
    })?;
    for row in expired {
        let finished = apply(conn, now, &row, &row.lease_expired(now))?;
        batch.recovered.push(finished);
    }

    let grace = i64::try_from(params.lease_grace.as_micros()).unwrap_or(i64::MAX);
    let mut remaining = params.max_tasks;
    let mut wake_at: Option<i64> = None;
    // Least recently claimed queue first, so a large backlog in one queue
    // cannot starve the others when the caller has few free slots.
    let mut stmt = conn.prepare_cached(
        "SELECT q.org, q.name, q.config, q.dispatch_tokens, q.dispatch_refilled_at FROM queues q \
         WHERE q.state = 'running' AND EXISTS (SELECT 1 FROM tasks t WHERE t.org = q.org \
         AND t.queue = q.name AND t.status = 'pending' AND t.next_attempt_at <= $1) \
         ORDER BY COALESCE(q.dispatch_refilled_at, 0), q.org, q.name",
    )?;
    let queues = collect(&mut stmt, params![now], |r| {
        let config: QueueConfig = serde_json::from_str(&r.text(2)?)
            .map_err(|e| Error::Internal(format!("unreadable queue config: {e}")))?;
        let tokens: Option<f64> = r.get(3)?;
        let stored = tokens.zip(r.opt_i64(4)?);
        Ok((r.text(0)?, r.text(1)?, config, stored))
    })?;
    for (org, queue, config, stored) in queues {
        if remaining == 0 {
            break;
        }
        let limits = config.rate_limits;
        let mut bucket = Bucket::at(stored, &limits, now);
        let running: i64 = conn
            .prepare_cached(
                "SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND status = 'running'",
            )?
            .query_row(params![org, queue], |r| r.get(0))?;
        let n = claimable(&bucket, &limits, running as u64, remaining);
        if n == 0 {
            if bucket.whole() == 0 {
                // Due tasks wait for a token: wake when it is there.
                let at = bucket.next_token_at(&limits);
                wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
            }
            continue;
        }
        let mut stmt = conn.prepare_cached(&format!(
            "UPDATE tasks SET status = 'running', attempt_count = attempt_count + 1, \
             first_attempt_at = COALESCE(first_attempt_at, $1), \
             lease_expires_at = $1 + dispatch_deadline_s * 1000000 + $2 \
             WHERE uid IN (SELECT uid FROM tasks WHERE org = $3 AND queue = $4 \
             AND status = 'pending' AND next_attempt_at <= $1 \
             ORDER BY next_attempt_at, uid LIMIT $5) \
             RETURNING {}, lease_expires_at",
            rows::TASK_COLUMNS
        ))?;
        let mut claimed = collect(&mut stmt, params![now, grace, org, queue, n], |r| {
            let task = rows::task(r)?;
            Ok(ClaimedTask {
                org: String::new(),
                attempt: task.attempt_count,
                lease_expires_at: from_micros(r.i64(rows::TASK_COLUMN_COUNT)?),
                task,
            })
        })?;
        // RETURNING gives no order guarantee.
        claimed.sort_by(|a, b| {
            (a.task.next_attempt_at, &a.task.uid).cmp(&(b.task.next_attempt_at, &b.task.uid))
        });
        let mut insert = conn.prepare_cached(
            "INSERT INTO attempts (task_uid, attempt, started_at) VALUES ($1, $2, $3)",
        )?;
        for c in &mut claimed {
            c.org = org.clone();
            insert.execute(params![c.task.uid, c.attempt, now])?;
        }
        let taken = claimed.len() as u32;
        remaining -= taken;
        bucket.tokens -= f64::from(taken);
        conn.prepare_cached(
            "UPDATE queues SET dispatch_tokens = $1, dispatch_refilled_at = $2 \
             WHERE org = $3 AND name = $4",
        )?
        .execute(params![bucket.tokens, bucket.refilled_at, org, queue])?;
        if taken == n && bucket.whole() == 0 {
            let at = bucket.next_token_at(&limits);
            wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
        }
        if !claimed.is_empty() && !batch.signing_secrets.contains_key(&org) {
            let mut stmt = conn.prepare_cached(
                "SELECT secret FROM signing_secrets WHERE org = $1 ORDER BY created_at DESC, id DESC",
            )?;
            let secrets = collect(&mut stmt, params![org], |r| r.text(0))?;
            batch.signing_secrets.insert(org.clone(), secrets);
        }
        batch.tasks.extend(claimed);
    }

    let next_due: Option<i64> = conn
        .prepare_cached(
            "SELECT t.next_attempt_at FROM tasks t WHERE t.status = 'pending' \
             AND t.next_attempt_at > $1 AND EXISTS (SELECT 1 FROM queues q \
             WHERE q.org = t.org AND q.name = t.queue AND q.state = 'running') \
             ORDER BY t.next_attempt_at LIMIT 1",
        )?
        .query_row(params![now], |r| r.get(0))
        .optional()?;
    let next_lease: Option<i64> = conn
        .prepare_cached("SELECT min(lease_expires_at) FROM tasks WHERE status = 'running'")?
        .query_row([], |r| r.get(0))?;
    batch.wake_at = [wake_at, next_due, next_lease]
        .into_iter()
        .flatten()
        .min()
        .map(from_micros);
    Ok(batch)
}
