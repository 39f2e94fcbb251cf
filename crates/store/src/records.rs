//! The rows the store hands out, as plain Rust values.

use idem_core::job::{HeaderStyle, JobConfig, JobState, RunKind};
use idem_core::queue::{QueueConfig, QueueState, RetryConfig, RetryConfigPatch};
pub use idem_core::task::Attempt;
use idem_core::task::{Target, TaskState};
use idem_core::tenancy::{PrincipalKind, Role};
use jiff::Timestamp;

/// Keyset pagination: items after `after` (the previous page's last key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageRequest {
    pub limit: u32,
    pub after: Option<String>,
}

/// One page of a list; `next` is the key to continue after, if more remain.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<String>,
}

impl<T> Page<T> {
    /// Builds a page from up to `limit + 1` rows: the extra row only tells
    /// that another page exists.
    pub(crate) fn from_rows(mut rows: Vec<T>, limit: u32, key: impl Fn(&T) -> String) -> Self {
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next = if more { rows.last().map(key) } else { None };
        Page { items: rows, next }
    }
}

/// A key to store: the plaintext is never persisted, only its hash.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub id: String,
    pub key_hash: String,
}

/// What [`Store::bootstrap`](crate::Store::bootstrap) did to organization
/// `default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bootstrap {
    /// It did not exist: it was created, its principal `admin` holding the key.
    Created,
    /// It existed, but no admin of it held a key (a store written before the
    /// last admin key could no longer be revoked, or edited by hand): the key
    /// was given to its principal `admin`, which is an admin again.
    Restored,
    /// An admin of it holds a key: nothing changed.
    Unchanged,
}

/// Who a valid API key speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub org: String,
    pub principal: String,
    pub kind: PrincipalKind,
    pub role: Role,
    pub key_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    pub kind: PrincipalKind,
    pub role: Role,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: String,
    pub principal: String,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningSecret {
    pub id: String,
    pub secret: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    pub name: String,
    pub state: QueueState,
    pub config: QueueConfig,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// What a task create asks for; the store resolves the rest from the queue.
#[derive(Debug, Clone)]
pub struct TaskCreate {
    pub org: String,
    pub queue: String,
    pub task_id: String,
    pub target: Target,
    /// `None` means now.
    pub schedule_time: Option<Timestamp>,
    /// `None` takes the queue's.
    pub dispatch_deadline_s: Option<u32>,
    /// Applied over the queue's retry configuration.
    pub retry_config: RetryConfigPatch,
    /// The task's own completion callbacks, in place of its queue's.
    pub callbacks: idem_core::event::Callbacks,
    /// `None` takes the queue's.
    pub header_style: Option<HeaderStyle>,
    /// A task for a pull queue: `target` carries only its payload
    /// ([`Target::payload`]); a pull queue takes only these, a push queue
    /// none.
    pub pull: bool,
    /// A pull task's tag, which claims may filter on.
    pub tag: Option<String>,
    /// The group it takes turns and counts its limit in; `None`: the
    /// queue's ungrouped tasks.
    pub group: Option<String>,
    /// Higher first within its group (−100…100).
    pub priority: i32,
    /// The Idempotency-Key record to complete with the task.
    pub completion: Option<crate::idempotency::KeyCompletion>,
}

/// A batch create: up to [`MAX_BATCH_TASKS`] creates into one queue, in
/// request order, committed together.
#[derive(Debug, Clone)]
pub struct TaskBatch {
    pub org: String,
    pub queue: String,
    /// Each create, or the fields the caller already found invalid; such an
    /// item is answered as it is and takes no part in the batch.
    pub tasks: Vec<Result<TaskCreate, idem_core::FieldErrors>>,
    /// All or nothing: the first item that cannot be created fails the
    /// whole batch ([`crate::Error::BatchItem`]) and nothing is written.
    pub atomic: bool,
    /// The Idempotency-Key record to complete with the batch; its body is
    /// the store's record of each item's outcome ([`BatchRecord`]).
    pub completion: Option<crate::idempotency::KeyCompletion>,
}

/// Most tasks in one batch create.
pub const MAX_BATCH_TASKS: usize = 1000;

/// What became of one item of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchItem {
    Created(Box<Task>),
    /// The ID is taken by this task (a live one or a tombstone inside its
    /// window), which may be an earlier item of the same batch.
    Exists(Box<Task>),
    Invalid(idem_core::FieldErrors),
    /// Well formed, but not what the queue takes (a task of the other
    /// kind than its mode): 409 `FAILED_PRECONDITION`, saying why.
    Refused(String),
}

/// A committed batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchCreated {
    /// One per item, in request order.
    pub items: Vec<BatchItem>,
    /// The queue was paused when the batch committed: nothing of it can be
    /// dispatched yet.
    pub queue_paused: bool,
}

/// An item's outcome as a batch's Idempotency-Key record keeps it, so that
/// a replay repeats each item's status: the task is read again as it is
/// now, and `uid` tells whether it is still the one this batch met.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BatchRecord {
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<idem_core::field::FieldError>,
    /// Why a refused item (409 without a task) was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl BatchRecord {
    pub fn of(item: &BatchItem) -> BatchRecord {
        let (status, task, errors, refused) = match item {
            BatchItem::Created(t) => (201, Some(t), Vec::new(), None),
            BatchItem::Exists(t) => (409, Some(t), Vec::new(), None),
            BatchItem::Invalid(e) => (400, None, e.0.clone(), None),
            BatchItem::Refused(why) => (409, None, Vec::new(), Some(why.clone())),
        };
        BatchRecord {
            status,
            task_id: task.map(|t| t.task_id.clone()),
            uid: task.map(|t| t.uid.clone()),
            errors,
            refused,
        }
    }
}

/// How many tasks of one queue are in one state (final tasks still held as
/// tombstones included); what the queue depth metric reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCount {
    pub org: String,
    pub queue: String,
    pub status: Status,
    pub count: u64,
}

/// The oldest due task of a running queue ([`crate::Store::queue_oldest_due`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueOldestDue {
    pub org: String,
    pub queue: String,
    pub oldest_due: Timestamp,
}

/// A queue's statistics at one instant (API.md §12): its tasks per state
/// (final tasks still held as tombstones included), since when its
/// longest-waiting due task has been due, the attempts started in the last
/// minute, and the attempts in flight.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub scheduled: u64,
    pub queued: u64,
    pub running: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub cancelled: u64,
    /// The earliest `next_attempt_at` of a pending task that is due: its
    /// schedule time, or the end of its backoff for a retry.
    pub oldest_due_time: Option<Timestamp>,
    pub dispatched_last_minute: u64,
    /// Groups with a task due now.
    pub groups_with_due: u64,
}

/// A group's live tasks (`GET /v1/queues/{queue}/groups`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupStats {
    pub group: String,
    pub running: u64,
    pub due: u64,
    pub scheduled: u64,
}

/// Every organization and queue that exists (job queues included): what
/// the metrics keep series for, so that the series of a deleted one go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricScopes {
    pub organizations: Vec<String>,
    /// (organization, queue).
    pub queues: Vec<(String, String)>,
}

/// Where a task is in its life, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Waiting for its next attempt (scheduled or queued).
    Pending,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Running,
            Self::Succeeded,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub queue: String,
    pub task_id: String,
    /// Tells apart tasks that reused one ID after its dedup window.
    pub uid: String,
    pub status: Status,
    pub target: Target,
    /// The task's own completion callbacks (its queue's apply where unset).
    pub callbacks: idem_core::event::Callbacks,
    pub schedule_time: Timestamp,
    pub next_attempt_at: Timestamp,
    pub dispatch_deadline_s: u32,
    pub retry_config: RetryConfig,
    pub attempt_count: u32,
    pub cancel_requested: bool,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub last_attempt: Option<Attempt>,
    /// Until when a finished task's ID stays taken.
    pub dedup_expires_at: Option<Timestamp>,
    /// Set when the task is a job's run; its `task_id` is the run ID.
    pub run: Option<RunInfo>,
    /// The compatibility headers of its deliveries (a run's: its job's).
    pub header_style: HeaderStyle,
    /// A pull task's tag.
    pub tag: Option<String>,
    /// The worker's lease on a pull task while it is running.
    pub lease: Option<Lease>,
    /// The last claim of a pull task that is not running now (finished,
    /// failed for a retry, or recovered): its token and holder, kept until
    /// the next claim, so that the holder's repeated end can be told from
    /// a stranger's.
    pub ended_claim: Option<EndedClaim>,
    /// What the worker reported on completing a pull task (JSON text).
    pub result: Option<String>,
    /// Its group, if it has one.
    pub group: Option<String>,
    /// Its priority within its group.
    pub priority: i32,
}

/// A pull task's claim after it ended: see [`Task::ended_claim`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedClaim {
    pub attempt_id: String,
    pub claimant: String,
}

/// A worker's claim on a pull task (API.md §11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The lease's token: every action on the claim names it.
    pub attempt_id: String,
    /// The principal holding the task.
    pub claimant: String,
    pub lease_expires_at: Timestamp,
}

impl Job {
    /// The next instant the job fires after `now`, whether or not its run
    /// was created yet; `None` while paused.
    pub fn next_run_time(&self, now: Timestamp) -> Option<Timestamp> {
        match self.state {
            JobState::Enabled => self.config.parsed_schedule().ok()?.next_after(now),
            JobState::Paused => None,
        }
    }
}

/// What makes a task a cron job's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    pub job: String,
    pub kind: RunKind,
    pub header_style: HeaderStyle,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    pub config: JobConfig,
    pub state: JobState,
    /// The next instant the scheduler has yet to create a run for (runs are
    /// created a little ahead of their instant); `None` while paused.
    pub next_run_at: Option<Timestamp>,
    /// The most recent run whose schedule time has come, scheduled or
    /// manual.
    pub last_run: Option<Task>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Why the scheduler paused the job, when it could not fire it.
    pub paused_reason: Option<String>,
}

impl Task {
    /// Whether the task belongs to a pull queue: it has a payload and no
    /// target to deliver to.
    pub fn is_pull(&self) -> bool {
        self.target.url.is_empty()
    }

    /// The state the API shows at `now`: a pending task that has never been
    /// attempted and whose time has not come is `scheduled`.
    pub fn state(&self, now: Timestamp) -> TaskState {
        match self.status {
            Status::Pending => pending_state(self.attempt_count, self.next_attempt_at, now),
            Status::Running => TaskState::Running,
            Status::Succeeded => TaskState::Succeeded,
            Status::Failed => TaskState::Failed,
            Status::Cancelled => TaskState::Cancelled,
        }
    }
}

/// The state of a pending task at `now`: `scheduled` until its time comes
/// if no attempt has touched it, `queued` otherwise.
pub(crate) fn pending_state(
    attempt_count: u32,
    next_attempt_at: Timestamp,
    now: Timestamp,
) -> TaskState {
    if attempt_count == 0 && next_attempt_at > now {
        TaskState::Scheduled
    } else {
        TaskState::Queued
    }
}

#[cfg(any(test, feature = "testing"))]
impl TaskCreate {
    /// A push task of `org`'s `queue` carrying a small JSON payload, due at
    /// once, with the queue's retries: the crate's tests vary it.
    pub fn example(org: &str, queue: &str, task_id: &str) -> TaskCreate {
        TaskCreate {
            org: org.into(),
            queue: queue.into(),
            task_id: task_id.into(),
            target: idem_core::task::Target::payload(Some((
                idem_core::task::BodyForm::Json,
                b"{}".to_vec(),
            ))),
            schedule_time: None,
            dispatch_deadline_s: None,
            retry_config: Default::default(),
            completion: None,
            pull: false,
            tag: None,
            group: None,
            priority: 0,
            callbacks: Default::default(),
            header_style: None,
        }
    }
}

/// The part of an existing task a `TASK_ALREADY_EXISTS` answer shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSummary {
    pub task_id: String,
    pub state: TaskState,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
}

/// An organization's event webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    pub id: String,
    pub url: String,
    pub events: Vec<idem_core::event::EventType>,
    pub created_at: Timestamp,
}

/// The filters of a task list, combinable. With a creation-time bound the
/// list goes by creation time (then ID), otherwise by ID, so that each
/// filter reads an index range rather than the whole queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    pub state: Option<TaskState>,
    /// Task IDs that start with it.
    pub id_prefix: Option<String>,
    /// Created at or after it.
    pub created_after: Option<Timestamp>,
    /// Created before it.
    pub created_before: Option<Timestamp>,
}

impl TaskFilter {
    /// Whether the list goes by creation time.
    pub fn by_created(&self) -> bool {
        self.created_after.is_some() || self.created_before.is_some()
    }
}

/// Which ended tasks a bulk redrive runs again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedriveFilter {
    /// [`Status::Failed`] or [`Status::Cancelled`].
    pub status: Status,
    /// Ended at or after it.
    pub finished_after: Option<Timestamp>,
    /// Ended before it.
    pub finished_before: Option<Timestamp>,
    /// IDs starting with it, as the task list's `id_prefix`.
    pub id_prefix: Option<String>,
    /// Created at or after it.
    pub created_after: Option<Timestamp>,
    /// Created before it.
    pub created_before: Option<Timestamp>,
    /// Count the matching tasks and change nothing.
    pub dry_run: bool,
}

impl RedriveFilter {
    /// Every task of `status`, whenever it ended or was created.
    pub fn all(status: Status) -> RedriveFilter {
        RedriveFilter {
            status,
            finished_after: None,
            finished_before: None,
            id_prefix: None,
            created_after: None,
            created_before: None,
            dry_run: false,
        }
    }
}

/// What a bulk redrive did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redriven {
    pub count: u64,
}

/// A claim of a pull queue's due tasks (API.md §11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkClaim {
    pub org: String,
    pub queue: String,
    /// The principal the leases go to.
    pub claimant: String,
    /// Most tasks to take (1–100).
    pub max_tasks: u32,
    /// Each lease lasts this long from the claim, unless extended.
    pub lease_s: u32,
    /// Only tasks with this tag.
    pub tag: Option<String>,
    /// Attempts kept per task, as the dispatcher keeps them.
    pub attempts_kept: u32,
}

/// What a worker, or an admin, does to one pull task. Every action but
/// [`WorkAction::Claim`] and [`WorkAction::Assign`] names the lease it acts
/// on; a lease that is not the task's current one ([`crate::Error::LeaseLost`])
/// changes nothing. `holder`, where an action has it, is the caller when
/// it is not an admin: the lease must be that principal's, or the action
/// answers [`crate::Error::LeaseLost`] as if the lease were gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkAction {
    /// Leases the task, if nobody holds it, to `claimant`; keeps the
    /// task's last `attempts_kept` attempts.
    Claim {
        claimant: String,
        lease_s: u32,
        attempts_kept: u32,
    },
    /// Extends the lease to `lease_s` from now.
    Heartbeat {
        attempt_id: String,
        lease_s: u32,
        holder: Option<String>,
    },
    /// Ends the task `succeeded`, with the worker's result (JSON text).
    /// `person`: whether the caller is a person (a `person_only` queue
    /// takes no other).
    Complete {
        attempt_id: String,
        result: Option<String>,
        person: bool,
        holder: Option<String>,
    },
    /// Ends the attempt failed: the retry policy decides between a retry
    /// and `failed`.
    Fail {
        attempt_id: String,
        error: String,
        person: bool,
        holder: Option<String>,
    },
    /// Gives the task back, due now; the attempt does not count.
    Release {
        attempt_id: String,
        holder: Option<String>,
    },
    /// Hands the lease, with a fresh term, to `principal`. `holder`, when
    /// set, must be the lease's claimant (a caller who is not an admin).
    Reassign {
        attempt_id: String,
        principal: String,
        holder: Option<String>,
        lease_s: u32,
    },
    /// Leases a task nobody holds to `principal`, as a claim does.
    Assign {
        principal: String,
        lease_s: u32,
        attempts_kept: u32,
    },
}
