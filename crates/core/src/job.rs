//! Cron jobs (API.md §5): what a job is configured with, and the rules that
//! validate a create or an update before anything is stored.

use crate::field::FieldErrors;
use crate::queue::{MAX_ATTEMPTS, MAX_DEADLINE_S, MIN_DEADLINE_S, RetryConfig};
use crate::schedule::{CatchUp, Schedule};
use crate::task::{Target, TargetSpec};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

pub const DEFAULT_ATTEMPT_DEADLINE_S: u32 = 180;
pub const DEFAULT_TIME_ZONE: &str = "UTC";

/// Which compatibility headers a delivery carries besides Idem's own:
/// `cloud_scheduler` for a job's runs, `cloud_tasks` for a queue's tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum HeaderStyle {
    #[default]
    Idem,
    /// Adds `X-CloudScheduler`, `X-CloudScheduler-JobName` and
    /// `X-CloudScheduler-ScheduleTime`, so handlers written for Cloud
    /// Scheduler work unchanged.
    CloudScheduler,
    /// Adds Cloud Tasks' `X-CloudTasks-*` headers (API.md §4), so handlers
    /// written for Cloud Tasks, and idem-guard's Cloud Tasks identity, work
    /// unchanged.
    CloudTasks,
}

impl HeaderStyle {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idem => "idem",
            Self::CloudScheduler => "cloud_scheduler",
            Self::CloudTasks => "cloud_tasks",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Idem, Self::CloudScheduler, Self::CloudTasks]
            .into_iter()
            .find(|h| h.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Enabled,
    Paused,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Paused => "paused",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Enabled, Self::Paused]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

/// Why a run exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    Scheduled,
    Manual,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Manual => "manual",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Scheduled, Self::Manual]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// A job's retry policy, in Cloud Scheduler's terms: `retry_count` retries
/// after the first attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobRetryConfig {
    pub retry_count: u32,
    pub max_retry_duration_s: u64,
    pub min_backoff_ms: u64,
    pub max_backoff_ms: u64,
    pub max_doublings: u32,
}

impl Default for JobRetryConfig {
    fn default() -> Self {
        Self {
            retry_count: 0,
            max_retry_duration_s: 0,
            min_backoff_ms: 5_000,
            max_backoff_ms: 3_600_000,
            max_doublings: 5,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct JobRetryConfigPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry_duration_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_backoff_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backoff_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_doublings: Option<u32>,
}

impl JobRetryConfig {
    /// The task-level policy a run is dispatched with.
    pub fn to_retry_config(self) -> RetryConfig {
        RetryConfig {
            max_attempts: self.retry_count.saturating_add(1),
            max_retry_duration_s: self.max_retry_duration_s,
            min_backoff_ms: self.min_backoff_ms,
            max_backoff_ms: self.max_backoff_ms,
            max_doublings: self.max_doublings,
        }
    }

    fn apply(self, p: &JobRetryConfigPatch) -> Self {
        Self {
            retry_count: p.retry_count.unwrap_or(self.retry_count),
            max_retry_duration_s: p.max_retry_duration_s.unwrap_or(self.max_retry_duration_s),
            min_backoff_ms: p.min_backoff_ms.unwrap_or(self.min_backoff_ms),
            max_backoff_ms: p.max_backoff_ms.unwrap_or(self.max_backoff_ms),
            max_doublings: p.max_doublings.unwrap_or(self.max_doublings),
        }
    }

    fn validate(&self, errors: &mut FieldErrors) {
        errors.range(
            "retry_config.retry_count",
            self.retry_count,
            0,
            MAX_ATTEMPTS - 1,
        );
        // The remaining fields mean what they mean on a queue; only the
        // attempts field is named differently.
        let mut task_level = FieldErrors::new();
        self.to_retry_config()
            .validate("retry_config", &mut task_level);
        errors.0.extend(
            task_level
                .0
                .into_iter()
                .filter(|e| e.field != "retry_config.max_attempts"),
        );
    }
}

/// Everything configurable about a job, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobConfig {
    pub schedule: String,
    pub time_zone: String,
    pub target: Target,
    pub attempt_deadline_s: u32,
    pub retry_config: JobRetryConfig,
    pub catch_up: CatchUp,
    pub header_style: HeaderStyle,
}

impl JobConfig {
    /// The parsed schedule; a stored configuration always parses.
    pub fn parsed_schedule(&self) -> Result<Schedule, crate::schedule::ScheduleError> {
        Schedule::parse(&self.schedule, &self.time_zone)
    }
}

/// `POST /v1/jobs`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateJob {
    pub name: String,
    pub schedule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    pub target: TargetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_deadline_s: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_config: Option<JobRetryConfigPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up: Option<CatchUp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_style: Option<HeaderStyle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

impl CreateJob {
    /// Validates every field at once; the error names each bad one.
    pub fn resolve(self) -> Result<JobConfig, FieldErrors> {
        let mut errors = FieldErrors::new();
        if let Err(e) = crate::names::check_job_name("name", &self.name) {
            errors.0.push(e);
        }
        let target = self.target.resolve("target", &mut errors);
        let config = finish(
            self.schedule,
            self.time_zone
                .unwrap_or_else(|| DEFAULT_TIME_ZONE.to_string()),
            target,
            self.attempt_deadline_s
                .unwrap_or(DEFAULT_ATTEMPT_DEADLINE_S),
            JobRetryConfig::default().apply(&self.retry_config.unwrap_or_default()),
            self.catch_up.unwrap_or_default(),
            self.header_style.unwrap_or_default(),
            &mut errors,
        );
        errors.into_result().map(|()| config.expect("no errors"))
    }
}

/// `PATCH /v1/jobs/{job}`: every field optional.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateJob {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_deadline_s: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_config: Option<JobRetryConfigPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_up: Option<CatchUp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_style: Option<HeaderStyle>,
    /// The `updated_at` the caller last read; another value gets 409
    /// `STALE_VERSION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub expected_updated_at: Option<Timestamp>,
}

/// An update whose target is already validated, ready to apply to the
/// stored configuration inside the store's transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobPatch {
    pub schedule: Option<String>,
    pub time_zone: Option<String>,
    pub target: Option<Target>,
    pub attempt_deadline_s: Option<u32>,
    pub retry_config: Option<JobRetryConfigPatch>,
    pub catch_up: Option<CatchUp>,
    pub header_style: Option<HeaderStyle>,
    pub expected_updated_at: Option<Timestamp>,
}

impl UpdateJob {
    /// Checks what can be checked without the stored job (the target).
    pub fn into_patch(self) -> Result<JobPatch, FieldErrors> {
        let mut errors = FieldErrors::new();
        let target = self.target.and_then(|t| t.resolve("target", &mut errors));
        errors.into_result().map(|()| JobPatch {
            schedule: self.schedule,
            time_zone: self.time_zone,
            target,
            attempt_deadline_s: self.attempt_deadline_s,
            retry_config: self.retry_config,
            catch_up: self.catch_up,
            header_style: self.header_style,
            expected_updated_at: self.expected_updated_at,
        })
    }
}

impl JobPatch {
    /// Whether the instants the job fires at change: the scheduler then
    /// starts over from the time of the change.
    pub fn changes_timing(&self, current: &JobConfig) -> bool {
        self.schedule
            .as_ref()
            .is_some_and(|s| *s != current.schedule)
            || self
                .time_zone
                .as_ref()
                .is_some_and(|z| *z != current.time_zone)
    }

    pub fn apply(&self, current: &JobConfig) -> Result<JobConfig, FieldErrors> {
        let mut errors = FieldErrors::new();
        let config = finish(
            self.schedule
                .clone()
                .unwrap_or_else(|| current.schedule.clone()),
            self.time_zone
                .clone()
                .unwrap_or_else(|| current.time_zone.clone()),
            Some(
                self.target
                    .clone()
                    .unwrap_or_else(|| current.target.clone()),
            ),
            self.attempt_deadline_s
                .unwrap_or(current.attempt_deadline_s),
            current
                .retry_config
                .apply(&self.retry_config.unwrap_or_default()),
            self.catch_up.unwrap_or(current.catch_up),
            self.header_style.unwrap_or(current.header_style),
            &mut errors,
        );
        errors.into_result().map(|()| config.expect("no errors"))
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    schedule: String,
    time_zone: String,
    target: Option<Target>,
    attempt_deadline_s: u32,
    retry_config: JobRetryConfig,
    catch_up: CatchUp,
    header_style: HeaderStyle,
    errors: &mut FieldErrors,
) -> Option<JobConfig> {
    if let Err(e) = Schedule::parse(&schedule, &time_zone) {
        errors.push(e.field(), e.message());
        // The parse stops at its first error; name a bad zone as well.
        if e.field() != "time_zone"
            && let Err(z) = crate::schedule::parse_time_zone(&time_zone)
        {
            errors.push(z.field(), z.message());
        }
    }
    errors.range(
        "attempt_deadline_s",
        attempt_deadline_s,
        MIN_DEADLINE_S,
        MAX_DEADLINE_S,
    );
    retry_config.validate(errors);
    if header_style == HeaderStyle::CloudTasks {
        errors.push(
            "header_style",
            "cloud_tasks is for tasks and queues; a job takes idem or cloud_scheduler",
        );
    }
    Some(JobConfig {
        schedule,
        time_zone,
        target: target?,
        attempt_deadline_s,
        retry_config,
        catch_up,
        header_style,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(body: serde_json::Value) -> Result<JobConfig, FieldErrors> {
        serde_json::from_value::<CreateJob>(body).unwrap().resolve()
    }

    fn fields(e: FieldErrors) -> Vec<String> {
        e.0.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn defaults_follow_the_spec() {
        let c = create(serde_json::json!({
            "name": "nightly", "schedule": "0 3 * * *",
            "target": {"url": "http://example.com/run"}
        }))
        .unwrap();
        assert_eq!(c.time_zone, "UTC");
        assert_eq!(c.attempt_deadline_s, 180);
        assert_eq!(c.retry_config.retry_count, 0);
        assert_eq!(c.retry_config.to_retry_config().max_attempts, 1);
        assert_eq!(c.catch_up, CatchUp::Latest);
        assert_eq!(c.header_style, HeaderStyle::Idem);
    }

    #[test]
    fn every_bad_field_is_named() {
        let e = create(serde_json::json!({
            "name": "bad name", "schedule": "61 * * * *", "time_zone": "Mars/Olympus",
            "target": {"url": "ftp://x"}, "attempt_deadline_s": 0,
            "retry_config": {"min_backoff_ms": 0, "max_backoff_ms": 5}
        }))
        .unwrap_err();
        let f = fields(e);
        for want in [
            "name",
            "time_zone",
            "target.url",
            "attempt_deadline_s",
            "retry_config.min_backoff_ms",
        ] {
            assert!(f.iter().any(|x| x == want), "{want} missing from {f:?}");
        }
    }

    #[test]
    fn an_invalid_schedule_is_named_when_the_zone_is_fine() {
        let e = create(serde_json::json!({
            "name": "j", "schedule": "61 * * * *", "target": {"url": "http://x/"}
        }))
        .unwrap_err();
        assert_eq!(fields(e), ["schedule"]);
    }

    #[test]
    fn a_patch_applies_over_the_current_config_and_revalidates() {
        let current = create(serde_json::json!({
            "name": "j", "schedule": "* * * * *", "target": {"url": "http://x/"},
            "retry_config": {"retry_count": 3}
        }))
        .unwrap();
        let patch = UpdateJob {
            schedule: Some("*/5 * * * *".into()),
            retry_config: Some(JobRetryConfigPatch {
                max_doublings: Some(2),
                ..Default::default()
            }),
            ..Default::default()
        }
        .into_patch()
        .unwrap();
        assert!(patch.changes_timing(&current));
        let next = patch.apply(&current).unwrap();
        assert_eq!(next.schedule, "*/5 * * * *");
        assert_eq!(next.retry_config.retry_count, 3);
        assert_eq!(next.retry_config.max_doublings, 2);

        let bad = JobPatch {
            time_zone: Some("Nowhere/Else".into()),
            ..Default::default()
        };
        assert_eq!(fields(bad.apply(&current).unwrap_err()), ["time_zone"]);
        assert!(!JobPatch::default().changes_timing(&current));
    }
}
