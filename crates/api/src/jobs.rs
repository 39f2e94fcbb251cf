//! `/v1/jobs` and `/v1/schedules/preview`.

use crate::tasks::Target;
use idem_core::job::{HeaderStyle, JobRetryConfig, JobState, RunKind};
use idem_core::schedule::CatchUp;
use idem_core::task::{Attempt, TaskState};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// A cron job as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = JobView))]
pub struct Job {
    /// Unique per organization.
    pub name: String,
    /// The cron expression.
    pub schedule: String,
    /// The IANA time zone the schedule is evaluated in.
    pub time_zone: String,
    /// What each run delivers.
    pub target: Target,
    /// How long the target has to answer, in seconds.
    pub attempt_deadline_s: u32,
    /// How failed runs are retried.
    pub retry_config: JobRetryConfig,
    /// What happens to instants missed while no scheduler ran.
    pub catch_up: CatchUp,
    /// Which headers runs carry.
    pub header_style: HeaderStyle,
    /// `enabled` or `paused`.
    pub state: JobState,
    /// The next scheduled instant; null while paused.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub next_run_time: Option<Timestamp>,
    /// The most recent run.
    pub last_run: Option<Run>,
    /// When the job was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When its configuration or state last changed: the version an update
    /// names in `expected_updated_at`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub updated_at: Timestamp,
    /// Why the scheduler paused the job: it could not fire it (its stored
    /// schedule no longer parses). Null otherwise; cleared when the job is
    /// changed or resumed.
    #[serde(default)]
    pub paused_reason: Option<String>,
}

/// One run of a job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = RunView))]
pub struct Run {
    /// Lowercase hex SHA-256 of `<org>/<job>/<schedule time>`: the same on
    /// every node and retry, and the `Idempotency-Key` the target receives.
    pub run_id: String,
    /// The job's name.
    pub job: String,
    /// The instant it stands for (a manual run's: when it was asked for).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub schedule_time: Timestamp,
    /// `scheduled` or `manual`.
    pub kind: RunKind,
    /// Where the run is in its life: a run is dispatched like a task.
    pub state: TaskState,
    /// Attempts made so far.
    pub attempt_count: u32,
    /// The latest attempt.
    pub last_attempt: Option<Attempt>,
    /// When the run was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When it reached a final state.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub finished_at: Option<Timestamp>,
}

/// `POST /v1/schedules/preview`: the next instants of a schedule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PreviewRequest {
    /// The cron expression.
    pub schedule: String,
    /// IANA time zone (default `UTC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Instants strictly after this one; now when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub after: Option<Timestamp>,
    /// 1–1000, default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
}

impl PreviewRequest {
    /// The next instants of `schedule` in UTC after now.
    pub fn new(schedule: impl Into<String>) -> Self {
        PreviewRequest {
            schedule: schedule.into(),
            ..PreviewRequest::default()
        }
    }
}

/// The answer to a preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PreviewView))]
pub struct Preview {
    /// The instants, ascending, computed as the scheduler would.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub times: Vec<Timestamp>,
}
