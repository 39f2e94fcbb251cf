//! Task creates on SQLite: the queue's configuration comes from a cache the
//! writer keeps exact (every change of a queue's configuration or existence
//! goes through this store and drops its entry), so that a create costs the
//! single writer no queue lookup; the shared rules do the rest.

use super::SqliteStore;
use crate::Result;
use crate::records::{Task, TaskCreate};
use crate::tables::{queues, tasks};

impl SqliteStore {
    pub(super) async fn create_task(&self, mut p: TaskCreate) -> Result<Task> {
        let key = p.completion.take();
        let cache = self.inner.queue_configs.clone();
        self.write(key, async move |c, now, _| {
            let id = (p.org.clone(), p.queue.clone());
            let cached = cache.lock().expect("queue cache").get(&id).cloned();
            let config = match cached {
                Some(config) => config,
                None => {
                    let config = queues::get(c, &p.org, &p.queue, "").await?.config;
                    cache
                        .lock()
                        .expect("queue cache")
                        .insert(id, config.clone());
                    config
                }
            };
            tasks::create(c, &p, &config, None, now).await
        })
        .await
    }
}
