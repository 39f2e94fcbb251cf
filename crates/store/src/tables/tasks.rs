//! Tasks: creating one under the rules of its ID, reading, listing by
//! filters, cancelling, redriving ended ones, and sweeping the tombstones
//! whose time has passed.

use super::idempotency::Keyed;
use super::stats::{counted_inserts, task_bytes, update_moving};
use super::{dispatch, limit, not_found, queues};
use crate::driver::{Conn, Dialect, Value, args};
use crate::events::EventRenderer;
use crate::records::*;
use crate::sql::{self as rows, Row, corrupt, to_json};
use crate::task_row::{self, NEW_TASK_PARAMS, NewTask, insert_new_task};
use crate::{Error, Result};
use idem_core::FieldErrors;
use idem_core::clock::{from_micros, to_micros};
use idem_core::job::HeaderStyle;
use idem_core::queue::{MAX_DEADLINE_S, MIN_DEADLINE_S, QueueConfig, QueueMode, RetryConfig};
use idem_core::task::TaskState;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

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
    header_style: HeaderStyle,
}

impl TaskInsert {
    /// Fills what the request left out from the queue and validates the
    /// result: the task carries the policy it was accepted with.
    pub(crate) fn resolve(p: &TaskCreate, queue: &QueueConfig, now: i64) -> Result<TaskInsert> {
        // A task of the other kind is well formed; the queue's mode, fixed
        // when it was created, refuses it (409).
        match (queue.mode, p.pull) {
            (QueueMode::Pull, false) => {
                return Err(Error::FailedPrecondition(format!(
                    "queue '{}' is a pull queue: its tasks have no target; \
                     give the work in 'payload'",
                    p.queue
                )));
            }
            (QueueMode::Push, true) => {
                return Err(Error::FailedPrecondition(format!(
                    "queue '{}' is a push queue, which delivers each task to its target: \
                     a task needs one",
                    p.queue
                )));
            }
            _ => {}
        }
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
        let header_style = p.header_style.unwrap_or(queue.header_style);
        let (target, body_form, body) =
            rows::task_target_columns(&p.target, &p.callbacks, header_style);
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
            header_style,
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
            header_style: self.header_style,
            tag: p.tag.clone(),
            lease: None,
            ended_claim: None,
            result: None,
            group: p.group.clone(),
            priority: p.priority,
        }
    }
}

/// Whether an existing task's ID may be reused at `now`.
pub(crate) fn tombstone_expired(task: &Task, now: i64) -> bool {
    task.dedup_expires_at.is_some_and(|t| to_micros(t) <= now)
}

/// The instant a create at `now` sees a task created at `created_at` (both
/// µs), for [`summary`]'s reasons.
pub(crate) fn seen_at(now: i64, created_at: i64) -> i64 {
    now.max(created_at)
}

/// What a 409 shows of `task`, met by a create at `now`: seen no earlier
/// than the task was created. Concurrent creates read the clock before they
/// reach the store, so the one that lost may have read it first; seen at
/// that instant, a task due at its creation would show as scheduled.
pub(crate) fn summary(task: &Task, now: i64) -> TaskSummary {
    let seen = seen_at(now, to_micros(task.created_at));
    TaskSummary {
        task_id: task.task_id.clone(),
        state: task.state(from_micros(seen)),
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

/// Redrive applies to tasks that ended without succeeding.
pub(crate) fn check_redrivable(task: &Task, now: i64) -> Result<()> {
    match task.status {
        Status::Failed | Status::Cancelled => Ok(()),
        _ => Err(Error::FailedPrecondition(format!(
            "task '{}' is {}; only a failed or cancelled task can be redriven",
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

/// An insert of `rows` tasks ([`insert_new_task!`]'s row, repeated), each
/// skipped when its ID is taken (a conflict changes no row), answering the
/// uids of those inserted (on SQLite one row answers nothing: whether it
/// went in is the count of rows the statement changed, [`insert_one`]).
/// Row k takes the parameters `12k+1` to `12k+12`, as [`NewTask::args`]
/// orders them. PostgreSQL's text counts the rows it
/// inserts ([`count_inserted!`](super::stats::count_inserted)); on SQLite
/// the caller reports them to the writer ([`Conn::count_inserted`]).
fn insert_sql(rows: usize, dialect: Dialect) -> String {
    const ONE: &str = insert_new_task!(VALUES);
    let (head, row) = ONE.split_at(ONE.find(" VALUES (").expect("a VALUES form") + 8);
    let mut sql = String::from(head);
    for k in 0..rows {
        if k > 0 {
            sql.push_str(", ");
        }
        push_renumbered(&mut sql, row, k * NEW_TASK_PARAMS);
    }
    sql.push_str(" ON CONFLICT (org, queue, task_id) DO NOTHING");
    match dialect {
        Dialect::Sqlite if rows == 1 => sql,
        Dialect::Sqlite => sql + " RETURNING uid",
        Dialect::Postgres => format!(
            "WITH ins AS ({sql} RETURNING org, queue, uid, {} AS size), {} SELECT uid FROM ins",
            task_bytes!(),
            counted_inserts!()
        ),
    }
}

/// Appends `text` with each parameter `$n` numbered `$(n + offset)`.
fn push_renumbered(sql: &mut String, text: &str, offset: usize) {
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        sql.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: usize = rest[..digits].parse().expect("a numbered parameter");
        sql.push_str(&(n + offset).to_string());
        rest = &rest[digits..];
    }
    sql.push_str(rest);
}

/// Inserts 2^k tasks (the k-th text; the first, one task), in each
/// dialect.
static SQL_INSERT_TASKS: LazyLock<[Vec<String>; 2]> = LazyLock::new(|| {
    [Dialect::Sqlite, Dialect::Postgres].map(|dialect| {
        (0..=ROWS_PER_INSERT.ilog2())
            .map(|k| insert_sql(1 << k, dialect))
            .collect()
    })
});

/// The text of [`SQL_INSERT_TASKS`] inserting 2^`k` tasks on `C`.
fn sql_insert_tasks<C: Conn>(k: u32) -> &'static str {
    let dialect = C::DIALECT.pick(0, 1);
    &SQL_INSERT_TASKS[dialect][k as usize]
}

/// Cancels a pending task; a running or finished one is left to the
/// caller.
const SQL_CANCEL_PENDING: &str = "UPDATE tasks SET status = 'cancelled', finished_at = $1, \
     dedup_expires_at = $1 + CAST($2 AS BIGINT) WHERE uid = $3 AND status = 'pending'";

/// What redrive sets, for the rows the caller's `WHERE` names (`$1` is now):
/// due now, no longer ended nor leased, and a retry budget (attempt count
/// and retry duration) that starts afresh. The ID, `created_at` (the run
/// key's input), schedule time and attempts stay.
const SQL_REDRIVE: &str = "UPDATE tasks SET status = 'pending', next_attempt_at = $1, \
     finished_at = NULL, dedup_expires_at = NULL, lease_expires_at = NULL, \
     cancel_requested = 0, first_attempt_at = NULL, attempts_before_redrive = attempt_count";

const SQL_RUN_NOW: &str =
    "UPDATE tasks SET next_attempt_at = $1 WHERE uid = $2 AND status = 'pending'";

const SQL_ATTEMPTS: &str = "SELECT attempt, started_at, finished_at, status_code, \
     error, duration_ms, response FROM attempts WHERE task_uid = $1 AND attempt > $2 \
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

/// A statement built clause by clause, numbering its parameters in order
/// of first use (as SQLite reads them).
struct Query<'a> {
    text: String,
    params: Vec<Value<'a>>,
}

impl<'a> Query<'a> {
    /// Appends `clause`, with `{}` standing for the parameter `v`.
    fn push(&mut self, clause: &str, v: impl Into<Value<'a>>) -> &mut Self {
        self.params.push(v.into());
        self.text
            .push_str(&clause.replace("{}", &format!("${}", self.params.len())));
        self
    }
}

/// The least string greater than every string that starts with `prefix`,
/// in byte order: its last character moved up by one. Task IDs are ASCII,
/// so the result is too.
fn prefix_end(prefix: &str) -> String {
    let mut end = prefix.to_string();
    if let Some(last) = end.pop() {
        end.push(char::from_u32(last as u32 + 1).unwrap_or(char::MAX));
    }
    end
}

/// Where a list by creation time continues: `<created_at µs>:<task ID>`.
fn created_key(t: &Task) -> String {
    format!("{}:{}", to_micros(t.created_at), t.task_id)
}

/// The position a token names in the list by creation time. Every token
/// is one (the document promises no 400 for a well-formed one): a token of
/// the list by ID, with no creation time, starts at the first task created.
fn parse_created_key(key: &str) -> (i64, &str) {
    key.split_once(':')
        .and_then(|(at, id)| Some((at.parse().ok()?, id)))
        .unwrap_or((i64::MIN, key))
}
impl TaskInsert {
    /// The row this insert makes of `p`'s create at `now`.
    pub(crate) fn row<'a>(&'a self, p: &'a TaskCreate, now: i64) -> NewTask<'a> {
        NewTask {
            org: &p.org,
            queue: &p.queue,
            task_id: &p.task_id,
            uid: &self.uid,
            target: &self.target,
            body_form: self.body_form,
            body: self.body.as_deref(),
            schedule_time: self.schedule_time,
            dispatch_deadline_s: self.dispatch_deadline_s,
            retry_config: &self.retry_config,
            created_at: now,
            tag: p.tag.as_deref(),
            group_key: p.group.as_deref().unwrap_or(""),
            priority: task_row::priority(p.priority),
        }
    }
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
    let task = insert_or_existing(c, p, &ins, own_uid, now)
        .await?
        .map_err(|t| Error::TaskExists(Box::new(summary(&t, now))))?;
    if ordered(p) {
        super::queues::mark_ordered(c, &p.org, &p.queue).await?;
    }
    Ok(task)
}

/// Whether the task makes its queue one whose claims take turns among
/// groups ([`super::queues::mark_ordered`]).
pub(crate) fn ordered(p: &TaskCreate) -> bool {
    p.group.is_some() || p.priority != 0
}

/// A batch's items resolved against their queue before anything is
/// written: the invalid ones decided, the first item of each ID to be
/// inserted (`Fresh`), and each later item of an ID beside the index of the
/// first, whose task it meets as a later request would. Both stores plan a
/// batch this way and insert the fresh items their own way.
pub(crate) struct BatchPlan {
    items: Vec<Option<BatchItem>>,
    later: Vec<(usize, usize)>,
}

/// A batch item to insert: its index, its request and its column values.
pub(crate) type Fresh<'a> = (usize, &'a TaskCreate, TaskInsert);

impl BatchPlan {
    pub(crate) fn new<'a>(
        batch: &'a TaskBatch,
        config: &QueueConfig,
        now: i64,
    ) -> Result<(BatchPlan, Vec<Fresh<'a>>)> {
        let mut items = Vec::with_capacity(batch.tasks.len());
        let mut fresh = Vec::with_capacity(batch.tasks.len());
        let mut first: HashMap<&str, usize> = HashMap::with_capacity(batch.tasks.len());
        let mut later = Vec::new();
        for (index, task) in batch.tasks.iter().enumerate() {
            let p = match task {
                Err(errors) => {
                    items.push(Some(BatchItem::Invalid(errors.clone())));
                    continue;
                }
                Ok(p) => p,
            };
            match TaskInsert::resolve(p, config, now) {
                Err(Error::Invalid(errors)) => items.push(Some(BatchItem::Invalid(
                    errors.under(&format!("tasks[{index}]")),
                ))),
                Err(Error::FailedPrecondition(why)) => {
                    items.push(Some(BatchItem::Refused(why)));
                }
                Err(e) => return Err(e),
                Ok(ins) => {
                    items.push(None);
                    match first.get(p.task_id.as_str()) {
                        Some(&earlier) => later.push((index, earlier)),
                        None => {
                            first.insert(&p.task_id, index);
                            fresh.push((index, p, ins));
                        }
                    }
                }
            }
        }
        Ok((BatchPlan { items, later }, fresh))
    }

    /// What became of the fresh item at `index`.
    pub(crate) fn decide(&mut self, index: usize, item: BatchItem) {
        self.items[index] = Some(item);
    }

    /// Every item's outcome in request order, once each fresh one is
    /// decided; in an atomic batch, the first item not created is the
    /// error, which rolls back the others.
    pub(crate) fn finish(mut self, atomic: bool, now: i64) -> Result<Vec<BatchItem>> {
        for (index, earlier) in std::mem::take(&mut self.later) {
            let task = match &self.items[earlier] {
                Some(BatchItem::Created(t) | BatchItem::Exists(t)) => t.clone(),
                _ => return Err(Error::Internal("a batch item lost its outcome".into())),
            };
            self.items[index] = Some(BatchItem::Exists(task));
        }
        let items = self
            .items
            .into_iter()
            .map(|i| i.ok_or_else(|| Error::Internal("a batch item was not decided".into())))
            .collect::<Result<Vec<_>>>()?;
        if atomic {
            for (index, item) in items.iter().enumerate() {
                check_atomic(index, item, now)?;
            }
        }
        Ok(items)
    }
}

/// The rows of one multi-row insert at most: a statement's own costs (its
/// journal, the savepoint around it) are paid once for these rows instead
/// of once a row, which made up a fifth of a one-row insert in SQLite's
/// writer. Chunks are powers of two up to this, so that a handful of
/// statement texts serve every batch from the statement cache.
const ROWS_PER_INSERT: usize = 64;

/// Creates each task of a batch in the current transaction: the fresh
/// items in multi-row inserts that skip taken IDs and return the rows they
/// made; an item whose ID was taken (or held by a tombstone past its
/// window) is then settled on its own, as a single create is. PostgreSQL
/// has a set-based form of its own.
pub(crate) async fn create_batch<C: Conn>(
    c: &C,
    batch: &TaskBatch,
    config: &QueueConfig,
    now: i64,
) -> Result<Vec<BatchItem>> {
    let (mut plan, fresh) = BatchPlan::new(batch, config, now)?;
    let mut inserted = HashSet::with_capacity(fresh.len());
    let mut rest = &fresh[..];
    while !rest.is_empty() {
        let n = 1 << rest.len().min(ROWS_PER_INSERT).ilog2();
        let (chunk, tail) = rest.split_at(n);
        if n == 1 {
            let (_, p, ins) = &chunk[0];
            if insert_one(c, &ins.row(p, now)).await? {
                inserted.insert(ins.uid.clone());
            }
        } else {
            let rows: Vec<_> = chunk.iter().map(|(_, p, ins)| ins.row(p, now)).collect();
            let mut params = Vec::with_capacity(n * NEW_TASK_PARAMS);
            for row in &rows {
                params.extend(row.args());
            }
            let sql = sql_insert_tasks::<C>(n.ilog2());
            inserted.extend(c.query(sql, &params, |r| r.text(0)).await?);
            let (mut tasks, mut bytes) = (0, 0);
            for row in rows.iter().filter(|row| inserted.contains(row.uid)) {
                tasks += 1;
                bytes += row.bytes();
            }
            c.count_inserted(&batch.org, &batch.queue, tasks, bytes);
        }
        rest = tail;
    }
    for (index, p, ins) in &fresh {
        let item = if inserted.contains(&ins.uid) {
            BatchItem::Created(Box::new(ins.task(p, now)))
        } else {
            match insert_or_existing(c, p, ins, None, now).await? {
                Ok(t) => BatchItem::Created(Box::new(t)),
                Err(t) => BatchItem::Exists(Box::new(t)),
            }
        };
        plan.decide(*index, item);
    }
    if fresh.iter().any(|(_, p, _)| ordered(p)) {
        super::queues::mark_ordered(c, &batch.org, &batch.queue).await?;
    }
    plan.finish(batch.atomic, now)
}

/// In an atomic batch, an item not created is the batch's error.
pub(crate) fn check_atomic(index: usize, item: &BatchItem, now: i64) -> Result<()> {
    let error = match item {
        BatchItem::Created(_) => return Ok(()),
        BatchItem::Exists(t) => Error::TaskExists(Box::new(summary(t, now))),
        BatchItem::Invalid(errors) => Error::Invalid(errors.clone()),
        BatchItem::Refused(why) => Error::FailedPrecondition(why.clone()),
    };
    Err(Error::BatchItem {
        index,
        error: Box::new(error),
    })
}

/// The body of a batch's Idempotency-Key record: each item's outcome.
pub(crate) fn batch_record(items: &[BatchItem]) -> String {
    let records: Vec<BatchRecord> = items.iter().map(BatchRecord::of).collect();
    to_json(&records)
}

/// Inserts the resolved task unless its ID is taken: `Err` holds the task
/// that takes it (a live one, or a tombstone inside its window). An expired
/// tombstone is replaced; the row `own_uid` names is this request's own,
/// committed by an earlier try.
pub(crate) async fn insert_or_existing<C: Conn>(
    c: &C,
    p: &TaskCreate,
    ins: &TaskInsert,
    own_uid: Option<&str>,
    now: i64,
) -> Result<std::result::Result<Task, Task>> {
    let row = ins.row(p, now);
    for _ in 0..4 {
        if insert_one(c, &row).await? {
            return Ok(Ok(ins.task(p, now)));
        }
        match get(c, &p.org, &p.queue, &p.task_id, "FOR UPDATE").await? {
            Some(t) if own_uid == Some(t.uid.as_str()) => return Ok(Ok(t)),
            Some(t) if !tombstone_expired(&t, now) => return Ok(Err(t)),
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

/// Inserts one task ([`NewTask::args`]' parameters) unless its ID is
/// taken; whether it did. SQLite's `RETURNING` gathers the rows it answers
/// in a temporary table before the first one is read, which cost the
/// writer more than the insert's count of changed rows, which names no
/// row a trigger wrote.
async fn insert_one<C: Conn>(c: &C, row: &NewTask<'_>) -> Result<bool> {
    let sql = sql_insert_tasks::<C>(0);
    let params = row.args();
    let inserted = match C::DIALECT {
        Dialect::Sqlite => c.execute(sql, &params).await? == 1,
        Dialect::Postgres => !c.query(sql, &params, |_| Ok(())).await?.is_empty(),
    };
    if inserted {
        c.count_inserted(row.org, row.queue, 1, row.bytes());
    }
    Ok(inserted)
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
        task_row::COLUMNS,
        c.lock(lock)
    );
    c.query_opt(&sql, &args![org, queue, task_id], |r| task_row::read(r))
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

/// One page of a queue's tasks: a range of the primary key (narrowed to the
/// ID prefix when the store orders IDs `bytewise`), the ended states
/// through their partial indexes (`tasks_failed`, `tasks_cancelled`), the
/// running ones through `tasks_running`. Creation times filter the queue's
/// rows (the list then goes by creation time) without an index of their
/// own: every create would pay for one (see the migration).
pub(crate) async fn list<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    filter: TaskFilter,
    bytewise: bool,
    page: &PageRequest,
    now: i64,
) -> Result<Page<Task>> {
    queues::get(c, org, queue, "").await?;
    let by_created = filter.by_created();
    let prefix_end = filter.id_prefix.as_deref().map(prefix_end);
    let mut q = Query {
        text: format!(
            "SELECT {} FROM tasks WHERE org = $1 AND queue = $2",
            task_row::COLUMNS
        ),
        params: args![org, queue].to_vec(),
    };
    if let Some(state) = filter.state {
        // Only the pending states depend on the clock.
        let condition = state_condition(state, "{}");
        if condition.contains("{}") {
            q.push(&format!(" AND ({condition})"), now);
        } else {
            q.text.push_str(&format!(" AND ({condition})"));
        }
    }
    match (&filter.id_prefix, &prefix_end) {
        (Some(prefix), Some(end)) if bytewise => {
            q.push(" AND task_id >= {}", prefix)
                .push(" AND task_id < {}", end);
        }
        // Under a linguistic collation (PostgreSQL's only: SQLite is
        // bytewise) the IDs with the prefix need not be one range: each is
        // matched, in order, until the page is full.
        (Some(prefix), _) => {
            q.push(" AND starts_with(task_id, {})", prefix);
        }
        _ => {}
    }
    let after_key = page.after.as_deref().filter(|k| !k.is_empty());
    if let Some(t) = filter.created_before {
        q.push(" AND created_at < {}", to_micros(t));
    }
    if by_created {
        // A later page starts after the previous one's last row, which was
        // past `created_after` already; the row value alone makes the index
        // range start there (SQLite would not combine it with a bound).
        match after_key {
            Some(key) => {
                let (at, id) = parse_created_key(key);
                q.push(" AND (created_at, task_id) > ({}", at)
                    .push(", {})", id);
            }
            None => {
                if let Some(t) = filter.created_after {
                    q.push(" AND created_at >= {}", to_micros(t));
                }
            }
        }
        q.push(" ORDER BY created_at, task_id LIMIT {}", limit(page));
    } else {
        q.push(" AND task_id > {}", after_key.unwrap_or_default())
            .push(" ORDER BY task_id LIMIT {}", limit(page));
    }
    let items = c.query(&q.text, &q.params, |r| task_row::read(r)).await?;
    Ok(if by_created {
        Page::from_rows(items, page.limit, created_key)
    } else {
        Page::from_rows(items, page.limit, |t| t.task_id.clone())
    })
}

pub(crate) async fn attempts<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    page: &PageRequest,
) -> Result<Page<Attempt>> {
    let task = require(c, org, queue, task_id, "").await?;
    attempts_of(c, &task.uid, page).await
}

/// One page of the attempts of the task `uid`, found by the caller.
pub(crate) async fn attempts_of<C: Conn>(
    c: &C,
    uid: &str,
    page: &PageRequest,
) -> Result<Page<Attempt>> {
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
        .query(SQL_ATTEMPTS, &args![uid, after, limit(page)], |r| {
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
    render: &dyn EventRenderer,
) -> Result<Task> {
    let task = require(c, org, queue, task_id, "FOR UPDATE").await?;
    match task.status {
        Status::Pending => {
            let window =
                queues::get(c, org, queue, "").await?.config.dedup_window_s as i64 * 1_000_000;
            let cancel = args![now, window, &task.uid];
            let moved = (Status::Pending, Status::Cancelled);
            update_moving(c, SQL_CANCEL_PENDING, &cancel, org, moved).await?;
        }
        Status::Running => {
            // Read under the row lock `require` took: the lease is ours to end.
            if let Some(row) = dispatch::running(c, &task.uid).await? {
                let finished = dispatch::abort(c, now, &row, render).await?;
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

pub(crate) async fn redrive<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    now: i64,
) -> Result<Task> {
    let task = require(c, org, queue, task_id, "FOR UPDATE").await?;
    check_redrivable(&task, now)?;
    let sql = format!("{SQL_REDRIVE} WHERE uid = $2");
    let moved = (task.status, Status::Pending);
    update_moving(c, &sql, &args![now, &task.uid], org, moved).await?;
    require(c, org, queue, task_id, "").await
}

/// Redrives every task of the queue in `filter`'s state, time ranges and
/// ID prefix, in one transaction, so that the request is one idempotent
/// operation: the record of a keyed redrive keeps the answer's body. A dry
/// run counts them under the same conditions. On SQLite a large one holds
/// the writer while it runs (about a second for 100,000 tasks).
pub(crate) async fn redrive_many<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    filter: &RedriveFilter,
    now: i64,
    keyed: &mut Keyed,
) -> Result<Redriven> {
    // Under a share lock, so that the queue cannot go while its tasks do.
    queues::get(c, org, queue, "FOR SHARE").await?;
    let micros = |t: Option<jiff::Timestamp>, none: i64| t.map_or(none, to_micros);
    // The status is written out, not bound, so that both stores see the
    // condition of its partial index (`tasks_failed`, `tasks_cancelled`).
    // The prefix is compared as the task list's is under a linguistic
    // collation: each ID of the queue's ended tasks tested, which both
    // dialects spell alike.
    let status = filter.status.as_str();
    let matching = format!(
        "org = $2 AND queue = $3 AND status = '{status}' \
         AND finished_at >= $4 AND finished_at < $5 AND created_at >= $6 AND created_at < $7 \
         AND ($8 = '' OR substr(task_id, 1, length($8)) = $8)"
    );
    let params = args![
        now,
        org,
        queue,
        micros(filter.finished_after, i64::MIN),
        micros(filter.finished_before, i64::MAX),
        micros(filter.created_after, i64::MIN),
        micros(filter.created_before, i64::MAX),
        filter.id_prefix.as_deref().unwrap_or(""),
    ];
    if filter.dry_run {
        let count = c
            .query_opt(
                // The count binds the redrive's parameters, `$1` (now)
                // included and first, as SQLite numbers them in the order
                // they appear: one list serves both statements.
                &format!(
                    "SELECT count(*) FROM tasks WHERE CAST($1 AS BIGINT) IS NOT NULL AND {matching}"
                ),
                &params,
                |r| r.i64(0),
            )
            .await?
            .map_or(0, |n| u64::try_from(n).unwrap_or(0));
        keyed.set_body(|| format!("{{\"redriven\":0,\"matching\":{count}}}"));
        return Ok(Redriven { count });
    }
    let sql = format!(
        "{SQL_REDRIVE} WHERE uid IN (SELECT uid FROM tasks WHERE {matching} {})",
        c.lock("FOR UPDATE")
    );
    let moved = (filter.status, Status::Pending);
    let count = update_moving(c, &sql, &params, org, moved).await?;
    keyed.set_body(|| format!("{{\"redriven\":{count}}}"));
    Ok(Redriven { count })
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
     WHERE shard <> 0 LIMIT 10000 FOR UPDATE SKIP LOCKED) \
     RETURNING org, queue, status, n, bytes) \
     INSERT INTO task_counts AS c (org, queue, status, shard, n, bytes) \
     SELECT org, queue, status, 0, sum(n), sum(bytes) FROM moved GROUP BY org, queue, status \
     ORDER BY org, queue, status \
     ON CONFLICT (org, queue, status, shard) \
     DO UPDATE SET n = c.n + EXCLUDED.n, bytes = c.bytes + EXCLUDED.bytes";

/// An organization's live tasks (pending or running) and the bytes its
/// stored tasks hold, summed over its counter rows: a few per queue, however
/// many tasks it has.
pub(crate) async fn usage<C: Conn>(c: &C, org: &str) -> Result<crate::usage::OrgTasks> {
    c.query_opt(
        "SELECT CAST(COALESCE(sum(CASE WHEN status IN ('pending', 'running') THEN n END), 0) \
         AS BIGINT), CAST(COALESCE(sum(bytes), 0) AS BIGINT) FROM task_counts WHERE org = $1",
        &args![org],
        |r| {
            Ok(crate::usage::OrgTasks {
                live: u64::try_from(r.i64(0)?).unwrap_or(0),
                bytes: u64::try_from(r.i64(1)?).unwrap_or(0),
            })
        },
    )
    .await
    .map(Option::unwrap_or_default)
}

pub(crate) async fn counts_by_state<C: Conn>(c: &C) -> Result<Vec<TaskCount>> {
    c.query(SQL_TASK_COUNTS, &[], |r| task_count(r)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A create that read the clock before the one that won sees the task
    /// as of its creation: due then, so queued, not scheduled.
    #[test]
    fn a_conflict_sees_the_task_no_earlier_than_its_creation() {
        let p = TaskCreate {
            pull: true,
            ..TaskCreate::example("acme", "q", "t")
        };
        let config = QueueConfig {
            mode: idem_core::queue::QueueMode::Pull,
            ..QueueConfig::default()
        };
        let task = TaskInsert::resolve(&p, &config, 1_000)
            .unwrap()
            .task(&p, 1_000);
        let seen = |now| summary(&task, now).state;
        assert_eq!(seen(900), TaskState::Queued);
        assert_eq!(seen(1_000), TaskState::Queued);
        let later = TaskCreate {
            schedule_time: Some(from_micros(5_000)),
            ..p.clone()
        };
        let task = TaskInsert::resolve(&later, &config, 1_000)
            .unwrap()
            .task(&later, 1_000);
        assert_eq!(summary(&task, 900).state, TaskState::Scheduled);
        assert_eq!(summary(&task, 5_000).state, TaskState::Queued);
    }

    #[test]
    fn each_row_of_a_many_row_insert_takes_its_own_parameters() {
        let sql = insert_sql(2, Dialect::Sqlite);
        assert!(sql.contains(
            "VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $8, $9, $10, 0, 0, $11, $12, \
             NULL, NULL, NULL, $13, $14), ($15, $16, $17, $18, 'pending', $19, $20, $21, $22, \
             $22, $23, $24, 0, 0, $25, $26, NULL, NULL, NULL, $27, $28) ON CONFLICT"
        ));
    }
}
