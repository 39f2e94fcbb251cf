//! [`DispatchStore`] on PostgreSQL, shared by any number of nodes.
//!
//! The claim is the shared one (`tables::dispatch::claim`), which locks
//! queue rows with `FOR NO KEY UPDATE SKIP LOCKED` here: while one node
//! debits a queue's token bucket and counts its running tasks, another node
//! skips that queue for this round instead of waiting, and task creates
//! (which take `FOR KEY SHARE` on the queue) are not blocked. Task rows are
//! taken with `FOR UPDATE SKIP LOCKED` as well (`tables::due`), so two
//! claimers never wait on each other and never take the same task.
//!
//! Wake-ups travel by `LISTEN/NOTIFY`: [`WORK_CHANNEL`] when work may be
//! claimable, [`FINISHED_CHANNEL`] (sent in the completing transaction, so
//! only once it commits) when a task reaches a final state, and
//! [`CANCELLED_CHANNEL`] (sent in the cancel's transaction) when a cancel
//! aborted an attempt that some node is running.

use super::{Pg, PostgresStore};
use crate::Result;
use crate::dispatch::*;
use crate::driver::{Conn, args};
use crate::events::EventRenderer;
use crate::records::Status;
use crate::sql as rows;
use crate::tables::dispatch::{self as table, *};
use crate::tables::events;
use crate::task_row::task_columns;
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use futures_util::StreamExt;
use futures_util::future::{try_join, try_join_all};
use idem_postgres_tls::MakeRustlsConnect;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;
use tokio_postgres::types::ToSql;

#[async_trait]
impl DispatchStore for PostgresStore {
    async fn dispatch_claim(&self, params: DispatchClaim) -> Result<ClaimedBatch> {
        let max_secrets = self.quotas().signing_secrets;
        self.write(None, async |c, now, _| {
            let batch = table::claim(c, now, params, max_secrets, &*self.events).await?;
            let finals: Vec<&TaskFinished> =
                batch.recovered.iter().filter(|f| f.is_final()).collect();
            notify_finished(c.0, &finals).await?;
            Ok(batch)
        })
        .await
    }

    async fn dispatch_complete(&self, results: Vec<AttemptResult>) -> Result<Vec<AttemptOutcome>> {
        if results.is_empty() {
            return Ok(Vec::new());
        }
        self.write(None, async |c, now, _| {
            let uids: Vec<&str> = results.iter().map(|r| r.task_uid.as_str()).collect();
            // Ordered, so that concurrent batches lock rows in one order.
            let sql = format!(
                "{} WHERE t.uid = ANY($1) ORDER BY t.uid FOR UPDATE OF t",
                RUNNING_ROW[1]
            );
            let stmt = c.0.prepare_cached(&sql).await?;
            let found =
                c.0.query(&stmt, &[&uids])
                    .await?
                    .iter()
                    .map(running_row)
                    .collect::<Result<Vec<_>>>()?;
            let by_uid: HashMap<&str, &RunningRow> =
                found.iter().map(|r| (r.uid.as_str(), r)).collect();
            // A result applies only while its attempt holds the lease, and
            // once: a second result for one attempt is stale.
            let mut applied: HashSet<&str> = HashSet::new();
            let mut nexts: Vec<(&RunningRow, NextState)> = Vec::new();
            let outcomes: Vec<AttemptOutcome> = results
                .iter()
                .map(|result| {
                    let holding = by_uid
                        .get(result.task_uid.as_str())
                        .copied()
                        .filter(|row| row.holds(result.attempt) && applied.insert(&row.uid));
                    match holding {
                        Some(row) => {
                            let next = row.outcome(result, now);
                            let finished = row.finished(next.status);
                            nexts.push((row, next));
                            AttemptOutcome::Applied(finished)
                        }
                        None => AttemptOutcome::Stale {
                            task_uid: result.task_uid.clone(),
                        },
                    }
                })
                .collect();
            let ends: Vec<(&RunningRow, &NextState)> =
                nexts.iter().map(|(row, next)| (*row, next)).collect();
            write_ends(c, now, &ends, false, &*self.events).await?;
            let finals: Vec<&TaskFinished> = outcomes
                .iter()
                .filter_map(|o| match o {
                    AttemptOutcome::Applied(f) if f.is_final() => Some(f),
                    _ => None,
                })
                .collect();
            notify_finished(c.0, &finals).await?;
            Ok(outcomes)
        })
        .await
    }

    async fn dispatch_release(&self, attempts: Vec<(String, u32)>) -> Result<u64> {
        if attempts.is_empty() {
            return Ok(0);
        }
        let released = self
            .write(None, async |c, now, _| {
                table::release(c, now, &attempts).await
            })
            .await?;
        if released > 0 {
            // Committed: wake the other nodes for what is due again.
            self.dispatch_notify_work().await?;
        }
        Ok(released)
    }

    async fn dispatch_notify_work(&self) -> Result<()> {
        self.read(async |c, _| {
            c.execute("SELECT pg_notify($1, '')", &args![WORK_CHANNEL])
                .await
        })
        .await?;
        Ok(())
    }

    async fn dispatch_leases_lost(
        &self,
        attempts: Vec<(String, u32)>,
    ) -> Result<Vec<(String, u32)>> {
        self.read(async move |c, _| table::leases_lost(c, &attempts).await)
            .await
    }

    async fn dispatch_listen(&self) -> Result<Option<mpsc::Receiver<DispatchSignal>>> {
        let (tx, rx) = mpsc::channel(4096);
        let config = self.listen_config.clone();
        tokio::spawn(listen(config, self.tls.clone(), tx));
        Ok(Some(rx))
    }
}

/// Keeps a dedicated connection LISTENing until the receiver goes away,
/// reconnecting after failures.
async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    signals: mpsc::Sender<DispatchSignal>,
) {
    const RECONNECT_DELAY: Duration = Duration::from_secs(1);
    while !signals.is_closed() {
        match config.connect(tls.clone()).await {
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
                            Ok(AsyncMessage::Notification(n))
                                if n.channel() == CANCELLED_CHANNEL =>
                            {
                                match decode_cancelled(n.payload()) {
                                    Some((uid, attempt)) => {
                                        DispatchSignal::AttemptCancelled { uid, attempt }
                                    }
                                    None => continue,
                                }
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
                    .batch_execute(&format!(
                        "LISTEN {WORK_CHANNEL}; LISTEN {FINISHED_CHANNEL}; \
                         LISTEN {CANCELLED_CHANNEL}"
                    ))
                    .await;
                match listening {
                    // Anything sent while no connection listened was missed.
                    Ok(()) => {
                        if signals.send(DispatchSignal::Listening).await.is_err() {
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

pub(super) async fn notify_finished<C: GenericClient>(
    c: &C,
    finals: &[&TaskFinished],
) -> Result<()> {
    if finals.is_empty() {
        return Ok(());
    }
    let payloads: Vec<String> = finals.iter().map(|f| encode_finished(f)).collect();
    let stmt = c
        .prepare_cached("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p")
        .await?;
    c.execute(&stmt, &[&FINISHED_CHANNEL, &payloads]).await?;
    Ok(())
}

/// Writes the next states of attempts that ended (their tasks locked by
/// the caller) with one statement for the tasks and one for their
/// attempts, pipelined, whatever their number, and raises the events of
/// the final states; [`table::apply_next`] does the same for one. With
/// `answer_tasks`, answers each task as it is now (its columns, as
/// [`task_row::read`](crate::task_row::read) reads them).
///
/// Each row is found by a LATERAL probe of its key and updated by its
/// `ctid`, which stays put: the caller holds the task's lock, and only the
/// holder of that lock writes the task or its current attempt. A plain join
/// of the arrays with the table was planned, on statistics taken while the
/// table was small, as a hash join over a scan of the whole table (26 ms
/// instead of 2.6 ms for 300 rows of 60,000).
pub(super) async fn write_ends<C: GenericClient>(
    c: &Pg<'_, C>,
    now: i64,
    ends: &[(&RunningRow, &NextState)],
    answer_tasks: bool,
    render: &dyn EventRenderer,
) -> Result<Vec<tokio_postgres::Row>> {
    if ends.is_empty() {
        return Ok(Vec::new());
    }
    let col = |f: fn(&NextState) -> Option<i64>| ends.iter().map(|(_, n)| f(n)).collect::<Vec<_>>();
    let uids: Vec<&str> = ends.iter().map(|(r, _)| r.uid.as_str()).collect();
    let statuses: Vec<&str> = ends.iter().map(|(_, n)| n.status.as_str()).collect();
    let next_at = col(|n| n.next_attempt_at);
    let finished_at = col(|n| n.finished_at);
    let dedup = col(|n| n.dedup_expires_at);
    let last: Vec<String> = ends
        .iter()
        .map(|(_, n)| rows::to_json(&n.attempt))
        .collect();
    let results: Vec<Option<&str>> = ends.iter().map(|(_, n)| n.result.as_deref()).collect();
    let attempts: Vec<i64> = ends
        .iter()
        .map(|(r, _)| i64::from(r.attempt_count))
        .collect();
    let codes = col(|n| n.attempt.status_code.map(i64::from));
    let errors: Vec<Option<&str>> = ends
        .iter()
        .map(|(_, n)| n.attempt.error.as_deref())
        .collect();
    let durations = col(|n| n.attempt.duration_ms.map(|d| d as i64));
    let responses: Vec<Option<String>> = ends
        .iter()
        .map(|(_, n)| n.attempt.response.as_ref().map(rows::to_json))
        .collect();

    let write_tasks = async {
        let sql = format!(
            "UPDATE tasks t SET status = v.status, \
             next_attempt_at = COALESCE(v.next_attempt_at, t.next_attempt_at), \
             finished_at = v.finished_at, dedup_expires_at = v.dedup_expires_at, \
             lease_expires_at = NULL, last_attempt = v.last_attempt, \
             result = COALESCE(v.result, t.result) \
             FROM (SELECT v.*, x.ctid AS row_id FROM unnest($1::text[], $2::text[], \
             $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[]) \
             AS v(uid, status, next_attempt_at, finished_at, dedup_expires_at, last_attempt, \
             result) CROSS JOIN LATERAL (SELECT ctid FROM tasks WHERE uid = v.uid LIMIT 1) x) v \
             WHERE t.ctid = v.row_id {}",
            if answer_tasks {
                concat!("RETURNING ", task_columns!(t)).to_string()
            } else {
                String::new()
            }
        );
        let stmt = c.0.prepare_cached(&sql).await?;
        let params: [&(dyn ToSql + Sync); 7] = [
            &uids,
            &statuses,
            &next_at,
            &finished_at,
            &dedup,
            &last,
            &results,
        ];
        Ok::<_, crate::Error>(c.0.query(&stmt, &params).await?)
    };
    let write_attempts = async {
        let stmt =
            c.0.prepare_cached(
                "UPDATE attempts a SET finished_at = $1, status_code = v.status_code, \
                 error = v.error, duration_ms = v.duration_ms, response = v.response \
                 FROM (SELECT v.*, x.ctid AS row_id FROM unnest($2::text[], $3::bigint[], \
                 $4::bigint[], $5::text[], $6::bigint[], $7::text[]) \
                 AS v(uid, attempt, status_code, error, duration_ms, response) CROSS JOIN LATERAL \
                 (SELECT ctid FROM attempts WHERE task_uid = v.uid AND attempt = v.attempt \
                 LIMIT 1) x) v WHERE a.ctid = v.row_id",
            )
            .await?;
        let params: [&(dyn ToSql + Sync); 7] = [
            &now, &uids, &attempts, &codes, &errors, &durations, &responses,
        ];
        Ok::<_, crate::Error>(c.0.execute(&stmt, &params).await?)
    };
    let (updated, _) = try_join(write_tasks, write_attempts).await?;
    // Most queues raise no events: no statement then.
    try_join_all(
        ends.iter()
            .filter(|(_, n)| matches!(n.status, Status::Succeeded | Status::Failed))
            .map(|(row, n)| events::on_final(c, now, row, n.status, render)),
    )
    .await?;
    Ok(updated)
}
