//! Actions on pull tasks on SQLite: each is one job of the writer, whose
//! group commit already shares one commit among concurrent ends.

use super::SqliteStore;
use crate::Result;
use crate::dispatch::WorkDone;
use crate::records::{Task, WorkAction, WorkClaim};
use crate::tables::work;
use futures_util::future::join_all;

impl SqliteStore {
    /// One job of the writer, which runs concurrent claims one after
    /// another.
    pub(super) async fn claim_work(&self, claim: WorkClaim) -> Result<Vec<Task>> {
        let ordered = self.inner.ordered_queues.clone();
        self.write(None, async move |c, now, _| {
            work::claim(c, &claim, now, &ordered).await
        })
        .await
    }

    pub(super) async fn work_action(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        action: WorkAction,
    ) -> Result<WorkDone> {
        let (o, q, t) = (org.to_string(), queue.to_string(), task_id.to_string());
        let events = self.events();
        self.write(None, async move |c, now, _| {
            work::act(c, &o, &q, &t, action, now, &*events).await
        })
        .await
    }

    /// Each end is a job of its own; sent in order, they join the writer's
    /// queue in order and mostly share one commit.
    pub(super) async fn work_ends(
        &self,
        org: &str,
        queue: &str,
        ends: Vec<(String, WorkAction)>,
    ) -> Vec<Result<WorkDone>> {
        join_all(ends.into_iter().map(|(task_id, action)| async move {
            self.work_action(org, queue, &task_id, action).await
        }))
        .await
    }
}
