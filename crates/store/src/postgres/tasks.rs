//! Task creates on PostgreSQL: one statement and one commit for the common
//! case. With the queue's configuration at hand (cached briefly), the
//! shared rules resolve the row once and the create joins a group commit
//! ([`batch`]); one that claims its Idempotency-Key brings its completed
//! record, which the batch's statement inserts with the task. Whatever that
//! statement cannot settle (a taken ID, a missing queue) goes to the shared
//! transactional create.

use super::{Pg, PostgresStore, batch};
use crate::idempotency::KeyCompletion;
use crate::records::*;
use crate::tables::stats::count_inserted;
use crate::tables::tasks::{BatchPlan, TaskInsert};
use crate::tables::{self, queues};
use crate::task_row::insert_new_task;
use crate::{Error, Result};
use idem_core::queue::{QueueConfig, QueueState};
use std::collections::HashMap;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// A task insert that checks its queue in the same statement: one round
/// trip and one commit for the common case. `FOR KEY SHARE` makes it wait
/// for a concurrent queue delete and then see the queue gone. The batcher
/// sends it for a batch of one keyless row ([`batch`]), and a create sends
/// it itself when the batcher is gone.
///
/// It answers one row, as [`batch::holder!`] says: a client repeating a
/// create it sent before gets its 409 without a second round trip.
macro_rules! insert_task_if_queue {
    ($returning:expr, $then:expr) => {
        count_inserted!(
            one: concat!(
                insert_new_task!(SELECT typed),
                " WHERE EXISTS (SELECT 1 FROM queues WHERE org = $1 AND name = $2 FOR KEY SHARE) \
                 ON CONFLICT (org, queue, task_id) DO NOTHING"
            ),
            $returning,
            concat!(
                $then,
                "SELECT h.*, (SELECT uid FROM ins), $1::text FROM (VALUES (1)) AS one (x) ",
                batch::holder!("$1", "$2", "$3", "NOT EXISTS (SELECT 1 FROM ins)")
            )
        )
    };
}
pub(super) const SQL_INSERT_TASK_IF_QUEUE: &str = insert_task_if_queue!(", uid", "");

/// [`SQL_INSERT_TASK_IF_QUEUE`] for a row with a group or a priority,
/// marking its queue ordered in the same statement (see
/// [`batch::mark_ordered!`]).
pub(super) const SQL_INSERT_TASK_IF_QUEUE_ORDERED: &str =
    insert_task_if_queue!(", uid, group_key, priority", batch::mark_ordered!());

/// (organization, queue) → configuration, state and when they were read.
pub(super) type QueueConfigCache = HashMap<(String, String), (QueueConfig, QueueState, Instant)>;

/// How long a node trusts a queue's configuration for resolving the retry
/// policy of new tasks; a PATCH reaches creates on other nodes within it.
const QUEUE_CONFIG_TTL: Duration = Duration::from_secs(1);

/// How a create ended on the fast path.
enum Fast {
    Created(Box<Task>),
    /// Down the transactional path, which handles conflicts and missing
    /// queues. `uid` is the row a failed batch may have committed after all
    /// (the connection broke after the commit): found there, it is this
    /// request's own task.
    Fallback {
        uid: Option<String>,
    },
}

impl PostgresStore {
    /// The one-statement create ([`Self::task_create_fast`]), or, for what
    /// it cannot settle, the shared create in a transaction of its own,
    /// which completes the Idempotency-Key record with it.
    pub(super) async fn create_task(&self, mut p: TaskCreate) -> Result<Task> {
        let now = self.now();
        let key = p.completion.take();
        let own_uid = match self.task_create_fast(&p, key.as_ref(), now).await? {
            Fast::Created(task) => return Ok(*task),
            Fast::Fallback { uid } => uid,
        };
        self.write_at(key, now, async |c, now, _| {
            // FOR KEY SHARE keeps the queue from being deleted under the
            // insert without blocking concurrent creates.
            let queue = queues::get(c, &p.org, &p.queue, "FOR KEY SHARE").await?;
            tables::tasks::create(c, &p, &queue.config, own_uid.as_deref(), now).await
        })
        .await
    }
}

impl PostgresStore {
    fn cache_queue(&self, org: &str, q: &Queue) {
        let mut cache = self.queue_configs.lock().expect("queue config cache");
        if cache.len() > 10_000 {
            cache.clear();
        }
        cache.insert(
            (org.to_string(), q.name.clone()),
            (q.config.clone(), q.state, Instant::now()),
        );
    }

    /// Whether the queue was paused when a create last read it, within the
    /// cache's second: another node's resume wakes every node itself.
    pub(super) fn queue_paused_hint(&self, org: &str, queue: &str) -> bool {
        self.queue_configs
            .lock()
            .expect("queue config cache")
            .get(&(org.to_string(), queue.to_string()))
            .is_some_and(|(_, state, at)| {
                *state == QueueState::Paused && at.elapsed() < QUEUE_CONFIG_TTL
            })
    }

    /// A batch in one transaction with a fixed number of statements, set
    /// based: the queue read under `FOR KEY SHARE` (it cannot go while the
    /// batch inserts), one multi-row insert of the first item of each ID,
    /// and one read of the tasks holding the IDs that were taken. Only an
    /// ID held by a tombstone past its window (replaced) or by a row gone
    /// since costs statements of its own.
    pub(super) async fn create_tasks(&self, mut batch: TaskBatch) -> Result<BatchCreated> {
        let key = batch.completion.take();
        let created = self
            .write(key, async |c, now, keyed| {
                let queue = queues::get(c, &batch.org, &batch.queue, "FOR KEY SHARE").await?;
                let items = create_many(c, &batch, &queue.config, now).await?;
                keyed.set_body(|| tables::tasks::batch_record(&items));
                Ok((items, queue))
            })
            .await;
        let (items, queue) = created?;
        self.cache_queue(&batch.org, &queue);
        Ok(BatchCreated {
            items,
            queue_paused: queue.state == QueueState::Paused,
        })
    }

    /// The queue's configuration from the cache, or read and cached; `None`
    /// when the queue is missing.
    async fn queue_config(&self, org: &str, queue: &str) -> Result<Option<QueueConfig>> {
        let id = (org.to_string(), queue.to_string());
        {
            let cache = self.queue_configs.lock().expect("queue config cache");
            if let Some((c, _, _)) = cache
                .get(&id)
                .filter(|(_, _, at)| at.elapsed() < QUEUE_CONFIG_TTL)
            {
                return Ok(Some(c.clone()));
            }
        }
        match self
            .read(async |c, _| queues::get(c, org, queue, "").await)
            .await
        {
            Ok(q) => {
                self.cache_queue(org, &q);
                Ok(Some(q.config))
            }
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates the task in one statement when its queue's configuration is
    /// at hand and its ID is free: the statement of a group commit
    /// ([`batch`]), which also inserts the record of a key the create
    /// claims.
    async fn task_create_fast(
        &self,
        p: &TaskCreate,
        key: Option<&KeyCompletion>,
        now: i64,
    ) -> Result<Fast> {
        let Some(config) = self.queue_config(&p.org, &p.queue).await? else {
            return Ok(Fast::Fallback { uid: None });
        };
        let mut ins = TaskInsert::resolve(p, &config, now)?;
        // A key whose lock was taken before the create completes it in the
        // transactional path; only a claimed key rides in the batch.
        if key.is_some_and(|k| !k.claim) {
            return Ok(Fast::Fallback { uid: None });
        }
        // The row takes the insert's column values; `task` below needs
        // none of those moved out.
        let row = batch::Row {
            org: p.org.clone(),
            queue: p.queue.clone(),
            task_id: p.task_id.clone(),
            uid: ins.uid.clone(),
            target: std::mem::take(&mut ins.target),
            body_form: ins.body_form,
            body: ins.body.take(),
            schedule_time: ins.schedule_time,
            dispatch_deadline_s: ins.dispatch_deadline_s,
            retry_config: std::mem::take(&mut ins.retry_config),
            created_at: now,
            tag: p.tag.clone(),
            group_key: p.group.clone().unwrap_or_default(),
            priority: p.priority,
            key: key.map(|k| batch::RowKey::of(k, now)),
        };
        Ok(match self.batcher.insert(row).await {
            Ok(batch::Outcome::Inserted) => Fast::Created(Box::new(ins.task(p, now))),
            Ok(batch::Outcome::Exists(summary)) => return Err(Error::TaskExists(summary)),
            Ok(batch::Outcome::Held(record)) => return Err(Error::KeyHeld(record)),
            Ok(batch::Outcome::NotInserted) => Fast::Fallback { uid: None },
            Ok(batch::Outcome::Failed) => Fast::Fallback { uid: Some(ins.uid) },
            // No batcher: a keyed create completes its record in the
            // transactional path.
            Err(row) if row.key.is_some() => Fast::Fallback { uid: None },
            // No batcher: a statement of its own.
            Err(row) => {
                let client = self.pool.get().await?;
                if batch::insert_one(&client, &row).await?.uids.is_empty() {
                    Fast::Fallback { uid: None }
                } else {
                    Fast::Created(Box::new(ins.task(p, now)))
                }
            }
        })
    }
}

/// The items of `batch`, created in the current transaction (see
/// [`PostgresStore::create_tasks`]).
async fn create_many<C: deadpool_postgres::GenericClient>(
    c: &Pg<'_, C>,
    batch: &TaskBatch,
    config: &QueueConfig,
    now: i64,
) -> Result<Vec<BatchItem>> {
    let (mut plan, mut resolved) = BatchPlan::new(batch, config, now)?;
    // One lock order for every batch and batcher: two inserting some of the
    // same IDs wait for each other in the same order and cannot deadlock.
    resolved.sort_by(|a, b| a.1.task_id.cmp(&b.1.task_id));
    let rows: Vec<batch::Row> = resolved
        .iter()
        .map(|(_, p, ins)| batch::Row::of(p, ins, now))
        .collect();
    let inserted = if rows.is_empty() {
        HashSet::new()
    } else {
        // Every row is of the batch's queue, which the caller locked.
        batch::insert_locked(c.0, &rows.iter().collect::<Vec<_>>()).await?
    };
    if resolved.iter().any(|(_, p, _)| tables::tasks::ordered(p)) {
        queues::mark_ordered(c, &batch.org, &batch.queue).await?;
    }
    let taken: Vec<(&str, &str, &str)> = resolved
        .iter()
        .filter(|(_, _, ins)| !inserted.contains(&ins.uid))
        .map(|(_, p, _)| (p.org.as_str(), p.queue.as_str(), p.task_id.as_str()))
        .collect();
    let mut holders = if taken.is_empty() {
        HashMap::new()
    } else {
        batch::existing_ids(c.0, &taken).await?
    };
    for (index, p, ins) in &resolved {
        let item = if inserted.contains(&ins.uid) {
            BatchItem::Created(Box::new(ins.task(p, now)))
        } else {
            let id = (p.org.clone(), p.queue.clone(), p.task_id.clone());
            match holders.remove(&id) {
                Some(t) if !tables::tasks::tombstone_expired(&t, now) => {
                    BatchItem::Exists(Box::new(t))
                }
                // A tombstone to replace, or a row gone since the insert.
                _ => match tables::tasks::insert_or_existing(c, p, ins, None, now).await? {
                    Ok(t) => BatchItem::Created(Box::new(t)),
                    Err(t) => BatchItem::Exists(Box::new(t)),
                },
            }
        };
        plan.decide(*index, item);
    }
    plan.finish(batch.atomic, now)
}
