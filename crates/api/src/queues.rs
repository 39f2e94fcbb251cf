//! `/v1/queues`.

use crate::Target;
use idem_core::job::HeaderStyle;
use idem_core::queue::{
    GroupOrder, QueueConfigPatch, QueueMode, QueueState, RateLimits, RateLimitsPatch, RetryConfig,
    RetryConfigPatch,
};
use idem_core::task::TargetSpec;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `POST /v1/queues`: a name and the settings that differ from the
/// defaults.
// The settings are spelled out rather than a flattened `QueueConfigPatch`:
// serde cannot refuse unknown fields through a flatten, nor name the path of
// a bad field inside one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateQueue {
    pub name: String,
    /// `push` (default): Idem delivers each task to its target; `pull`:
    /// workers claim the tasks, which carry a payload instead. Fixed at
    /// creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<QueueMode>,
    /// Pull queues only: completing or failing a task is then a
    /// person-only action (403 `USER_IDENTITY_REQUIRED` to a service key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limits: Option<RateLimitsPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_config: Option<RetryConfigPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_deadline_s: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_window_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_retention_s: Option<u64>,
    /// Receives a signed `task.succeeded` event when a task ends `succeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_success: Option<TargetSpec>,
    /// Receives a signed `task.failed` event when a task ends `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<TargetSpec>,
    /// `idem` (the default) or `cloud_tasks`: its tasks' compatibility
    /// headers, unless a task names its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_style: Option<HeaderStyle>,
    /// Most tasks of one group running at once, across nodes (1–10000);
    /// absent or null: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10000))]
    pub group_concurrency: Option<u32>,
    /// `none` (the default) or `fifo`: each group's tasks one at a time in
    /// (schedule time, creation) order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_order: Option<GroupOrder>,
}

impl CreateQueue {
    /// A queue named `name` with the settings of `config`.
    pub fn new(name: impl Into<String>, config: QueueConfigPatch) -> Self {
        CreateQueue {
            name: name.into(),
            mode: config.mode,
            person_only: config.person_only,
            rate_limits: config.rate_limits,
            retry_config: config.retry_config,
            dispatch_deadline_s: config.dispatch_deadline_s,
            dedup_window_s: config.dedup_window_s,
            failed_retention_s: config.failed_retention_s,
            on_success: config.on_success.flatten(),
            on_failure: config.on_failure.flatten(),
            header_style: config.header_style,
            group_concurrency: config.group_concurrency.flatten(),
            group_order: config.group_order,
        }
    }

    /// The settings, to apply over the defaults.
    pub fn config(&self) -> QueueConfigPatch {
        QueueConfigPatch {
            mode: self.mode,
            person_only: self.person_only,
            rate_limits: self.rate_limits,
            retry_config: self.retry_config,
            dispatch_deadline_s: self.dispatch_deadline_s,
            dedup_window_s: self.dedup_window_s,
            failed_retention_s: self.failed_retention_s,
            on_success: self.on_success.clone().map(Some),
            on_failure: self.on_failure.clone().map(Some),
            header_style: self.header_style,
            group_concurrency: self.group_concurrency.map(Some),
            group_order: self.group_order,
        }
    }
}

/// A queue as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = QueueView))]
pub struct Queue {
    /// Unique per organization.
    pub name: String,
    /// `running` or `paused`.
    pub state: QueueState,
    /// `push` or `pull`.
    #[serde(default)]
    pub mode: QueueMode,
    /// Completing or failing a task needs a person (pull queues).
    #[serde(default)]
    pub person_only: bool,
    /// Token bucket and concurrency limits.
    pub rate_limits: RateLimits,
    /// How failed deliveries are retried.
    pub retry_config: RetryConfig,
    /// How long a target has to answer, in seconds.
    pub dispatch_deadline_s: u32,
    /// How long a finished task's ID stays taken, in seconds.
    pub dedup_window_s: u64,
    /// How long a failed task is kept after it ended (at least its dedup
    /// window), in seconds, so that it can be redriven.
    pub failed_retention_s: u64,
    /// Receives a signed `task.succeeded` event when a task ends
    /// `succeeded`, unless the task names its own.
    pub on_success: Option<Target>,
    /// Receives a signed `task.failed` event when a task ends `failed`,
    /// unless the task names its own.
    pub on_failure: Option<Target>,
    /// The compatibility headers of its tasks' deliveries, unless a task
    /// names its own: `idem` or `cloud_tasks`.
    pub header_style: HeaderStyle,
    /// Most tasks of one group running at once, across nodes; null: no
    /// limit (a FIFO queue runs one whatever it says).
    #[serde(default)]
    pub group_concurrency: Option<u32>,
    /// `none` or `fifo`.
    #[serde(default)]
    pub group_order: GroupOrder,
    /// When the queue was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When its configuration or state last changed.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: Timestamp,
    /// What the queue holds and dispatches now.
    pub stats: QueueStats,
}

/// A queue's statistics at the instant it was read, kept by the store with
/// every change of a task's state rather than counted from its tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = QueueStatsView))]
pub struct QueueStats {
    /// The queue's tasks per state; finished tasks count until they are
    /// swept with their dedup window.
    pub tasks: TaskCounts,
    /// Since when the longest-waiting due task has been due (its schedule
    /// time, or the end of its backoff for a retry); null when none is due.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub oldest_due_time: Option<Timestamp>,
    /// Attempts started in the last 60 seconds.
    pub dispatched_last_minute: u64,
    /// Attempts in flight: the tasks `running` now.
    pub in_flight: u64,
    /// Groups with at least one task due now.
    #[serde(default)]
    pub groups_with_due: u64,
}

/// A group's live tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = GroupView))]
pub struct Group {
    /// The group's name, as its tasks carry it.
    pub group: String,
    /// Tasks of the group running now (a pull lease holds its slot).
    pub running: u64,
    /// Tasks due now, waiting for a slot or a turn.
    pub due: u64,
    /// Tasks waiting for their schedule time or a retry's backoff.
    pub scheduled: u64,
}

/// Tasks per state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TaskCountsView))]
pub struct TaskCounts {
    /// Never attempted, with a schedule time still ahead.
    pub scheduled: u64,
    /// Due, or backing off before a retry.
    pub queued: u64,
    /// An attempt is in flight.
    pub running: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub cancelled: u64,
}

/// `POST /v1/queues/{queue}/tasks:redrive`: which ended tasks run again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RedriveTasks {
    /// `failed` (the default) or `cancelled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<idem_core::task::TaskState>,
    /// Only tasks that ended at or after this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub finished_after: Option<Timestamp>,
    /// Only tasks that ended before this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub finished_before: Option<Timestamp>,
    /// Only tasks whose ID starts with it (not empty), as the task list's
    /// `id_prefix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub id_prefix: Option<String>,
    /// Only tasks created at or after this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub created_after: Option<Timestamp>,
    /// Only tasks created before this instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub created_before: Option<Timestamp>,
    /// Count the matching tasks (`matching`) and redrive none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// The answer to a bulk redrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = RedriveView))]
pub struct Redriven {
    /// Tasks queued again by this request: every one that matched (0 for
    /// a dry run).
    pub redriven: u64,
    /// A dry run's count of the tasks a redrive would run again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matching: Option<u64>,
}

/// The answer to a purge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PurgeView))]
pub struct Purged {
    /// Tasks cancelled by the purge.
    pub cancelled: u64,
}
