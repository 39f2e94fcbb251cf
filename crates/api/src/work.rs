//! Pull queues: the bodies of the routes on work (API.md §11).

use crate::Task;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Most tasks one claim takes.
pub const MAX_CLAIM_TASKS: u32 = 100;
/// Longest a claim waits for work, in milliseconds.
pub const MAX_CLAIM_WAIT_MS: u64 = 30_000;
/// Longest lease, in seconds; leases are extended by heartbeats.
pub const MAX_LEASE_S: u32 = 3600;
/// A lease's length when the request names none.
pub const DEFAULT_LEASE_S: u32 = 60;
/// Most bytes of a completion's `result`, as JSON text.
pub const MAX_RESULT_BYTES: usize = 64 * 1024;

/// `POST /v1/queues/{queue}/tasks:claim`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimTasks {
    /// 1–100 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 100))]
    pub max_tasks: Option<u32>,
    /// 0–30000: how long to wait for a due task when none is (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 30000))]
    pub wait_ms: Option<u64>,
    /// 1–3600 (default 60): the lease's length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3600))]
    pub lease_s: Option<u32>,
    /// Only tasks with this tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 100, pattern = "^[A-Za-z0-9_-]+$")
    )]
    pub tag: Option<String>,
}

/// The answer to a claim: the tasks taken, each with its lease, in
/// schedule order; empty when none was due within the wait.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClaimedTasks {
    pub tasks: Vec<Task>,
}

/// `POST …/tasks/{task_id}/claim`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimTask {
    /// 1–3600 (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3600))]
    pub lease_s: Option<u32>,
}

/// `POST …/tasks/{task_id}/heartbeat`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Heartbeat {
    pub attempt_id: String,
    /// 1–3600 (default 60): the lease then ends this long from now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3600))]
    pub lease_s: Option<u32>,
}

/// `POST …/tasks/{task_id}/complete`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CompleteTask {
    pub attempt_id: String,
    /// Any JSON value up to 64 KiB, shown on the task afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<Box<RawValue>>,
}

/// `POST …/tasks/{task_id}/fail`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FailTask {
    pub attempt_id: String,
    /// Why the attempt failed; recorded with it. At most 4,096 characters,
    /// without U+0000.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 4096, pattern = r"^[^\x00]*$")
    )]
    pub error: String,
}

/// `POST …/tasks/{task_id}/release`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReleaseTask {
    pub attempt_id: String,
}

/// `POST …/tasks/{task_id}/reassign`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReassignTask {
    pub attempt_id: String,
    /// The principal the lease goes to.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 100, pattern = "^[A-Za-z0-9_-]+$")
    )]
    pub principal: String,
    /// 1–3600 (default 60): the fresh lease's length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3600))]
    pub lease_s: Option<u32>,
}

/// `POST …/tasks/{task_id}/assign`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AssignTask {
    /// The principal the lease goes to.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 100, pattern = "^[A-Za-z0-9_-]+$")
    )]
    pub principal: String,
    /// 1–3600 (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3600))]
    pub lease_s: Option<u32>,
}

/// Most ends one `tasks:end` call reports: a claim's most tasks.
pub const MAX_END_TASKS: usize = 100;

/// `POST /v1/queues/{queue}/tasks:end`: the ends of attempts a worker
/// holds, reported together.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EndTasks {
    /// 1–100 ends, answered in this order.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 100))]
    pub ends: Vec<EndTask>,
}

/// One attempt's end: a completion (with an optional `result`) or, when
/// `error` is given, a failure.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EndTask {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 500, pattern = "^[A-Za-z0-9_-]+$")
    )]
    pub task_id: String,
    pub attempt_id: String,
    /// For a completion: any JSON value up to 64 KiB, shown on the task
    /// afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<Box<RawValue>>,
    /// For a failure: why the attempt failed (at most 4,096 characters,
    /// without U+0000); the retry policy decides what follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 4096, pattern = r"^[^\x00]*$")
    )]
    pub error: Option<String>,
}
