//! What the API and the dispatcher share: wake-ups for new work and news of
//! tasks reaching a final state.

use super::POLL_INTERVAL;
use super::in_flight::InFlight;
use idem_store::dispatch::TaskFinished;
use idem_store::{Status, Store, Task};
use jiff::Timestamp;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, broadcast};

/// What the API and the dispatcher share: wake-ups for new work and news of
/// tasks reaching a final state. Lives in [`App`](crate::App).
pub struct Handle {
    /// Wakes this node's claim loop.
    pub(super) local_work: Notify,
    /// Wakes the task that tells other nodes (see `signals`).
    pub(super) remote_work: Notify,
    finished: broadcast::Sender<TaskFinished>,
    /// Wakes the claims of pull workers waiting for work (`wait_ms`).
    pull_work: Notify,
    /// This node's attempts, for a cancel to abort.
    pub(super) in_flight: Arc<InFlight>,
}

impl Default for Handle {
    fn default() -> Self {
        Handle {
            local_work: Notify::new(),
            remote_work: Notify::new(),
            finished: broadcast::channel(4096).0,
            pull_work: Notify::new(),
            in_flight: Arc::default(),
        }
    }
}

impl Handle {
    /// New or newly due work (a create, a run-now): wakes this node's loop
    /// at once and, on a multi-node store, the other nodes.
    pub fn work_available(&self) {
        metrics::counter!("idem_dispatch_wakeups_total").increment(1);
        self.local_work.notify_one();
        self.remote_work.notify_one();
        self.pull_work.notify_waiters();
    }

    /// Work may have come from another node: wakes this node's loop and
    /// its waiting pull claims.
    pub(super) fn remote_work_arrived(&self) {
        self.local_work.notify_one();
        self.pull_work.notify_waiters();
    }

    /// Resolves at the next [`Handle::work_available`] (here or, on
    /// PostgreSQL, on any node) after it is enabled: a waiting pull claim
    /// enables it before it looks, so that no wake-up falls between.
    pub fn pull_work(&self) -> tokio::sync::futures::Notified<'_> {
        self.pull_work.notified()
    }

    /// Tasks were created (`earliest`: the soonest any of them is due):
    /// wakes the dispatchers only if they may claim one of them now or
    /// before their next periodic look. A task due later is found by that
    /// look, and a paused queue's by the resume that wakes them; waking for
    /// either would cost every node a claim that finds nothing.
    pub fn tasks_created(&self, queue_paused: bool, earliest: Option<Timestamp>, now: Timestamp) {
        let soon = now + POLL_INTERVAL;
        if !queue_paused && earliest.is_some_and(|t| t <= soon) {
            self.work_available();
        }
    }

    /// A cancel has committed: `task` is as the store left it. When the
    /// cancel aborted an attempt in flight, this node drops that attempt if
    /// it runs it (other nodes hear of it from the store), which closes the
    /// connection to the target, and waiters hear that the task ended.
    pub fn cancelled(&self, org: &str, task: &Task) {
        let Some(attempt) = task.aborted_attempt() else {
            return;
        };
        if self.abort(&task.uid, attempt) {
            tracing::info!(queue = %task.queue, task_id = %task.task_id, attempt,
                "attempt aborted by a cancel");
        }
        self.publish(TaskFinished {
            org: org.to_string(),
            queue: task.queue.clone(),
            task_id: task.task_id.clone(),
            uid: task.uid.clone(),
            status: task.status,
        });
    }

    /// Drops attempt `attempt` of task `uid` if this node runs it; the
    /// slot it frees may take more work.
    pub(super) fn abort(&self, uid: &str, attempt: u32) -> bool {
        let aborted = self.in_flight.abort(uid, attempt);
        if aborted {
            self.local_work.notify_one();
        }
        aborted
    }

    /// Aborts this node's attempts whose lease is gone (cancelled while
    /// this node was not listening).
    pub(super) async fn abort_lost(&self, store: &dyn Store) {
        let attempts = self.in_flight.snapshot();
        if attempts.is_empty() {
            return;
        }
        match store.dispatch_leases_lost(attempts).await {
            Ok(lost) => {
                for (uid, attempt) in lost {
                    if self.abort(&uid, attempt) {
                        tracing::info!(task_uid = %uid, attempt,
                            "attempt aborted: its task was cancelled or taken over while this node was not listening");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "checking in-flight attempts for missed cancels"),
        }
    }

    /// Tasks reaching a final state (`succeeded`, `failed`, `cancelled` while
    /// running), on this node or — on
    /// PostgreSQL — any node. Sent after the state is committed. A receiver
    /// that lags misses events (`RecvError::Lagged`) and should re-read.
    pub fn subscribe_finished(&self) -> broadcast::Receiver<TaskFinished> {
        self.finished.subscribe()
    }

    /// Waits up to `timeout` for the task to reach a final state and returns
    /// it as it then is (final, or as it stood when the time ran out). The
    /// task is the one of that ID that exists when the wait starts; a
    /// cancel through the API ends the wait as well.
    pub async fn wait_final(
        &self,
        store: &dyn Store,
        org: &str,
        queue: &str,
        task_id: &str,
        timeout: Duration,
    ) -> idem_store::Result<Task> {
        // Subscribed before the first read, so that a completion between the
        // read and the wait is not missed.
        let mut events = self.subscribe_finished();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut task = store.task_get(org, queue, task_id).await?;
        let uid = task.uid.clone();
        loop {
            if is_final(&task) || tokio::time::Instant::now() >= deadline {
                return Ok(task);
            }
            // A missed NOTIFY (listener reconnecting) or a cancel of a task
            // not running sends no event: re-read now and then regardless.
            let recheck = (tokio::time::Instant::now() + POLL_INTERVAL).min(deadline);
            loop {
                tokio::select! {
                    event = events.recv() => match event {
                        Ok(f) if f.uid == uid => break,
                        Ok(_) => continue,
                        Err(broadcast::error::RecvError::Lagged(_)) => break,
                        Err(broadcast::error::RecvError::Closed) => {
                            tokio::time::sleep_until(recheck).await;
                            break;
                        }
                    },
                    _ = tokio::time::sleep_until(recheck) => break,
                }
            }
            task = store.task_get(org, queue, task_id).await?;
            if task.uid != uid {
                // The ID was swept and reused: the task waited for is gone.
                return Ok(task);
            }
        }
    }

    /// Announces a task's new state to subscribers, if it is final.
    pub fn publish(&self, finished: TaskFinished) {
        if finished.is_final() {
            // No subscriber is not an error: nobody is waiting.
            let _ = self.finished.send(finished);
        }
    }
}

fn is_final(task: &Task) -> bool {
    !matches!(task.status, Status::Pending | Status::Running)
}
