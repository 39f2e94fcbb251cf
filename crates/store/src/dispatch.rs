//! The dispatcher's side of the store: claiming due tasks under their
//! queue's limits, recording attempts, and waking nodes up.
//!
//! # Leases
//!
//! A claim moves a task to `running`, increments its `attempt_count` and
//! sets `lease_expires_at` to now + dispatch deadline + lease grace. The new
//! attempt count is the lease token: [`DispatchStore::dispatch_complete`]
//! applies a result only while the task is still `running` with that count,
//! so the late answer of an attempt whose lease was taken over changes
//! nothing (the lease invariant in ARCHITECTURE.md). Expired leases are recovered by the next claim
//! on any node: the attempt counts as failed and the task is retried as the
//! backoff says.
//!
//! # Cancels
//!
//! Cancelling a running task (`Store::task_cancel`) ends it `cancelled` in
//! its own transaction and records its attempt as ended
//! ([`ABORTED_BY_CANCEL`]): the lease goes with the `running` status, so
//! the attempt's late result is [`AttemptOutcome::Stale`] and no claim
//! recovers it. The node running the attempt is told to drop it:
//! [`DispatchSignal::AttemptCancelled`] from another node (sent only if the
//! cancel commits), [`Task::aborted_attempt`] on the node that cancelled.
//!
//! # Limits
//!
//! Rate and concurrency limits are enforced inside the claim transaction,
//! so they hold for all nodes together: the queue row carries its token
//! bucket (`dispatch_tokens`, `dispatch_refilled_at`), refilled and debited
//! under a row lock, and the concurrency limit is checked against the count
//! of the queue's `running` rows.
//!
//! # Fairness
//!
//! A claim may also be told the caller's slots and how many each
//! organization holds ([`FairShare`]); it then skips the queues of an
//! organization at its share, before locking them, so one organization's
//! backlog or slow targets cannot occupy every slot of a node.

use crate::Result;
use crate::records::{Status, Task};
use async_trait::async_trait;
use jiff::Timestamp;
use std::collections::BTreeMap;
use std::time::Duration;

/// The error recorded for an attempt that a cancel aborted while it was in
/// flight (`DELETE` of a running task).
pub const ABORTED_BY_CANCEL: &str = "cancelled while in flight: the attempt was aborted";

/// What a claim asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchClaim {
    /// Most tasks to claim, over all queues: the caller's free slots.
    pub max_tasks: u32,
    /// Added to each task's dispatch deadline to form its lease: the time a
    /// node has to report a result after the target's deadline passed.
    pub lease_grace: Duration,
    /// Attempts kept per task (at least 1): a claim that records a task's
    /// attempt deletes those older than the latest `attempts_kept`, so a
    /// task retried forever keeps bounded history. `attempt_count` still
    /// counts them all.
    pub attempts_kept: u32,
    /// How the caller's slots are shared between organizations; `None`
    /// lets any organization take them all.
    pub fair_share: Option<FairShare>,
}

/// The caller's slots and who holds them, so that a claim gives no
/// organization more than its share while others have due work: an
/// organization whose targets are slow would otherwise fill every slot of
/// a node with attempts that wait out their deadlines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FairShare {
    /// All of the caller's slots, free or not.
    pub slots: u32,
    /// Most slots one organization may hold; `None` for
    /// [`fair_share_cap`]'s automatic share.
    pub max_per_org: Option<u32>,
    /// The caller's attempts in flight, per organization.
    pub in_flight: BTreeMap<String, u32>,
}

/// The most slots one organization may hold when `active` organizations
/// (with due work or attempts in flight) want them: an equal share with one
/// share kept back, so that an organization whose work arrives while the
/// others fill their shares still finds a free slot at once. A server with
/// one organization (`several_orgs` false) has nobody to share with.
pub fn fair_share_cap(slots: u32, active: usize, several_orgs: bool) -> u32 {
    if !several_orgs {
        return slots;
    }
    let shares = u32::try_from(active).unwrap_or(u32::MAX).saturating_add(1);
    (slots / shares).max(1)
}

/// A task claimed for one attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedTask {
    pub org: String,
    /// The task as it is after the claim: `running`, with `attempt_count`
    /// counting this attempt.
    pub task: Task,
    /// The lease token: the attempt number (1-based) this claim started.
    pub attempt: u32,
    pub lease_expires_at: Timestamp,
}

impl ClaimedTask {
    /// The status code the target answered on the previous attempt, if it
    /// answered at all.
    pub fn previous_status(&self) -> Option<u16> {
        self.task
            .last_attempt
            .as_ref()
            .filter(|a| a.attempt + 1 == self.attempt)
            .and_then(|a| a.status_code)
    }
}

/// What one claim produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaimedBatch {
    /// In schedule order within each queue.
    pub tasks: Vec<ClaimedTask>,
    /// The current signing secrets (newest first) of each organization that
    /// owns a claimed task, read in the claim's transaction so a rotation is
    /// seen by the very next attempt.
    pub signing_secrets: BTreeMap<String, Vec<String>>,
    /// Tasks whose lease had expired, recovered by this claim (their attempt
    /// counted as failed).
    pub recovered: Vec<TaskFinished>,
    /// The earliest instant more work may become claimable without anything
    /// else happening: the next due task of a running queue, the next lease
    /// expiry, or the next token of a rate-limited queue with due tasks.
    /// Completions and new tasks are signalled separately.
    pub wake_at: Option<Timestamp>,
}

/// The end of one attempt, as the dispatcher observed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptResult {
    pub task_uid: String,
    /// The lease token the claim handed out.
    pub attempt: u32,
    /// The target's status code, when it answered.
    pub status_code: Option<u16>,
    /// Why the attempt failed without a status (connection error, deadline).
    pub error: Option<String>,
    /// How long the attempt took, as measured by the dispatcher.
    pub duration: Duration,
    /// A `Retry-After` the target sent with 429 or 503.
    pub retry_after: Option<Duration>,
    /// The failure is one no retry can change (the target policy refused
    /// the address): the task fails without further attempts.
    pub give_up: bool,
    /// The start of the target's answer, kept for a failed attempt only.
    pub response: Option<idem_core::task::AttemptResponse>,
}

impl AttemptResult {
    pub fn succeeded(&self) -> bool {
        self.status_code.is_some_and(|c| (200..300).contains(&c))
    }
}

/// What became of an attempt result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// Recorded; the task is now in this state.
    Applied(TaskFinished),
    /// The task no longer holds this lease (taken over after expiry,
    /// deleted with its queue): nothing changed.
    Stale { task_uid: String },
}

impl Task {
    /// The attempt a cancel aborted in flight, when this task ended that way
    /// ([`ABORTED_BY_CANCEL`]): the lease token of the attempt whose node
    /// should drop it.
    pub fn aborted_attempt(&self) -> Option<u32> {
        let last = self.last_attempt.as_ref()?;
        (self.status == Status::Cancelled
            && last.attempt == self.attempt_count
            && last.error.as_deref() == Some(ABORTED_BY_CANCEL))
        .then_some(last.attempt)
    }
}

/// A task's state after an attempt ended: final, or pending for a retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFinished {
    pub org: String,
    pub queue: String,
    pub task_id: String,
    pub uid: String,
    pub status: Status,
}

impl TaskFinished {
    pub fn is_final(&self) -> bool {
        !matches!(self.status, Status::Pending | Status::Running)
    }
}

/// What an action on a pull task answers: the task as the action left it,
/// the final state it reached (for the caller to announce), and whether it
/// was the holder's repeated end of an attempt already ended the same way,
/// which changed nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkDone {
    pub task: crate::records::Task,
    pub finished: Option<TaskFinished>,
    pub replayed: bool,
}

impl WorkDone {
    pub(crate) fn new(task: crate::records::Task, finished: Option<TaskFinished>) -> WorkDone {
        WorkDone {
            task,
            finished,
            replayed: false,
        }
    }
}

/// A wake-up from another node (PostgreSQL `LISTEN/NOTIFY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchSignal {
    /// New or newly due work may be claimable.
    Work,
    /// A task reached a final state on some node.
    TaskFinished(TaskFinished),
    /// A cancel ended a running task: the node running attempt `attempt`
    /// of the task `uid` should drop it. Sent once the cancel commits.
    AttemptCancelled { uid: String, attempt: u32 },
    /// The listener (re)connected: any signal may have been missed while it
    /// was not listening, new work and cancels alike.
    Listening,
}

/// The dispatcher's storage operations; every [`Store`](crate::Store) has
/// them.
#[async_trait]
pub trait DispatchStore: Send + Sync {
    /// Recovers expired leases, then claims due tasks of running queues in
    /// schedule order, as far as each queue's token bucket and concurrency
    /// limit allow, up to `max_tasks` in all. One transaction.
    async fn dispatch_claim(&self, params: DispatchClaim) -> Result<ClaimedBatch>;

    /// Applies attempt results, each only if its lease token still matches,
    /// in one transaction; answers in the order given.
    async fn dispatch_complete(&self, results: Vec<AttemptResult>) -> Result<Vec<AttemptOutcome>>;

    /// Gives back leases the caller holds, `(task uid, lease token)`,
    /// without counting their attempts: each task still running under that
    /// token goes back to pending, due now, its attempt row removed and its
    /// attempt number the next claim's (the retry window starts afresh if
    /// it was the first). A node that stops with attempts still in flight
    /// does this so that another node starts them at once rather than once
    /// the lease expires. One transaction; answers how many were released
    /// (a lease lost meanwhile to a cancel or a takeover is skipped).
    async fn dispatch_release(&self, attempts: Vec<(String, u32)>) -> Result<u64>;

    /// Tells every node that new work may be claimable. A no-op where only
    /// one node can run (SQLite).
    async fn dispatch_notify_work(&self) -> Result<()>;

    /// Of `attempts` (task uid, lease token), those that no longer hold
    /// their lease: the task was cancelled, finished, or taken over. A
    /// node asks after it may have missed [`DispatchSignal::AttemptCancelled`].
    async fn dispatch_leases_lost(
        &self,
        attempts: Vec<(String, u32)>,
    ) -> Result<Vec<(String, u32)>>;

    /// Signals from other nodes, on a dedicated connection; `None` where
    /// only one node can run. The stream reconnects by itself and sends
    /// [`DispatchSignal::Listening`] after each connection, since signals
    /// may have been missed meanwhile.
    async fn dispatch_listen(&self) -> Result<Option<tokio::sync::mpsc::Receiver<DispatchSignal>>>;
}

#[cfg(test)]
mod tests {
    use super::fair_share_cap;

    #[test]
    fn the_fair_share_keeps_one_share_back_and_never_drops_to_zero() {
        assert_eq!(fair_share_cap(2000, 1, false), 2000, "one organization");
        assert_eq!(fair_share_cap(2000, 0, true), 2000);
        assert_eq!(fair_share_cap(2000, 1, true), 1000);
        assert_eq!(fair_share_cap(4, 3, true), 1);
        assert_eq!(fair_share_cap(4, 50, true), 1, "at least one slot each");
    }
}
