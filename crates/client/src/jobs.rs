//! `/v1/jobs` and `/v1/schedules/preview` (API.md §5, "Scheduler: cron jobs").

use crate::client::{Call, Client, Payload, Response};
use crate::error::Error;
use crate::list::ListOptions;
use crate::tasks::NewTarget;
use idem_api::{
    Attempt, CatchUp, CreateJob, HeaderStyle, Job, JobRetryConfigPatch, List, Preview,
    PreviewRequest, Run, TaskState, UpdateJob,
};
use jiff::Timestamp;
use reqwest::Method;

/// A run goes through the states of a task: it is dispatched like one.
pub type RunState = TaskState;

/// Job settings, each optional: on create, unset fields take the server's
/// defaults; on update, they keep their values. Sent as fields of
/// [`CreateJob`] and [`UpdateJob`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobConfig {
    /// IANA time zone (default `UTC`).
    pub time_zone: Option<String>,
    /// 1–1800 seconds (default 180).
    pub attempt_deadline_s: Option<u32>,
    /// Retry policy.
    pub retry_config: Option<JobRetryConfigPatch>,
    /// Missed instants (default `latest`).
    pub catch_up: Option<CatchUp>,
    /// Run headers (default `idem`).
    pub header_style: Option<HeaderStyle>,
}

/// A job to create.
#[derive(Debug, Clone)]
pub struct NewJob {
    /// 1–100 of `[A-Za-z0-9_-]`, unique per organization.
    pub name: String,
    /// A 5-field cron expression, 6 with seconds first, or `@daily` and
    /// the like.
    pub schedule: String,
    /// What each run delivers. A [`Body::Upload`](crate::Body::Upload) is
    /// sent as `body_base64`, its content type as the `Content-Type` header
    /// unless one is given: the route takes JSON only.
    pub target: NewTarget,
    /// The other settings.
    pub config: JobConfig,
    /// Create it paused.
    pub paused: bool,
}

impl NewJob {
    /// A job firing `target` on `schedule` (UTC), with the server's
    /// defaults for everything else.
    pub fn new(name: impl Into<String>, schedule: impl Into<String>, target: NewTarget) -> Self {
        NewJob {
            name: name.into(),
            schedule: schedule.into(),
            target,
            config: JobConfig::default(),
            paused: false,
        }
    }

    /// Evaluates the schedule in this IANA time zone.
    pub fn time_zone(mut self, zone: impl Into<String>) -> Self {
        self.config.time_zone = Some(zone.into());
        self
    }

    /// Creates the job paused.
    pub fn paused(mut self) -> Self {
        self.paused = true;
        self
    }
}

/// Changes to a job: unset fields keep their values.
#[derive(Debug, Clone, Default)]
pub struct JobUpdate {
    /// A new cron expression.
    pub schedule: Option<String>,
    /// A new target, replacing the old one whole.
    pub target: Option<NewTarget>,
    /// Other settings to change.
    pub config: JobConfig,
    /// Apply only if the job's `updated_at` is still this; otherwise 409
    /// `STALE_VERSION` and nothing changes.
    pub expected_updated_at: Option<Timestamp>,
}

impl NewJob {
    fn payload(&self) -> Result<Payload, Error> {
        let c = self.config.clone();
        Payload::json(&CreateJob {
            name: self.name.clone(),
            schedule: self.schedule.clone(),
            time_zone: c.time_zone,
            target: self.target.wire_inline()?,
            attempt_deadline_s: c.attempt_deadline_s,
            retry_config: c.retry_config,
            catch_up: c.catch_up,
            header_style: c.header_style,
            paused: self.paused.then_some(true),
        })
    }
}

impl JobUpdate {
    fn payload(&self) -> Result<Payload, Error> {
        let c = self.config.clone();
        Payload::json(&UpdateJob {
            schedule: self.schedule.clone(),
            time_zone: c.time_zone,
            target: self
                .target
                .as_ref()
                .map(NewTarget::wire_inline)
                .transpose()?,
            attempt_deadline_s: c.attempt_deadline_s,
            retry_config: c.retry_config,
            catch_up: c.catch_up,
            header_style: c.header_style,
            expected_updated_at: self.expected_updated_at,
        })
    }
}

/// Job operations.
impl Client {
    /// `POST /v1/jobs` (writer): 201 with the job, or 409
    /// `JOB_ALREADY_EXISTS`. An invalid schedule or time zone is 400
    /// `INVALID_ARGUMENT` naming the field.
    pub async fn create_job(&self, job: &NewJob) -> Result<Response<Job>, Error> {
        self.create_job_with(job, None).await
    }

    /// [`Client::create_job`] with an idempotency key of the caller's: reuse
    /// the key of an earlier call whose answer was lost to get its result.
    pub async fn create_job_with(
        &self,
        job: &NewJob,
        idempotency_key: Option<String>,
    ) -> Result<Response<Job>, Error> {
        let mut call = Call::new(Method::POST, ["jobs"]).payload(job.payload()?);
        call.idempotency_key = idempotency_key;
        self.execute(call).await
    }

    /// `GET /v1/jobs`: one page of jobs.
    pub async fn list_jobs(&self, page: &ListOptions) -> Result<Response<List<Job>>, Error> {
        self.execute(page.apply(Call::new(Method::GET, ["jobs"])))
            .await
    }

    /// `GET /v1/jobs/{job}`.
    pub async fn get_job(&self, name: &str) -> Result<Response<Job>, Error> {
        self.execute(Call::new(Method::GET, ["jobs", name])).await
    }

    /// `PATCH /v1/jobs/{job}` (writer): changes the given settings; 409
    /// `STALE_VERSION` when `expected_updated_at` is set and stale.
    pub async fn update_job(&self, name: &str, update: &JobUpdate) -> Result<Response<Job>, Error> {
        let call = Call::new(Method::PATCH, ["jobs", name]).payload(update.payload()?);
        self.execute(call).await
    }

    /// `DELETE /v1/jobs/{job}` (writer).
    pub async fn delete_job(&self, name: &str) -> Result<Response<()>, Error> {
        self.execute(Call::new(Method::DELETE, ["jobs", name]))
            .await
    }

    /// `POST /v1/jobs/{job}/pause` (writer): the schedule stops firing.
    pub async fn pause_job(&self, name: &str) -> Result<Response<Job>, Error> {
        self.execute(Call::new(Method::POST, ["jobs", name, "pause"]))
            .await
    }

    /// `POST /v1/jobs/{job}/resume` (writer).
    pub async fn resume_job(&self, name: &str) -> Result<Response<Job>, Error> {
        self.execute(Call::new(Method::POST, ["jobs", name, "resume"]))
            .await
    }

    /// `POST /v1/jobs/{job}/run` (writer): 201 with a manual run started
    /// now. It has an identity of its own, so the next scheduled run still
    /// happens.
    pub async fn run_job(&self, name: &str) -> Result<Response<Run>, Error> {
        self.execute(Call::new(Method::POST, ["jobs", name, "run"]))
            .await
    }

    /// `GET /v1/jobs/{job}/runs/{run_id}/attempts`: one page of a run's
    /// attempts kept, oldest first.
    pub async fn run_attempts(
        &self,
        name: &str,
        run_id: &str,
        page: &ListOptions,
    ) -> Result<Response<List<Attempt>>, Error> {
        let call = Call::new(Method::GET, ["jobs", name, "runs", run_id, "attempts"]);
        self.execute(page.apply(call)).await
    }

    /// `GET /v1/jobs/{job}/runs`: one page of runs, newest first.
    pub async fn list_runs(
        &self,
        name: &str,
        page: &ListOptions,
    ) -> Result<Response<List<Run>>, Error> {
        self.execute(page.apply(Call::new(Method::GET, ["jobs", name, "runs"])))
            .await
    }

    /// `GET /v1/jobs/{job}/runs/{run_id}`.
    pub async fn get_run(&self, name: &str, run_id: &str) -> Result<Response<Run>, Error> {
        self.execute(Call::new(Method::GET, ["jobs", name, "runs", run_id]))
            .await
    }

    /// `POST /v1/schedules/preview` (reader): the instants a schedule would
    /// fire at, DST changes included.
    pub async fn preview_schedule(
        &self,
        preview: &PreviewRequest,
    ) -> Result<Response<Preview>, Error> {
        let call =
            Call::new(Method::POST, ["schedules", "preview"]).payload(Payload::json(preview)?);
        self.execute(call).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::Body;
    use serde_json::json;

    fn json_of(payload: Payload) -> serde_json::Value {
        match payload {
            Payload::Json(b) => serde_json::from_slice(&b).unwrap(),
            _ => panic!("expected JSON"),
        }
    }

    #[test]
    fn a_new_job_sends_only_what_is_set() {
        let job = NewJob::new("nightly", "0 3 * * *", NewTarget::new("http://h/x"));
        assert_eq!(
            json_of(job.payload().unwrap()),
            json!({"name": "nightly", "schedule": "0 3 * * *", "target": {"url": "http://h/x"}})
        );
        let mut job = NewJob::new("n", "@hourly", NewTarget::new("http://h/x").method("PUT"))
            .time_zone("Europe/Berlin")
            .paused();
        job.config.catch_up = Some(CatchUp::All);
        job.config.header_style = Some(HeaderStyle::CloudScheduler);
        job.config.attempt_deadline_s = Some(30);
        job.config.retry_config = Some(JobRetryConfigPatch {
            retry_count: Some(2),
            ..Default::default()
        });
        assert_eq!(
            json_of(job.payload().unwrap()),
            json!({"name": "n", "schedule": "@hourly", "time_zone": "Europe/Berlin",
                   "target": {"url": "http://h/x", "method": "PUT"},
                   "attempt_deadline_s": 30, "retry_config": {"retry_count": 2},
                   "catch_up": "all", "header_style": "cloud_scheduler", "paused": true})
        );
    }

    #[test]
    fn uploads_are_inlined_as_base64_with_their_content_type() {
        let target = NewTarget::new("http://h/x").body(Body::upload(vec![0, 255], Some("a/b")));
        let sent = json_of(NewJob::new("n", "@daily", target).payload().unwrap());
        assert_eq!(
            sent["target"],
            json!({"url": "http://h/x", "body_base64": "AP8=", "headers": {"Content-Type": "a/b"}})
        );
        let target = NewTarget::new("http://h/x")
            .header("content-type", "text/csv")
            .body(Body::upload(vec![1], Some("a/b")));
        let sent = json_of(NewJob::new("n", "@daily", target).payload().unwrap());
        assert_eq!(
            sent["target"]["headers"],
            json!({"content-type": "text/csv"})
        );
    }

    #[test]
    fn an_update_sends_the_changes_and_the_expected_version() {
        let at: Timestamp = "2026-10-16T12:00:00Z".parse().unwrap();
        let update = JobUpdate {
            schedule: Some("*/5 * * * *".into()),
            expected_updated_at: Some(at),
            ..Default::default()
        };
        assert_eq!(
            json_of(update.payload().unwrap()),
            json!({"schedule": "*/5 * * * *", "expected_updated_at": "2026-10-16T12:00:00Z"})
        );
        assert_eq!(json_of(JobUpdate::default().payload().unwrap()), json!({}));
    }

    #[test]
    fn a_job_view_decodes() {
        let job: Job = serde_json::from_value(json!({
            "name": "n", "schedule": "@daily", "time_zone": "UTC",
            "target": {"url": "http://h/x", "method": "POST", "headers": {}},
            "attempt_deadline_s": 180,
            "retry_config": {"retry_count": 0, "max_retry_duration_s": 0,
                             "min_backoff_ms": 5000, "max_backoff_ms": 3600000,
                             "max_doublings": 5},
            "catch_up": "latest", "header_style": "idem", "state": "enabled",
            "next_run_time": "2026-10-17T00:00:00Z",
            "last_run": {"run_id": "ab", "job": "n", "schedule_time": "2026-10-16T00:00:00Z",
                         "kind": "scheduled", "state": "succeeded", "attempt_count": 1,
                         "last_attempt": null, "created_at": "2026-10-16T00:00:00Z",
                         "finished_at": "2026-10-16T00:00:01Z"},
            "created_at": "2026-10-01T00:00:00Z", "updated_at": "2026-10-01T00:00:00Z"
        }))
        .unwrap();
        assert_eq!(job.catch_up, CatchUp::Latest);
        assert_eq!(job.last_run.unwrap().state, RunState::Succeeded);
    }
}
