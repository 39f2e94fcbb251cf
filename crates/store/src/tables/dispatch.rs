//! The dispatcher's statements on `tasks`, `attempts` and `queues`: its
//! claim, applying attempt results, recovering expired leases and the rules
//! behind them (token buckets, backoff). A claim takes a queue's tasks with
//! the claim statement workers' claims use too ([`super::due`]); on
//! PostgreSQL it locks queue and task rows with `SKIP LOCKED` so nodes never
//! wait on each other, where SQLite's one writer needs no lock. A claim's
//! attempts are recorded with one statement.

use super::due::{self, Due, Turns};
use crate::dispatch::*;
use crate::driver::{Conn, Dialect, args};
use crate::events::EventRenderer;
use crate::records::{Attempt, Status};
use crate::sql::{self as rows, Row};
use crate::{Error, Result};
use futures_util::future::{try_join, try_join_all};
use idem_core::backoff::{self, Next};
use idem_core::clock::{from_micros, to_micros};
use idem_core::queue::{QueueConfig, RateLimits};
use std::collections::BTreeSet;
use std::time::Duration;

/// Error text of an attempt whose node stopped reporting.
pub(crate) const LEASE_EXPIRED: &str =
    "lease expired: the node running the attempt stopped before reporting a result";

/// The token bucket of a queue as stored: `None` tokens mean full.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bucket {
    pub tokens: f64,
    pub refilled_at: i64,
}

impl Bucket {
    /// The bucket at `now`: refilled at the queue's rate since it was last
    /// written, never above the burst size. A clock that went backwards
    /// refills nothing.
    pub(crate) fn at(stored: Option<(f64, i64)>, limits: &RateLimits, now: i64) -> Bucket {
        let burst = f64::from(limits.max_burst_size);
        let tokens = match stored {
            None => burst,
            Some((tokens, at)) => {
                let elapsed_s = now.saturating_sub(at).max(0) as f64 / 1e6;
                (tokens + elapsed_s * limits.max_dispatches_per_second).min(burst)
            }
        };
        Bucket {
            tokens,
            refilled_at: now,
        }
    }

    /// Spends a token per task a claim took.
    pub(crate) fn take(&mut self, tasks: usize) {
        self.tokens -= tasks as f64;
    }

    /// Whole tokens available.
    pub(crate) fn whole(&self) -> u32 {
        self.tokens.max(0.0).floor().min(f64::from(u32::MAX)) as u32
    }

    /// When the next whole token will be there.
    pub(crate) fn next_token_at(&self, limits: &RateLimits) -> i64 {
        let missing = (1.0 - self.tokens.fract()).max(0.0);
        // `as` saturates, and a rate from a row written before the minimum
        // rate was enforced may make the wait enormous: saturate the sum too.
        let wait_us = (missing / limits.max_dispatches_per_second * 1e6).ceil() as i64;
        self.refilled_at.saturating_add(wait_us.max(1))
    }
}

/// How many of a queue's due tasks one claim may take.
pub(crate) fn claimable(bucket: &Bucket, limits: &RateLimits, running: u64, wanted: u32) -> u32 {
    let free = u64::from(limits.max_concurrent_dispatches).saturating_sub(running);
    let free = u32::try_from(free).unwrap_or(u32::MAX);
    wanted.min(free).min(bucket.whole())
}

/// The columns of a task's row a completion needs, whatever the backend.
#[derive(Clone)]
pub(crate) struct RunningRow {
    pub org: String,
    pub queue: String,
    pub task_id: String,
    pub uid: String,
    pub status: Status,
    pub attempt_count: u32,
    pub cancel_requested: bool,
    pub retry_config: idem_core::queue::RetryConfig,
    pub first_attempt_at: Option<i64>,
    pub started_at: Option<i64>,
    /// The attempts made before the task was last redriven: its retry
    /// budget counts only those after.
    pub attempts_before_redrive: u32,
    /// The queue's configuration: how long an ended task is kept, its
    /// callbacks.
    pub queue_config: QueueConfig,
    /// The stored target, which carries the task's own callbacks; `None`
    /// where only the lease matters.
    pub target_json: Option<String>,
    /// The event types the organization's webhooks want (space separated).
    pub webhook_events: Option<String>,
    /// Its stored bytes, which a status change moves between the queue's
    /// counters ([`Conn::count_moved`]).
    pub bytes: u64,
}

/// The new state of a task after an attempt, as column values.
pub(crate) struct NextState {
    pub status: Status,
    pub next_attempt_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub dedup_expires_at: Option<i64>,
    pub attempt: Attempt,
    /// What a pull task's worker reported on completing it (JSON text).
    pub result: Option<String>,
}

impl RunningRow {
    /// Whether `token` still holds this task's lease.
    pub(crate) fn holds(&self, token: u32) -> bool {
        self.status == Status::Running && self.attempt_count == token
    }

    /// Decides what an attempt's result makes of the task (API.md §4): 2xx
    /// succeeds; a failure of a task whose cancel was requested ends it (a
    /// cancel now ends a running task itself, through [`abort`]; rows
    /// marked by an earlier version still end this way); a
    /// failure no retry can change (a target policy refusal) fails it;
    /// otherwise the backoff decides between a retry and giving up.
    pub(crate) fn outcome(&self, result: &AttemptResult, now: i64) -> NextState {
        let status = if result.succeeded() {
            Status::Succeeded
        } else if self.cancel_requested {
            Status::Cancelled
        } else if result.give_up {
            Status::Failed
        } else {
            let first = from_micros(self.first_attempt_at.unwrap_or(now));
            match backoff::after_failure(
                &self.retry_config,
                self.attempt_count
                    .saturating_sub(self.attempts_before_redrive),
                first,
                from_micros(now),
                result.retry_after,
            ) {
                Next::GiveUp => Status::Failed,
                Next::RetryAt(at) => {
                    return NextState {
                        status: Status::Pending,
                        next_attempt_at: Some(to_micros(at)),
                        finished_at: None,
                        dedup_expires_at: None,
                        attempt: self.attempt(result, now),
                        result: None,
                    };
                }
            }
        };
        let window = self.queue_config.kept_for_us(status == Status::Failed);
        NextState {
            status,
            next_attempt_at: None,
            finished_at: Some(now),
            dedup_expires_at: Some(now.saturating_add(window)),
            attempt: self.attempt(result, now),
            result: None,
        }
    }

    pub(crate) fn attempt(&self, result: &AttemptResult, now: i64) -> Attempt {
        Attempt {
            attempt: self.attempt_count,
            started_at: from_micros(self.started_at.unwrap_or(now)),
            finished_at: Some(from_micros(now)),
            status_code: result.status_code,
            error: result.error.clone(),
            duration_ms: Some(u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX)),
            response: result.response.clone(),
        }
    }

    pub(crate) fn finished(&self, status: Status) -> TaskFinished {
        TaskFinished {
            org: self.org.clone(),
            queue: self.queue.clone(),
            task_id: self.task_id.clone(),
            uid: self.uid.clone(),
            status,
        }
    }

    /// The result standing for an attempt aborted by a cancel: measured by
    /// the store from the attempt's start to the cancel.
    fn aborted(&self, now: i64) -> AttemptResult {
        AttemptResult {
            error: Some(ABORTED_BY_CANCEL.into()),
            ..self.lease_expired(now)
        }
    }

    /// The result standing for an attempt whose lease expired.
    pub(crate) fn lease_expired(&self, now: i64) -> AttemptResult {
        AttemptResult {
            task_uid: self.uid.clone(),
            attempt: self.attempt_count,
            status_code: None,
            error: Some(LEASE_EXPIRED.into()),
            duration: Duration::from_micros(
                u64::try_from(now - self.started_at.unwrap_or(now)).unwrap_or(0),
            ),
            retry_after: None,
            give_up: false,
            response: None,
        }
    }
}

/// Deletes a task's attempts up to a number. Parameters: task uid, the
/// newest attempt number to delete.
const SQL_TRIM_ATTEMPTS: &str = "DELETE FROM attempts WHERE task_uid = $1 AND attempt <= $2";

/// The newest attempt to delete when `attempt` starts and `kept` are kept,
/// or `None` while the history is within the bound (no statement needed).
pub(crate) fn attempts_to_trim(attempt: u32, kept: u32) -> Option<i64> {
    let kept = i64::from(kept.max(1));
    let attempt = i64::from(attempt);
    (attempt > kept).then_some(attempt - kept)
}

/// Records the attempts a claim of one queue started, `(task uid, attempt
/// number)`, in one statement, and trims each task's history to the last
/// `kept` attempts (only tasks past the bound send a statement for it).
/// The rows go as one JSON array, so the statement's text is the same for
/// every claim and stays prepared. On PostgreSQL the claim also logs its
/// count for `dispatched_last_minute` ([`SQL_LOG_DISPATCHED`]), pipelined
/// with the insert; SQLite counts in the server's memory.
pub(crate) async fn record_started<C: Conn>(
    c: &C,
    (org, queue): (&str, &str),
    started: &[(&str, u32)],
    now: i64,
    kept: u32,
) -> Result<()> {
    if started.is_empty() {
        return Ok(());
    }
    let sql = match C::DIALECT {
        Dialect::Postgres => {
            "INSERT INTO attempts (task_uid, attempt, started_at) \
             SELECT r->>0, (r->>1)::bigint, $1 FROM jsonb_array_elements($2::text::jsonb) AS r"
        }
        Dialect::Sqlite => {
            "INSERT INTO attempts (task_uid, attempt, started_at) \
             SELECT value->>0, value->>1, $1 FROM json_each($2)"
        }
    };
    let rows = serde_json::to_string(started)
        .map_err(|e| Error::Internal(format!("encoding started attempts: {e}")))?;
    // `$1` before `$2` in both texts: SQLite numbers parameters in order of
    // first use.
    let insert_args = args![now, rows.as_str()];
    let inserted = c.execute(sql, &insert_args);
    match C::DIALECT {
        Dialect::Postgres => {
            let n = started.len() as i64;
            let log_args = args![org, queue, now, n];
            let logged = c.execute(SQL_LOG_DISPATCHED, &log_args);
            try_join(inserted, logged).await?;
        }
        Dialect::Sqlite => {
            inserted.await?;
        }
    }
    for (uid, attempt) in started {
        if let Some(upto) = attempts_to_trim(*attempt, kept) {
            c.execute(SQL_TRIM_ATTEMPTS, &args![*uid, upto]).await?;
        }
    }
    Ok(())
}

/// One claim's attempts in `task_dispatches` (PostgreSQL): one entry of
/// their count, and the queue's entries older than a minute dropped, so
/// that `dispatched_last_minute` is a sum over a short range of the
/// queue's index. One entry per claim, not per attempt, and written by the
/// claim, which knows its queue: a trigger on `attempts` looked up each
/// attempt's task twice and wrote an entry per attempt, two WAL records
/// of a delivery and a quarter of the claim's time on the database.
/// `$1` org, `$2` queue, `$3` now, `$4` attempts started.
const SQL_LOG_DISPATCHED: &str = "WITH pruned AS (DELETE FROM task_dispatches \
     WHERE org = $1 AND queue = $2 AND started_at <= $3::bigint - 60000000) \
     INSERT INTO task_dispatches (org, queue, started_at, n) VALUES ($1, $2, $3, $4)";

/// Most expired leases one claim recovers; the rest wait for the next.
pub(crate) const MAX_RECOVERED_PER_CLAIM: i64 = 256;

/// Channel names of the PostgreSQL wake-ups.
pub(crate) const WORK_CHANNEL: &str = "idem_dispatch_work";
pub(crate) const FINISHED_CHANNEL: &str = "idem_task_finished";
pub(crate) const CANCELLED_CHANNEL: &str = "idem_attempt_cancelled";

/// `uid/attempt`: the attempt a cancel aborted, for the node running it.
pub(crate) fn encode_cancelled(uid: &str, attempt: u32) -> String {
    format!("{uid}/{attempt}")
}

pub(crate) fn decode_cancelled(payload: &str) -> Option<(String, u32)> {
    let (uid, attempt) = payload.split_once('/')?;
    Some((uid.to_string(), attempt.parse().ok()?))
}

/// `org/queue/task_id/uid/status`: names never contain `/` (API.md §3 limits
/// them to `[A-Za-z0-9_-]`), so the payload splits unambiguously.
pub(crate) fn encode_finished(f: &TaskFinished) -> String {
    format!(
        "{}/{}/{}/{}/{}",
        f.org,
        f.queue,
        f.task_id,
        f.uid,
        f.status.as_str()
    )
}

pub(crate) fn decode_finished(payload: &str) -> Option<TaskFinished> {
    let mut parts = payload.split('/');
    let f = TaskFinished {
        org: parts.next()?.to_string(),
        queue: parts.next()?.to_string(),
        task_id: parts.next()?.to_string(),
        uid: parts.next()?.to_string(),
        status: Status::parse(parts.next()?)?,
    };
    parts.next().is_none().then_some(f)
}

/// Reads a row of [`RUNNING_ROW`].
pub(crate) fn running_row(r: &impl Row) -> Result<RunningRow> {
    let status = r.text(4)?;
    let config: QueueConfig = serde_json::from_str(&r.text(10)?)
        .map_err(|e| Error::Internal(format!("unreadable queue config: {e}")))?;
    Ok(RunningRow {
        org: r.text(0)?,
        queue: r.text(1)?,
        task_id: r.text(2)?,
        uid: r.text(3)?,
        status: Status::parse(&status)
            .ok_or_else(|| Error::Internal(format!("unreadable task status {status:?}")))?,
        attempt_count: r.i64(5)? as u32,
        cancel_requested: r.i64(6)? != 0,
        retry_config: serde_json::from_str(&r.text(7)?)
            .map_err(|e| Error::Internal(format!("unreadable retry config: {e}")))?,
        first_attempt_at: r.opt_i64(8)?,
        started_at: r.opt_i64(9)?,
        attempts_before_redrive: r.i64(11)? as u32,
        queue_config: config,
        target_json: r.opt_text(12)?,
        webhook_events: r.opt_text(13)?,
        bytes: u64::try_from(r.i64(14)?).unwrap_or(0),
    })
}

/// A task's row as a completion reads it: its lease, its retry policy and
/// budget, its queue's configuration (how long an ended task is kept), and
/// what tells whether its end raises an event (its target with its own
/// callbacks, its queue's callbacks, the event types its organization's
/// webhooks want); read with [`running_row`]. Callers append the condition.
/// Its last column, `$bytes`, is the task's stored bytes where a status
/// change is counted by its statement (SQLite, [`Conn::count_moved`]).
macro_rules! running_row {
    ($bytes:literal) => {
        concat!(
            "SELECT t.org, t.queue, t.task_id, t.uid, t.status, \
             t.attempt_count, t.cancel_requested, t.retry_config, t.first_attempt_at, \
             a.started_at, q.config, t.attempts_before_redrive, t.target, o.webhook_events, ",
            $bytes,
            " FROM tasks t JOIN queues q ON q.org = t.org AND q.name = t.queue \
             LEFT JOIN organizations o ON o.name = t.org \
             LEFT JOIN attempts a ON a.task_uid = t.uid AND a.attempt = t.attempt_count"
        )
    };
    (Sqlite) => {
        running_row!("CAST(octet_length(t.target) + COALESCE(octet_length(t.body), 0) AS BIGINT)")
    };
    // PostgreSQL's trigger counts status changes: no bytes to read.
    (Postgres) => {
        running_row!("CAST(0 AS BIGINT)")
    };
}

/// [`running_row!`] by dialect.
pub(crate) const RUNNING_ROW: [&str; 2] = [running_row!(Sqlite), running_row!(Postgres)];

const SQL_RUNNING_ONE: [&str; 2] = [
    concat!(running_row!(Sqlite), " WHERE t.uid = $1"),
    concat!(running_row!(Postgres), " WHERE t.uid = $1"),
];

/// The running row of one task.
pub(crate) async fn running<C: Conn>(c: &C, uid: &str) -> Result<Option<RunningRow>> {
    let sql = C::DIALECT.pick(SQL_RUNNING_ONE[0], SQL_RUNNING_ONE[1]);
    c.query_opt(sql, &args![uid], |r| running_row(r)).await
}

/// Applies an attempt's result if `row` (the task as it is now) still
/// holds its lease; otherwise nothing changes.
pub(crate) async fn complete<C: Conn>(
    c: &C,
    now: i64,
    row: Option<&RunningRow>,
    result: &AttemptResult,
    render: &dyn EventRenderer,
) -> Result<AttemptOutcome> {
    match row.filter(|row| row.holds(result.attempt)) {
        Some(row) => Ok(AttemptOutcome::Applied(
            apply(c, now, row, result, render).await?,
        )),
        None => Ok(AttemptOutcome::Stale {
            task_uid: result.task_uid.clone(),
        }),
    }
}

/// Ends a running task `cancelled` (the caller holds its row lock): the
/// attempt in flight is recorded as aborted and the lease is released, so
/// whatever that attempt reports later is [`AttemptOutcome::Stale`].
pub(crate) async fn abort<C: Conn>(
    c: &C,
    now: i64,
    row: &RunningRow,
    render: &dyn EventRenderer,
) -> Result<TaskFinished> {
    let cancelling = RunningRow {
        cancel_requested: true,
        ..row.clone()
    };
    apply(c, now, &cancelling, &cancelling.aborted(now), render).await
}

/// Of `attempts` (task uid, lease token), those whose lease is gone. One
/// statement per attempt, pipelined on PostgreSQL: this runs only when a
/// node may have missed a cancel, never on the dispatch path.
pub(crate) async fn leases_lost<C: Conn>(
    c: &C,
    attempts: &[(String, u32)],
) -> Result<Vec<(String, u32)>> {
    let held = try_join_all(attempts.iter().map(|(uid, attempt)| async move {
        c.query_opt(
            "SELECT 1 FROM tasks WHERE uid = $1 AND status = 'running' AND attempt_count = $2",
            &args![uid, i64::from(*attempt)],
            |_| Ok(()),
        )
        .await
    }))
    .await?;
    Ok(attempts
        .iter()
        .zip(held)
        .filter(|(_, held)| held.is_none())
        .map(|(attempt, _)| attempt.clone())
        .collect())
}

/// Gives back the leases `attempts` names (task uid, lease token), as
/// [`DispatchStore::dispatch_release`] says. Two statements per task: this
/// runs once, when a node stops, never on the dispatch path.
pub(crate) async fn release<C: Conn>(c: &C, now: i64, attempts: &[(String, u32)]) -> Result<u64> {
    let mut released = 0;
    for (uid, attempt) in attempts {
        let lease = args![now, uid.as_str(), i64::from(*attempt)];
        // Answers what the queue's counters move on SQLite (`Conn::count_moved`).
        let moved = c
            .query_opt(
                concat!(
                    "UPDATE tasks SET status = 'pending', next_attempt_at = $1, \
                     lease_expires_at = NULL, attempt_count = attempt_count - 1, \
                     first_attempt_at = CASE WHEN attempt_count - 1 <= attempts_before_redrive \
                     THEN NULL ELSE first_attempt_at END \
                     WHERE uid = $2 AND status = 'running' AND attempt_count = $3 \
                     RETURNING org, queue, CAST(",
                    super::stats::task_bytes!(),
                    " AS BIGINT)"
                ),
                &lease,
                |r| Ok((r.text(0)?, r.text(1)?, r.i64(2)?)),
            )
            .await?;
        if let Some((org, queue, bytes)) = moved {
            let bytes = u64::try_from(bytes).unwrap_or(0);
            c.count_moved(&org, &queue, (Status::Running, Status::Pending), 1, bytes);
            c.execute(
                "DELETE FROM attempts WHERE task_uid = $1 AND attempt = $2",
                &args![uid.as_str(), i64::from(*attempt)],
            )
            .await?;
            released += 1;
        }
    }
    Ok(released)
}

/// Records the attempt and moves the task on; the caller checked the lease
/// (under a row lock, on PostgreSQL).
async fn apply<C: Conn>(
    c: &C,
    now: i64,
    row: &RunningRow,
    result: &AttemptResult,
    render: &dyn EventRenderer,
) -> Result<TaskFinished> {
    apply_next(c, now, row, row.outcome(result, now), render).await
}

/// Writes the state an attempt's end decided, and raises the events of a
/// final state in the same transaction. The two statements are pipelined.
pub(crate) async fn apply_next<C: Conn>(
    c: &C,
    now: i64,
    row: &RunningRow,
    next: NextState,
    render: &dyn EventRenderer,
) -> Result<TaskFinished> {
    let attempt_json = rows::to_json(&next.attempt);
    let task_args = args![
        next.status.as_str(),
        next.next_attempt_at,
        next.finished_at,
        next.dedup_expires_at,
        &attempt_json,
        &next.result,
        &row.uid,
    ];
    let task = c.execute(
        "UPDATE tasks SET status = $1, next_attempt_at = COALESCE($2, next_attempt_at), \
         finished_at = $3, dedup_expires_at = $4, lease_expires_at = NULL, last_attempt = $5, \
         result = COALESCE($6, result) WHERE uid = $7",
        &task_args,
    );
    let response = next.attempt.response.as_ref().map(rows::to_json);
    let attempt_args = args![
        now,
        next.attempt.status_code.map(i64::from),
        &next.attempt.error,
        next.attempt.duration_ms.map(|d| d as i64),
        &response,
        &row.uid,
        i64::from(row.attempt_count),
    ];
    let attempt = c.execute(
        "UPDATE attempts SET finished_at = $1, status_code = $2, error = $3, duration_ms = $4, \
         response = $5 WHERE task_uid = $6 AND attempt = $7",
        &attempt_args,
    );
    try_join(task, attempt).await?;
    c.count_moved(
        &row.org,
        &row.queue,
        (row.status, next.status),
        1,
        row.bytes,
    );
    if matches!(next.status, Status::Succeeded | Status::Failed) {
        super::events::on_final(c, now, row, next.status, render).await?;
    }
    Ok(row.finished(next.status))
}

/// Whether queue `q` has a task due at `$1`: a queue whose tasks carry no
/// group nor priority is the one range ('', 0) of `tasks_due_by_queue`, in
/// due order, whose first entry says; an ordered queue's groups are looked
/// through until one has. One `EXISTS` of a `UNION ALL`, read queue by
/// queue and stopping at its first row: PostgreSQL made the `OR` of two
/// `EXISTS` a hashed subplan that read every due task of every queue on
/// each claim (2 ms a claim with 10,000 due, a quarter of push dispatch's
/// rate). Both questions are asked in the order only `tasks_due_by_queue`
/// holds (down to the uid), so that each reads the queue's own entries:
/// asked whether any was due, PostgreSQL walked `tasks_due` (every
/// queue's due tasks, in due order) or the table and dropped the other
/// queues' tasks until it met one of this queue, 20,000 a claim (3–16 ms)
/// when another queue's backlog was due first, and an ordered queue,
/// which holds no task in the plain range, was asked that too.
macro_rules! has_due {
    () => {
        "EXISTS (SELECT 1 WHERE q.ordered = 0 AND (SELECT t.next_attempt_at FROM tasks t \
         WHERE t.org = q.org AND t.queue = q.name AND t.status = 'pending' \
         AND t.group_key = '' AND t.priority = 0 ORDER BY t.next_attempt_at, t.uid LIMIT 1) <= $1 \
         UNION ALL SELECT 1 FROM (SELECT t.uid FROM tasks t WHERE q.ordered <> 0 \
         AND t.org = q.org AND t.queue = q.name AND t.status = 'pending' \
         AND t.next_attempt_at <= $1 \
         ORDER BY t.group_key, t.priority DESC, t.next_attempt_at, t.uid LIMIT 1) d)"
    };
}

/// The running push queues with due tasks, least recently claimed first;
/// `$1` now. SQLite's text reads each queue's limits, bucket and turn with
/// it ([`ClaimQueue::read`] at 2): its one writer changes none of them
/// before the claim reaches the queue. PostgreSQL's reads them again under
/// the queue's lock, and only once the claim has room for the queue.
pub(crate) const SQL_CLAIM_CANDIDATES: [&str; 2] = [
    concat!(
        "SELECT q.org, q.name, q.config, q.dispatch_tokens, q.dispatch_refilled_at, q.ordered, \
         q.group_cursor FROM queues q WHERE q.state = 'running' AND q.mode = 'push' AND ",
        has_due!(),
        " ORDER BY COALESCE(q.dispatch_refilled_at, 0), q.org, q.name"
    ),
    concat!(
        "SELECT q.org, q.name FROM queues q WHERE q.state = 'running' AND q.mode = 'push' AND ",
        has_due!(),
        " ORDER BY COALESCE(q.dispatch_refilled_at, 0), q.org, q.name"
    ),
];

/// The organizations holding slots of the claiming node.
fn holders(share: &FairShare) -> impl Iterator<Item = &str> {
    share
        .in_flight
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(org, _)| org.as_str())
}

/// Whether a second organization exists: any row past the first.
const SQL_SECOND_ORG: &str = "SELECT name FROM organizations ORDER BY name LIMIT 1 OFFSET 1";

/// A running queue's limits and bucket, under a lock another node's claim
/// may hold (then the queue is skipped this round); `$1` org, `$2` queue.
/// `FOR NO KEY UPDATE` does not block task creates (`FOR KEY SHARE`).
const SQL_LOCK_CLAIM_QUEUE: &str = "SELECT config, dispatch_tokens, dispatch_refilled_at, \
     ordered, group_cursor \
     FROM queues WHERE org = $1 AND name = $2 AND state = 'running' \
     FOR NO KEY UPDATE SKIP LOCKED";

/// The dispatcher's claim: recovers expired leases, then claims queue by
/// queue, least recently claimed first, so a large backlog in one queue
/// cannot starve the others when the caller has few free slots, and no
/// organization takes more than its share of them.
pub(crate) async fn claim<C: Conn>(
    c: &C,
    now: i64,
    params: DispatchClaim,
    max_secrets: u32,
    render: &dyn EventRenderer,
) -> Result<ClaimedBatch> {
    let kept = params.attempts_kept;
    let mut claim = Claim::start(c, now, params, max_secrets, render).await?;
    let now_arg = args![now];
    let candidates = c.query(
        C::DIALECT.pick(SQL_CLAIM_CANDIDATES[0], SQL_CLAIM_CANDIDATES[1]),
        &now_arg,
        |r| {
            let read = match C::DIALECT {
                Dialect::Sqlite => Some(ClaimQueue::read(r, 2)?),
                Dialect::Postgres => None,
            };
            Ok((r.text(0)?, r.text(1)?, read))
        },
    );
    // Sent beside the candidates rather than after them, so that on
    // PostgreSQL it costs no round trip of its own: most servers' due
    // tasks are one organization's, and then its answer is needed.
    let second_org = async {
        if !claim.may_ask_for_a_second_org() {
            return Ok(false);
        }
        c.query_opt(SQL_SECOND_ORG, &[], |_| Ok(()))
            .await
            .map(|found| found.is_some())
    };
    let (candidates, second_org) = try_join(candidates, second_org).await?;
    claim.share(
        candidates.iter().map(|(org, _, _)| org.as_str()),
        second_org,
    );
    for (org, queue, read) in candidates {
        if claim.remaining == 0 {
            break;
        }
        if claim.org_room(&org) == 0 {
            continue;
        }
        // Locked only when this claim has room for it, so that other nodes
        // can claim from the queues this one does not reach.
        let q = match read {
            Some(q) => q,
            None => {
                let locked = c
                    .query_opt(SQL_LOCK_CLAIM_QUEUE, &args![&org, &queue], |r| {
                        ClaimQueue::read(r, 0)
                    })
                    .await?;
                let Some(q) = locked else {
                    continue;
                };
                q
            }
        };
        let Some((n, mut bucket)) = claim.size(c, &org, &queue, &q).await? else {
            continue;
        };
        let due = Due {
            org: &org,
            queue: &queue,
            tag: None,
            max: n,
            groups: q.turns(),
        };
        let claimed = due::push(c, now, &due, claim.grace).await?;
        bucket.take(claimed.len());
        let cursor = due.groups.as_ref().and_then(|turns| {
            turns.next_cursor(
                claimed
                    .iter()
                    .map(|t| t.task.group.as_deref().unwrap_or("")),
            )
        });
        // The attempts in one statement, pipelined with the debit.
        let started: Vec<(&str, u32)> = claimed
            .iter()
            .map(|t| (t.task.uid.as_str(), t.attempt))
            .collect();
        try_join(
            record_started(c, (&org, &queue), &started, now, kept),
            debit(c, &bucket, cursor.as_deref(), &org, &queue),
        )
        .await?;
        claim.took(c, &org, &q, &bucket, n, claimed).await?;
    }
    claim.finish(c).await
}

/// A claim under way: what it may still take, when to wake, what it took.
struct Claim {
    now: i64,
    /// Added to each claimed task's deadline to form its lease (µs).
    grace: i64,
    remaining: u32,
    wake_at: Option<i64>,
    batch: ClaimedBatch,
    /// The caller's slots per organization, counting what this claim took.
    share: Option<FairShare>,
    /// Most slots one organization may take, once [`Claim::share`] knows.
    org_cap: u32,
    /// Most signing secrets a delivery is signed with (0: all).
    max_secrets: u32,
}

impl Claim {
    /// Starts a claim by recovering expired leases (at most
    /// [`MAX_RECOVERED_PER_CLAIM`]; the rest wait for the next claim).
    async fn start<C: Conn>(
        c: &C,
        now: i64,
        params: DispatchClaim,
        max_secrets: u32,
        render: &dyn EventRenderer,
    ) -> Result<Claim> {
        let sql = format!(
            "{} WHERE t.status = 'running' AND t.lease_expires_at <= $1 \
             ORDER BY t.lease_expires_at LIMIT $2 {}",
            C::DIALECT.pick(RUNNING_ROW[0], RUNNING_ROW[1]),
            c.lock("FOR UPDATE OF t SKIP LOCKED")
        );
        let expired = c
            .query(&sql, &args![now, MAX_RECOVERED_PER_CLAIM], |r| {
                running_row(r)
            })
            .await?;
        let mut batch = ClaimedBatch::default();
        for row in &expired {
            let finished = apply(c, now, row, &row.lease_expired(now), render).await?;
            batch.recovered.push(finished);
        }
        Ok(Claim {
            now,
            grace: i64::try_from(params.lease_grace.as_micros()).unwrap_or(i64::MAX),
            remaining: params.max_tasks,
            wake_at: None,
            batch,
            share: params.fair_share,
            org_cap: u32::MAX,
            max_secrets,
        })
    }

    /// Whether [`Claim::share`] may need to know if a second organization
    /// exists ([`SQL_SECOND_ORG`]): a fair share without a fixed cap, and
    /// fewer than two organizations holding this node's slots.
    fn may_ask_for_a_second_org(&self) -> bool {
        self.share
            .as_ref()
            .is_some_and(|share| share.max_per_org.is_none() && holders(share).nth(1).is_none())
    }

    /// Decides the organizations' share of the caller's slots, from the
    /// organizations of the queues with due tasks and those holding slots.
    /// Whether other organizations exist matters only when fewer than two
    /// want slots (`second_org`, read if
    /// [`Claim::may_ask_for_a_second_org`]): a server with one organization
    /// has nobody to share with.
    fn share<'a>(&mut self, due_orgs: impl IntoIterator<Item = &'a str>, second_org: bool) {
        let Some(share) = &self.share else {
            return;
        };
        if let Some(max) = share.max_per_org {
            self.org_cap = max;
            return;
        }
        let mut active: BTreeSet<&str> = due_orgs.into_iter().collect();
        active.extend(holders(share));
        let several_orgs = active.len() > 1 || second_org;
        self.org_cap = fair_share_cap(share.slots, active.len(), several_orgs);
    }

    /// How many more slots `org` may take in this claim.
    fn org_room(&self, org: &str) -> u32 {
        match &self.share {
            None => u32::MAX,
            Some(share) => {
                let held = share.in_flight.get(org).copied().unwrap_or(0);
                self.org_cap.saturating_sub(held)
            }
        }
    }

    fn wake(&mut self, at: i64) {
        self.wake_at = Some(self.wake_at.map_or(at, |w| w.min(at)));
    }

    /// How many of a queue's due tasks this claim takes, and the queue's
    /// bucket: `None` when its limits allow none now (a claim then wakes
    /// when the next token comes, if a token is what is missing).
    async fn size<C: Conn>(
        &mut self,
        c: &C,
        org: &str,
        queue: &str,
        q: &ClaimQueue,
    ) -> Result<Option<(u32, Bucket)>> {
        let wanted = self.remaining.min(self.org_room(org));
        if wanted == 0 {
            // A completion of the organization's attempts wakes the caller.
            return Ok(None);
        }
        let bucket = Bucket::at(q.stored, &q.limits, self.now);
        let running = c
            .query_opt(
                "SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND status = 'running'",
                &args![org, queue],
                |r| r.i64(0),
            )
            .await?
            .unwrap_or(0);
        let n = claimable(&bucket, &q.limits, running as u64, wanted);
        if n == 0 {
            if bucket.whole() == 0 {
                self.wake(bucket.next_token_at(&q.limits));
            }
            return Ok(None);
        }
        Ok(Some((n, bucket)))
    }

    /// Takes the tasks a queue gave (of the `n` asked for), with the
    /// signing secrets of their organization, read in this transaction so
    /// that a rotation is seen by the very next attempt.
    async fn took<C: Conn>(
        &mut self,
        c: &C,
        org: &str,
        q: &ClaimQueue,
        bucket: &Bucket,
        n: u32,
        claimed: Vec<ClaimedTask>,
    ) -> Result<()> {
        let taken = claimed.len() as u32;
        self.remaining -= taken;
        if let Some(share) = &mut self.share {
            *share.in_flight.entry(org.to_string()).or_default() += taken;
        }
        if taken == n && bucket.whole() == 0 {
            self.wake(bucket.next_token_at(&q.limits));
        }
        if !claimed.is_empty() && !self.batch.signing_secrets.contains_key(org) {
            // Only the newest, as many as an organization may hold: secrets
            // kept past a lowered quota must not lengthen every delivery.
            let max = if self.max_secrets == 0 {
                i64::MAX
            } else {
                i64::from(self.max_secrets)
            };
            let secrets = c
                .query(
                    "SELECT secret FROM signing_secrets WHERE org = $1 \
                     ORDER BY created_at DESC, id DESC LIMIT $2",
                    &args![org, max],
                    |r| r.text(0),
                )
                .await?;
            self.batch.signing_secrets.insert(org.to_string(), secrets);
        }
        self.batch.tasks.extend(claimed);
        Ok(())
    }

    /// Ends the claim with the earliest instant more work may become
    /// claimable: a token, the next due task of a running queue, the next
    /// lease expiry.
    async fn finish<C: Conn>(mut self, c: &C) -> Result<ClaimedBatch> {
        let now_arg = args![self.now];
        let next_due = c.query_opt(
            "SELECT t.next_attempt_at FROM tasks t WHERE t.status = 'pending' \
             AND t.next_attempt_at > $1 AND EXISTS (SELECT 1 FROM queues q \
             WHERE q.org = t.org AND q.name = t.queue AND q.state = 'running' AND q.mode = 'push') \
             ORDER BY t.next_attempt_at LIMIT 1",
            &now_arg,
            |r| r.i64(0),
        );
        let next_lease = c.query_opt(
            "SELECT min(lease_expires_at) FROM tasks WHERE status = 'running'",
            &[],
            |r| r.opt_i64(0),
        );
        let (next_due, next_lease) = try_join(next_due, next_lease).await?;
        self.batch.wake_at = [self.wake_at, next_due, next_lease.flatten()]
            .into_iter()
            .flatten()
            .min()
            .map(from_micros);
        Ok(self.batch)
    }
}

/// A queue's limits, stored token bucket and turn among groups, as a
/// claim reads them.
struct ClaimQueue {
    limits: RateLimits,
    stored: Option<(f64, i64)>,
    /// The queue's group limits and cursor, if it is ordered.
    ordered: Option<(QueueConfig, String)>,
}

impl ClaimQueue {
    /// Reads `config, dispatch_tokens, dispatch_refilled_at, ordered,
    /// group_cursor` at `at`.
    fn read(r: &impl Row, at: usize) -> Result<ClaimQueue> {
        let config: QueueConfig = serde_json::from_str(&r.text(at)?)
            .map_err(|e| Error::Internal(format!("unreadable queue config: {e}")))?;
        let ordered = r.i64(at + 3)? != 0;
        Ok(ClaimQueue {
            limits: config.rate_limits,
            stored: r.opt_f64(at + 1)?.zip(r.opt_i64(at + 2)?),
            ordered: if ordered {
                Some((config, r.text(at + 4)?))
            } else {
                None
            },
        })
    }

    fn turns(&self) -> Option<Turns<'_>> {
        self.ordered.as_ref().map(|(config, cursor)| Turns {
            limit: config.group_limit(),
            order: config.group_order,
            cursor,
        })
    }
}

/// Debits a queue's bucket by what it gave, and moves its turn among
/// groups on to `cursor` if one is given.
async fn debit<C: Conn>(
    c: &C,
    bucket: &Bucket,
    cursor: Option<&str>,
    org: &str,
    queue: &str,
) -> Result<u64> {
    c.execute(
        "UPDATE queues SET dispatch_tokens = $1, dispatch_refilled_at = $2, \
         group_cursor = COALESCE($3, group_cursor) WHERE org = $4 AND name = $5",
        &args![bucket.tokens, bucket.refilled_at, cursor, org, queue],
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rate: f64, burst: u32, concurrency: u32) -> RateLimits {
        RateLimits {
            max_dispatches_per_second: rate,
            max_burst_size: burst,
            max_concurrent_dispatches: concurrency,
        }
    }

    #[test]
    fn an_unused_bucket_is_full_and_refills_at_the_rate() {
        let l = limits(5.0, 3, 10);
        let b = Bucket::at(None, &l, 1_000_000);
        assert_eq!(b.whole(), 3);
        let b = Bucket::at(Some((0.0, 1_000_000)), &l, 1_300_000);
        assert_eq!(b.whole(), 1);
        assert_eq!(b.next_token_at(&l), 1_300_000 + 100_000);
        let b = Bucket::at(Some((0.0, 1_000_000)), &l, 60_000_000);
        assert_eq!(b.whole(), 3, "never above the burst");
        let b = Bucket::at(Some((2.0, 5_000_000)), &l, 1_000_000);
        assert_eq!(b.whole(), 2, "a clock going back refills nothing");
    }

    #[test]
    fn a_tiny_stored_rate_saturates_rather_than_overflow() {
        // Rates below the minimum are refused now, but older rows may hold one.
        let l = limits(1e-14, 1, 1);
        let b = Bucket::at(Some((0.0, i64::MAX - 10)), &l, i64::MAX - 5);
        assert_eq!(b.next_token_at(&l), i64::MAX);
        let b = Bucket::at(Some((0.0, i64::MIN)), &l, i64::MAX);
        assert_eq!(b.whole(), 0);
    }

    #[test]
    fn claimable_respects_tokens_concurrency_and_demand() {
        let l = limits(100.0, 50, 4);
        let full = Bucket::at(None, &l, 0);
        assert_eq!(claimable(&full, &l, 0, 10), 4);
        assert_eq!(claimable(&full, &l, 3, 10), 1);
        assert_eq!(claimable(&full, &l, 9, 10), 0);
        assert_eq!(claimable(&full, &l, 0, 2), 2);
        let empty = Bucket::at(Some((0.5, 0)), &l, 0);
        assert_eq!(claimable(&empty, &l, 0, 10), 0);
    }

    #[test]
    fn finished_payload_round_trips() {
        let f = TaskFinished {
            org: "default".into(),
            queue: "q-1".into(),
            task_id: "t_2".into(),
            uid: "0190abc".into(),
            status: Status::Succeeded,
        };
        assert_eq!(decode_finished(&encode_finished(&f)), Some(f));
        assert_eq!(decode_finished("a/b/c/d/nonsense"), None);
        assert_eq!(decode_finished("a/b/c/d/failed/extra"), None);
    }

    #[test]
    fn cancelled_payload_round_trips() {
        let payload = encode_cancelled("0190abc", 3);
        assert_eq!(decode_cancelled(&payload), Some(("0190abc".into(), 3)));
        assert_eq!(decode_cancelled("0190abc"), None);
        assert_eq!(decode_cancelled("0190abc/x"), None);
    }
}
