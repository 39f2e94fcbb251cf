//! Queues on SQLite: a change of a queue's configuration or existence drops
//! the writer's cached configuration of it ([`super::tasks`]), in the
//! writer, before the change.

use super::SqliteStore;
use crate::Result;
use crate::tables::queues;

impl SqliteStore {
    /// SQLite compares text byte by byte: an ID prefix is always one range
    /// of the primary key.
    pub(super) fn ids_bytewise(&self) -> bool {
        true
    }

    pub(super) fn forget_queue_config(
        &self,
        org: &str,
        name: &str,
    ) -> impl Fn() + Clone + Send + use<> {
        let cache = self.inner.queue_configs.clone();
        let id = (org.to_string(), name.to_string());
        move || {
            cache.lock().expect("queue cache").remove(&id);
        }
    }

    pub(super) async fn delete_queue(&self, org: &str, name: &str) -> Result<()> {
        let (o, n) = (org.to_string(), name.to_string());
        let forget = self.forget_queue_config(org, name);
        self.write(None, async move |c, _, _| {
            forget();
            queues::delete(c, &o, &n).await
        })
        .await?;
        self.inner.dispatched.forget(org, name);
        Ok(())
    }
}
