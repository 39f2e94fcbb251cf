//! Jobs, and their runs (tasks of the organization's job queue): creating,
//! changing and firing them. See [`crate::jobs`] for why runs are tasks and
//! how an instant fires once.

use super::idempotency::Keyed;
use super::stats::count_inserted;
use super::{after, limit, not_found, released, tasks, within_quota};
use crate::driver::{Conn, Dialect, args};
use crate::jobs::*;
use crate::quotas::{Quota, Quotas};
use crate::records::{Attempt, Job, Page, PageRequest, Task};
use crate::sql::{self, Offset, Row};
use crate::task_row::{self, insert_task, stored_bytes, task_columns};
use crate::{Error, Result};
use futures_util::future::try_join_all;
use idem_core::clock::{from_micros, to_micros};
use idem_core::job::{HeaderStyle, JobConfig, JobPatch, JobRetryConfig, JobState, RunKind};
use idem_core::queue::{MAX_BURST, MAX_CONCURRENCY, MAX_RATE, QueueConfig, RateLimits};
use idem_core::schedule::{CatchUp, due_instants, missed_runs_to_drop, run_id};
use jiff::SignedDuration;
use std::collections::BTreeMap;

/// The job queue's configuration: no limits of its own (a job fires what
/// its schedule says), runs kept for [`RUN_RETENTION_S`]. Retry policy and
/// deadline are each run's own.
fn jobs_queue_config() -> QueueConfig {
    QueueConfig {
        rate_limits: RateLimits {
            max_dispatches_per_second: MAX_RATE,
            max_burst_size: MAX_BURST,
            max_concurrent_dispatches: MAX_CONCURRENCY,
        },
        dedup_window_s: RUN_RETENTION_S,
        // A job's failed runs are seen through the job, not redriven.
        failed_retention_s: RUN_RETENTION_S,
        ..QueueConfig::default()
    }
}

const JOB_COLUMNS: &str = "j.name, j.schedule, j.time_zone, j.target, j.body_form, \
     j.body, j.attempt_deadline_s, j.retry_config, j.catch_up, j.header_style, j.state, \
     j.next_run_at, j.created_at, j.updated_at, j.since, j.last_fired_at, j.paused_reason";
const JOB_COLUMN_COUNT: usize = 17;

/// Selects jobs with their last run: the newest run whose schedule time
/// has come (runs created ahead of their instant are not "last" yet).
/// Parameters: now, org; callers append conditions from `$3` on.
///
/// The last run is found through the runs index, once per job:
/// PostgreSQL needs a `LATERAL` join for that (it would otherwise test the
/// subquery against every task), which SQLite lacks, but SQLite evaluates
/// the correlated subquery once per job and looks the run up by `uid`.
fn select_jobs(dialect: Dialect) -> String {
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
        task_columns!(t)
    )
}

/// A job row with what only the scheduler needs.
struct JobRow {
    pub job: Job,
    pub since: i64,
    pub last_fired_at: Option<i64>,
}

fn corrupt(what: &str, value: &str) -> Error {
    Error::Internal(format!("unreadable {what} in store: {value:?}"))
}

/// Reads a row of [`select_jobs`].
fn job_row(r: &impl Row) -> Result<JobRow> {
    let mut row = job_columns(r)?;
    // A job without a run joins a row of NULLs.
    if r.opt_text(JOB_COLUMN_COUNT + task_row::col::uid)?.is_some() {
        row.job.last_run = Some(task_row::read(&Offset(r, JOB_COLUMN_COUNT))?);
    }
    Ok(row)
}

/// Reads the [`JOB_COLUMNS`] of a row, without a last run.
fn job_columns(r: &impl Row) -> Result<JobRow> {
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
            paused_reason: r.opt_text(16)?,
        },
        since: r.i64(14)?,
        last_fired_at: r.opt_i64(15)?,
    })
}

/// A job configuration as column values, in the order of
/// [`SQL_INSERT_JOB`]'s `$3`–`$11`.
struct JobColumns {
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
const SQL_INSERT_JOB: &str = "INSERT INTO jobs (org, name, schedule, time_zone, \
     target, body_form, body, attempt_deadline_s, retry_config, catch_up, header_style, state, \
     next_run_at, created_at, updated_at, since) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $14) \
     ON CONFLICT (org, name) DO NOTHING";

/// Parameters: the nine [`JobColumns`], next_run_at, now, since,
/// last_fired_at, org, name.
const SQL_UPDATE_JOB: &str = "UPDATE jobs SET schedule = $1, time_zone = $2, \
     target = $3, body_form = $4, body = $5, attempt_deadline_s = $6, retry_config = $7, \
     catch_up = $8, header_style = $9, next_run_at = $10, updated_at = $11, since = $12, \
     last_fired_at = $13, paused_reason = NULL WHERE org = $14 AND name = $15";

/// Parameters: state, next_run_at, now, since, last_fired_at, org, name.
const SQL_SET_JOB_STATE: &str = "UPDATE jobs SET state = $1, next_run_at = $2, \
     updated_at = $3, since = $4, last_fired_at = $5, paused_reason = NULL \
     WHERE org = $6 AND name = $7";

/// Pauses a job the scheduler cannot fire, saying why. Parameters: reason,
/// now, org, name.
const SQL_PAUSE_BROKEN: &str = "UPDATE jobs SET state = 'paused', next_run_at = NULL, \
     paused_reason = $1, updated_at = $2 WHERE org = $3 AND name = $4";

/// Deletes the scheduled runs created ahead of their instant, which carry
/// the configuration and state they were created under. Parameters: org,
/// job, now.
const SQL_DELETE_FUTURE_RUNS: &str = "DELETE FROM tasks WHERE org = $1 \
     AND queue = '~jobs' AND job = $2 AND run_kind = 'scheduled' AND status = 'pending' \
     AND attempt_count = 0 AND schedule_time > $3";

/// Parameters: org, config (JSON), now.
const SQL_ENSURE_JOBS_QUEUE: &str = "INSERT INTO queues \
     (org, name, state, config, created_at, updated_at) \
     VALUES ($1, '~jobs', 'running', $2, $3, $3) ON CONFLICT DO NOTHING";

/// Deletes a job's runs' attempts, then its runs. Parameters: org, job.
const SQL_DELETE_RUN_ATTEMPTS: &str = "DELETE FROM attempts WHERE task_uid IN \
     (SELECT uid FROM tasks WHERE org = $1 AND queue = '~jobs' AND job = $2)";
const SQL_DELETE_RUNS: &str = "DELETE FROM tasks WHERE org = $1 AND queue = '~jobs' AND job = $2";

/// Parameters: org, job, before (schedule time, exclusive, with the run ID
/// below), before run ID, limit.
fn select_runs() -> String {
    format!(
        "SELECT {} FROM tasks WHERE org = $1 AND queue = '~jobs' AND job = $2 \
         AND (schedule_time < $3 OR (schedule_time = $3 AND task_id < $4)) \
         ORDER BY schedule_time DESC, task_id DESC LIMIT $5",
        task_row::COLUMNS
    )
}

/// Where a page of runs continues: `<schedule time µs>/<run id>`.
fn runs_cursor(page: &PageRequest) -> Result<(i64, String)> {
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

fn runs_page(rows: Vec<Task>, limit: u32) -> Page<Task> {
    Page::from_rows(rows, limit, |t| {
        format!("{}/{}", to_micros(t.schedule_time), t.task_id)
    })
}

/// Inserts a run unless one exists for that instant. Parameters: org,
/// run_id, uid, target, body_form, body, schedule_time, deadline, retry
/// config, now, job, kind, header style.
macro_rules! insert_run {
    () => {
        concat!(
            insert_task!(VALUES;
                org: "$1", queue: "'~jobs'", task_id: "$2", uid: "$3", target: "$4",
                body_form: "$5", body: "$6", schedule_time: "$7", dispatch_deadline_s: "$8",
                retry_config: "$9", created_at: "$10", tag: "NULL", job: "$11",
                run_kind: "$12", header_style: "$13", group_key: "''", priority: "0"),
            " ON CONFLICT (org, queue, task_id) DO NOTHING"
        )
    };
}
const SQL_INSERT_RUN: &str = insert_run!();
/// [`SQL_INSERT_RUN`] on PostgreSQL, counting the run it inserts.
const SQL_INSERT_RUN_COUNTED: &str = count_inserted!(insert_run!(), "", "SELECT 1 FROM ins");

/// One run to insert, as column values.
struct RunInsert {
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
const SQL_FIRED: &str = "UPDATE jobs SET last_fired_at = $1, next_run_at = $2 \
     WHERE org = $3 AND name = $4";

/// Jobs with a run to create by the horizon (now + lookahead), oldest
/// instant first; read with [`job_columns`]. Parameters: horizon, limit.
fn select_due() -> String {
    format!(
        "SELECT {JOB_COLUMNS}, j.org FROM jobs j \
         WHERE j.next_run_at IS NOT NULL AND j.next_run_at <= $1 \
         ORDER BY j.next_run_at LIMIT $2"
    )
}

/// The index of the org column in [`select_due`].
const DUE_ORG_COLUMN: usize = JOB_COLUMN_COUNT;

const SQL_NEXT_DUE: &str = "SELECT min(next_run_at) FROM jobs WHERE next_run_at IS NOT NULL";

/// What firing one due job does.
struct Plan {
    pub runs: Vec<RunInsert>,
    pub last_fired_at: Option<i64>,
    pub next_run_at: Option<i64>,
}

/// Most runs one job gets ahead of their instants in one pass.
const MAX_AHEAD: usize = 1000;

/// Decides a due job's runs at `now` from what the store recorded: the
/// instants that came (the catch-up policy deciding about missed ones),
/// then those due by `now + lookahead`.
fn plan(org: &str, row: &JobRow, now: i64, params: &FireParams) -> Result<Plan> {
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

/// A stored schedule that no longer parses (written by another version, or
/// edited by hand) is the job's own problem, not the store's: the scheduler
/// pauses the job with this message, and resuming it is refused until a new
/// schedule is set.
fn stored_schedule(config: &JobConfig) -> Result<idem_core::schedule::Schedule> {
    config.parsed_schedule().map_err(|e| {
        Error::FailedPrecondition(format!(
            "the stored schedule {:?} (time zone {:?}) no longer parses: {e}; \
             set a new schedule, then resume the job",
            config.schedule, config.time_zone
        ))
    })
}

/// The first instant at or after `since` that `config` fires, for a job
/// (re)starting its schedule at `since`.
fn first_run_at(config: &JobConfig, since: i64) -> Result<Option<i64>> {
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
struct Restart {
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
fn state_change(row: &JobRow, state: JobState, now: i64) -> Result<Option<Restart>> {
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
fn patched(row: &JobRow, patch: &JobPatch, now: i64) -> Result<(JobConfig, Restart)> {
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
fn initial_state(paused: bool) -> JobState {
    if paused {
        JobState::Paused
    } else {
        JobState::Enabled
    }
}

async fn get_row<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    now: i64,
    lock: &'static str,
) -> Result<JobRow> {
    let sql = format!(
        "{} AND j.name = $3 {}",
        select_jobs(C::DIALECT),
        c.lock(lock)
    );
    c.query_opt(&sql, &args![now, org, name], |r| job_row(r))
        .await?
        .ok_or_else(|| not_found("job", name))
}

/// Runs created ahead of their instant go with every change of the job.
async fn delete_future_runs<C: Conn>(c: &C, org: &str, name: &str, now: i64) -> Result<()> {
    c.execute(SQL_DELETE_FUTURE_RUNS, &args![org, name, now])
        .await?;
    Ok(())
}

async fn insert_run<C: Conn>(
    c: &C,
    org: &str,
    job: &str,
    run: &RunInsert,
    now: i64,
) -> Result<bool> {
    let n = c
        .execute(
            C::DIALECT.pick(SQL_INSERT_RUN, SQL_INSERT_RUN_COUNTED),
            &args![
                org,
                &run.run_id,
                &run.uid,
                &run.cols.target,
                run.cols.body_form,
                &run.cols.body,
                run.schedule_time,
                run.cols.attempt_deadline_s,
                &run.retry_config,
                now,
                job,
                run.kind,
                run.cols.header_style,
            ],
        )
        .await?;
    c.count_inserted(
        org,
        JOBS_QUEUE,
        n,
        stored_bytes(&run.cols.target, run.cols.body.as_deref()),
    );
    Ok(n == 1)
}

/// The job, and its organization's job queue if that is its first.
pub(crate) async fn create<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    config: &JobConfig,
    paused: bool,
    quotas: &Quotas,
    now: i64,
) -> Result<Job> {
    let state = initial_state(paused);
    let next_run_at = match state {
        JobState::Enabled => first_run_at(config, now)?,
        JobState::Paused => None,
    };
    let cols = JobColumns::of(config);
    let queue_config = sql::to_json(&jobs_queue_config());
    // Sent together, one round trip on PostgreSQL: neither reads what the
    // other writes, so the order they run in is no matter.
    let (n, _) = futures_util::future::try_join(
        c.execute(
            SQL_INSERT_JOB,
            &args![
                org,
                name,
                &cols.schedule,
                &cols.time_zone,
                &cols.target,
                cols.body_form,
                &cols.body,
                cols.attempt_deadline_s,
                &cols.retry_config,
                cols.catch_up,
                cols.header_style,
                state.as_str(),
                next_run_at,
                now,
            ],
        ),
        c.execute(SQL_ENSURE_JOBS_QUEUE, &args![org, &queue_config, now]),
    )
    .await?;
    if n == 0 {
        return Err(Error::AlreadyExists {
            kind: "job",
            id: name.to_string(),
        });
    }
    let job = get(c, org, name, now).await?;
    within_quota(c, quotas, Quota::Jobs, org).await?;
    Ok(job)
}

pub(crate) async fn get<C: Conn>(c: &C, org: &str, name: &str, now: i64) -> Result<Job> {
    get_row(c, org, name, now, "").await.map(|r| r.job)
}

pub(crate) async fn list<C: Conn>(
    c: &C,
    org: &str,
    page: &PageRequest,
    now: i64,
) -> Result<Page<Job>> {
    let sql = format!(
        "{} AND j.name > $3 ORDER BY j.name LIMIT $4",
        select_jobs(C::DIALECT)
    );
    let items = c
        .query(&sql, &args![now, org, after(page), limit(page)], |r| {
            job_row(r).map(|r| r.job)
        })
        .await?;
    Ok(Page::from_rows(items, page.limit, |j| j.name.clone()))
}

pub(crate) async fn update<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    patch: &JobPatch,
    now: i64,
) -> Result<Job> {
    let row = get_row(c, org, name, now, "FOR UPDATE OF j").await?;
    let (config, restart) = patched(&row, patch, now)?;
    delete_future_runs(c, org, name, now).await?;
    let cols = JobColumns::of(&config);
    c.execute(
        SQL_UPDATE_JOB,
        &args![
            &cols.schedule,
            &cols.time_zone,
            &cols.target,
            cols.body_form,
            &cols.body,
            cols.attempt_deadline_s,
            &cols.retry_config,
            cols.catch_up,
            cols.header_style,
            restart.next_run_at,
            now,
            restart.since,
            restart.last_fired_at,
            org,
            name,
        ],
    )
    .await?;
    get(c, org, name, now).await
}

pub(crate) async fn set_state<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    state: JobState,
    now: i64,
) -> Result<Job> {
    let row = get_row(c, org, name, now, "FOR UPDATE OF j").await?;
    if let Some(restart) = state_change(&row, state, now)? {
        delete_future_runs(c, org, name, now).await?;
        c.execute(
            SQL_SET_JOB_STATE,
            &args![
                state.as_str(),
                restart.next_run_at,
                now,
                restart.since,
                restart.last_fired_at,
                org,
                name,
            ],
        )
        .await?;
    }
    get(c, org, name, now).await
}

/// The job with its runs and their attempts.
pub(crate) async fn delete<C: Conn>(c: &C, org: &str, name: &str) -> Result<()> {
    let n = c
        .execute(
            "DELETE FROM jobs WHERE org = $1 AND name = $2",
            &args![org, name],
        )
        .await?;
    if n == 0 {
        return Err(not_found("job", name));
    }
    tasks::lock_for_delete(
        c,
        "org = $1 AND queue = '~jobs' AND job = $2",
        &args![org, name],
    )
    .await?;
    c.execute(SQL_DELETE_RUN_ATTEMPTS, &args![org, name])
        .await?;
    c.execute(SQL_DELETE_RUNS, &args![org, name]).await?;
    released(c, Quota::Jobs, org, n).await
}

/// A manual run due now; the record of a keyed request names it.
pub(crate) async fn run_now<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    now: i64,
    keyed: &mut Keyed,
) -> Result<Task> {
    let job = get_row(c, org, name, now, "FOR UPDATE OF j").await?.job;
    let run = RunInsert::new(org, &job, RunKind::Manual, now);
    keyed.set_resource_id(|| format!("{name}/{}", run.run_id));
    if !insert_run(c, org, name, &run, now).await? {
        return Err(Error::FailedPrecondition(format!(
            "job '{name}' already has a run at this instant; retry"
        )));
    }
    tasks::get(c, org, JOBS_QUEUE, &run.run_id, "")
        .await?
        .ok_or_else(|| Error::Internal("inserted run vanished".into()))
}

pub(crate) async fn runs<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    page: &PageRequest,
    now: i64,
) -> Result<Page<Task>> {
    get_row(c, org, name, now, "").await?;
    let (before, before_id) = runs_cursor(page)?;
    let items = c
        .query(
            &select_runs(),
            &args![org, name, before, &before_id, limit(page)],
            |r| task_row::read(r),
        )
        .await?;
    Ok(runs_page(items, page.limit))
}

pub(crate) async fn run_get<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    run_id: &str,
    now: i64,
) -> Result<Task> {
    get_row(c, org, name, now, "").await?;
    tasks::get(c, org, JOBS_QUEUE, run_id, "")
        .await?
        .filter(|t| t.run.as_ref().is_some_and(|r| r.job == name))
        .ok_or_else(|| not_found("run", run_id))
}

/// A run's attempts, found only under its own job.
pub(crate) async fn run_attempts<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    run_id: &str,
    page: &PageRequest,
    now: i64,
) -> Result<Page<Attempt>> {
    let run = run_get(c, org, name, run_id, now).await?;
    tasks::attempts_of(c, &run.uid, page).await
}

/// Fires the due jobs this pass takes (on PostgreSQL, those no other node
/// has locked): each one's runs, and its row advanced. The runs of all
/// jobs are sent together, then the rows' updates: pipelined on
/// PostgreSQL's connection, so a pass over many jobs costs a few round
/// trips rather than two per job.
pub(crate) async fn fire<C: Conn>(c: &C, now: i64, params: FireParams) -> Result<FireReport> {
    let sql = format!("{} {}", select_due(), c.lock("FOR UPDATE OF j SKIP LOCKED"));
    let horizon = params.horizon(now);
    // A row is read and planned on its own, so that one job that cannot
    // be fired is paused instead of failing the pass of every organization.
    let due = c
        .query(&sql, &args![horizon, i64::from(params.max_jobs)], |r| {
            Ok((r.text(DUE_ORG_COLUMN)?, r.text(0)?, job_columns(r)))
        })
        .await?;
    let mut jobs = Vec::with_capacity(due.len());
    let mut broken = Vec::new();
    for (org, name, row) in due {
        match row.and_then(|row| Ok((plan(&org, &row, now, &params)?, row))) {
            Ok((plan, row)) => jobs.push((org, row, plan)),
            Err(e) => broken.push(PausedJob {
                org,
                job: name,
                reason: e.to_string(),
            }),
        }
    }
    for job in &broken {
        delete_future_runs(c, &job.org, &job.job, now).await?;
        c.execute(
            SQL_PAUSE_BROKEN,
            &args![&job.reason, now, &job.org, &job.job],
        )
        .await?;
    }
    let inserted = try_join_all(jobs.iter().flat_map(|(org, row, plan)| {
        plan.runs
            .iter()
            .map(move |run| insert_run(c, org, &row.job.name, run, now))
    }))
    .await?;
    let mut inserted = inserted.into_iter();
    let mut report = FireReport::default();
    for (org, row, plan) in &jobs {
        for run in &plan.runs {
            if inserted.next().unwrap_or(false) {
                report.fired.push(FiredRun {
                    org: org.clone(),
                    job: row.job.name.clone(),
                    run_id: run.run_id.clone(),
                    schedule_time: from_micros(run.schedule_time),
                    created_at: from_micros(now),
                });
            }
        }
    }
    try_join_all(jobs.iter().map(|(org, row, plan)| async move {
        c.execute(
            SQL_FIRED,
            &args![plan.last_fired_at, plan.next_run_at, org, &row.job.name],
        )
        .await
    }))
    .await?;
    report.jobs = (jobs.len() + broken.len()) as u32;
    report.paused = broken;
    let next = c
        .query_opt(SQL_NEXT_DUE, &[], |r| r.opt_i64(0))
        .await?
        .flatten();
    report.next_at = next.map(from_micros);
    Ok(report)
}

/// Scheduled runs created ahead of their instant and never attempted,
/// whose instant is older than the cutoff; read with their job's policy.
/// Parameter: cutoff.
fn select_missed_runs() -> &'static str {
    "SELECT t.org, t.job, t.uid, t.schedule_time, j.catch_up FROM tasks t \
     JOIN jobs j ON j.org = t.org AND j.name = t.job \
     WHERE t.job IS NOT NULL AND t.status = 'pending' AND t.attempt_count = 0 \
     AND t.schedule_time < $1 AND t.run_kind = 'scheduled' AND t.created_at < t.schedule_time"
}

/// A run's schedule time (µs) and uid.
type UnattemptedRun = (i64, String);

/// Whether a job has a run whose instant is on time: in `[cutoff, now]`.
/// Parameters: org, job, cutoff, now.
const SQL_ON_TIME_RUN: &str = "SELECT 1 FROM tasks WHERE org = $1 AND job = $2 \
     AND schedule_time >= $3 AND schedule_time <= $4 AND run_kind = 'scheduled' LIMIT 1";

/// Deletes the runs created ahead of their instant whose instant was missed
/// (every node was down past it, so no dispatcher delivered it on time) and
/// that the job's `catch_up` would not have fired: missed is missed, whether
/// or not its run row was written before the outage. Runs that are kept
/// fire late, as the policy says. Answers how many were dropped.
pub(crate) async fn drop_missed_runs<C: Conn>(
    c: &C,
    now: i64,
    tolerance: std::time::Duration,
) -> Result<u64> {
    let cutoff = now.saturating_sub(crate::tables::idempotency::micros(tolerance));
    let tolerance = SignedDuration::try_from(tolerance).unwrap_or(SignedDuration::MAX);
    // Rows a dispatcher is claiming right now are its to deliver.
    let sql = format!(
        "{} {}",
        select_missed_runs(),
        c.lock("FOR UPDATE OF t SKIP LOCKED")
    );
    let rows = c
        .query(&sql, &args![cutoff], |r| {
            Ok((r.text(0)?, r.text(1)?, r.text(2)?, r.i64(3)?, r.text(4)?))
        })
        .await?;
    let mut by_job: BTreeMap<(String, String), (CatchUp, Vec<UnattemptedRun>)> = BTreeMap::new();
    for (org, job, uid, at, catch_up) in rows {
        let catch_up = CatchUp::parse(&catch_up).ok_or_else(|| corrupt("catch_up", &catch_up))?;
        by_job
            .entry((org, job))
            .or_insert((catch_up, Vec::new()))
            .1
            .push((at, uid));
    }
    let mut dropped = 0;
    for ((org, job), (catch_up, runs)) in by_job {
        let on_time = catch_up == CatchUp::Latest
            && c.query_opt(SQL_ON_TIME_RUN, &args![&org, &job, cutoff, now], |_| Ok(()))
                .await?
                .is_some();
        let pending: Vec<_> = runs.iter().map(|(at, _)| from_micros(*at)).collect();
        let drop = missed_runs_to_drop(catch_up, &pending, from_micros(now), tolerance, on_time);
        for (at, uid) in &runs {
            if drop.contains(&from_micros(*at)) {
                tasks::delete(c, uid).await?;
                dropped += 1;
            }
        }
    }
    Ok(dropped)
}
