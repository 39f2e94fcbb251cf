//! Queues on PostgreSQL.

use super::PostgresStore;
use crate::tables::queues;
use crate::{Error, Result};

/// How often a queue delete runs in all when it keeps losing deadlocks.
const QUEUE_DELETE_TRIES: u32 = 6;

impl PostgresStore {
    /// Other nodes change queues too: the configuration cache of task
    /// creates ([`super::tasks`]) expires by time instead.
    pub(super) fn forget_queue_config(&self, _org: &str, _name: &str) -> impl FnOnce() + use<> {
        || {}
    }

    pub(super) async fn delete_queue(&self, org: &str, name: &str) -> Result<()> {
        // Completing attempts lock a task and then its queue; the delete
        // locks the other way round. PostgreSQL breaks such a deadlock by
        // failing one side, and the delete simply runs again.
        let mut tries = 1;
        loop {
            let deleted = self
                .write(None, async |c, _, _| queues::delete(c, org, name).await)
                .await;
            match deleted {
                Err(Error::Retryable(_)) if tries < QUEUE_DELETE_TRIES => tries += 1,
                other => return other,
            }
        }
    }
}
