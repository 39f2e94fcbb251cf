//! Queues on PostgreSQL.

use super::PostgresStore;
use crate::Result;
use crate::tables::queues;

impl PostgresStore {
    /// Other nodes change queues too: the configuration cache of task
    /// creates ([`super::tasks`]) expires by time. A change made through
    /// this node drops its entry as well, so that this node's own pause or
    /// resume reaches its next create at once.
    pub(super) fn forget_queue_config(&self, org: &str, name: &str) -> impl Fn() + Clone + use<> {
        let cache = self.queue_configs.clone();
        let id = (org.to_string(), name.to_string());
        move || {
            cache.lock().expect("queue config cache").remove(&id);
        }
    }

    pub(super) async fn delete_queue(&self, org: &str, name: &str) -> Result<()> {
        // Completing attempts lock a task and then its queue; the delete
        // locks the other way round. PostgreSQL breaks such a deadlock by
        // failing one side, and `write` runs the delete again.
        self.write(None, async |c, _, _| queues::delete(c, org, name).await)
            .await
    }
}
