//! [`DispatchStore`] on PostgreSQL, shared by any number of nodes.
//!
//! Claims lock queue rows with `FOR NO KEY UPDATE SKIP LOCKED`: while one
//! node debits a queue's token bucket and counts its running tasks, another
//! node skips that queue for this round instead of waiting, and task creates
//! (which take `FOR KEY SHARE` on the queue) are not blocked. Task rows are
//! taken with `FOR UPDATE SKIP LOCKED` as well, so two claimers never wait on
//! each other and never take the same task.
//!
//! Wake-ups travel by `LISTEN/NOTIFY`: [`WORK_CHANNEL`] when work may be
//! claimable, [`FINISHED_CHANNEL`] (sent in the completing transaction, so
//! only once it commits) when a task reaches a final state.

use super::{PostgresStore, execute, query, query_opt};
use crate::dispatch::*;
use crate::sql::{self as rows, Row as _};
use crate::{Error, Result};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use futures_util::StreamExt;
use futures_util::future::try_join_all;
use idem_core::clock::from_micros;
use idem_core::queue::QueueConfig;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, NoTls};

type Param = dyn ToSql + Sync;

#[async_trait]
impl DispatchStore for PostgresStore {
    async fn dispatch_claim(&self, params: DispatchClaim) -> Result<ClaimedBatch> {
        let now = self.now();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let batch = claim(&tx, now, params).await?;
        let finals: Vec<&Finished> = batch.recovered.iter().filter(|f| f.is_final()).collect();
        notify_finished(&tx, &finals).await?;
        tx.commit().await?;
        Ok(batch)
    }

    async fn dispatch_complete(&self, results: Vec<AttemptResult>) -> Result<Vec<Completion>> {
        if results.is_empty() {
            return Ok(Vec::new());
        }
        let now = self.now();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let uids: Vec<&str> = results.iter().map(|r| r.task_uid.as_str()).collect();
        // Ordered, so that concurrent batches lock rows in one order.
        let found = query(
            &tx,
            &format!("{RUNNING_ROW} WHERE t.uid = ANY($1) ORDER BY t.uid FOR UPDATE OF t"),
            &[&uids],
        )
        .await?
        .iter()
        .map(running_row)
        .collect::<Result<Vec<_>>>()?;
        let by_uid: std::collections::HashMap<&str, &RunningRow> =
            found.iter().map(|r| (r.uid.as_str(), r)).collect();
        // Statements on one connection are pipelined when awaited together.
        let completions = try_join_all(results.iter().map(|result| {
            let row = by_uid
                .get(result.task_uid.as_str())
                .filter(|row| row.holds(result.attempt));
            let tx = &tx;
            async move {
                let completion = match row {
                    Some(row) => Completion::Applied(apply(tx, now, row, result).await?),
                    None => Completion::Stale {
                        task_uid: result.task_uid.clone(),
                    },
                };
                Ok::<_, Error>(completion)
            }
        }))
        .await?;
        let finals: Vec<&Finished> = completions
            .iter()
            .filter_map(|c| match c {
                Completion::Applied(f) if f.is_final() => Some(f),
                _ => None,
            })
            .collect();
        notify_finished(&tx, &finals).await?;
        tx.commit().await?;
        Ok(completions)
    }

    async fn dispatch_notify_work(&self) -> Result<()> {
        let client = self.pool.get().await?;
        execute(&client, "SELECT pg_notify($1, '')", &[&WORK_CHANNEL]).await?;
        Ok(())
    }

    async fn dispatch_listen(&self) -> Result<Option<mpsc::Receiver<DispatchSignal>>> {
        let (tx, rx) = mpsc::channel(4096);
        let config = self.listen_config.clone();
        tokio::spawn(listen(config, tx));
        Ok(Some(rx))
    }
}

/// Keeps a dedicated connection LISTENing until the receiver goes away,
/// reconnecting after failures.
async fn listen(config: tokio_postgres::Config, signals: mpsc::Sender<DispatchSignal>) {
    const RECONNECT_DELAY: Duration = Duration::from_secs(1);
    while !signals.is_closed() {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let forward = signals.clone();
                // The connection delivers notifications only while polled,
                // and the LISTEN below needs it polled to complete.
                let driver = tokio::spawn(async move {
                    let mut messages =
                        futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(message) = messages.next().await {
                        let signal = match message {
                            Ok(AsyncMessage::Notification(n)) if n.channel() == WORK_CHANNEL => {
                                DispatchSignal::Work
                            }
                            Ok(AsyncMessage::Notification(n)) => {
                                match decode_finished(n.payload()) {
                                    Some(f) => DispatchSignal::TaskFinished(f),
                                    None => continue,
                                }
                            }
                            Ok(_) => continue,
                            Err(e) => {
                                tracing::warn!(error = %e, "dispatch listener connection lost");
                                return;
                            }
                        };
                        if forward.send(signal).await.is_err() {
                            return;
                        }
                    }
                });
                let listening = client
                    .batch_execute(&format!("LISTEN {WORK_CHANNEL}; LISTEN {FINISHED_CHANNEL}"))
                    .await;
                match listening {
                    // Anything sent while no connection listened was missed.
                    Ok(()) => {
                        if signals.send(DispatchSignal::Work).await.is_err() {
                            driver.abort();
                            return;
                        }
                        let _ = driver.await;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "dispatch listener could not LISTEN");
                        driver.abort();
                    }
                }
                drop(client);
            }
            Err(e) => tracing::warn!(error = %e, "dispatch listener cannot connect"),
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

async fn notify_finished<C: GenericClient>(c: &C, finals: &[&Finished]) -> Result<()> {
    if finals.is_empty() {
        return Ok(());
    }
    let payloads: Vec<String> = finals.iter().map(|f| encode_finished(f)).collect();
    execute(
        c,
        "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p",
        &[&FINISHED_CHANNEL, &payloads],
    )
    .await?;
    Ok(())
}

const RUNNING_ROW: &str = "SELECT t.org, t.queue, t.task_id, t.uid, t.status, t.attempt_count, \
     t.cancel_requested, t.retry_config, t.first_attempt_at, a.started_at, q.config \
     FROM tasks t JOIN queues q ON q.org = t.org AND q.name = t.queue \
     LEFT JOIN attempts a ON a.task_uid = t.uid AND a.attempt = t.attempt_count";

/// Records the attempt and moves the task on; the caller checked the lease
/// under a row lock.
async fn apply<C: GenericClient>(
    c: &C,
    now: i64,
    row: &RunningRow,
    result: &AttemptResult,
) -> Result<Finished> {
    let outcome = row.outcome(result, now);
    let attempt_json = rows::to_json(&outcome.attempt);
    let status_code = outcome.attempt.status_code.map(i64::from);
    let duration_ms = outcome.attempt.duration_ms.map(|d| d as i64);
    let attempt_no = i64::from(row.attempt_count);
    let status = outcome.status.as_str();
    let task_params: [&Param; 6] = [
        &status,
        &outcome.next_attempt_at,
        &outcome.finished_at,
        &outcome.dedup_expires_at,
        &attempt_json,
        &row.uid,
    ];
    let task = execute(
        c,
        "UPDATE tasks SET status = $1, next_attempt_at = COALESCE($2, next_attempt_at), \
         finished_at = $3, dedup_expires_at = $4, lease_expires_at = NULL, last_attempt = $5 \
         WHERE uid = $6",
        &task_params,
    );
    let attempt_params: [&Param; 6] = [
        &now,
        &status_code,
        &outcome.attempt.error,
        &duration_ms,
        &row.uid,
        &attempt_no,
    ];
    let attempt = execute(
        c,
        "UPDATE attempts SET finished_at = $1, status_code = $2, error = $3, duration_ms = $4 \
         WHERE task_uid = $5 AND attempt = $6",
        &attempt_params,
    );
    futures_util::future::try_join(task, attempt).await?;
    Ok(row.finished(outcome.status))
}

async fn claim<C: GenericClient>(c: &C, now: i64, params: DispatchClaim) -> Result<ClaimedBatch> {
    let mut batch = ClaimedBatch::default();
    let expired = query(
        c,
        &format!(
            "{RUNNING_ROW} WHERE t.status = 'running' AND t.lease_expires_at <= $1 \
             ORDER BY t.lease_expires_at LIMIT $2 FOR UPDATE OF t SKIP LOCKED"
        ),
        &[&now, &MAX_RECOVERED_PER_CLAIM],
    )
    .await?
    .iter()
    .map(running_row)
    .collect::<Result<Vec<_>>>()?;
    for row in &expired {
        let finished = apply(c, now, row, &row.lease_expired(now)).await?;
        batch.recovered.push(finished);
    }

    let grace = i64::try_from(params.lease_grace.as_micros()).unwrap_or(i64::MAX);
    let mut remaining = params.max_tasks;
    let mut wake_at: Option<i64> = None;
    // Least recently claimed queue first, so a large backlog in one queue
    // cannot starve the others when the caller has few free slots.
    let candidates = query(
        c,
        "SELECT q.org, q.name FROM queues q \
         WHERE q.state = 'running' AND EXISTS (SELECT 1 FROM tasks t WHERE t.org = q.org \
         AND t.queue = q.name AND t.status = 'pending' AND t.next_attempt_at <= $1) \
         ORDER BY COALESCE(q.dispatch_refilled_at, 0), q.org, q.name",
        &[&now],
    )
    .await?;
    for candidate in &candidates {
        if remaining == 0 {
            break;
        }
        let org = candidate.text(0)?;
        let queue = candidate.text(1)?;
        // Locked one at a time, and only when this claim has room left, so
        // that other nodes can claim from the queues this one does not reach.
        let locked = query_opt(
            c,
            "SELECT config, dispatch_tokens, dispatch_refilled_at FROM queues \
             WHERE org = $1 AND name = $2 AND state = 'running' \
             FOR NO KEY UPDATE SKIP LOCKED",
            &[&org, &queue],
        )
        .await?;
        let Some(q) = locked else {
            continue;
        };
        let config: QueueConfig = serde_json::from_str(&q.text(0)?)
            .map_err(|e| Error::Internal(format!("unreadable queue config: {e}")))?;
        let tokens: Option<f64> = q.try_get(1)?;
        let limits = config.rate_limits;
        let mut bucket = Bucket::at(tokens.zip(q.opt_i64(2)?), &limits, now);
        let running: i64 = query(
            c,
            "SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND status = 'running'",
            &[&org, &queue],
        )
        .await?[0]
            .try_get(0)?;
        let n = claimable(&bucket, &limits, running as u64, remaining);
        if n == 0 {
            if bucket.whole() == 0 {
                // Due tasks wait for a token: wake when it is there.
                let at = bucket.next_token_at(&limits);
                wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
            }
            continue;
        }
        let claim_sql = format!(
            "WITH due AS (SELECT uid FROM tasks WHERE org = $3 AND queue = $4 \
             AND status = 'pending' AND next_attempt_at <= $1 \
             ORDER BY next_attempt_at, uid LIMIT $5 FOR UPDATE SKIP LOCKED) \
             UPDATE tasks SET status = 'running', attempt_count = tasks.attempt_count + 1, \
             first_attempt_at = COALESCE(tasks.first_attempt_at, $1), \
             lease_expires_at = $1 + tasks.dispatch_deadline_s * 1000000 + $2 \
             FROM due WHERE tasks.uid = due.uid RETURNING {}, tasks.lease_expires_at",
            rows::task_columns_of("tasks")
        );
        let mut claimed = query(c, &claim_sql, &[&now, &grace, &org, &queue, &i64::from(n)])
            .await?
            .iter()
            .map(|r| {
                let task = rows::task(r)?;
                Ok(ClaimedTask {
                    org: org.clone(),
                    attempt: task.attempt_count,
                    lease_expires_at: from_micros(r.i64(rows::TASK_COLUMN_COUNT)?),
                    task,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // RETURNING gives no order guarantee.
        claimed.sort_by(|a, b| {
            (a.task.next_attempt_at, &a.task.uid).cmp(&(b.task.next_attempt_at, &b.task.uid))
        });
        let uids: Vec<String> = claimed.iter().map(|t| t.task.uid.clone()).collect();
        let attempts: Vec<i64> = claimed.iter().map(|t| i64::from(t.attempt)).collect();
        let taken = claimed.len() as u32;
        bucket.tokens -= f64::from(taken);
        let record_params: [&Param; 3] = [&uids, &attempts, &now];
        let debit_params: [&Param; 4] = [&bucket.tokens, &bucket.refilled_at, &org, &queue];
        let record = execute(
            c,
            "INSERT INTO attempts (task_uid, attempt, started_at) \
             SELECT u, a, $3 FROM unnest($1::text[], $2::bigint[]) AS x(u, a)",
            &record_params,
        );
        let debit = execute(
            c,
            "UPDATE queues SET dispatch_tokens = $1, dispatch_refilled_at = $2 \
             WHERE org = $3 AND name = $4",
            &debit_params,
        );
        futures_util::future::try_join(record, debit).await?;
        remaining -= taken;
        if taken == n && bucket.whole() == 0 {
            let at = bucket.next_token_at(&limits);
            wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
        }
        if !claimed.is_empty() && !batch.signing_secrets.contains_key(&org) {
            let secrets = query(
                c,
                "SELECT secret FROM signing_secrets WHERE org = $1 \
                 ORDER BY created_at DESC, id DESC",
                &[&org],
            )
            .await?
            .iter()
            .map(|r| r.text(0))
            .collect::<Result<Vec<_>>>()?;
            batch.signing_secrets.insert(org.clone(), secrets);
        }
        batch.tasks.extend(claimed);
    }

    let now_param: [&Param; 1] = [&now];
    let next_due = query(
        c,
        "SELECT t.next_attempt_at FROM tasks t WHERE t.status = 'pending' \
         AND t.next_attempt_at > $1 AND EXISTS (SELECT 1 FROM queues q \
         WHERE q.org = t.org AND q.name = t.queue AND q.state = 'running') \
         ORDER BY t.next_attempt_at LIMIT 1",
        &now_param,
    );
    let next_lease = query(
        c,
        "SELECT min(lease_expires_at) FROM tasks WHERE status = 'running'",
        &[],
    );
    let (next_due, next_lease) = futures_util::future::try_join(next_due, next_lease).await?;
    let next_due: Option<i64> = next_due.first().map(|r| r.i64(0)).transpose()?;
    let next_lease: Option<i64> = next_lease
        .first()
        .map(|r| r.opt_i64(0))
        .transpose()?
        .flatten();
    batch.wake_at = [wake_at, next_due, next_lease]
        .into_iter()
        .flatten()
        .min()
        .map(from_micros);
    Ok(batch)
}
