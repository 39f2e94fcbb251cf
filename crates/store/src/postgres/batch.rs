//! Group commit for task creates, with or without an Idempotency-Key.
//!
//! With `synchronous_commit = on` every commit waits for the WAL to reach
//! the disk, so one statement per create caps creates at the commit rate.
//! Here concurrent creates hand their resolved rows to one batcher task,
//! which takes whatever is waiting (a lone create goes out at once: there
//! is no timer), inserts it all with one multi-row statement — one commit —
//! and only then answers each caller. The creates that arrive while its
//! statement runs and commits wait, and go together in its next one.
//!
//! A row that was not inserted has its ID taken (maybe by an earlier row of
//! the same batch, which then won as if it had come first) or its queue
//! missing. The batcher reads the rows holding those IDs, again one
//! statement for the batch: an ID held by a live task or a tombstone inside
//! its window is answered 409 from it, as the transactional path would; any
//! other case (no row: a missing queue, or a row deleted since; an expired
//! tombstone to replace) goes down the transactional path.
//!
//! A create with a key (one that claims it: no lock was taken before) brings
//! its completed record, and the batch's statement inserts the records
//! before the tasks ([`SQL_INSERT_TASKS_KEYED`]): a task is inserted only
//! with its record, and a record only for a task whose ID was free and
//! whose queue exists when the statement began, so both commit together or
//! neither does. A key another request holds stops its create there; the
//! batcher then reads the records holding those keys, again one statement,
//! and the caller answers from the record (a replay, 422 or 409).

use super::tasks::{SQL_INSERT_TASK_IF_QUEUE, SQL_INSERT_TASK_IF_QUEUE_ORDERED};
use crate::Error;
use crate::idempotency::{IdempotencyRecord, KeyCompletion};
use crate::records::{Task, TaskSummary, pending_state};
use crate::tables::idempotency::{RECORD_COLUMNS, live_record, micros, record};
use crate::tables::stats::{count_inserted, counted_inserts, task_bytes};
use crate::tables::tasks;
use crate::task_row::{
    self, NewTask, NewTaskArrays, insert_new_task, task_columns, unnest_new_tasks,
};
use deadpool_postgres::{GenericClient, Object, Pool};
use idem_core::clock::from_micros;
use std::collections::{HashMap, HashSet};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::types::ToSql;

/// Most rows per statement: bounds the latency the first one waits for.
const MAX_BATCH: usize = 256;

/// A batch takes no more rows once its rows hold this many bytes, so that
/// large bodies do not make one huge statement.
const MAX_BATCH_BYTES: usize = 4 << 20;

/// Connections of the batcher's own pool: one for its statements, one for
/// its reads of the rows it could not insert, which run beside its next
/// statement. A second batcher, a statement in flight beside the first,
/// made the statements smaller and more numerous: with one, PostgreSQL
/// creates from 4, 16 and 64 clients went 14–22 % faster (docs/BENCHMARKS.md,
/// "One batcher").
pub(super) const BATCH_CONNECTIONS: usize = 2;

/// The columns of [`SQL_INSERT_TASK_IF_QUEUE`] for many rows: one
/// array parameter per column, rows in array order, each inserted if the
/// condition `$queue` puts on its queue holds and its ID is free. The
/// statements below count the rows and answer the uids of those inserted.
macro_rules! insert_tasks {
    ($queue:expr) => {
        concat!(
            insert_new_task!(SELECT v),
            " FROM ",
            unnest_new_tasks!(),
            " ",
            $queue,
            " ORDER BY v.ord ON CONFLICT (org, queue, task_id) DO NOTHING"
        )
    };
}

/// The answer of the statements that insert tasks for the batcher, one row
/// per row sent ([`read_answers`]): the columns of the task holding its ID
/// in the statement's snapshot when it was not inserted (all `NULL` when
/// it was, or when no task held the ID then: a missing queue, or a create
/// of the ID committed since), then the uid of the task it inserted
/// (`NULL` when none), then its organization. A duplicate ID is thus
/// answered in the statement's own round trip; only what the snapshot did
/// not show is read after. `holder!(org, queue, task_id, not_inserted)`
/// joins the holder of the ID the three expressions name; the read runs
/// only where `not_inserted` holds, which names no column of `tasks`, so
/// the plan tests it before the scan.
macro_rules! holder {
    ($org:literal, $queue:literal, $task_id:literal, $not_inserted:literal) => {
        concat!(
            "LEFT JOIN LATERAL (SELECT ",
            $crate::task_row::task_columns!(t),
            " FROM tasks t WHERE t.org = ",
            $org,
            " AND t.queue = ",
            $queue,
            " AND t.task_id = ",
            $task_id,
            " AND ",
            $not_inserted,
            " LIMIT 1) h ON true"
        )
    };
}
pub(super) use holder;

/// The last `SELECT` of [`SQL_INSERT_TASKS`], answering each row of the
/// arrays as [`holder!`] says.
macro_rules! answer_rows {
    () => {
        concat!(
            "SELECT h.*, i.uid, w.org \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS w(org, queue, task_id, uid) \
             LEFT JOIN ins i ON i.uid = w.uid ",
            holder!("w.org", "w.queue", "w.task_id", "i.uid IS NULL")
        )
    };
}

/// Rows of any queues, each inserted only if its queue exists (`FOR KEY
/// SHARE`, as the one-row statement), answered by [`answer_rows!`].
const SQL_INSERT_TASKS: &str = count_inserted!(
    insert_tasks!(
        "WHERE EXISTS (SELECT 1 FROM queues q WHERE q.org = v.org AND q.name = v.queue \
         FOR KEY SHARE)"
    ),
    ", uid",
    answer_rows!()
);

/// A common table expression to follow [`count_inserted!`]'s, for a batch
/// with a row that has a group or a priority: marks the queues of such
/// rows inserted as ordered ([`crate::tables::queues::mark_ordered`]) in
/// the statement that inserts them, so that no claim sees the task before
/// its queue takes turns. `ins` returns the rows' `group_key` and
/// `priority`. A batch without such a row runs the statement without it.
macro_rules! mark_ordered {
    () => {
        ", marked AS (UPDATE queues q SET ordered = 1 FROM (SELECT DISTINCT org, queue FROM ins \
         WHERE group_key <> '' OR priority <> 0) g \
         WHERE q.org = g.org AND q.name = g.queue AND q.ordered = 0) "
    };
}
pub(super) use mark_ordered;

/// [`SQL_INSERT_TASKS`] marking the queues of ordered rows.
const SQL_INSERT_TASKS_ORDERED: &str = count_inserted!(
    insert_tasks!(
        "WHERE EXISTS (SELECT 1 FROM queues q WHERE q.org = v.org AND q.name = v.queue \
         FOR KEY SHARE)"
    ),
    ", uid, group_key, priority",
    concat!(mark_ordered!(), answer_rows!())
);

/// Rows of one queue that the transaction has locked already (a batch
/// create): a lock taken again for every row was a fifth of a
/// thousand-row insert.
const SQL_INSERT_TASKS_LOCKED: &str =
    count_inserted!(insert_tasks!(""), ", uid", "SELECT uid FROM ins");

/// The text of the error that fails [`SQL_INSERT_TASKS_KEYED`] when a
/// record went in without its task: a plain statement raises an error of
/// its own only through a cast that cannot succeed.
macro_rules! raced {
    () => {
        "keyed create raced a create of its task ID: "
    };
}
const RACED: &str = raced!();

/// [`SQL_INSERT_TASKS`] with the Idempotency-Key records of the rows that
/// carry one ($15–$22: principal, key, fingerprint, token, status, resource
/// kind and ID, expiry; `NULL` keys for the rows without).
///
/// `k` inserts each record completed, as the create's answer, unless a live
/// record holds the key (an expired one is replaced), the ID is taken in the
/// statement's snapshot or the queue is missing. A key held in the snapshot
/// is skipped before the insert: the conflict clause would lock the record
/// it keeps, which is a write (see
/// [`SQL_LOCK`](crate::tables::idempotency::SQL_LOCK)); the row's
/// `FOR KEY SHARE` on its queue still is one, so a statement of replays
/// alone still commits with a WAL flush (docs/BENCHMARKS.md has what
/// locking the queue later cost). `ins` inserts a keyed row's task only if
/// its record went in. The keys are inserted in key order and
/// all of them before any task, in ID order, so that two batches wait for
/// each other's keys and tasks in one order and cannot deadlock.
///
/// A record inserted whose task then meets a row of that ID committed by a
/// concurrent transaction after the snapshot (the one case `k` cannot see)
/// would answer a create that did not happen: the last `SELECT` then fails
/// the statement, rolling everything back, naming the ID; the batch runs
/// again without it ([`insert_keyed_around_races`]).
macro_rules! insert_tasks_keyed {
    ($returning:expr, $marking:expr) => {
        concat!(
            "WITH v AS (SELECT * FROM ",
            unnest_new_tasks!(
                ", $15::text[], $16::text[], $17::text[], $18::text[], $19::bigint[], $20::text[], \
                 $21::text[], $22::bigint[]",
                ", principal, key, fingerprint, token, status, resource_kind, resource_id, expires_at"
            ),
            "), \
             k AS (INSERT INTO idempotency_keys (org, principal, key, fingerprint, state, token, \
             status, resource_kind, resource_id, created_at, locked_until, expires_at) \
             SELECT v.org, v.principal, v.key, v.fingerprint, 'completed', v.token, v.status, \
             v.resource_kind, v.resource_id, v.created_at, v.created_at, v.expires_at FROM v \
             WHERE v.key IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM idempotency_keys i WHERE i.org = v.org \
             AND i.principal = v.principal AND i.key = v.key AND ",
            live_record!("i", "v.created_at"),
            ") \
             AND EXISTS (SELECT 1 FROM queues q WHERE q.org = v.org AND q.name = v.queue FOR KEY SHARE) \
             AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.org = v.org AND t.queue = v.queue \
             AND t.task_id = v.task_id) \
             ORDER BY v.org, v.principal, v.key \
             ON CONFLICT (org, principal, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
             state = 'completed', token = excluded.token, status = excluded.status, \
             resource_kind = excluded.resource_kind, resource_id = excluded.resource_id, body = NULL, \
             created_at = excluded.created_at, locked_until = excluded.locked_until, \
             expires_at = excluded.expires_at \
             WHERE NOT (",
            live_record!("idempotency_keys", "excluded.created_at"),
            ") RETURNING token), \
             ins AS (",
            insert_new_task!(SELECT v),
            " FROM v WHERE (v.key IS NULL OR v.token IN (SELECT token FROM k)) \
             AND EXISTS (SELECT 1 FROM queues q WHERE q.org = v.org AND q.name = v.queue FOR KEY SHARE) \
             ORDER BY v.ord \
             ON CONFLICT (org, queue, task_id) DO NOTHING RETURNING uid, org, queue, ",
            task_bytes!(),
            " AS size",
            $returning,
            "), ",
            counted_inserts!(),
            $marking,
            " SELECT uid FROM ins UNION ALL SELECT ('",
            raced!(),
            "' || v.task_id)::bigint::text FROM v \
             WHERE v.token IN (SELECT token FROM k) AND v.uid NOT IN (SELECT uid FROM ins)"
        )
    };
}
/// The keyed statement for rows without a group or priority.
const SQL_INSERT_TASKS_KEYED: &str = insert_tasks_keyed!("", "");

/// [`SQL_INSERT_TASKS_KEYED`] marking the queues of ordered rows.
const SQL_INSERT_TASKS_KEYED_ORDERED: &str =
    insert_tasks_keyed!(", group_key, priority", mark_ordered!());

/// The live Idempotency-Key records holding the keys of rows that were not
/// inserted, each found by its primary key, with the key's organization
/// and principal after the record's columns.
fn sql_held() -> String {
    format!(
        "SELECT r.*, k.org, k.principal FROM unnest($1::text[], $2::text[], $3::text[]) \
         AS k(org, principal, key) CROSS JOIN LATERAL (SELECT {RECORD_COLUMNS} \
         FROM idempotency_keys i WHERE i.org = k.org AND i.principal = k.principal \
         AND i.key = k.key AND {} LIMIT 1) r",
        live_record!("i", "$4")
    )
}

/// The tasks holding the IDs of the rows that were not inserted: one
/// primary key lookup per ID, whatever the statistics say. The subquery
/// cannot be flattened (`LIMIT`), so the plan is a nested loop over the IDs,
/// never a scan of the table (a cached plan made while the table was small
/// would otherwise go on scanning it as it grows).
const SQL_EXISTING: &str = concat!(
    "SELECT t.* FROM unnest($1::text[], $2::text[], $3::text[]) AS k(org, queue, task_id) \
     CROSS JOIN LATERAL (SELECT ",
    task_columns!(t),
    ", t.org FROM tasks t WHERE t.org = k.org \
     AND t.queue = k.queue AND t.task_id = k.task_id LIMIT 1) t"
);

/// One create's row: the column values `TaskInsert` resolved.
pub(super) struct Row {
    pub org: String,
    pub queue: String,
    pub task_id: String,
    pub uid: String,
    pub target: String,
    pub body_form: Option<&'static str>,
    pub body: Option<Vec<u8>>,
    pub schedule_time: i64,
    pub dispatch_deadline_s: i64,
    pub retry_config: String,
    pub created_at: i64,
    /// A pull task's tag.
    pub tag: Option<String>,
    /// Its group, `""` for none.
    pub group_key: String,
    pub priority: i32,
    /// The Idempotency-Key record the create claims, if it has a key.
    pub key: Option<RowKey>,
}

/// A keyed create's completed record, inserted with its task.
pub(super) struct RowKey {
    pub principal: String,
    pub key: String,
    pub fingerprint: String,
    pub token: String,
    pub status: i64,
    pub resource_kind: &'static str,
    pub resource_id: String,
    pub expires_at: i64,
}

impl RowKey {
    /// The record of `k`, completed at `now`.
    pub(super) fn of(k: &KeyCompletion, now: i64) -> RowKey {
        RowKey {
            principal: k.principal.clone(),
            key: k.key.clone(),
            fingerprint: k.fingerprint.clone(),
            token: k.token.clone(),
            status: i64::from(k.status),
            resource_kind: k.resource_kind,
            resource_id: k.resource_id.clone(),
            expires_at: now.saturating_add(micros(k.retain_for)),
        }
    }

    fn size(&self) -> usize {
        self.principal.len()
            + self.key.len()
            + self.fingerprint.len()
            + self.token.len()
            + self.resource_id.len()
    }
}

impl Row {
    /// The row of a resolved create, its values copied.
    pub(super) fn of(p: &crate::records::TaskCreate, ins: &tasks::TaskInsert, now: i64) -> Row {
        Row {
            org: p.org.clone(),
            queue: p.queue.clone(),
            task_id: p.task_id.clone(),
            uid: ins.uid.clone(),
            target: ins.target.clone(),
            body_form: ins.body_form,
            body: ins.body.clone(),
            schedule_time: ins.schedule_time,
            dispatch_deadline_s: ins.dispatch_deadline_s,
            retry_config: ins.retry_config.clone(),
            created_at: now,
            tag: p.tag.clone(),
            group_key: p.group.clone().unwrap_or_default(),
            priority: p.priority,
            key: None,
        }
    }

    /// Whether the row makes its queue ordered (see [`mark_ordered!`]).
    pub(super) fn ordered(&self) -> bool {
        !self.group_key.is_empty() || self.priority != 0
    }

    fn id(&self) -> (&str, &str, &str) {
        (&self.org, &self.queue, &self.task_id)
    }

    fn size(&self) -> usize {
        self.target.len()
            + self.body.as_ref().map_or(0, Vec::len)
            + self.retry_config.len()
            + self.tag.as_ref().map_or(0, String::len)
            + self.group_key.len()
            + self.key.as_ref().map_or(0, RowKey::size)
    }

    /// Whose key, for a keyed row.
    fn key_id(&self) -> Option<(&str, &str, &str)> {
        let k = self.key.as_ref()?;
        Some((&self.org, &k.principal, &k.key))
    }

    /// The row's column values.
    pub(super) fn new_task(&self) -> NewTask<'_> {
        NewTask {
            org: &self.org,
            queue: &self.queue,
            task_id: &self.task_id,
            uid: &self.uid,
            target: &self.target,
            body_form: self.body_form,
            body: self.body.as_deref(),
            schedule_time: self.schedule_time,
            dispatch_deadline_s: self.dispatch_deadline_s,
            retry_config: &self.retry_config,
            created_at: self.created_at,
            tag: self.tag.as_deref(),
            group_key: &self.group_key,
            priority: crate::task_row::priority(self.priority),
        }
    }
}

/// What became of a row, told only once its statement has finished.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Committed: the task is durable.
    Inserted,
    /// The ID is held by a live task or a tombstone inside its window:
    /// 409, as the transactional path would answer.
    Exists(Box<TaskSummary>),
    /// Not inserted: the create's Idempotency-Key is held by this live
    /// record of another request.
    Held(Box<IdempotencyRecord>),
    /// Not inserted, for a reason the transactional path sorts out.
    NotInserted,
    /// The statement failed (the error is logged here). Nothing of it
    /// committed, unless the connection failed after the commit; the row's
    /// uid tells which.
    Failed,
}

struct Job {
    row: Row,
    reply: oneshot::Sender<Outcome>,
}

/// The senders' side; the batcher stops when the last clone is dropped.
#[derive(Clone)]
pub(super) struct Batcher {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Batcher {
    /// Starts the batcher task on the current tokio runtime; `pool` is its
    /// alone, [`BATCH_CONNECTIONS`] connections.
    pub(super) fn start(pool: Pool) -> Batcher {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(pool, rx));
        Batcher { jobs: tx }
    }

    /// Inserts `row` in the next batch and tells what became of it once
    /// that batch's statement has finished; gives the row back when the
    /// batcher is gone (its runtime shut down) and never saw it.
    pub(super) async fn insert(&self, row: Row) -> Result<Outcome, Row> {
        let (reply, answer) = oneshot::channel();
        if let Err(mpsc::error::SendError(job)) = self.jobs.send(Job { row, reply }) {
            return Err(job.row);
        }
        // Dropped mid-batch: whether the statement committed is unknown.
        Ok(answer.await.unwrap_or(Outcome::Failed))
    }
}

async fn run(pool: Pool, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    // No waiting once one job is in: the batch is whatever is queued now.
    while let Some(first) = jobs.recv().await {
        let mut bytes = first.row.size();
        batch.push(first);
        while batch.len() < MAX_BATCH && bytes < MAX_BATCH_BYTES {
            match jobs.try_recv() {
                Ok(job) => {
                    bytes += job.row.size();
                    batch.push(job);
                }
                Err(_) => break,
            }
        }
        insert_batch(&pool, &mut batch).await;
    }
}

/// Inserts the rows of `batch` in one statement and answers each job;
/// leaves `batch` empty.
async fn insert_batch(pool: &Pool, batch: &mut Vec<Job>) {
    // One lock order for all batches: two batches inserting some of the
    // same IDs wait for each other in the same order and cannot deadlock.
    // The sort is stable, so of the rows with one ID the earliest arrival
    // goes into the statement and the others come back not inserted, as if
    // they had come one after the other. Of the rows with one key, likewise
    // only the first goes in; the others then find its record.
    batch.sort_by(|a, b| a.row.id().cmp(&b.row.id()));
    let mut rows: Vec<&Row> = batch.iter().map(|j| &j.row).collect();
    rows.dedup_by(|later, earlier| later.id() == earlier.id());
    let keyed = rows.iter().any(|r| r.key.is_some());
    if keyed {
        let mut keys = HashSet::new();
        rows.retain(|r| r.key_id().is_none_or(|k| keys.insert(k)));
    }
    let result = match pool.get().await {
        Ok(client) => {
            let inserted = if let ([row], false) = (rows.as_slice(), keyed) {
                insert_one(&client, row).await
            } else if keyed {
                insert_keyed_around_races(&client, &mut rows)
                    .await
                    .map(|uids| Inserted {
                        uids,
                        held: HashMap::new(),
                    })
            } else {
                insert(&client, &rows).await
            };
            inserted.map(|i| (client, i))
        }
        Err(e) => Err(e.into()),
    };
    let (client, inserted) = match result {
        Ok(r) => r,
        Err(e) => {
            if e.to_string().contains(RACED) {
                tracing::debug!(error = %e, rows = rows.len(), "keyed batch raced a create");
            } else {
                tracing::warn!(error = %e, rows = rows.len(), "batched task insert failed");
            }
            for job in batch.drain(..) {
                let _ = job.reply.send(Outcome::Failed);
            }
            return;
        }
    };
    // The inserted rows are durable: answer them before looking at the rest.
    // A keyless row whose ID an inserted row of this batch took met that
    // row, as if it had come after it: its 409 shows that task as it was
    // inserted, with no read; one whose ID a task held in the statement's
    // snapshot, that task as the statement read it. A keyed one goes on to
    // the read of the record holding its key, which decides before the ID
    // does.
    let mut rest = Vec::new();
    let mut winner: Option<Row> = None;
    for job in batch.drain(..) {
        if inserted.uids.contains(&job.row.uid) {
            let _ = job.reply.send(Outcome::Inserted);
            winner = Some(job.row);
            continue;
        }
        if job.row.key.is_some() {
            rest.push(job);
            continue;
        }
        let now = job.row.created_at;
        let (org, queue, task_id) = job.row.id();
        let id = (org.to_string(), queue.to_string(), task_id.to_string());
        let outcome = match (&winner, inserted.held.get(&id)) {
            (Some(w), _) if w.id() == job.row.id() => {
                Outcome::Exists(Box::new(inserted_summary(w, now)))
            }
            (_, Some(t)) if !tasks::tombstone_expired(t, now) => {
                Outcome::Exists(Box::new(tasks::summary(t, now)))
            }
            // A tombstone to replace: the transactional path does.
            (_, Some(_)) => Outcome::NotInserted,
            (_, None) => {
                rest.push(job);
                continue;
            }
        };
        let _ = job.reply.send(outcome);
    }
    if rest.is_empty() {
        return;
    }
    // The rest are read on another connection while this batcher goes on
    // to its next batch: a read here held the next batch's rows back by a
    // round trip for every batch with a duplicate ID in it.
    drop(client);
    let pool = pool.clone();
    tokio::spawn(async move { answer_not_inserted(&pool, rest).await });
}

/// What a 409 shows of the task `row` inserted, met by a later create of
/// its ID at `now`, as [`tasks::summary`] shows a task read back: pending,
/// no attempt yet, due at its schedule time.
fn inserted_summary(row: &Row, now: i64) -> TaskSummary {
    let seen = from_micros(tasks::seen_at(now, row.created_at));
    TaskSummary {
        task_id: row.task_id.clone(),
        state: pending_state(0, from_micros(row.schedule_time), seen),
        created_at: from_micros(row.created_at),
        finished_at: None,
    }
}

/// Answers the jobs whose rows were not inserted, from the records holding
/// their keys and the tasks holding their IDs.
async fn answer_not_inserted(pool: &Pool, rest: Vec<Job>) {
    let client = match pool.get().await {
        Ok(client) => client,
        Err(e) => {
            tracing::warn!(error = %e, "no connection to read the rows of conflicting creates");
            for job in rest {
                let _ = job.reply.send(Outcome::NotInserted);
            }
            return;
        }
    };
    // Both reads go out together, pipelined on the connection: one round
    // trip. A key held elsewhere answers before the ID: on the locking path
    // the key's record is found before the create runs at all.
    let keyed = rest.iter().any(|j| j.row.key.is_some());
    let (held, existing) = tokio::join!(
        async {
            if keyed {
                held(&client, &rest).await
            } else {
                Ok(HashMap::new())
            }
        },
        existing(&client, &rest)
    );
    let held = held.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "reading the key records of keyed creates failed");
        HashMap::new()
    });
    let existing = existing.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "reading the tasks of conflicting creates failed");
        HashMap::new()
    });
    for job in rest {
        let now = job.row.created_at;
        let r = &job.row;
        let record = r.key_id().and_then(|(org, principal, key)| {
            held.get(&(org.to_string(), principal.to_string(), key.to_string()))
        });
        let id = (r.org.clone(), r.queue.clone(), r.task_id.clone());
        let outcome = match (record, existing.get(&id)) {
            (Some(record), _) => Outcome::Held(Box::new(record.clone())),
            (None, Some(t)) if !tasks::tombstone_expired(t, now) => {
                Outcome::Exists(Box::new(tasks::summary(t, now)))
            }
            (None, _) => Outcome::NotInserted,
        };
        let _ = job.reply.send(outcome);
    }
}

/// The live records holding the keys of the keyed `jobs`, by (organization,
/// principal, key), as of the latest of their instants.
async fn held(
    client: &Object,
    jobs: &[Job],
) -> Result<HashMap<(String, String, String), IdempotencyRecord>, Error> {
    let mut ids: Vec<(&str, &str, &str)> = jobs.iter().filter_map(|j| j.row.key_id()).collect();
    ids.sort_unstable();
    ids.dedup();
    let org: Vec<&str> = ids.iter().map(|i| i.0).collect();
    let principal: Vec<&str> = ids.iter().map(|i| i.1).collect();
    let key: Vec<&str> = ids.iter().map(|i| i.2).collect();
    let now = jobs.iter().map(|j| j.row.created_at).max().unwrap_or(0);
    let stmt = client.prepare_cached(&sql_held()).await?;
    let found = client.query(&stmt, &[&org, &principal, &key, &now]).await?;
    let columns = RECORD_COLUMNS.split(',').count();
    found
        .iter()
        .map(|r| {
            let record = record(r)?;
            let org: String = r.try_get(columns)?;
            let principal: String = r.try_get(columns + 1)?;
            Ok(((org, principal, record.key.clone()), record))
        })
        .collect()
}

/// Most times a keyed batch runs again without a row that raced.
const MAX_RACE_RETRIES: usize = 4;

/// Runs [`SQL_INSERT_TASKS_KEYED`]; a statement that failed because a row
/// raced a concurrent create of its ID (which then committed) runs again
/// without that row's ID, which is then answered from the task that took
/// it, as any row not inserted. Without this, one duplicate ID sent from
/// two clients at once sent its whole batch down the transactional path,
/// a lock and a transaction per create.
async fn insert_keyed_around_races(
    client: &Object,
    rows: &mut Vec<&Row>,
) -> Result<HashSet<String>, Error> {
    for _ in 0..MAX_RACE_RETRIES {
        let failed = match insert_keyed(client, rows).await {
            Err(e) => e,
            done => return done,
        };
        match raced_id(&failed) {
            Some(id) if rows.iter().any(|r| r.task_id == id) => {
                tracing::debug!(task_id = %id, rows = rows.len(), "keyed batch raced a create; again without it");
                rows.retain(|r| r.task_id != id);
                if rows.is_empty() {
                    return Ok(HashSet::new());
                }
            }
            _ => return Err(failed),
        }
    }
    insert_keyed(client, rows).await
}

/// The task ID the error of a raced keyed batch names.
fn raced_id(e: &Error) -> Option<String> {
    let text = e.to_string();
    let at = text.find(RACED)? + RACED.len();
    let id: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    (!id.is_empty()).then_some(id)
}

/// Runs [`SQL_INSERT_TASKS_KEYED`]: the uids of the rows inserted.
async fn insert_keyed<C: GenericClient>(
    client: &C,
    rows: &[&Row],
) -> Result<HashSet<String>, Error> {
    let tasks = NewTaskArrays::of(rows.iter().map(|r| r.new_task()));
    let key = |f: fn(&RowKey) -> &str| -> Vec<Option<&str>> {
        rows.iter().map(|r| r.key.as_ref().map(f)).collect()
    };
    let principal = key(|k| &k.principal);
    let key_name = key(|k| &k.key);
    let fingerprint = key(|k| &k.fingerprint);
    let token = key(|k| &k.token);
    let kind = key(|k| k.resource_kind);
    let resource_id = key(|k| &k.resource_id);
    let status: Vec<Option<i64>> = rows
        .iter()
        .map(|r| r.key.as_ref().map(|k| k.status))
        .collect();
    let expires_at: Vec<Option<i64>> = rows
        .iter()
        .map(|r| r.key.as_ref().map(|k| k.expires_at))
        .collect();
    let mut params: Vec<&(dyn ToSql + Sync)> = tasks.params().collect();
    params.extend([
        &principal as &(dyn ToSql + Sync),
        &key_name,
        &fingerprint,
        &token,
        &status,
        &kind,
        &resource_id,
        &expires_at,
    ]);
    let sql = if rows.iter().any(|r| r.ordered()) {
        SQL_INSERT_TASKS_KEYED_ORDERED
    } else {
        SQL_INSERT_TASKS_KEYED
    };
    let stmt = client.prepare_cached(sql).await?;
    let inserted = client.query(&stmt, &params).await?;
    inserted
        .iter()
        .map(|r| Ok(r.try_get::<_, String>(0)?))
        .collect()
}

/// What a batch's statement told of its rows.
#[derive(Default)]
pub(super) struct Inserted {
    /// The uids of the rows inserted.
    pub uids: HashSet<String>,
    /// The tasks that held the IDs of rows not inserted, in the statement's
    /// snapshot, by ID.
    held: HashMap<(String, String, String), Task>,
}

/// Reads the rows [`holder!`]'s statements answer.
fn read_answers(answers: &[tokio_postgres::Row]) -> Result<Inserted, Error> {
    let mut inserted = Inserted::default();
    for r in answers {
        if let Some(uid) = r.try_get::<_, Option<String>>(task_row::COUNT)? {
            inserted.uids.insert(uid);
        } else if r
            .try_get::<_, Option<String>>(task_row::col::task_id)?
            .is_some()
        {
            let task = task_row::read(r)?;
            let org: String = r.try_get(task_row::COUNT + 1)?;
            let id = (org, task.queue.clone(), task.task_id.clone());
            inserted.held.insert(id, task);
        }
    }
    Ok(inserted)
}

/// Runs [`SQL_INSERT_TASK_IF_QUEUE`] (or its ordered form) for a lone
/// keyless row: its scalar parameters cost PostgreSQL less than fourteen
/// one-element arrays unnested and sorted, which is every create of a
/// client that waits for each answer.
pub(super) async fn insert_one<C: GenericClient>(client: &C, row: &Row) -> Result<Inserted, Error> {
    let sql = if row.ordered() {
        SQL_INSERT_TASK_IF_QUEUE_ORDERED
    } else {
        SQL_INSERT_TASK_IF_QUEUE
    };
    let stmt = client.prepare_cached(sql).await?;
    let args = row.new_task().args();
    read_answers(&client.query(&stmt, &super::params(&args)).await?)
}

/// Runs [`SQL_INSERT_TASKS`] (or its ordered form) for `rows`.
async fn insert<C: GenericClient>(client: &C, rows: &[&Row]) -> Result<Inserted, Error> {
    let tasks = NewTaskArrays::of(rows.iter().map(|r| r.new_task()));
    let params: Vec<&(dyn ToSql + Sync)> = tasks.params().collect();
    let sql = if rows.iter().any(|r| r.ordered()) {
        SQL_INSERT_TASKS_ORDERED
    } else {
        SQL_INSERT_TASKS
    };
    let stmt = client.prepare_cached(sql).await?;
    read_answers(&client.query(&stmt, &params).await?)
}

/// Runs [`SQL_INSERT_TASKS_LOCKED`]: rows of the one queue the caller's
/// transaction holds (and marks, if it must, itself). The uids of the rows
/// inserted.
pub(super) async fn insert_locked<C: GenericClient>(
    client: &C,
    rows: &[&Row],
) -> Result<HashSet<String>, Error> {
    let tasks = NewTaskArrays::of(rows.iter().map(|r| r.new_task()));
    let params: Vec<&(dyn ToSql + Sync)> = tasks.params().collect();
    let stmt = client.prepare_cached(SQL_INSERT_TASKS_LOCKED).await?;
    let inserted = client.query(&stmt, &params).await?;
    inserted
        .iter()
        .map(|r| Ok(r.try_get::<_, String>(0)?))
        .collect()
}

/// The tasks now holding the IDs of `jobs` (sorted by ID), by ID. Read
/// after the insert committed, without a lock: a task found live is a
/// conflict at this instant, which is all a 409 claims.
async fn existing(
    client: &Object,
    jobs: &[Job],
) -> Result<HashMap<(String, String, String), Task>, Error> {
    let mut ids: Vec<(&str, &str, &str)> = jobs.iter().map(|j| j.row.id()).collect();
    ids.dedup();
    existing_ids(client, &ids).await
}

/// The tasks now holding `ids` (organization, queue, task ID), by ID.
pub(super) async fn existing_ids<C: GenericClient>(
    client: &C,
    ids: &[(&str, &str, &str)],
) -> Result<HashMap<(String, String, String), Task>, Error> {
    let org: Vec<&str> = ids.iter().map(|i| i.0).collect();
    let queue: Vec<&str> = ids.iter().map(|i| i.1).collect();
    let task_id: Vec<&str> = ids.iter().map(|i| i.2).collect();
    let stmt = client.prepare_cached(SQL_EXISTING).await?;
    let found = client.query(&stmt, &[&org, &queue, &task_id]).await?;
    found
        .iter()
        .map(|r| {
            let task = task_row::read(r)?;
            let org: String = r.try_get(task_row::COUNT)?;
            Ok(((org, task.queue.clone(), task.task_id.clone()), task))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use crate::postgres::PostgresStore;
    use crate::postgres::testing::record_xmax;
    use crate::records::TaskCreate;
    use idem_core::queue::QueueConfig;
    use idem_core::task::{BodyForm, Target};
    use idem_core::{Clock, ManualClock};
    use idem_testkit::TestDatabase;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    async fn store() -> (PostgresStore, TestDatabase) {
        let db = TestDatabase::create().await;
        let clock = ManualClock::new("2026-10-16T12:00:00Z".parse().unwrap());
        let store = PostgresStore::open(
            &db.url,
            8,
            Arc::new(clock) as Arc<dyn Clock>,
            crate::events::unrendered(),
        )
        .await
        .unwrap();
        store
            .organization_create(
                "acme",
                crate::records::NewApiKey {
                    id: "k".into(),
                    key_hash: "h".into(),
                },
                None,
            )
            .await
            .unwrap();
        store
            .queue_create("acme", "q", &QueueConfig::default(), None)
            .await
            .unwrap();
        (store, db)
    }

    fn row(queue: &str, task_id: &str, body: Option<Vec<u8>>) -> Row {
        Row {
            org: "acme".into(),
            queue: queue.into(),
            task_id: task_id.into(),
            uid: uuid::Uuid::now_v7().simple().to_string(),
            target: r#"{"url":"http://127.0.0.1:9/","method":"POST","headers":{}}"#.into(),
            body_form: body.as_ref().map(|_| "base64"),
            body,
            schedule_time: 1,
            dispatch_deadline_s: 30,
            retry_config: crate::sql::to_json(&QueueConfig::default().retry_config),
            created_at: 1,
            tag: None,
            group_key: String::new(),
            priority: 0,
            key: None,
        }
    }

    /// Runs `rows` as one batch, in this arrival order.
    async fn run_batch(pool: &Pool, rows: Vec<Row>) -> Vec<(String, Outcome)> {
        let mut answers = Vec::new();
        let mut batch = Vec::new();
        for row in rows {
            let (reply, answer) = oneshot::channel();
            answers.push((row.uid.clone(), answer));
            batch.push(Job { row, reply });
        }
        insert_batch(pool, &mut batch).await;
        let mut out = Vec::new();
        for (uid, answer) in answers {
            out.push((uid, answer.await.unwrap()));
        }
        out
    }

    async fn stored_uid(store: &PostgresStore, task_id: &str) -> Option<String> {
        let client = store.pool.get().await.unwrap();
        client
            .query_opt(
                "SELECT uid FROM tasks WHERE org = 'acme' AND queue = 'q' AND task_id = $1",
                &[&task_id],
            )
            .await
            .unwrap()
            .map(|r| r.get(0))
    }

    #[tokio::test]
    async fn one_statement_inserts_the_free_ids_once() {
        let (store, _db) = store().await;
        run_batch(&store.pool, vec![row("q", "taken", None)]).await;
        let out = run_batch(
            &store.pool,
            vec![
                row("q", "b", Some(vec![0, 159, 255])),
                row("q", "a", None),
                row("q", "taken", None),
                row("nope", "c", None),
                row("q", "a", None),
                row("q", "b", None),
            ],
        )
        .await;
        let kinds: Vec<&str> = out
            .iter()
            .map(|(_, o)| match o {
                Outcome::Inserted => "inserted",
                Outcome::Exists(s) => {
                    assert_eq!(s.state, idem_core::task::TaskState::Queued);
                    "exists"
                }
                Outcome::NotInserted => "not",
                Outcome::Held(_) => "held",
                Outcome::Failed => "failed",
            })
            .collect();
        assert_eq!(
            kinds,
            ["inserted", "inserted", "exists", "not", "exists", "exists"]
        );
        // The earliest arrival of each ID is the one stored.
        assert_eq!(stored_uid(&store, "b").await, Some(out[0].0.clone()));
        assert_eq!(stored_uid(&store, "a").await, Some(out[1].0.clone()));
        let b = store.task_get("acme", "q", "b").await.unwrap();
        assert_eq!(b.target.body, Some((BodyForm::Base64, vec![0, 159, 255])));
        assert_eq!(
            store.task_get("acme", "q", "a").await.unwrap().target.body,
            None
        );
    }

    /// A batch of one row takes the one-row statement: the row is counted
    /// in its queue's pending tasks and stored bytes as a many-row batch's
    /// are, a grouped one marks its queue ordered in the same statement,
    /// and a taken ID or a missing queue inserts and counts nothing; a
    /// taken ID is answered from the statement's own read.
    #[tokio::test]
    async fn a_lone_row_is_inserted_counted_and_marks_its_queue() {
        let (store, _db) = store().await;
        let counts = async || {
            let client = store.pool.get().await.unwrap();
            let r = client
                .query_one(
                    "SELECT CAST(COALESCE(sum(n), 0) AS BIGINT), \
                     CAST(COALESCE(sum(bytes), 0) AS BIGINT), \
                     (SELECT ordered FROM queues WHERE org = 'acme' AND name = 'q') \
                     FROM task_counts WHERE org = 'acme' AND queue = 'q' AND status = 'pending'",
                    &[],
                )
                .await
                .unwrap();
            (r.get::<_, i64>(0), r.get::<_, i64>(1), r.get::<_, i64>(2))
        };
        let lone = row("q", "a", Some(vec![1, 2, 3]));
        let size = (lone.target.len() + 3) as i64;
        let out = run_batch(&store.pool, vec![lone]).await;
        assert!(matches!(out[0].1, Outcome::Inserted), "{out:?}");
        assert_eq!(counts().await, (1, size, 0));
        let out = run_batch(&store.pool, vec![row("q", "a", None)]).await;
        assert!(matches!(out[0].1, Outcome::Exists(_)), "{out:?}");
        let out = run_batch(&store.pool, vec![row("nope", "b", None)]).await;
        assert!(matches!(out[0].1, Outcome::NotInserted), "{out:?}");
        assert_eq!(counts().await, (1, size, 0));
        let mut grouped = row("q", "c", None);
        grouped.group_key = "g".into();
        let grouped_size = grouped.target.len() as i64;
        let out = run_batch(&store.pool, vec![grouped]).await;
        assert!(matches!(out[0].1, Outcome::Inserted), "{out:?}");
        assert_eq!(counts().await, (2, size + grouped_size, 1));
        let stats = store.queue_stats("acme", "q").await.unwrap();
        assert_eq!(stats.scheduled + stats.queued, 2);
        // A lone duplicate is answered by its own statement: with the
        // connections closed once it has run, it still gets its 409.
        let (reply, answer) = oneshot::channel();
        let mut batch = vec![Job {
            row: row("q", "a", None),
            reply,
        }];
        insert_batch(&store.pool, &mut batch).await;
        store.pool.close();
        match answer.await.unwrap() {
            Outcome::Exists(s) => assert_eq!(s.task_id, "a"),
            other => panic!("{other:?}"),
        }
    }

    /// A later row of an ID the batch inserted is answered from the row
    /// that won, and a row that met a task committed before the batch from
    /// that task as the statement read it: with the connections closed
    /// once the statement has run, both still get their 409s, and only a
    /// row whose queue is missing waits for the read that then fails.
    #[tokio::test]
    async fn a_later_row_of_an_id_the_batch_inserted_needs_no_read() {
        let (store, _db) = store().await;
        run_batch(&store.pool, vec![row("q", "taken", None)]).await;
        let mut winner = row("q", "a", None);
        winner.created_at = 5;
        winner.schedule_time = 9;
        let mut later = row("q", "a", None);
        later.created_at = 7;
        // A task due at its creation, met by a create that read the clock
        // before the one that won: queued, not scheduled.
        let mut due = row("q", "b", None);
        (due.created_at, due.schedule_time) = (8, 8);
        let mut early = row("q", "b", None);
        early.created_at = 6;
        let rows = vec![
            winner,
            later,
            due,
            early,
            row("q", "taken", None),
            row("nope", "c", None),
        ];
        let mut answers = Vec::new();
        let mut batch = Vec::new();
        for row in rows {
            let (reply, answer) = oneshot::channel();
            answers.push(answer);
            batch.push(Job { row, reply });
        }
        insert_batch(&store.pool, &mut batch).await;
        // The test's runtime has one thread: the spawned read has not run.
        store.pool.close();
        let mut out = Vec::new();
        for answer in answers {
            out.push(answer.await.unwrap());
        }
        assert!(matches!(out[0], Outcome::Inserted), "{out:?}");
        match &out[1] {
            Outcome::Exists(s) => {
                assert_eq!(s.task_id, "a");
                assert_eq!(s.state, idem_core::task::TaskState::Scheduled);
                assert_eq!(s.created_at, from_micros(5));
                assert_eq!(s.finished_at, None);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(out[2], Outcome::Inserted), "{out:?}");
        match &out[3] {
            Outcome::Exists(s) => {
                assert_eq!(s.state, idem_core::task::TaskState::Queued);
                assert_eq!(s.created_at, from_micros(8));
            }
            other => panic!("{other:?}"),
        }
        match &out[4] {
            Outcome::Exists(s) => assert_eq!(s.task_id, "taken"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(out[5], Outcome::NotInserted), "{out:?}");
    }

    /// Through the store's own batcher and its connections.
    #[tokio::test]
    async fn the_batcher_inserts_and_reports_conflicts() {
        let (store, _db) = store().await;
        let first = row("q", "a", Some(vec![1, 2]));
        let uid = first.uid.clone();
        assert!(matches!(
            store.batcher.insert(first).await,
            Ok(Outcome::Inserted)
        ));
        assert_eq!(stored_uid(&store, "a").await, Some(uid));
        assert!(matches!(
            store.batcher.insert(row("q", "a", None)).await,
            Ok(Outcome::Exists(_))
        ));
        assert!(matches!(
            store.batcher.insert(row("nope", "a", None)).await,
            Ok(Outcome::NotInserted)
        ));
    }

    fn keyed(mut row: Row, key: &str) -> Row {
        row.key = Some(RowKey {
            principal: "admin".into(),
            key: key.into(),
            fingerprint: "fp".into(),
            token: uuid::Uuid::now_v7().simple().to_string(),
            status: 201,
            resource_kind: "task",
            resource_id: format!("{}/{}", row.queue, row.task_id),
            expires_at: i64::MAX,
        });
        row
    }

    async fn record_of(store: &PostgresStore, key: &str) -> Option<String> {
        let client = store.pool.get().await.unwrap();
        client
            .query_opt(
                "SELECT resource_id FROM idempotency_keys WHERE key = $1",
                &[&key],
            )
            .await
            .unwrap()
            .map(|r| r.get(0))
    }

    /// Keyed rows beside keyless ones: a record per created task, none for
    /// a row whose ID was taken or whose queue is missing; of two rows with
    /// one key, the first is created and the second finds its record.
    #[tokio::test]
    async fn keyed_rows_insert_their_records_with_their_tasks() {
        let (store, _db) = store().await;
        run_batch(&store.pool, vec![row("q", "taken", None)]).await;
        let out = run_batch(
            &store.pool,
            vec![
                keyed(row("q", "a", None), "ka"),
                row("q", "b", None),
                keyed(row("q", "taken", None), "kt"),
                keyed(row("nope", "c", None), "kc"),
                keyed(row("q", "d", None), "ka"),
            ],
        )
        .await;
        let kinds: Vec<&str> = out
            .iter()
            .map(|(_, o)| match o {
                Outcome::Inserted => "inserted",
                Outcome::Exists(_) => "exists",
                Outcome::Held(r) => {
                    assert_eq!(r.resource_id.as_deref(), Some("q/a"));
                    "held"
                }
                Outcome::NotInserted => "not",
                Outcome::Failed => "failed",
            })
            .collect();
        assert_eq!(kinds, ["inserted", "inserted", "exists", "not", "held"]);
        assert_eq!(record_of(&store, "ka").await.as_deref(), Some("q/a"));
        for key in ["kt", "kc"] {
            assert_eq!(record_of(&store, key).await, None, "{key}");
        }
        assert_eq!(stored_uid(&store, "d").await, None);
    }

    /// A key whose record holds it is answered from the record without
    /// locking it, beside a row that goes in: the conflict clause would
    /// lock the record it keeps, which is a write.
    #[tokio::test]
    async fn a_held_key_is_answered_without_locking_its_record() {
        let (store, _db) = store().await;
        run_batch(&store.pool, vec![keyed(row("q", "a", None), "ka")]).await;
        assert_eq!(record_xmax(&store, "ka").await, "0");
        let out = run_batch(
            &store.pool,
            vec![keyed(row("q", "b", None), "ka"), row("q", "c", None)],
        )
        .await;
        assert!(
            matches!(&out[0].1, Outcome::Held(r) if r.resource_id.as_deref() == Some("q/a")),
            "{out:?}"
        );
        assert!(matches!(out[1].1, Outcome::Inserted), "{out:?}");
        assert_eq!(record_xmax(&store, "ka").await, "0");
        assert_eq!(stored_uid(&store, "b").await, None);
    }

    /// A keyed row whose ID a concurrent transaction takes after the
    /// statement's snapshot would leave a record without its task: the
    /// statement fails instead, writing nothing, and runs again without
    /// that row, which is answered from the task that took its ID.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_keyed_row_that_loses_its_id_to_a_concurrent_create_is_answered_from_its_task() {
        let (store, _db) = store().await;
        let mut other = store.pool.get().await.unwrap();
        let tx = other.transaction().await.unwrap();
        let first = row("q", "x", None);
        tx.execute(
            super::super::tasks::SQL_INSERT_TASK_IF_QUEUE,
            &super::super::params(&first.new_task().args()),
        )
        .await
        .unwrap();
        let pool = store.pool.clone();
        let beside = row("q", "y", None);
        let beside_uid = beside.uid.clone();
        let batch = tokio::spawn(async move {
            run_batch(&pool, vec![keyed(row("q", "x", None), "kx"), beside]).await
        });
        // The batch's statement has taken its snapshot and waits for the
        // row the transaction inserted.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        tx.commit().await.unwrap();
        let out = batch.await.unwrap();
        assert!(
            matches!(&out[0].1, Outcome::Exists(summary) if summary.task_id == "x"),
            "{out:?}"
        );
        assert!(matches!(out[1].1, Outcome::Inserted), "{out:?}");
        assert_eq!(record_of(&store, "kx").await, None);
        assert_eq!(stored_uid(&store, "y").await, Some(beside_uid));
        assert_eq!(stored_uid(&store, "x").await, Some(first.uid));
    }

    #[tokio::test]
    async fn a_failed_statement_is_reported_to_every_row() {
        let (store, _db) = store().await;
        let mut bad = row("q", "bad", None);
        bad.target = "\u{0}".into();
        let out = run_batch(&store.pool, vec![row("q", "good", None), bad]).await;
        assert!(out.iter().all(|(_, o)| matches!(o, Outcome::Failed)));
        assert_eq!(stored_uid(&store, "good").await, None);
    }

    fn create(task_id: &str) -> TaskCreate {
        TaskCreate {
            target: Target {
                url: "http://127.0.0.1:9/".into(),
                method: "POST".into(),
                headers: BTreeMap::new(),
                body: None,
                oidc: None,
                secret_headers: Vec::new(),
                trace: None,
            },
            ..TaskCreate::example("acme", "q", task_id)
        }
    }

    /// A row PostgreSQL refuses fails its batch; the others of that batch
    /// are then created on the transactional path, the bad one alone fails.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bad_row_fails_alone() {
        let (store, _db) = store().await;
        let runs: Vec<_> = (0..64)
            .map(|i| {
                let store = store.clone();
                // PostgreSQL text cannot hold NUL.
                let id = if i == 17 {
                    "t\u{0}".into()
                } else {
                    format!("t{i}")
                };
                let req = create(&id);
                tokio::spawn(async move { store.task_create(req).await })
            })
            .collect();
        for (i, r) in runs.into_iter().enumerate() {
            let r = r.await.unwrap();
            assert_eq!(r.is_err(), i == 17, "{i}: {r:?}");
        }
    }
}
