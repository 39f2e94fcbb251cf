//! Cron jobs and their runs: the storage contract and the rules both
//! backends apply inside their transactions.
//!
//! # Runs are tasks
//!
//! A run is a task of the organization's job queue ([`JOBS_QUEUE`], a name
//! no user queue can take, created with the first job), whose `task_id` is
//! the run ID and whose `job`, `run_kind` and `header_style` columns say
//! whose run it is. Runs are therefore claimed, leased, retried and swept
//! by the dispatcher's one protocol, with the job's retry policy and
//! attempt deadline copied onto each run when it is created.
//!
//! # Once per instant
//!
//! A job row records the latest instant it created a run for
//! (`last_fired_at`) and the next one without a run (`next_run_at`).
//! Runs are created up to a lookahead ahead of their instant, as tasks
//! scheduled for it, so that a minute's thousands of runs are waiting for
//! the dispatcher when the minute comes; a change to the job (pause, update)
//! deletes the runs created ahead and lets them be created again. Firing a
//! job reads its row under a lock
//! (the writer thread on SQLite, `FOR UPDATE SKIP LOCKED` on PostgreSQL),
//! inserts the runs the catch-up policy asks for and advances both columns
//! in the same transaction. A second node either skips the locked row or
//! reads it already advanced; the run's primary key (job queue, run ID)
//! stops a duplicate even if that reasoning ever failed. What was missed
//! during downtime is decided from these columns, never from memory, so a
//! restart cannot fire an instant twice.

use crate::Result;
use crate::idempotency::KeyCompletion;
use crate::records::{Attempt, Job, Page, PageRequest, Task};
use async_trait::async_trait;
use idem_core::job::{JobConfig, JobPatch, JobState};
use jiff::Timestamp;
use std::time::Duration;

/// The queue that holds an organization's runs. `~` cannot appear in a
/// queue name, so the API can neither create nor address it.
pub const JOBS_QUEUE: &str = "~jobs";

/// How long a finished run stays listed. A job's latest run is kept
/// regardless (until a newer one exists), so `last_run` survives a weekly
/// job's quiet days.
pub const RUN_RETENTION_S: u64 = 86_400;

/// What one pass of the scheduler asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireParams {
    /// Most jobs to fire in this transaction.
    pub max_jobs: u32,
    /// How late an instant may be and still count as on time rather than
    /// missed ([`idem_core::schedule::ON_TIME_TOLERANCE`] by default).
    pub tolerance: Duration,
    /// How far ahead runs are created: a run due within this much of now
    /// is created now, as a task scheduled for its instant, so that the
    /// dispatcher alone stands between the instant and the delivery.
    pub lookahead: Duration,
}

impl FireParams {
    /// The latest instant (µs) a pass at `now` creates runs for.
    pub(crate) fn horizon(&self, now: i64) -> i64 {
        now.saturating_add(crate::tables::idempotency::micros(self.lookahead))
    }
}

/// A run the scheduler created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiredRun {
    pub org: String,
    pub job: String,
    pub run_id: String,
    pub schedule_time: Timestamp,
    /// When the run was created: `created_at - schedule_time` is the
    /// scheduler's lag.
    pub created_at: Timestamp,
}

/// A job the scheduler paused because it could not fire it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PausedJob {
    pub org: String,
    pub job: String,
    /// What was wrong, as the job's `paused_reason` now says.
    pub reason: String,
}

/// What one pass of the scheduler did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FireReport {
    pub fired: Vec<FiredRun>,
    /// Jobs that could not be fired (their stored schedule no longer
    /// parses): paused, so that the other jobs keep firing.
    pub paused: Vec<PausedJob>,
    /// Jobs looked at (fired, or skipped by their catch-up policy).
    pub jobs: u32,
    /// The earliest `next_run_at` of any enabled job after this pass, as far
    /// as this transaction could see; jobs locked by another node are not.
    pub next_at: Option<Timestamp>,
}

#[async_trait]
pub trait JobStore: Send + Sync {
    /// Creates a job, and its organization's job queue if needed.
    async fn job_create(
        &self,
        org: &str,
        name: &str,
        config: &JobConfig,
        paused: bool,
        done: Option<KeyCompletion>,
    ) -> Result<Job>;
    async fn job_get(&self, org: &str, name: &str) -> Result<Job>;
    async fn job_list(&self, org: &str, page: &PageRequest) -> Result<Page<Job>>;
    /// Applies `patch` to the stored configuration, validating the result,
    /// after checking `patch.expected_updated_at` ([`Error::Stale`]). A new
    /// schedule or time zone takes effect from now: instants before the
    /// change are not fired late.
    async fn job_update(
        &self,
        org: &str,
        name: &str,
        patch: &JobPatch,
        done: Option<KeyCompletion>,
    ) -> Result<Job>;
    /// Pausing stops new runs (runs already created finish); resuming
    /// schedules from now, without firing what came due while paused.
    async fn job_set_state(
        &self,
        org: &str,
        name: &str,
        state: JobState,
        done: Option<KeyCompletion>,
    ) -> Result<Job>;
    /// Deletes the job with all its runs; an attempt in flight finishes but
    /// its result is not recorded.
    async fn job_delete(&self, org: &str, name: &str) -> Result<()>;
    /// Creates a manual run due now, with now as its schedule time.
    async fn job_run_now(&self, org: &str, name: &str, done: Option<KeyCompletion>)
    -> Result<Task>;
    /// The job's runs, newest schedule time first.
    async fn job_runs(&self, org: &str, name: &str, page: &PageRequest) -> Result<Page<Task>>;
    async fn job_run_get(&self, org: &str, name: &str, run_id: &str) -> Result<Task>;
    /// One page of a run's attempts, oldest first, as a task's.
    async fn job_run_attempts(
        &self,
        org: &str,
        name: &str,
        run_id: &str,
        page: &PageRequest,
    ) -> Result<Page<Attempt>>;

    /// Fires due enabled jobs, at most `max_jobs`, in one transaction.
    async fn scheduler_fire(&self, params: FireParams) -> Result<FireReport>;

    /// Deletes the runs created ahead of their instant, never attempted,
    /// whose instant is older than `tolerance` and which their job's
    /// `catch_up` would not have fired: instants missed while every node
    /// was down, judged as if their rows had not been written yet. A node
    /// calls it when it starts, before its dispatcher may deliver them;
    /// later, a run that is late has a slow dispatcher, not a missed
    /// instant, and is left alone. Answers how many runs were dropped.
    async fn scheduler_drop_missed(&self, tolerance: Duration) -> Result<u64>;
}
