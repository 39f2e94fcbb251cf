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

use crate::idempotency::Completion;
use crate::records::{Job, Page, PageRequest, Task};
use crate::sql::{self, Offset, Row};
use crate::{Error, Result};
use async_trait::async_trait;
use idem_core::clock::{from_micros, to_micros};
use idem_core::job::{HeaderStyle, JobConfig, JobPatch, JobRetryConfig, JobState, RunKind};
use idem_core::queue::{MAX_BURST, MAX_CONCURRENCY, MAX_RATE, QueueConfig, RateLimits};
use idem_core::schedule::{CatchUp, due_instants, run_id};
use jiff::{SignedDuration, Timestamp};
use std::time::Duration;

/// The queue that holds an organization's runs. `~` cannot appear in a
/// queue name, so the API can neither create nor address it.
pub const JOBS_QUEUE: &str = "~jobs";

/// How long a finished run stays listed. A job's latest run is kept
/// regardless (until a newer one exists), so `last_run` survives a weekly
/// job's quiet days.
pub const RUN_RETENTION_S: u64 = 86_400;

/// The job queue's configuration: no limits of its own (a job fires what
/// its schedule says), runs kept for [`RUN_RETENTION_S`]. Retry policy and
/// deadline are each run's own.
pub(crate) fn jobs_queue_config() -> QueueConfig {
    QueueConfig {
        rate_limits: RateLimits {
            max_dispatches_per_second: MAX_RATE,
            max_burst_size: MAX_BURST,
            max_concurrent_dispatches: MAX_CONCURRENCY,
        },
        dedup_window_s: RUN_RETENTION_S,
        ..QueueConfig::default()
    }
}

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
        now.saturating_add(micros(self.lookahead))
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

/// What one pass of the scheduler did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FireReport {
    pub fired: Vec<FiredRun>,
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
        done: Option<Completion>,
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
        done: Option<Completion>,
    ) -> Result<Job>;
    /// Pausing stops new runs (runs already created finish); resuming
    /// schedules from now, without firing what came due while paused.
    async fn job_set_state(
        &self,
        org: &str,
        name: &str,
        state: JobState,
        done: Option<Completion>,
    ) -> Result<Job>;
    /// Deletes the job with all its runs; an attempt in flight finishes but
    /// its result is not recorded.
    async fn job_delete(&self, org: &str, name: &str) -> Result<()>;
    /// Creates a manual run due now, with now as its schedule time.
    async fn job_run_now(&self, org: &str, name: &str, done: Option<Completion>) -> Result<Task>;
    /// The job's runs, newest schedule time first.
    async fn job_runs(&self, org: &str, name: &str, page: &PageRequest) -> Result<Page<Task>>;
    async fn job_run_get(&self, org: &str, name: &str, run_id: &str) -> Result<Task>;

    /// Fires due enabled jobs, at most `max_jobs`, in one transaction.
    async fn scheduler_fire(&self, params: FireParams) -> Result<FireReport>;
}

pub(crate) const JOB_COLUMNS: &str = "j.name, j.schedule, j.time_zone, j.target, j.body_form, \
     j.body, j.attempt_deadline_s, j.retry_config, j.catch_up, j.header_style, j.state, \
     j.next_run_at, j.created_at, j.updated_at, j.since, j.last_fired_at";
const JOB_COLUMN_COUNT: usize = 16;

/// Selects jobs with their last run: the newest run whose schedule time
/// has come (runs created ahead of their instant are not "last" yet).
/// Parameters: now, org; callers append conditions from `$3` on.
///
/// The last run is found through the runs index, once per job:
/// PostgreSQL needs a `LATERAL` join for that (it would otherwise test the
/// subquery against every task), which SQLite lacks, but SQLite evaluates
/// the correlated subquery once per job and looks the run up by `uid`.
pub(crate) fn select_jobs(dialect: Dialect) -> String {
    let last_run = "SELECT * FROM tasks r WHERE r.org = j.org AND r.queue = '~jobs' \
         AND r.job = j.name AND r.schedule_time <= $1 ORDER BY r.schedule_time DESC LIMIT 1";
    let join = match dialect {
        Dialect::Postgres => format!("LEFT JOIN LATERAL ({last_run}) t ON true"),
        Dialect::Sqlite => format!(
            "LEFT JOIN tasks t ON t.uid = ({})",
            last_run.replacen("SELECT *", "SELECT r.uid", 1)
        ),
    };
    format!(
        "SELECT {JOB_COLUMNS}, {} FROM jobs j {join} WHERE j.org = $2",
        sql::task_columns_of("t")
    )
}

/// Where a query's text differs between the backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A job row with what only the scheduler needs.
pub(crate) struct JobRow {
    pub job: Job,
    pub since: i64,
    pub last_fired_at: Option<i64>,
}

fn corrupt(what: &str, value: &str) -> Error {
    Error::Internal(format!("unreadable {what} in store: {value:?}"))
}

/// Reads a row of [`select_jobs`].
pub(crate) fn job_row(r: &impl Row) -> Result<JobRow> {
    let mut row = job_columns(r)?;
    if r.opt_text(JOB_COLUMN_COUNT + 2)?.is_some() {
        row.job.last_run = Some(sql::task(&Offset(r, JOB_COLUMN_COUNT))?);
    }
    Ok(row)
}

/// Reads the [`JOB_COLUMNS`] of a row, without a last run.
pub(crate) fn job_columns(r: &impl Row) -> Result<JobRow> {
    let retry = r.text(7)?;
    let catch_up = r.text(8)?;
    let style = r.text(9)?;
    let state = r.text(10)?;
    let config = JobConfig {
        schedule: r.text(1)?,
        time_zone: r.text(2)?,
        target: sql::target(r, 3)?,
        attempt_deadline_s: r.i64(6)? as u32,
        retry_config: serde_json::from_str::<JobRetryConfig>(&retry)
            .map_err(|_| corrupt("job retry config", &retry))?,
        catch_up: CatchUp::parse(&catch_up).ok_or_else(|| corrupt("catch_up", &catch_up))?,
        header_style: HeaderStyle::parse(&style).ok_or_else(|| corrupt("header style", &style))?,
    };
    Ok(JobRow {
        job: Job {
            name: r.text(0)?,
            config,
            state: JobState::parse(&state).ok_or_else(|| corrupt("job state", &state))?,
            next_run_at: r.opt_i64(11)?.map(from_micros),
            last_run: None,
            created_at: from_micros(r.i64(12)?),
            updated_at: from_micros(r.i64(13)?),
        },
        since: r.i64(14)?,
        last_fired_at: r.opt_i64(15)?,
    })
}

/// A job configuration as column values, in the order of
/// [`SQL_INSERT_JOB`]'s `$3`–`$11`.
pub(crate) struct JobColumns {
    pub schedule: String,
    pub time_zone: String,
    pub target: String,
    pub body_form: Option<&'static str>,
    pub body: Option<Vec<u8>>,
    pub attempt_deadline_s: i64,
    pub retry_config: String,
    pub catch_up: &'static str,
    pub header_style: &'static str,
}

impl JobColumns {
    pub(crate) fn of(c: &JobConfig) -> JobColumns {
        let (target, body_form, body) = sql::target_columns(&c.target);
        JobColumns {
            schedule: c.schedule.clone(),
            time_zone: c.time_zone.clone(),
            target,
            body_form,
            body,
            attempt_deadline_s: i64::from(c.attempt_deadline_s),
            retry_config: sql::to_json(&c.retry_config),
            catch_up: c.catch_up.as_str(),
            header_style: c.header_style.as_str(),
        }
    }
}

/// Parameters: org, name, the nine [`JobColumns`], state, next_run_at, now
/// (created_at, updated_at and since).
pub(crate) const SQL_INSERT_JOB: &str = "INSERT INTO jobs (org, name, schedule, time_zone, \
     target, body_form, body, attempt_deadline_s, retry_config, catch_up, header_style, state, \
     next_run_at, created_at, updated_at, since) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $14) \
     ON CONFLICT (org, name) DO NOTHING";

/// Parameters: the nine [`JobColumns`], next_run_at, now, since,
/// last_fired_at, org, name.
pub(crate) const SQL_UPDATE_JOB: &str = "UPDATE jobs SET schedule = $1, time_zone = $2, \
     target = $3, body_form = $4, body = $5, attempt_deadline_s = $6, retry_config = $7, \
     catch_up = $8, header_style = $9, next_run_at = $10, updated_at = $11, since = $12, \
     last_fired_at = $13 WHERE org = $14 AND name = $15";

/// Parameters: state, next_run_at, now, since, last_fired_at, org, name.
pub(crate) const SQL_SET_JOB_STATE: &str = "UPDATE jobs SET state = $1, next_run_at = $2, \
     updated_at = $3, since = $4, last_fired_at = $5 WHERE org = $6 AND name = $7";

/// Deletes the scheduled runs created ahead of their instant, which carry
/// the configuration and state they were created under. Parameters: org,
/// job, now.
pub(crate) const SQL_DELETE_FUTURE_RUNS: &str = "DELETE FROM tasks WHERE org = $1 \
     AND queue = '~jobs' AND job = $2 AND run_kind = 'scheduled' AND status = 'pending' \
     AND attempt_count = 0 AND schedule_time > $3";

/// Parameters: org, config (JSON), now.
pub(crate) const SQL_ENSURE_JOBS_QUEUE: &str = "INSERT INTO queues \
     (org, name, state, config, created_at, updated_at) \
     VALUES ($1, '~jobs', 'running', $2, $3, $3) ON CONFLICT DO NOTHING";

/// Deletes a job's runs' attempts, then its runs. Parameters: org, job.
pub(crate) const SQL_DELETE_RUN_ATTEMPTS: &str = "DELETE FROM attempts WHERE task_uid IN \
     (SELECT uid FROM tasks WHERE org = $1 AND queue = '~jobs' AND job = $2)";
pub(crate) const SQL_DELETE_RUNS: &str =
    "DELETE FROM tasks WHERE org = $1 AND queue = '~jobs' AND job = $2";

/// Parameters: org, job, before (schedule time, exclusive, with the run ID
/// below), before run ID, limit.
pub(crate) fn select_runs() -> String {
    format!(
        "SELECT {} FROM tasks WHERE org = $1 AND queue = '~jobs' AND job = $2 \
         AND (schedule_time < $3 OR (schedule_time = $3 AND task_id < $4)) \
         ORDER BY schedule_time DESC, task_id DESC LIMIT $5",
        sql::TASK_COLUMNS
    )
}

/// Where a page of runs continues: `<schedule time µs>/<run id>`.
pub(crate) fn runs_cursor(page: &PageRequest) -> Result<(i64, String)> {
    match &page.after {
        None => Ok((i64::MAX, String::new())),
        Some(after) => after
            .split_once('/')
            .and_then(|(t, id)| Some((t.parse().ok()?, id.to_string())))
            .ok_or_else(|| {
                Error::Invalid(idem_core::FieldErrors(vec![idem_core::FieldError::new(
                    "page_token",
                    "is not a page token of this list",
                )]))
            }),
    }
}

pub(crate) fn runs_page(rows: Vec<Task>, limit: u32) -> Page<Task> {
    Page::from_rows(rows, limit, |t| {
        format!("{}/{}", to_micros(t.schedule_time), t.task_id)
    })
}

/// Inserts a run unless one exists for that instant. Parameters: org,
/// run_id, uid, target, body_form, body, schedule_time, deadline, retry
/// config, now, job, kind, header style.
pub(crate) const SQL_INSERT_RUN: &str = "INSERT INTO tasks (org, queue, task_id, uid, status, \
     target, body_form, body, schedule_time, next_attempt_at, dispatch_deadline_s, retry_config, \
     attempt_count, cancel_requested, created_at, job, run_kind, header_style) \
     VALUES ($1, '~jobs', $2, $3, 'pending', $4, $5, $6, $7, $7, $8, $9, 0, 0, $10, $11, $12, $13) \
     ON CONFLICT (org, queue, task_id) DO NOTHING";

/// One run to insert, as column values.
pub(crate) struct RunInsert {
    pub run_id: String,
    pub uid: String,
    pub cols: JobColumns,
    pub retry_config: String,
    pub schedule_time: i64,
    pub kind: &'static str,
}

impl RunInsert {
    pub(crate) fn new(org: &str, job: &Job, kind: RunKind, schedule_time: i64) -> RunInsert {
        // Scheduled instants are whole seconds. A manual run requested at
        // one would take that instant's run ID, and the scheduler would
        // then skip the instant (or the manual run would fail), so a manual
        // run never has a whole-second schedule time: it is moved 1 µs
        // earlier, which keeps it due at once.
        let schedule_time = match kind {
            RunKind::Manual if schedule_time.rem_euclid(1_000_000) == 0 => schedule_time - 1,
            _ => schedule_time,
        };
        RunInsert {
            run_id: run_id(org, &job.name, from_micros(schedule_time)),
            uid: uuid::Uuid::now_v7().simple().to_string(),
            cols: JobColumns::of(&job.config),
            retry_config: sql::to_json(&job.config.retry_config.to_retry_config()),
            schedule_time,
            kind: kind.as_str(),
        }
    }
}

/// Parameters: last_fired_at, next_run_at, org, name.
pub(crate) const SQL_FIRED: &str = "UPDATE jobs SET last_fired_at = $1, next_run_at = $2 \
     WHERE org = $3 AND name = $4";

/// Jobs with a run to create by the horizon (now + lookahead), oldest
/// instant first; read with [`job_columns`]. Parameters: horizon, limit.
pub(crate) fn select_due() -> String {
    format!(
        "SELECT {JOB_COLUMNS}, j.org FROM jobs j \
         WHERE j.next_run_at IS NOT NULL AND j.next_run_at <= $1 \
         ORDER BY j.next_run_at LIMIT $2"
    )
}

/// The index of the org column in [`select_due`].
pub(crate) const DUE_ORG_COLUMN: usize = JOB_COLUMN_COUNT;

pub(crate) const SQL_NEXT_DUE: &str =
    "SELECT min(next_run_at) FROM jobs WHERE next_run_at IS NOT NULL";

/// What firing one due job does.
pub(crate) struct Plan {
    pub runs: Vec<RunInsert>,
    pub last_fired_at: Option<i64>,
    pub next_run_at: Option<i64>,
}

/// Most runs one job gets ahead of their instants in one pass.
const MAX_AHEAD: usize = 1000;

/// Decides a due job's runs at `now` from what the store recorded: the
/// instants that came (the catch-up policy deciding about missed ones),
/// then those due by `now + lookahead`.
pub(crate) fn plan(org: &str, row: &JobRow, now: i64, params: &FireParams) -> Result<Plan> {
    let schedule = stored_schedule(&row.job.config)?;
    let tolerance = SignedDuration::try_from(params.tolerance).unwrap_or(SignedDuration::MAX);
    let mut due = due_instants(
        &schedule,
        row.last_fired_at.map(from_micros),
        from_micros(row.since),
        from_micros(now),
        row.job.config.catch_up,
        tolerance,
    );
    let horizon = params.horizon(now);
    let mut cursor = [Some(now), Some(row.since - 1), row.last_fired_at]
        .into_iter()
        .flatten()
        .chain(due.last().map(|t| to_micros(*t)))
        .max()
        .unwrap_or(now);
    let mut ahead = 0;
    while ahead < MAX_AHEAD {
        match schedule.next_after(from_micros(cursor)) {
            Some(x) if to_micros(x) <= horizon => {
                due.push(x);
                cursor = to_micros(x);
                ahead += 1;
            }
            _ => break,
        }
    }
    let runs: Vec<RunInsert> = due
        .iter()
        .map(|t| RunInsert::new(org, &row.job, RunKind::Scheduled, to_micros(*t)))
        .collect();
    Ok(Plan {
        last_fired_at: due.last().map(|t| to_micros(*t)).or(row.last_fired_at),
        next_run_at: schedule
            .next_after(from_micros(cursor.max(horizon)))
            .map(to_micros),
        runs,
    })
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

fn stored_schedule(config: &JobConfig) -> Result<idem_core::schedule::Schedule> {
    config
        .parsed_schedule()
        .map_err(|e| Error::Internal(format!("stored schedule does not parse: {e:?}")))
}

/// The first instant at or after `since` that `config` fires, for a job
/// (re)starting its schedule at `since`.
pub(crate) fn first_run_at(config: &JobConfig, since: i64) -> Result<Option<i64>> {
    let schedule = config.parsed_schedule().map_err(|e| {
        Error::Invalid(idem_core::FieldErrors(vec![idem_core::FieldError::new(
            e.field(),
            e.message(),
        )]))
    })?;
    Ok(schedule.next_after(from_micros(since - 1)).map(to_micros))
}

/// Where a job's schedule stands after a change at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Restart {
    pub next_run_at: Option<i64>,
    pub since: i64,
    pub last_fired_at: Option<i64>,
}

impl Restart {
    /// Runs created ahead of their instant are deleted with every change
    /// (they carry the old configuration, or should not fire at all), so
    /// the job counts as fired up to now at most, and the next pass
    /// creates what is due again.
    fn after(
        row: &JobRow,
        config: &JobConfig,
        state: JobState,
        since: i64,
        now: i64,
    ) -> Result<Restart> {
        let last_fired_at = row.last_fired_at.map(|l| l.min(now));
        let next_run_at = match state {
            JobState::Paused => None,
            JobState::Enabled => {
                let from = last_fired_at.unwrap_or(i64::MIN).max(since - 1);
                stored_schedule(config)?
                    .next_after(from_micros(from))
                    .map(to_micros)
            }
        };
        Ok(Restart {
            next_run_at,
            since,
            last_fired_at,
        })
    }
}

/// A state change at `now`. Resuming restarts the schedule from now;
/// pausing clears the next run. `None`: nothing changes.
pub(crate) fn state_change(row: &JobRow, state: JobState, now: i64) -> Result<Option<Restart>> {
    if state == row.job.state {
        return Ok(None);
    }
    let since = match state {
        JobState::Enabled => now,
        JobState::Paused => row.since,
    };
    Restart::after(row, &row.job.config, state, since, now).map(Some)
}

/// An update's new configuration and where its schedule stands, after the
/// optimistic-concurrency check. A new schedule or time zone restarts the
/// schedule from now.
pub(crate) fn update(row: &JobRow, patch: &JobPatch, now: i64) -> Result<(JobConfig, Restart)> {
    if let Some(expected) = patch.expected_updated_at
        && expected != row.job.updated_at
    {
        return Err(Error::Stale(format!(
            "job '{}' was updated at {}, not at the expected {expected}",
            row.job.name, row.job.updated_at
        )));
    }
    let next = patch.apply(&row.job.config).map_err(Error::Invalid)?;
    let since = if patch.changes_timing(&row.job.config) {
        now
    } else {
        row.since
    };
    let restart = Restart::after(row, &next, row.job.state, since, now)?;
    Ok((next, restart))
}

/// The state a job is created in.
pub(crate) fn initial_state(paused: bool) -> JobState {
    if paused {
        JobState::Paused
    } else {
        JobState::Enabled
    }
}
