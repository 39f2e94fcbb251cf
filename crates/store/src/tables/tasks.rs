//! Tasks: creating one under the rules of its ID, reading, cancelling,
//! and sweeping the tombstones whose dedup window has passed.

use super::{after, dispatch, limit, not_found, queues};
use crate::driver::{Conn, Dialect, Value, args};
use crate::records::*;
use crate::sql::{self as rows, Row, TASK_COLUMNS, corrupt, to_json};
use crate::{Error, Result};
use idem_core::FieldErrors;
use idem_core::clock::{from_micros, to_micros};
use idem_core::queue::{MAX_DEADLINE_S, MIN_DEADLINE_S, QueueConfig, RetryConfig};
use idem_core::task::TaskState;

/// A create request resolved against its queue, as column values.
pub(crate) struct TaskInsert {
    pub uid: String,
    pub target: String,
    pub body_form: Option<&'static str>,
    pub body: Option<Vec<u8>>,
    pub schedule_time: i64,
    pub dispatch_deadline_s: i64,
    pub retry_config: String,
    retry: RetryConfig,
    deadline: u32,
}

impl TaskInsert {
    /// Fills what the request left out from the queue and validates the
    /// result: the task carries the policy it was accepted with.
    pub(crate) fn resolve(p: &TaskCreate, queue: &QueueConfig, now: i64) -> Result<TaskInsert> {
        let mut errors = FieldErrors::new();
        let retry = queue.retry_config.apply(&p.retry_config);
        retry.validate("retry_config", &mut errors);
        let deadline = p.dispatch_deadline_s.unwrap_or(queue.dispatch_deadline_s);
        errors.range(
            "dispatch_deadline_s",
            deadline,
            MIN_DEADLINE_S,
            MAX_DEADLINE_S,
        );
        errors.into_result().map_err(Error::Invalid)?;
        let (target, body_form, body) = rows::task_target_columns(&p.target, &p.callbacks);
        Ok(TaskInsert {
            uid: uuid::Uuid::now_v7().simple().to_string(),
            target,
            body_form,
            body,
            schedule_time: p.schedule_time.map(to_micros).unwrap_or(now),
            dispatch_deadline_s: i64::from(deadline),
            retry_config: to_json(&retry),
            retry,
            deadline,
        })
    }

    /// The task this insert creates, without reading it back.
    pub(crate) fn task(&self, p: &TaskCreate, now: i64) -> Task {
        Task {
            queue: p.queue.clone(),
            task_id: p.task_id.clone(),
            uid: self.uid.clone(),
            status: Status::Pending,
            target: p.target.clone(),
            callbacks: p.callbacks.clone(),
            schedule_time: from_micros(self.schedule_time),
            next_attempt_at: from_micros(self.schedule_time),
            dispatch_deadline_s: self.deadline,
            retry_config: self.retry,
            attempt_count: 0,
            cancel_requested: false,
            created_at: from_micros(now),
            finished_at: None,
            last_attempt: None,
            dedup_expires_at: None,
            run: None,
        }
    }
}

/// Whether an existing task's ID may be reused at `now`.
pub(crate) fn tombstone_expired(task: &Task, now: i64) -> bool {
    task.dedup_expires_at.is_some_and(|t| to_micros(t) <= now)
}

pub(crate) fn summary(task: &Task, now: i64) -> TaskSummary {
    TaskSummary {
        task_id: task.task_id.clone(),
        state: task.state(from_micros(now)),
        created_at: task.created_at,
        finished_at: task.finished_at,
    }
}

/// Run-now applies to tasks waiting for an attempt, not to running or
/// finished ones.
pub(crate) fn check_runnable(task: &Task, now: i64) -> Result<()> {
    match task.status {
        Status::Pending => Ok(()),
        Status::Running => Err(Error::FailedPrecondition(format!(
            "task '{}' is running; it cannot be run again until the attempt ends",
            task.task_id
        ))),
        _ => Err(Error::FailedPrecondition(format!(
            "task '{}' has finished ({}); a finished task cannot run",
            task.task_id,
            task.state(from_micros(now)).as_str()
        ))),
    }
}

/// The SQL condition, over `tasks`, for the API state `state`; `$n` is the
/// placeholder holding now.
fn state_condition(state: TaskState, now_param: &str) -> String {
    use TaskState as S;
    match state {
        S::Scheduled => {
            format!("status = 'pending' AND attempt_count = 0 AND next_attempt_at > {now_param}")
        }
        S::Queued => format!(
            "status = 'pending' AND NOT (attempt_count = 0 AND next_attempt_at > {now_param})"
        ),
        S::Running => "status = 'running'".into(),
        S::Succeeded => "status = 'succeeded'".into(),
        S::Failed => "status = 'failed'".into(),
        S::Cancelled => "status = 'cancelled'".into(),
    }
}

/// Inserts a task unless its ID is taken; a conflict changes no row.
const SQL_INSERT_TASK: &str = "INSERT INTO tasks (org, queue, task_id, uid, status, \
     target, body_form, body, schedule_time, next_attempt_at, dispatch_deadline_s, retry_config, \
     attempt_count, cancel_requested, created_at) \
     VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $8, $9, $10, 0, 0, $11) \
     ON CONFLICT (org, queue, task_id) DO NOTHING";

/// Cancels a pending task; a running or finished one is left to the
/// caller.
const SQL_CANCEL_PENDING: &str = "UPDATE tasks SET status = 'cancelled', finished_at = $1, \
     dedup_expires_at = $1 + CAST($2 AS BIGINT) WHERE uid = $3 AND status = 'pending'";

const SQL_RUN_NOW: &str =
    "UPDATE tasks SET next_attempt_at = $1 WHERE uid = $2 AND status = 'pending'";

const SQL_ATTEMPTS: &str = "SELECT attempt, started_at, finished_at, status_code, \
     error, duration_ms FROM attempts WHERE task_uid = $1 AND attempt > $2 \
     ORDER BY attempt LIMIT $3";

/// A job's latest run (whose time has come) is kept past its window, for the
/// job's `last_run`.
const SQL_EXPIRED_TOMBSTONES: &str = "SELECT uid FROM tasks \
     WHERE dedup_expires_at IS NOT NULL AND dedup_expires_at <= $1 \
     AND (job IS NULL OR EXISTS (SELECT 1 FROM tasks n WHERE n.org = tasks.org \
     AND n.queue = tasks.queue AND n.job = tasks.job AND n.schedule_time > tasks.schedule_time \
     AND n.schedule_time <= $1)) \
     ORDER BY dedup_expires_at LIMIT $2";

/// Tasks per organization, queue and state, from the counts the triggers
/// of migration 009 keep (summed over their shards), not from the tasks.
const SQL_TASK_COUNTS: &str = "SELECT org, queue, status, CAST(sum(n) AS BIGINT) \
     FROM task_counts GROUP BY org, queue, status HAVING sum(n) <> 0";

fn task_count(r: &impl Row) -> Result<TaskCount> {
    let status = r.text(2)?;
    Ok(TaskCount {
        org: r.text(0)?,
        queue: r.text(1)?,
        status: Status::parse(&status).ok_or_else(|| corrupt("task status", &status))?,
        count: u64::try_from(r.i64(3)?).unwrap_or(0),
    })
}

/// Lists a queue's tasks by ID. Parameters: org, queue, after, now, limit;
/// now is referenced even without a state filter so both backends see the
/// same parameter count and type.
fn task_list_sql(state: Option<TaskState>) -> String {
    let filter = state
        .map(|s| format!(" AND ({})", state_condition(s, "$4")))
        .unwrap_or_default();
    format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE org = $1 AND queue = $2 AND task_id > $3 \
         AND CAST($4 AS BIGINT) IS NOT NULL{filter} \
         ORDER BY task_id LIMIT $5"
    )
}

/// The parameters of [`SQL_INSERT_TASK`] ($1–$11); PostgreSQL's one-row
/// fast statements number theirs the same.
pub(crate) fn insert_args<'a>(p: &'a TaskCreate, ins: &'a TaskInsert, now: i64) -> [Value<'a>; 11] {
    args![
        &p.org,
        &p.queue,
        &p.task_id,
        &ins.uid,
        &ins.target,
        ins.body_form,
        &ins.body,
        ins.schedule_time,
        ins.dispatch_deadline_s,
        &ins.retry_config,
        now,
    ]
}

/// Creates the task in the current transaction, its queue's configuration
/// read already (under a lock that keeps the queue from going). A taken ID
/// decides: a live task or a tombstone inside its window answers
/// [`Error::TaskExists`]; an expired tombstone is replaced; the row
/// `own_uid` names is this request's own, committed by an earlier try.
pub(crate) async fn create<C: Conn>(
    c: &C,
    p: &TaskCreate,
    config: &QueueConfig,
    own_uid: Option<&str>,
    now: i64,
) -> Result<Task> {
    let ins = TaskInsert::resolve(p, config, now)?;
    let params = insert_args(p, &ins, now);
    for _ in 0..4 {
        if c.execute(SQL_INSERT_TASK, &params).await? == 1 {
            return Ok(ins.task(p, now));
        }
        match get(c, &p.org, &p.queue, &p.task_id, "FOR UPDATE").await? {
            Some(t) if own_uid == Some(t.uid.as_str()) => return Ok(t),
            Some(t) if !tombstone_expired(&t, now) => {
                return Err(Error::TaskExists(Box::new(summary(&t, now))));
            }
            // An expired tombstone: the ID is free.
            Some(t) => delete(c, &t.uid).await?,
            // A row deleted between the insert and the lock (by a sweep, or
            // a create replacing a tombstone that may have inserted its
            // own): look again.
            None => {}
        }
    }
    Err(Error::Internal("task insert raced".into()))
}

/// The task, read under the row lock `lock` names (PostgreSQL only).
pub(crate) async fn get<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    lock: &'static str,
) -> Result<Option<Task>> {
    let sql = format!(
        "SELECT {} FROM tasks WHERE org = $1 AND queue = $2 AND task_id = $3 {}",
        rows::TASK_COLUMNS,
        c.lock(lock)
    );
    c.query_opt(&sql, &args![org, queue, task_id], |r| rows::task(r))
        .await
}

/// The task, or 404 naming the queue when the queue itself is missing.
pub(crate) async fn require<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    lock: &'static str,
) -> Result<Task> {
    match get(c, org, queue, task_id, lock).await? {
        Some(t) => Ok(t),
        None => {
            queues::get(c, org, queue, "").await?;
            Err(not_found("task", task_id))
        }
    }
}

/// Locks the tasks matching `filter` (a condition on `tasks` over
/// `params`) before their attempts are deleted. The completer locks a task,
/// then writes its attempt; a delete taking them in the other order would
/// deadlock with a delivery finishing at that moment. SQLite has one writer
/// and needs no lock.
pub(crate) async fn lock_for_delete<C: Conn>(
    c: &C,
    filter: &str,
    params: &[Value<'_>],
) -> Result<()> {
    if C::DIALECT == Dialect::Postgres {
        c.execute(
            &format!("SELECT 1 FROM tasks WHERE {filter} FOR UPDATE"),
            params,
        )
        .await?;
    }
    Ok(())
}

/// The task with its attempts.
pub(crate) async fn delete<C: Conn>(c: &C, uid: &str) -> Result<()> {
    lock_for_delete(c, "uid = $1", &args![uid]).await?;
    c.execute("DELETE FROM attempts WHERE task_uid = $1", &args![uid])
        .await?;
    c.execute("DELETE FROM tasks WHERE uid = $1", &args![uid])
        .await?;
    Ok(())
}

pub(crate) async fn list<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    filter: TaskFilter,
    page: &PageRequest,
    now: i64,
) -> Result<Page<Task>> {
    queues::get(c, org, queue, "").await?;
    let items = c
        .query(
            &task_list_sql(filter.state),
            &args![org, queue, after(page), now, limit(page)],
            |r| rows::task(r),
        )
        .await?;
    Ok(Page::from_rows(items, page.limit, |t| t.task_id.clone()))
}

pub(crate) async fn attempts<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    page: &PageRequest,
) -> Result<Page<Attempt>> {
    let task = require(c, org, queue, task_id, "").await?;
    // Attempts are keyed by their number, oldest first; a key that is not
    // one was never issued for this list.
    let after: i64 = match page.after.as_deref() {
        None | Some("") => 0,
        Some(key) => key.parse().map_err(|_| {
            let mut errors = FieldErrors::new();
            errors.push("page_token", "is not a token this server issued");
            Error::Invalid(errors)
        })?,
    };
    let items = c
        .query(SQL_ATTEMPTS, &args![&task.uid, after, limit(page)], |r| {
            rows::attempt(r)
        })
        .await?;
    Ok(Page::from_rows(items, page.limit, |a| {
        a.attempt.to_string()
    }))
}

/// Cancels a task that has not finished. A running task ends `cancelled`
/// at once, in this transaction: its attempt in flight is recorded as
/// aborted ([`dispatch::ABORTED_BY_CANCEL`]) and loses its lease, so its
/// late result is stale and an expiring lease finds nothing to recover.
/// The node running the attempt learns of it from the caller (same node)
/// or, on PostgreSQL, from the NOTIFY sent here, delivered only if this
/// transaction commits.
pub(crate) async fn cancel<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    now: i64,
) -> Result<Task> {
    let task = require(c, org, queue, task_id, "FOR UPDATE").await?;
    match task.status {
        Status::Pending => {
            let window =
                queues::get(c, org, queue, "").await?.config.dedup_window_s as i64 * 1_000_000;
            c.execute(SQL_CANCEL_PENDING, &args![now, window, &task.uid])
                .await?;
        }
        Status::Running => {
            // Read under the row lock `require` took: the lease is ours to end.
            if let Some(row) = dispatch::running(c, &task.uid).await? {
                let finished = dispatch::abort(c, now, &row).await?;
                if C::DIALECT == Dialect::Postgres {
                    let cancelled = dispatch::encode_cancelled(&row.uid, row.attempt_count);
                    let finished = dispatch::encode_finished(&finished);
                    c.execute(
                        "SELECT pg_notify($1, $2), pg_notify($3, $4)",
                        &args![
                            dispatch::CANCELLED_CHANNEL,
                            &cancelled,
                            dispatch::FINISHED_CHANNEL,
                            &finished,
                        ],
                    )
                    .await?;
                }
            }
        }
        Status::Succeeded | Status::Failed | Status::Cancelled => {}
    }
    require(c, org, queue, task_id, "").await
}

pub(crate) async fn run_now<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    now: i64,
) -> Result<Task> {
    let task = require(c, org, queue, task_id, "FOR UPDATE").await?;
    check_runnable(&task, now)?;
    c.execute(SQL_RUN_NOW, &args![now, &task.uid]).await?;
    require(c, org, queue, task_id, "").await
}

pub(crate) async fn sweep_tombstones<C: Conn>(c: &C, limit: u32, now: i64) -> Result<u64> {
    let sql = format!(
        "{SQL_EXPIRED_TOMBSTONES} {}",
        c.lock("FOR UPDATE SKIP LOCKED")
    );
    let uids = c
        .query(&sql, &args![now, i64::from(limit)], |r| r.text(0))
        .await?;
    for uid in &uids {
        delete(c, uid).await?;
    }
    if C::DIALECT == Dialect::Postgres {
        c.execute(SQL_FOLD_TASK_COUNTS, &[]).await?;
    }
    Ok(uids.len() as u64)
}

/// Folds connections' own rows of `task_counts` (PostgreSQL, migration 009)
/// into shard 0, at most a bounded batch per sweep; rows a transaction
/// holds are left for the next. Folders write shard 0 in key order, so two
/// of them wait for each other at worst.
const SQL_FOLD_TASK_COUNTS: &str = "WITH moved AS (DELETE FROM task_counts \
     WHERE (org, queue, status, shard) IN (SELECT org, queue, status, shard FROM task_counts \
     WHERE shard <> 0 LIMIT 10000 FOR UPDATE SKIP LOCKED) RETURNING org, queue, status, n) \
     INSERT INTO task_counts AS c (org, queue, status, shard, n) \
     SELECT org, queue, status, 0, sum(n) FROM moved GROUP BY org, queue, status \
     ORDER BY org, queue, status \
     ON CONFLICT (org, queue, status, shard) DO UPDATE SET n = c.n + EXCLUDED.n";

pub(crate) async fn counts_by_state<C: Conn>(c: &C) -> Result<Vec<TaskCount>> {
    c.query(SQL_TASK_COUNTS, &[], |r| task_count(r)).await
}
