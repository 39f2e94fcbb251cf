//! Task creates on SQLite: the queue's configuration comes from a cache the
//! writer keeps exact (every change of a queue's configuration, state or
//! existence goes through this store and drops its entry), so that a create
//! costs the single writer no queue lookup; the shared rules do the rest.

use super::{Lite, SqliteStore};
use crate::Result;
use crate::records::{BatchCreated, Task, TaskBatch, TaskCreate};
use crate::tables::{queues, tasks};
use idem_core::queue::{QueueConfig, QueueState};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// (organization, queue) → configuration and state, as last read.
pub(super) type QueueCache = Arc<Mutex<HashMap<(String, String), (QueueConfig, QueueState)>>>;

/// The queue's configuration and state, from the cache or read (on the
/// writer's thread) and cached.
async fn queue(
    c: &Lite<'_>,
    cache: &QueueCache,
    org: &str,
    name: &str,
) -> Result<(QueueConfig, QueueState)> {
    let id = (org.to_string(), name.to_string());
    if let Some(cached) = cache.lock().expect("queue cache").get(&id).cloned() {
        return Ok(cached);
    }
    let queue = queues::get(c, org, name, "").await?;
    let entry = (queue.config, queue.state);
    cache.lock().expect("queue cache").insert(id, entry.clone());
    Ok(entry)
}

impl SqliteStore {
    /// A keyless create needs no savepoint of its own: it is refused
    /// before it writes, or its insert meets a taken ID and changes
    /// nothing, or it has written its task. Only a queue marked ordered
    /// after the insert, or a tombstone replaced before it, write twice,
    /// and then only a fault of the database fails the second write. A
    /// keyed one claims its key's record first, which a refusal undoes.
    pub(super) async fn create_task(&self, mut p: TaskCreate) -> Result<Task> {
        let key = p.completion.take();
        let cache = self.inner.queue_configs.clone();
        self.write_in(key.is_some(), key, async move |c, now, _| {
            let (config, _) = queue(c, &cache, &p.org, &p.queue).await?;
            tasks::create(c, &p, &config, None, now).await
        })
        .await
    }

    /// A batch is one job of the writer: one transaction, one commit.
    pub(super) async fn create_tasks(&self, mut batch: TaskBatch) -> Result<BatchCreated> {
        let key = batch.completion.take();
        let cache = self.inner.queue_configs.clone();
        self.write(key, async move |c, now, keyed| {
            let (config, state) = queue(c, &cache, &batch.org, &batch.queue).await?;
            let items = tasks::create_batch(c, &batch, &config, now).await?;
            keyed.set_body(|| tasks::batch_record(&items));
            Ok(BatchCreated {
                items,
                queue_paused: state == QueueState::Paused,
            })
        })
        .await
    }

    /// Whether the queue was paused when this store last read it; exact,
    /// since every change of a queue's state passes through this store.
    pub(super) fn queue_paused_hint(&self, org: &str, queue: &str) -> bool {
        self.inner
            .queue_configs
            .lock()
            .expect("queue cache")
            .get(&(org.to_string(), queue.to_string()))
            .is_some_and(|(_, state)| *state == QueueState::Paused)
    }
}
