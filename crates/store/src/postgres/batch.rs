//! Group commit for task creates without an Idempotency-Key.
//!
//! With `synchronous_commit = on` every commit waits for the WAL to reach
//! the disk, so one statement per create caps creates at the commit rate.
//! Here concurrent creates hand their resolved rows to a few batcher tasks;
//! a batcher takes whatever is waiting (a lone create goes out at once: there
//! is no timer), inserts it all with one multi-row statement — one commit —
//! and only then answers each caller.
//!
//! A row that was not inserted has its ID taken (maybe by an earlier row of
//! the same batch, which then won as if it had come first) or its queue
//! missing. The batcher reads the rows holding those IDs, again one
//! statement for the batch: an ID held by a live task or a tombstone inside
//! its window is answered 409 from it, as the transactional path would; any
//! other case (no row: a missing queue, or a row deleted since; an expired
//! tombstone to replace) goes down the transactional path.

use crate::Error;
use crate::records::{Task, TaskSummary};
use crate::sql as rows;
use crate::tables::tasks;
use deadpool_postgres::{GenericClient, Object, Pool};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::types::ToSql;

/// Most rows per statement: bounds the latency the first one waits for.
const MAX_BATCH: usize = 256;

/// A batch takes no more rows once its rows hold this many bytes, so that
/// large bodies do not make one huge statement.
const MAX_BATCH_BYTES: usize = 4 << 20;

/// Batcher tasks, each running one statement at a time on a connection of
/// the batchers' own pool: while one waits for its commit to be flushed,
/// the next collects the creates that arrive meanwhile.
pub(super) const BATCHERS: usize = 2;

/// The columns of [`super::tasks::SQL_INSERT_TASK_IF_QUEUE`] for many rows: one
/// array parameter per column, rows in array order. Each row is inserted
/// only if its queue exists (`FOR KEY SHARE`, as the one-row statement) and
/// its ID is free; `RETURNING uid` names the rows that were.
const SQL_INSERT_TASKS: &str = "INSERT INTO tasks (org, queue, task_id, uid, status, \
     target, body_form, body, schedule_time, next_attempt_at, dispatch_deadline_s, retry_config, \
     attempt_count, cancel_requested, created_at) \
     SELECT v.org, v.queue, v.task_id, v.uid, 'pending', v.target, v.body_form, v.body, \
     v.schedule_time, v.schedule_time, v.dispatch_deadline_s, v.retry_config, 0, 0, v.created_at \
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
     $7::bytea[], $8::bigint[], $9::bigint[], $10::text[], $11::bigint[]) WITH ORDINALITY \
     AS v(org, queue, task_id, uid, target, body_form, body, schedule_time, \
     dispatch_deadline_s, retry_config, created_at, ord) \
     WHERE EXISTS (SELECT 1 FROM queues q WHERE q.org = v.org AND q.name = v.queue FOR KEY SHARE) \
     ORDER BY v.ord \
     ON CONFLICT (org, queue, task_id) DO NOTHING RETURNING uid";

/// The tasks holding the IDs of the rows that were not inserted: one
/// primary key lookup per ID, whatever the statistics say. The subquery
/// cannot be flattened (`LIMIT`), so the plan is a nested loop over the IDs,
/// never a scan of the table (a cached plan made while the table was small
/// would otherwise go on scanning it as it grows).
fn sql_existing() -> String {
    format!(
        "SELECT t.* FROM unnest($1::text[], $2::text[], $3::text[]) AS k(org, queue, task_id) \
         CROSS JOIN LATERAL (SELECT {}, t.org FROM tasks t WHERE t.org = k.org \
         AND t.queue = k.queue AND t.task_id = k.task_id LIMIT 1) t",
        rows::task_columns_of("t")
    )
}

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
        }
    }

    fn id(&self) -> (&str, &str, &str) {
        (&self.org, &self.queue, &self.task_id)
    }

    fn size(&self) -> usize {
        self.target.len() + self.body.as_ref().map_or(0, Vec::len) + self.retry_config.len()
    }

    /// The parameters of the one-row statements ($1–$11), as
    /// `tables::tasks::insert_args` orders them.
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 11] {
        [
            &self.org,
            &self.queue,
            &self.task_id,
            &self.uid,
            &self.target,
            &self.body_form,
            &self.body,
            &self.schedule_time,
            &self.dispatch_deadline_s,
            &self.retry_config,
            &self.created_at,
        ]
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

/// The senders' side; the batchers stop when the last clone is dropped.
#[derive(Clone)]
pub(super) struct Batcher {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Batcher {
    /// Starts the batcher tasks on the current tokio runtime; `pool` is
    /// theirs alone, [`BATCHERS`] connections.
    pub(super) fn start(pool: Pool) -> Batcher {
        let (tx, rx) = mpsc::unbounded_channel();
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..BATCHERS {
            tokio::spawn(run(pool.clone(), rx.clone()));
        }
        Batcher { jobs: tx }
    }

    /// Inserts `row` in the next batch and tells what became of it once
    /// that batch's statement has finished; gives the row back when the
    /// batchers are gone (their runtime shut down) and never saw it.
    pub(super) async fn insert(&self, row: Row) -> Result<Outcome, Row> {
        let (reply, answer) = oneshot::channel();
        if let Err(mpsc::error::SendError(job)) = self.jobs.send(Job { row, reply }) {
            return Err(job.row);
        }
        // Dropped mid-batch: whether the statement committed is unknown.
        Ok(answer.await.unwrap_or(Outcome::Failed))
    }
}

async fn run(pool: Pool, jobs: Arc<Mutex<mpsc::UnboundedReceiver<Job>>>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        // The lock is held only while collecting: a batcher waiting for its
        // commit leaves the arriving creates to the next one. No waiting
        // once one job is in: the batch is whatever is queued right now.
        {
            let mut jobs = jobs.lock().await;
            let Some(first) = jobs.recv().await else {
                return;
            };
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
    // they had come one after the other.
    batch.sort_by(|a, b| a.row.id().cmp(&b.row.id()));
    let mut rows: Vec<&Row> = batch.iter().map(|j| &j.row).collect();
    rows.dedup_by(|later, earlier| later.id() == earlier.id());
    let result = match pool.get().await {
        Ok(client) => insert(&client, &rows).await.map(|i| (client, i)),
        Err(e) => Err(e.into()),
    };
    let (client, inserted) = match result {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, rows = rows.len(), "batched task insert failed");
            for job in batch.drain(..) {
                let _ = job.reply.send(Outcome::Failed);
            }
            return;
        }
    };
    // The inserted rows are durable: answer them before looking at the rest.
    let mut rest = Vec::new();
    for job in batch.drain(..) {
        if inserted.contains(&job.row.uid) {
            let _ = job.reply.send(Outcome::Inserted);
        } else {
            rest.push(job);
        }
    }
    if rest.is_empty() {
        return;
    }
    let existing = existing(&client, &rest).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "reading the tasks of conflicting creates failed");
        HashMap::new()
    });
    for job in rest {
        let now = job.row.created_at;
        let r = &job.row;
        let id = (r.org.clone(), r.queue.clone(), r.task_id.clone());
        let outcome = match existing.get(&id) {
            Some(t) if !tasks::tombstone_expired(t, now) => {
                Outcome::Exists(Box::new(tasks::summary(t, now)))
            }
            _ => Outcome::NotInserted,
        };
        let _ = job.reply.send(outcome);
    }
}

/// Runs [`SQL_INSERT_TASKS`]: the uids of the rows inserted.
pub(super) async fn insert<C: GenericClient>(
    client: &C,
    rows: &[&Row],
) -> Result<HashSet<String>, Error> {
    let org: Vec<&str> = rows.iter().map(|r| r.org.as_str()).collect();
    let queue: Vec<&str> = rows.iter().map(|r| r.queue.as_str()).collect();
    let task_id: Vec<&str> = rows.iter().map(|r| r.task_id.as_str()).collect();
    let uid: Vec<&str> = rows.iter().map(|r| r.uid.as_str()).collect();
    let target: Vec<&str> = rows.iter().map(|r| r.target.as_str()).collect();
    let body_form: Vec<Option<&str>> = rows.iter().map(|r| r.body_form).collect();
    let body: Vec<Option<&[u8]>> = rows.iter().map(|r| r.body.as_deref()).collect();
    let schedule_time: Vec<i64> = rows.iter().map(|r| r.schedule_time).collect();
    let deadline: Vec<i64> = rows.iter().map(|r| r.dispatch_deadline_s).collect();
    let retry_config: Vec<&str> = rows.iter().map(|r| r.retry_config.as_str()).collect();
    let created_at: Vec<i64> = rows.iter().map(|r| r.created_at).collect();
    let stmt = client.prepare_cached(SQL_INSERT_TASKS).await?;
    let inserted = client
        .query(
            &stmt,
            &[
                &org,
                &queue,
                &task_id,
                &uid,
                &target,
                &body_form,
                &body,
                &schedule_time,
                &deadline,
                &retry_config,
                &created_at,
            ],
        )
        .await?;
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
    let stmt = client.prepare_cached(&sql_existing()).await?;
    let found = client.query(&stmt, &[&org, &queue, &task_id]).await?;
    found
        .iter()
        .map(|r| {
            let task = rows::task(r)?;
            let org: String = r.try_get(rows::TASK_COLUMN_COUNT)?;
            Ok(((org, task.queue.clone(), task.task_id.clone()), task))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use crate::postgres::PostgresStore;
    use crate::records::TaskCreate;
    use idem_core::queue::{QueueConfig, RetryConfigPatch};
    use idem_core::task::{BodyForm, Target};
    use idem_core::{Clock, ManualClock};
    use idem_testkit::TestDatabase;
    use std::collections::BTreeMap;

    async fn store() -> (PostgresStore, TestDatabase) {
        let db = TestDatabase::create().await;
        let clock = ManualClock::new("2026-10-16T12:00:00Z".parse().unwrap());
        let store = PostgresStore::open(&db.url, 8, Arc::new(clock) as Arc<dyn Clock>)
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

    /// Through the store's own batchers and their connections.
    #[tokio::test]
    async fn the_batchers_insert_and_report_conflicts() {
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
            header_style: None,
            org: "acme".into(),
            queue: "q".into(),
            task_id: task_id.into(),
            target: Target {
                url: "http://127.0.0.1:9/".into(),
                method: "POST".into(),
                headers: BTreeMap::new(),
                body: None,
                oidc: None,
            },
            schedule_time: None,
            dispatch_deadline_s: None,
            retry_config: RetryConfigPatch::default(),
            completion: None,
            pull: false,
            tag: None,
            callbacks: Default::default(),
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
