//! Queue configuration: rate limits, retry policy, deadlines, dedup window.
//!
//! Requests carry partial configurations (`*Patch`): every field optional,
//! applied over the defaults on create and over the current values on update,
//! then validated as a whole so that cross-field rules (`min ≤ max`) hold.

use crate::event::{Callbacks, resolve_callback};
use crate::field::{FieldError, FieldErrors};
use crate::job::HeaderStyle;
use crate::task::TargetSpec;
use serde::{Deserialize, Serialize};

/// Token bucket and concurrency limits of one queue.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RateLimits {
    pub max_dispatches_per_second: f64,
    pub max_burst_size: u32,
    pub max_concurrent_dispatches: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            max_dispatches_per_second: 500.0,
            max_burst_size: 100,
            max_concurrent_dispatches: 1000,
        }
    }
}

/// Partial [`RateLimits`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RateLimitsPatch {
    pub max_dispatches_per_second: Option<f64>,
    pub max_burst_size: Option<u32>,
    pub max_concurrent_dispatches: Option<u32>,
}

/// One dispatch every 1000 s: slower rates are almost certainly a unit
/// mistake, and they would put the next token so far away that computing
/// its instant overflows.
pub const MIN_RATE: f64 = 0.001;
pub const MAX_RATE: f64 = 100_000.0;
pub const MAX_BURST: u32 = 100_000;
pub const MAX_CONCURRENCY: u32 = 100_000;

impl RateLimits {
    pub fn apply(mut self, patch: &RateLimitsPatch) -> Self {
        if let Some(v) = patch.max_dispatches_per_second {
            self.max_dispatches_per_second = v;
        }
        if let Some(v) = patch.max_burst_size {
            self.max_burst_size = v;
        }
        if let Some(v) = patch.max_concurrent_dispatches {
            self.max_concurrent_dispatches = v;
        }
        self
    }

    pub fn validate(&self, prefix: &str, errors: &mut FieldErrors) {
        let rate = self.max_dispatches_per_second;
        if !(rate.is_finite() && (MIN_RATE..=MAX_RATE).contains(&rate)) {
            errors.push(
                format!("{prefix}.max_dispatches_per_second"),
                format!("must be between {MIN_RATE} and {MAX_RATE}"),
            );
        }
        errors.range(
            format_args!("{prefix}.max_burst_size"),
            self.max_burst_size,
            1,
            MAX_BURST,
        );
        errors.range(
            format_args!("{prefix}.max_concurrent_dispatches"),
            self.max_concurrent_dispatches,
            1,
            MAX_CONCURRENCY,
        );
    }
}

/// How a failed delivery is retried (API.md §4, "Backoff").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RetryConfig {
    /// Attempts in all, first included; 0 means unlimited.
    pub max_attempts: u32,
    /// 0 means no limit on the time since the first attempt.
    pub max_retry_duration_s: u64,
    pub min_backoff_ms: u64,
    pub max_backoff_ms: u64,
    pub max_doublings: u32,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: 100,
            max_retry_duration_s: 0,
            min_backoff_ms: 100,
            max_backoff_ms: 3_600_000,
            max_doublings: 16,
        }
    }
}

/// Partial [`RetryConfig`], as sent on queue create/update and task create.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RetryConfigPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry_duration_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_backoff_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backoff_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_doublings: Option<u32>,
}

impl RetryConfigPatch {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

pub const MAX_ATTEMPTS: u32 = 1_000_000;
/// One year: longer retry horizons are almost certainly a unit mistake.
pub const MAX_RETRY_DURATION_S: u64 = 365 * 24 * 3600;
pub const MAX_BACKOFF_MS: u64 = 30 * 24 * 3600 * 1000;
pub const MAX_DOUBLINGS: u32 = 62;

impl RetryConfig {
    pub fn apply(mut self, patch: &RetryConfigPatch) -> Self {
        if let Some(v) = patch.max_attempts {
            self.max_attempts = v;
        }
        if let Some(v) = patch.max_retry_duration_s {
            self.max_retry_duration_s = v;
        }
        if let Some(v) = patch.min_backoff_ms {
            self.min_backoff_ms = v;
        }
        if let Some(v) = patch.max_backoff_ms {
            self.max_backoff_ms = v;
        }
        if let Some(v) = patch.max_doublings {
            self.max_doublings = v;
        }
        self
    }

    pub fn validate(&self, prefix: &str, errors: &mut FieldErrors) {
        errors.range(
            format_args!("{prefix}.max_attempts"),
            self.max_attempts,
            0,
            MAX_ATTEMPTS,
        );
        errors.range(
            format_args!("{prefix}.max_retry_duration_s"),
            self.max_retry_duration_s,
            0,
            MAX_RETRY_DURATION_S,
        );
        errors.range(
            format_args!("{prefix}.min_backoff_ms"),
            self.min_backoff_ms,
            1,
            MAX_BACKOFF_MS,
        );
        errors.range(
            format_args!("{prefix}.max_backoff_ms"),
            self.max_backoff_ms,
            1,
            MAX_BACKOFF_MS,
        );
        errors.range(
            format_args!("{prefix}.max_doublings"),
            self.max_doublings,
            0,
            MAX_DOUBLINGS,
        );
    }
}

pub const MIN_DEADLINE_S: u32 = 1;
pub const MAX_DEADLINE_S: u32 = 1800;
pub const DEFAULT_DISPATCH_DEADLINE_S: u32 = 600;
pub const DEFAULT_DEDUP_WINDOW_S: u64 = 86_400;
/// Thirty days: tombstones are rows, and a longer window mostly costs space.
pub const MAX_DEDUP_WINDOW_S: u64 = 30 * 86_400;
/// Seven days: long enough that a weekend's failures are still there on
/// Monday.
pub const DEFAULT_FAILED_RETENTION_S: u64 = 7 * 86_400;
/// Ninety days: a failed task is a row with its attempts, and an operator
/// who needs failures for longer should export them.
pub const MAX_FAILED_RETENTION_S: u64 = 90 * 86_400;

fn default_failed_retention_s() -> u64 {
    DEFAULT_FAILED_RETENTION_S
}

/// Whether a queue dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum QueueState {
    Running,
    Paused,
}

impl QueueState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Self::Running),
            "paused" => Some(Self::Paused),
            _ => None,
        }
    }
}

/// How a queue's tasks are worked: delivered by Idem to their targets, or
/// claimed by workers (API.md §11). Fixed when the queue is created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum QueueMode {
    /// The dispatcher delivers each task to its target.
    #[default]
    Push,
    /// Workers claim tasks, which carry a payload and no target.
    Pull,
}

impl QueueMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Push => "push",
            Self::Pull => "pull",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "push" => Some(Self::Push),
            "pull" => Some(Self::Pull),
            _ => None,
        }
    }
}

/// The order of a group's tasks (API.md §13).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GroupOrder {
    /// A group's tasks start as its limit allows, by priority.
    #[default]
    None,
    /// A group's tasks run one at a time in (schedule time, creation)
    /// order; the next waits while the one before is running or waiting for
    /// its retry.
    Fifo,
}

impl GroupOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Fifo => "fifo",
        }
    }
}

fn is_unordered(order: &GroupOrder) -> bool {
    *order == GroupOrder::None
}

/// Bounds of a queue's `group_concurrency`.
pub const MIN_GROUP_CONCURRENCY: u32 = 1;
pub const MAX_GROUP_CONCURRENCY: u32 = 10_000;

/// Bounds of a task's `priority`.
pub const MIN_PRIORITY: i32 = -100;
pub const MAX_PRIORITY: i32 = 100;

fn is_push(mode: &QueueMode) -> bool {
    *mode == QueueMode::Push
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Everything configurable about a queue, fully resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueConfig {
    /// Configurations stored before pull queues existed are push queues.
    #[serde(default, skip_serializing_if = "is_push")]
    pub mode: QueueMode,
    /// Completing or failing a task of this (pull) queue needs a person.
    #[serde(default, skip_serializing_if = "is_false")]
    pub person_only: bool,
    pub rate_limits: RateLimits,
    pub retry_config: RetryConfig,
    pub dispatch_deadline_s: u32,
    pub dedup_window_s: u64,
    /// How long a failed task is kept after it ended, at least; its ID stays
    /// taken meanwhile. Configurations stored before the field existed take
    /// the default.
    #[serde(default = "default_failed_retention_s")]
    pub failed_retention_s: u64,
    /// Where the events of its tasks' final states go, unless a task names
    /// its own.
    #[serde(default, flatten)]
    pub callbacks: Callbacks,
    /// The compatibility headers of its tasks' deliveries, unless a task
    /// names its own: `idem` or `cloud_tasks`.
    #[serde(default)]
    pub header_style: HeaderStyle,
    /// Most tasks of one group running at once, across nodes; `None`: no
    /// limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_concurrency: Option<u32>,
    /// The order of a group's tasks.
    #[serde(default, skip_serializing_if = "is_unordered")]
    pub group_order: GroupOrder,
}

impl QueueConfig {
    /// The most tasks of one group a claim lets run at once: FIFO runs one.
    pub fn group_limit(&self) -> Option<u32> {
        match self.group_order {
            GroupOrder::Fifo => Some(1),
            GroupOrder::None => self.group_concurrency,
        }
    }

    /// How long a task that ended in `failed` (`true`) or another final
    /// state is kept, in microseconds: its dedup window, and for a failed
    /// task at least its retention, so that it waits to be redriven whatever
    /// the window, and its ID is never freed before the window passes.
    pub fn kept_for_us(&self, failed: bool) -> i64 {
        let s = if failed {
            self.dedup_window_s.max(self.failed_retention_s)
        } else {
            self.dedup_window_s
        };
        i64::try_from(s)
            .unwrap_or(i64::MAX)
            .saturating_mul(1_000_000)
    }
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            mode: QueueMode::Push,
            person_only: false,
            rate_limits: RateLimits::default(),
            retry_config: RetryConfig::default(),
            dispatch_deadline_s: DEFAULT_DISPATCH_DEADLINE_S,
            dedup_window_s: DEFAULT_DEDUP_WINDOW_S,
            failed_retention_s: DEFAULT_FAILED_RETENTION_S,
            callbacks: Callbacks::default(),
            header_style: HeaderStyle::Idem,
            group_concurrency: None,
            group_order: GroupOrder::None,
        }
    }
}

/// A queue's settings, each optional: the body of a queue update, and the
/// settings of a queue create. Unset fields keep their values (take the
/// defaults on create).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct QueueConfigPatch {
    /// `push` (default) or `pull`; fixed when the queue is created, so an
    /// update may only repeat it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<QueueMode>,
    /// Pull queues only: completing or failing a task needs a person's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person_only: Option<bool>,
    /// Rate and concurrency limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limits: Option<RateLimitsPatch>,
    /// Retry policy for tasks that do not set their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_config: Option<RetryConfigPatch>,
    /// 1–1800 seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_deadline_s: Option<u32>,
    /// Seconds a task ID stays taken after its task ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_window_s: Option<u64>,
    /// Seconds a failed task is kept after it ended (0–7776000), whatever
    /// its dedup window, so that it can be redriven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_retention_s: Option<u64>,
    /// Target that receives a `task.succeeded` event when a task ends
    /// `succeeded`; `null` removes it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<TargetSpec>))]
    pub on_success: Option<Option<TargetSpec>>,
    /// Target that receives a `task.failed` event when a task ends
    /// `failed`; `null` removes it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<TargetSpec>))]
    pub on_failure: Option<Option<TargetSpec>>,
    /// `idem` (the default) or `cloud_tasks`: the compatibility headers of
    /// its tasks' deliveries, unless a task names its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_style: Option<HeaderStyle>,
    /// Most tasks of one group running at once, across nodes (1–10000);
    /// `null` removes the limit.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u32>, minimum = 1, maximum = 10000))]
    pub group_concurrency: Option<Option<u32>>,
    /// `none` or `fifo`: a FIFO queue runs each group's tasks one at a time
    /// in (schedule time, creation) order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_order: Option<GroupOrder>,
}

/// A task's (or a queue's) header style: `cloud_scheduler` is a job's.
pub fn check_task_header_style(field: &str, style: HeaderStyle) -> Result<(), FieldError> {
    match style {
        HeaderStyle::CloudScheduler => Err(FieldError::new(
            field,
            "cloud_scheduler is for jobs; a task or queue takes idem or cloud_tasks",
        )),
        HeaderStyle::Idem | HeaderStyle::CloudTasks => Ok(()),
    }
}

/// `Some` whenever the field is present, so that `null` clears a setting
/// rather than leave it as it is.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl QueueConfig {
    /// The configuration of a new queue: the defaults with `patch` applied,
    /// in the mode it asks for.
    pub fn new(patch: &QueueConfigPatch) -> Result<QueueConfig, FieldErrors> {
        QueueConfig {
            mode: patch.mode.unwrap_or_default(),
            ..QueueConfig::default()
        }
        .apply(patch)
    }

    /// Why this queue, as it is, cannot take `patch` at all, whatever its
    /// fields' values: its mode is fixed, and only a pull queue can be
    /// person-only. A well-formed request the queue's state refuses (409),
    /// checked before [`QueueConfig::apply`].
    pub fn conflict(&self, patch: &QueueConfigPatch) -> Option<String> {
        if let Some(mode) = patch.mode
            && mode != self.mode
        {
            return Some(format!(
                "mode is fixed when the queue is created; this queue is a {} queue",
                self.mode.as_str()
            ));
        }
        (patch.person_only == Some(true) && self.mode != QueueMode::Pull).then(|| {
            format!(
                "only a pull queue can be person-only; this queue is a {} queue",
                self.mode.as_str()
            )
        })
    }

    /// Applies `patch` and validates the result; the error names every bad
    /// field. The mode is the queue's own ([`QueueConfig::conflict`] refuses
    /// a patch that changes it).
    pub fn apply(&self, patch: &QueueConfigPatch) -> Result<QueueConfig, FieldErrors> {
        let mut next = self.clone();
        let mut errors = FieldErrors::new();
        if let Some(v) = patch.person_only {
            next.person_only = v;
        }
        if next.person_only && next.mode != QueueMode::Pull {
            errors.push("person_only", "only a pull queue can be person-only");
        }
        if let Some(p) = &patch.rate_limits {
            next.rate_limits = next.rate_limits.apply(p);
        }
        if let Some(p) = &patch.retry_config {
            next.retry_config = next.retry_config.apply(p);
        }
        if let Some(v) = patch.dispatch_deadline_s {
            next.dispatch_deadline_s = v;
        }
        if let Some(v) = patch.dedup_window_s {
            next.dedup_window_s = v;
        }
        if let Some(v) = patch.failed_retention_s {
            next.failed_retention_s = v;
        }
        if let Some(spec) = &patch.on_success {
            next.callbacks.on_success = spec
                .clone()
                .and_then(|s| resolve_callback(s, "on_success", &mut errors));
        }
        if let Some(spec) = &patch.on_failure {
            next.callbacks.on_failure = spec
                .clone()
                .and_then(|s| resolve_callback(s, "on_failure", &mut errors));
        }
        if let Some(style) = patch.header_style {
            match check_task_header_style("header_style", style) {
                Ok(()) => next.header_style = style,
                Err(e) => errors.0.push(e),
            }
        }
        if let Some(limit) = patch.group_concurrency {
            next.group_concurrency = limit;
        }
        if let Some(order) = patch.group_order {
            next.group_order = order;
        }
        if let Some(limit) = next.group_concurrency {
            errors.range(
                "group_concurrency",
                limit,
                MIN_GROUP_CONCURRENCY,
                MAX_GROUP_CONCURRENCY,
            );
        }
        next.rate_limits.validate("rate_limits", &mut errors);
        next.retry_config.validate("retry_config", &mut errors);
        errors.range(
            "dispatch_deadline_s",
            next.dispatch_deadline_s,
            MIN_DEADLINE_S,
            MAX_DEADLINE_S,
        );
        errors.range("dedup_window_s", next.dedup_window_s, 0, MAX_DEDUP_WINDOW_S);
        errors.range(
            "failed_retention_s",
            next.failed_retention_s,
            0,
            MAX_FAILED_RETENTION_S,
        );
        errors.into_result().map(|()| next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each limit out of range is named by its dotted path under the
    /// caller's prefix; a policy within every limit names nothing.
    #[test]
    fn policies_out_of_range_name_each_field_under_the_prefix() {
        let mut errors = FieldErrors::new();
        RetryConfig::default().validate("retry_config", &mut errors);
        RateLimits::default().validate("rate_limits", &mut errors);
        assert!(errors.is_empty(), "{errors}");
        let retry = RetryConfig {
            max_attempts: MAX_ATTEMPTS + 1,
            max_retry_duration_s: MAX_RETRY_DURATION_S + 1,
            min_backoff_ms: 0,
            max_backoff_ms: MAX_BACKOFF_MS + 1,
            max_doublings: MAX_DOUBLINGS + 1,
        };
        retry.validate("tasks[2].retry_config", &mut errors);
        let limits = RateLimits {
            max_dispatches_per_second: 500.0,
            max_burst_size: 0,
            max_concurrent_dispatches: MAX_CONCURRENCY + 1,
        };
        limits.validate("rate_limits", &mut errors);
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "tasks[2].retry_config.max_attempts",
                "tasks[2].retry_config.max_retry_duration_s",
                "tasks[2].retry_config.min_backoff_ms",
                "tasks[2].retry_config.max_backoff_ms",
                "tasks[2].retry_config.max_doublings",
                "rate_limits.max_burst_size",
                "rate_limits.max_concurrent_dispatches",
            ]
        );
        assert_eq!(
            errors.0[0].message,
            format!(
                "must be between 0 and {MAX_ATTEMPTS}, got {}",
                MAX_ATTEMPTS + 1
            )
        );
    }

    #[test]
    fn defaults_match_the_spec_example() {
        let q = QueueConfig::default();
        assert_eq!(q.rate_limits.max_dispatches_per_second, 500.0);
        assert_eq!(q.rate_limits.max_burst_size, 100);
        assert_eq!(q.rate_limits.max_concurrent_dispatches, 1000);
        assert_eq!(q.retry_config.max_attempts, 100);
        assert_eq!(q.retry_config.max_doublings, 16);
        assert_eq!(q.dispatch_deadline_s, 600);
        assert_eq!(q.dedup_window_s, 86_400);
        assert_eq!(q.failed_retention_s, 604_800);
    }

    #[test]
    fn a_failed_task_is_kept_for_the_longer_of_its_window_and_its_retention() {
        let mut q = QueueConfig {
            dedup_window_s: 10,
            failed_retention_s: 60,
            ..QueueConfig::default()
        };
        assert_eq!(q.kept_for_us(true), 60_000_000);
        assert_eq!(q.kept_for_us(false), 10_000_000);
        q.dedup_window_s = 120;
        assert_eq!(q.kept_for_us(true), 120_000_000);
    }

    #[test]
    fn a_stored_configuration_without_a_retention_takes_the_default() {
        let mut stored = serde_json::to_value(QueueConfig::default()).unwrap();
        stored.as_object_mut().unwrap().remove("failed_retention_s");
        let q: QueueConfig = serde_json::from_value(stored).unwrap();
        assert_eq!(q.failed_retention_s, DEFAULT_FAILED_RETENTION_S);
        let patch = QueueConfigPatch {
            failed_retention_s: Some(MAX_FAILED_RETENTION_S + 1),
            ..Default::default()
        };
        let e = q.apply(&patch).unwrap_err();
        assert_eq!(e.0[0].field, "failed_retention_s");
    }

    #[test]
    fn patch_overrides_only_given_fields() {
        let patch = QueueConfigPatch {
            retry_config: Some(RetryConfigPatch {
                max_attempts: Some(5),
                ..Default::default()
            }),
            dedup_window_s: Some(60),
            ..Default::default()
        };
        let q = QueueConfig::default().apply(&patch).unwrap();
        assert_eq!(q.retry_config.max_attempts, 5);
        assert_eq!(q.retry_config.min_backoff_ms, 100);
        assert_eq!(q.dedup_window_s, 60);
        assert_eq!(q.dispatch_deadline_s, 600);
    }

    #[test]
    fn rates_too_small_for_the_token_arithmetic_are_refused() {
        for (rate, ok) in [
            (1e-14, false),
            (0.000_999, false),
            (MIN_RATE, true),
            (MAX_RATE, true),
            (MAX_RATE * 1.01, false),
            (f64::NAN, false),
            (f64::INFINITY, false),
        ] {
            let patch = QueueConfigPatch {
                rate_limits: Some(RateLimitsPatch {
                    max_dispatches_per_second: Some(rate),
                    ..Default::default()
                }),
                ..Default::default()
            };
            assert_eq!(QueueConfig::default().apply(&patch).is_ok(), ok, "{rate}");
        }
    }

    #[test]
    fn every_bad_field_is_named() {
        let patch = QueueConfigPatch {
            rate_limits: Some(RateLimitsPatch {
                max_dispatches_per_second: Some(0.0),
                max_burst_size: Some(0),
                ..Default::default()
            }),
            retry_config: Some(RetryConfigPatch {
                min_backoff_ms: Some(10_000),
                max_backoff_ms: Some(5_000),
                ..Default::default()
            }),
            dispatch_deadline_s: Some(1801),
            ..Default::default()
        };
        let errors = QueueConfig::default().apply(&patch).unwrap_err();
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "rate_limits.max_dispatches_per_second",
                "rate_limits.max_burst_size",
                "dispatch_deadline_s"
            ]
        );
    }
}
