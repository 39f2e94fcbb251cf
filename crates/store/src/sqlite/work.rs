//! Actions on pull tasks on SQLite: each is one job of the writer, whose
//! group commit already shares one commit among concurrent ends.

use super::SqliteStore;
use crate::Result;
use crate::dispatch::TaskFinished;
use crate::records::{Task, WorkAction};
use crate::tables::work;

impl SqliteStore {
    pub(super) async fn work_action(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        action: WorkAction,
    ) -> Result<(Task, Option<TaskFinished>)> {
        let (o, q, t) = (org.to_string(), queue.to_string(), task_id.to_string());
        self.write(None, async move |c, now, _| {
            work::act(c, &o, &q, &t, action, now).await
        })
        .await
    }
}
