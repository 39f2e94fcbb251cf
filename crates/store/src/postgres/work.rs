//! Group commit for the ends of pull tasks (completions and failures).
//!
//! One transaction per end costs the database several statements and a
//! commit flushed to disk for every task a worker finishes. Ends instead go
//! to a finisher task (one of a few: chosen by the task's name, or for the
//! ends a worker reports together, one for all of them), which takes
//! whatever is waiting (a lone end goes out at once: there is no timer) and
//! settles it with a fixed number of statements: the tasks locked and read
//! in one, their running rows in another, every end checked and decided in
//! memory (an end whose lease is gone answers its error and writes
//! nothing), the ends that hold written with one statement for the tasks
//! and one for their attempts, and one commit before anyone is answered.
//!
//! An end that names a task already in the batch (a worker's retry) waits
//! for the next batch, so that it sees the first end's effect. An end whose
//! task is missing or not a pull task, and every end of a batch whose
//! statement failed, goes down the transactional path, which answers it on
//! its own.

use super::dispatch::{notify_finished, write_ends};
use super::{Pg, PostgresStore};
use crate::dispatch::{TaskFinished, WorkDone};
use crate::events::EventRenderer;
use crate::records::{Task, WorkAction, WorkClaim};
use crate::tables::dispatch::{NextState, RUNNING_ROW, RunningRow, running_row};
use crate::tables::work::{self, DecidedEnd, Decision, WorkEnd};
use crate::task_row::{self, task_columns};
use crate::{Error, Result};
use deadpool_postgres::{GenericClient, Pool};
use futures_util::future::{join_all, try_join_all};
use idem_core::Clock;
use idem_core::clock::to_micros;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Most ends per transaction: bounds the latency the first one waits for.
const MAX_BATCH: usize = 128;

/// Finisher tasks, each settling its share of the tasks (by a hash of the
/// task's name) one batch at a time on a connection of the pool. A batch's
/// statements run one after another on its connection; several finishers
/// keep more than one of the server's cores busy, and the count rows they
/// change are each backend's own.
const FINISHERS: usize = 4;

type Ended = WorkDone;

struct Job {
    org: String,
    queue: String,
    task_id: String,
    end: WorkEnd,
    reply: oneshot::Sender<Reply>,
}

enum Reply {
    Done(Box<Result<Ended>>),
    /// The batch could not settle it: down the transactional path.
    Alone(WorkEnd),
}

/// The senders' side; the finishers stop when the last clone is dropped.
#[derive(Clone)]
pub(super) struct Finisher {
    shards: Arc<[mpsc::UnboundedSender<Job>]>,
}

impl Finisher {
    /// Starts [`FINISHERS`] finisher tasks on the current tokio runtime.
    pub(super) fn start(
        pool: Pool,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventRenderer>,
    ) -> Finisher {
        let shards = (0..FINISHERS)
            .map(|_| {
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(run(pool.clone(), clock.clone(), events.clone(), rx));
                tx
            })
            .collect();
        Finisher { shards }
    }

    /// The finisher of a task. Two batches lock their tasks in one order
    /// (by queue, then ID), so that two finishers holding ends of one task
    /// (a retried end, or one sent alone and again in a call) wait on each
    /// other but cannot deadlock.
    fn shard(&self, org: &str, queue: &str, task_id: &str) -> &mpsc::UnboundedSender<Job> {
        let mut h = std::hash::DefaultHasher::new();
        (org, queue, task_id).hash(&mut h);
        &self.shards[(h.finish() % self.shards.len() as u64) as usize]
    }
}

impl PostgresStore {
    /// A claim, gathered with the concurrent claims of its line (see
    /// `pull_lines.rs`).
    pub(super) async fn claim_work(&self, claim: WorkClaim) -> Result<Vec<Task>> {
        let store = self.clone();
        self.claims
            .claim(claim, move |c| {
                let store = store.clone();
                async move { store.claim_alone(c).await }
            })
            .await
    }

    /// A claim in a transaction of its own.
    pub(super) async fn claim_alone(&self, claim: WorkClaim) -> Result<Vec<Task>> {
        let ordered = self.ordered_queues.clone();
        self.write(None, async move |c, now, _| {
            work::claim(c, &claim, now, &ordered).await
        })
        .await
    }

    /// One action on a pull task: ends through the finisher, the rest (and
    /// what a batch could not settle) in a transaction of their own.
    pub(super) async fn work_action(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        action: WorkAction,
    ) -> Result<Ended> {
        let shard = self.finisher.shard(org, queue, task_id);
        self.work_action_on(shard, org, queue, task_id, action)
            .await
    }

    /// The ends of one call go to one finisher, which takes them in one
    /// batch when it can: a finisher per task would split them into as
    /// many batches, each with its statements and commit.
    pub(super) async fn work_ends(
        &self,
        org: &str,
        queue: &str,
        ends: Vec<(String, WorkAction)>,
    ) -> Vec<Result<Ended>> {
        let Some((first, _)) = ends.first() else {
            return Vec::new();
        };
        let shard = self.finisher.shard(org, queue, first);
        join_all(ends.into_iter().map(|(task_id, action)| async move {
            self.work_action_on(shard, org, queue, &task_id, action)
                .await
        }))
        .await
    }

    async fn work_action_on(
        &self,
        shard: &mpsc::UnboundedSender<Job>,
        org: &str,
        queue: &str,
        task_id: &str,
        action: WorkAction,
    ) -> Result<Ended> {
        let (o, q, t) = (org.to_string(), queue.to_string(), task_id.to_string());
        match WorkEnd::of(action) {
            Ok(report) => match finish(shard, org, queue, task_id, report).await {
                Reply::Done(done) => *done,
                Reply::Alone(report) => {
                    self.write(None, async move |c, now, _| {
                        work::end(c, &o, &q, &t, report, now, &*self.events).await
                    })
                    .await
                }
            },
            Err(action) => {
                self.write(None, async move |c, now, _| {
                    work::act(c, &o, &q, &t, action, now, &*self.events).await
                })
                .await
            }
        }
    }
}

/// Hands an end to a finisher and waits for its answer.
async fn finish(
    shard: &mpsc::UnboundedSender<Job>,
    org: &str,
    queue: &str,
    task_id: &str,
    end: WorkEnd,
) -> Reply {
    let (reply, answer) = oneshot::channel();
    let job = Job {
        org: org.to_string(),
        queue: queue.to_string(),
        task_id: task_id.to_string(),
        end,
        reply,
    };
    if let Err(mpsc::error::SendError(job)) = shard.send(job) {
        return Reply::Alone(job.end);
    }
    // Dropped mid-batch (the runtime shutting down): whether the batch
    // committed is unknown, and so is the answer.
    answer.await.unwrap_or_else(|_| {
        Reply::Done(Box::new(Err(Error::Unavailable(
            "the server stopped while the end was being committed".into(),
        ))))
    })
}

async fn run(
    pool: Pool,
    clock: Arc<dyn Clock>,
    events: Arc<dyn EventRenderer>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
) {
    let mut later: VecDeque<Job> = VecDeque::new();
    loop {
        let first = match later.pop_front() {
            Some(job) => job,
            None => match jobs.recv().await {
                Some(job) => job,
                None => return,
            },
        };
        let mut tasks = HashSet::new();
        tasks.insert(first.task());
        let mut batch = vec![first];
        let mut deferred = VecDeque::new();
        while batch.len() < MAX_BATCH {
            let Some(job) = later.pop_front().or_else(|| jobs.try_recv().ok()) else {
                break;
            };
            if tasks.insert(job.task()) {
                batch.push(job);
            } else {
                deferred.push_back(job);
            }
        }
        deferred.extend(later.drain(..));
        later = deferred;
        settle(&pool, to_micros(clock.now()), &*events, batch).await;
    }
}

impl Job {
    fn task(&self) -> (String, String, String) {
        (self.org.clone(), self.queue.clone(), self.task_id.clone())
    }
}

/// Settles `batch` in one transaction and answers each job.
async fn settle(pool: &Pool, now: i64, events: &dyn EventRenderer, batch: Vec<Job>) {
    match settle_all(pool, now, events, &batch).await {
        Ok(answers) => {
            for (job, answer) in batch.into_iter().zip(answers) {
                let _ = job.reply.send(match answer {
                    Some(done) => Reply::Done(Box::new(done)),
                    None => Reply::Alone(job.end),
                });
            }
        }
        Err(Failed::Statement(e)) => {
            tracing::debug!(error = %e, "a batch of task ends failed; settling them one by one");
            for job in batch {
                let _ = job.reply.send(Reply::Alone(job.end));
            }
        }
        Err(Failed::Commit(e)) => {
            let message = e.to_string();
            for job in batch {
                let _ = job.reply.send(Reply::Done(Box::new(Err(Error::Unavailable(
                    message.clone(),
                )))));
            }
        }
    }
}

enum Failed {
    /// Before the commit: nothing was written.
    Statement(Error),
    /// At the commit: whether it was written is unknown.
    Commit(Error),
}

/// Tasks of one queue by ID, locked: one probe of the primary key per ID.
/// `task_id = ANY($3)` could be planned as a walk of the queue's whole
/// range of the key with the IDs as a filter (so it was, on statistics
/// taken while the queue was small); a LATERAL subquery with a LIMIT is
/// never flattened, so each ID stays a lookup of the full key.
const SQL_LOCK_TASKS: &str = concat!(
    "SELECT t.* FROM unnest($3::text[]) AS v(task_id) CROSS JOIN LATERAL (SELECT ",
    task_columns!(),
    " FROM tasks WHERE org = $1 AND queue = $2 AND task_id = v.task_id LIMIT 1 FOR UPDATE) t"
);

/// The ends' answers, in order, once committed (`None`: the end goes down
/// the transactional path, which tells a missing task or a push queue's).
async fn settle_all(
    pool: &Pool,
    now: i64,
    events: &dyn EventRenderer,
    batch: &[Job],
) -> std::result::Result<Vec<Option<Result<Ended>>>, Failed> {
    let mut client = pool.get().await.map_err(|e| Failed::Statement(e.into()))?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| Failed::Statement(e.into()))?;
    let c = Pg(&tx);
    let written = decide_and_write(&c, now, events, batch)
        .await
        .map_err(Failed::Statement)?;
    tx.commit().await.map_err(|e| Failed::Commit(e.into()))?;
    Ok(written)
}

/// Every statement of a batch: the tasks locked and read, their running
/// rows, and the ends that hold written — a fixed number of statements
/// whatever the batch's size.
async fn decide_and_write<C: GenericClient>(
    c: &Pg<'_, C>,
    now: i64,
    events: &dyn EventRenderer,
    batch: &[Job],
) -> Result<Vec<Option<Result<Ended>>>> {
    // One statement per queue in the batch (most batches are one queue's),
    // pipelined.
    let mut by_queue: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for j in batch {
        by_queue
            .entry((&j.org, &j.queue))
            .or_default()
            .push(&j.task_id);
    }
    // Locked in one order by every batch (see `Finisher::shard`).
    for ids in by_queue.values_mut() {
        ids.sort_unstable();
    }
    let lock = c.0.prepare_cached(SQL_LOCK_TASKS).await?;
    let locked = try_join_all(by_queue.iter().map(|((org, queue), ids)| async {
        let found = c.0.query(&lock, &[org, queue, ids]).await?;
        Ok::<_, Error>((*org, found))
    }))
    .await?;
    let mut tasks: HashMap<(String, String, String), Task> = HashMap::new();
    for (org, found) in locked {
        for r in found {
            let task = task_row::read(&r)?;
            tasks.insert(
                (org.to_string(), task.queue.clone(), task.task_id.clone()),
                task,
            );
        }
    }
    let uids: Vec<&str> = tasks.values().map(|t| t.uid.as_str()).collect();
    let stmt =
        c.0.prepare_cached(&format!("{} WHERE t.uid = ANY($1)", RUNNING_ROW[1]))
            .await?;
    let mut running: HashMap<String, RunningRow> = HashMap::new();
    for r in c.0.query(&stmt, &[&uids]).await? {
        let row = running_row(&r)?;
        running.insert(row.uid.clone(), row);
    }

    let mut answers: Vec<Option<Result<Ended>>> = Vec::with_capacity(batch.len());
    let mut decided: Vec<(usize, DecidedEnd)> = Vec::new();
    for (i, job) in batch.iter().enumerate() {
        let id = (job.org.clone(), job.queue.clone(), job.task_id.clone());
        let found = tasks
            .remove(&id)
            .filter(|t| t.is_pull())
            .and_then(|t| Some((running.remove(&t.uid)?, t)));
        let Some((row, task)) = found else {
            answers.push(None);
            continue;
        };
        match work::decide_end_of(&task, row, job.end.clone(), now) {
            Ok(Decision::Write(end)) => {
                decided.push((i, *end));
                answers.push(None);
            }
            Ok(Decision::Replay) => answers.push(Some(Ok(WorkDone {
                task,
                finished: None,
                replayed: true,
            }))),
            Err(e) => answers.push(Some(Err(e))),
        }
    }
    if decided.is_empty() {
        return Ok(answers);
    }

    let ends: Vec<(&RunningRow, &NextState)> =
        decided.iter().map(|(_, e)| (&e.row, &e.next)).collect();
    let mut now_tasks: HashMap<String, Task> = HashMap::new();
    for r in write_ends(c, now, &ends, true, events).await? {
        let task = task_row::read(&r)?;
        now_tasks.insert(task.uid.clone(), task);
    }
    // The final states wake the nodes' waiters once committed.
    let finals: Vec<TaskFinished> = ends
        .iter()
        .map(|(row, next)| row.finished(next.status))
        .collect();
    let announced: Vec<&TaskFinished> = finals.iter().filter(|f| f.is_final()).collect();
    notify_finished(c.0, &announced).await?;
    for ((i, end), finished) in decided.iter().zip(finals) {
        let task = now_tasks.remove(&end.row.uid).ok_or_else(|| {
            Error::Internal(format!("task {} vanished while ending", end.row.uid))
        })?;
        answers[*i] = Some(Ok(WorkDone::new(
            task,
            finished.is_final().then_some(finished),
        )));
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::postgres::testing::{ORG, store_with_org, task};
    use crate::records::{Status, WorkAction, WorkClaim};
    use idem_core::queue::{QueueConfig, QueueMode};

    /// Ends that PostgreSQL refuses to write (text holding U+0000, which the
    /// API turns away before the store) arrive among many good ones: their
    /// batches' statements fail, every end of those batches is settled again
    /// on its own, and only the refused ones fail, their leases untouched.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_batch_settles_its_good_ends_one_by_one() {
        let (_db, store) = store_with_org().await;
        let pull = QueueConfig {
            mode: QueueMode::Pull,
            ..QueueConfig::default()
        };
        store.queue_create(ORG, "w", &pull, None).await.unwrap();
        for i in 0..96 {
            store
                .task_create(task("w", &format!("t{i}"), None, true))
                .await
                .unwrap();
        }
        let claimed = store
            .work_claim(WorkClaim {
                org: ORG.into(),
                queue: "w".into(),
                claimant: "alice".into(),
                max_tasks: 96,
                lease_s: 60,
                tag: None,
                attempts_kept: 100,
            })
            .await
            .unwrap();
        assert_eq!(claimed.len(), 96);
        // Every twelfth end is refused; they go last, so that each lands in
        // a batch behind good ends rather than alone at its head.
        let poisoned = |i: usize| i % 12 == 11;
        let mut order: Vec<usize> = (0..96).filter(|i| !poisoned(*i)).collect();
        order.extend((0..96).filter(|i| poisoned(*i)));
        let ends = order.into_iter().map(|i| {
            let task = &claimed[i];
            let attempt_id = task.lease.as_ref().unwrap().attempt_id.clone();
            let action = if poisoned(i) {
                WorkAction::Fail {
                    attempt_id,
                    error: "bad\0byte".into(),
                    person: false,
                    holder: None,
                }
            } else {
                WorkAction::Complete {
                    attempt_id,
                    result: Some(format!("{{\"i\":{i}}}")),
                    person: false,
                    holder: None,
                }
            };
            let (store, id) = (store.clone(), task.task_id.clone());
            tokio::spawn(async move { (i, store.work_act(ORG, "w", &id, action).await) })
        });
        for end in futures_util::future::join_all(ends).await {
            let (i, result) = end.unwrap();
            if poisoned(i) {
                assert!(result.is_err(), "t{i}: {result:?}");
            } else {
                let crate::dispatch::WorkDone { task, finished, .. } =
                    result.unwrap_or_else(|e| panic!("t{i}: {e:?}"));
                assert_eq!(task.status, Status::Succeeded);
                assert!(finished.is_some());
            }
        }
        for (i, before) in claimed.iter().enumerate() {
            let now = store.task_get(ORG, "w", &before.task_id).await.unwrap();
            if poisoned(i) {
                assert_eq!(now.status, Status::Running);
                assert_eq!(now.lease, before.lease);
            } else {
                assert_eq!(now.result, Some(format!("{{\"i\":{i}}}")));
            }
        }
        let stats = store.queue_stats(ORG, "w").await.unwrap();
        assert_eq!((stats.succeeded, stats.running), (88, 8));
    }
}
