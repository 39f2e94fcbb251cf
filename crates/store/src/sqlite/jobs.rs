//! [`JobStore`] on SQLite. The scheduler's pass is one job of the writer,
//! which already serializes every write: no second process can fire the
//! same row.

use super::{SqliteStore, collect, get_task, not_found};
use crate::idempotency::Completion;
use crate::jobs::*;
use crate::records::{Job, Page, PageRequest, Task};
use crate::sql::{self as rows, Row as _};
use crate::{Error, Result};
use async_trait::async_trait;
use idem_core::clock::from_micros;
use idem_core::job::{JobConfig, JobPatch, JobState, RunKind};
use rusqlite::{Connection, OptionalExtension, params};

fn get_job_row(conn: &Connection, org: &str, name: &str, now: i64) -> Result<JobRow> {
    conn.prepare_cached(&format!("{} AND j.name = $3", select_jobs(Dialect::Sqlite)))?
        .query_row(params![now, org, name], |r| Ok(job_row(r)))
        .optional()?
        .ok_or_else(|| not_found("job", name))?
}

fn get_job(conn: &Connection, org: &str, name: &str, now: i64) -> Result<Job> {
    get_job_row(conn, org, name, now).map(|r| r.job)
}

/// Applies a change's [`Restart`]: the runs created ahead go.
fn delete_future_runs(conn: &Connection, org: &str, name: &str, now: i64) -> Result<()> {
    conn.prepare_cached(SQL_DELETE_FUTURE_RUNS)?
        .execute(params![org, name, now])?;
    Ok(())
}

fn insert_run(conn: &Connection, org: &str, job: &str, run: &RunInsert, now: i64) -> Result<bool> {
    let n = conn.prepare_cached(SQL_INSERT_RUN)?.execute(params![
        org,
        run.run_id,
        run.uid,
        run.cols.target,
        run.cols.body_form,
        run.cols.body,
        run.schedule_time,
        run.cols.attempt_deadline_s,
        run.retry_config,
        now,
        job,
        run.kind,
        run.cols.header_style
    ])?;
    Ok(n == 1)
}

fn fire(conn: &Connection, now: i64, params: FireParams) -> Result<FireReport> {
    let mut report = FireReport::default();
    let mut stmt = conn.prepare_cached(&select_due())?;
    let horizon = params.horizon(now);
    let due = collect(&mut stmt, params![horizon, params.max_jobs], |r| {
        Ok((r.text(DUE_ORG_COLUMN)?, job_columns(r)?))
    })?;
    for (org, row) in due {
        let plan = plan(&org, &row, now, &params)?;
        for run in &plan.runs {
            if insert_run(conn, &org, &row.job.name, run, now)? {
                report.fired.push(FiredRun {
                    org: org.clone(),
                    job: row.job.name.clone(),
                    run_id: run.run_id.clone(),
                    schedule_time: from_micros(run.schedule_time),
                    created_at: from_micros(now),
                });
            }
        }
        conn.prepare_cached(SQL_FIRED)?.execute(params![
            plan.last_fired_at,
            plan.next_run_at,
            org,
            row.job.name
        ])?;
        report.jobs += 1;
    }
    let next: Option<i64> = conn
        .prepare_cached(SQL_NEXT_DUE)?
        .query_row([], |r| r.get(0))?;
    report.next_at = next.map(from_micros);
    Ok(report)
}

#[async_trait]
impl JobStore for SqliteStore {
    async fn job_create(
        &self,
        org: &str,
        name: &str,
        config: &JobConfig,
        paused: bool,
        done: Option<Completion>,
    ) -> Result<Job> {
        let (org, name, config) = (org.to_string(), name.to_string(), config.clone());
        self.write_done(done, move |conn, now, _| {
            let state = initial_state(paused);
            let next_run_at = match state {
                JobState::Enabled => first_run_at(&config, now)?,
                JobState::Paused => None,
            };
            let c = JobColumns::of(&config);
            let n = conn.prepare_cached(SQL_INSERT_JOB)?.execute(params![
                org,
                name,
                c.schedule,
                c.time_zone,
                c.target,
                c.body_form,
                c.body,
                c.attempt_deadline_s,
                c.retry_config,
                c.catch_up,
                c.header_style,
                state.as_str(),
                next_run_at,
                now
            ])?;
            if n == 0 {
                return Err(Error::AlreadyExists {
                    kind: "job",
                    id: name,
                });
            }
            conn.prepare_cached(SQL_ENSURE_JOBS_QUEUE)?
                .execute(params![org, rows::to_json(&jobs_queue_config()), now])?;
            get_job(conn, &org, &name, now)
        })
        .await
    }

    async fn job_get(&self, org: &str, name: &str) -> Result<Job> {
        let (org, name) = (org.to_string(), name.to_string());
        self.read(move |conn, now| get_job(conn, &org, &name, now))
            .await
    }

    async fn job_list(&self, org: &str, page: &PageRequest) -> Result<Page<Job>> {
        let (org, page) = (org.to_string(), page.clone());
        self.read(move |conn, now| {
            let mut stmt = conn.prepare_cached(&format!(
                "{} AND j.name > $3 ORDER BY j.name LIMIT $4",
                select_jobs(Dialect::Sqlite)
            ))?;
            let after = page.after.clone().unwrap_or_default();
            let items = collect(&mut stmt, params![now, org, after, page.limit + 1], |r| {
                job_row(r).map(|r| r.job)
            })?;
            Ok(Page::from_rows(items, page.limit, |j| j.name.clone()))
        })
        .await
    }

    async fn job_update(
        &self,
        org: &str,
        name: &str,
        patch: &JobPatch,
        done: Option<Completion>,
    ) -> Result<Job> {
        let (org, name, patch) = (org.to_string(), name.to_string(), patch.clone());
        self.write_done(done, move |conn, now, _| {
            let row = get_job_row(conn, &org, &name, now)?;
            let (config, restart) = update(&row, &patch, now)?;
            delete_future_runs(conn, &org, &name, now)?;
            let c = JobColumns::of(&config);
            conn.prepare_cached(SQL_UPDATE_JOB)?.execute(params![
                c.schedule,
                c.time_zone,
                c.target,
                c.body_form,
                c.body,
                c.attempt_deadline_s,
                c.retry_config,
                c.catch_up,
                c.header_style,
                restart.next_run_at,
                now,
                restart.since,
                restart.last_fired_at,
                org,
                name
            ])?;
            get_job(conn, &org, &name, now)
        })
        .await
    }

    async fn job_set_state(
        &self,
        org: &str,
        name: &str,
        state: JobState,
        done: Option<Completion>,
    ) -> Result<Job> {
        let (org, name) = (org.to_string(), name.to_string());
        self.write_done(done, move |conn, now, _| {
            let row = get_job_row(conn, &org, &name, now)?;
            if let Some(restart) = state_change(&row, state, now)? {
                delete_future_runs(conn, &org, &name, now)?;
                conn.prepare_cached(SQL_SET_JOB_STATE)?.execute(params![
                    state.as_str(),
                    restart.next_run_at,
                    now,
                    restart.since,
                    restart.last_fired_at,
                    org,
                    name
                ])?;
            }
            get_job(conn, &org, &name, now)
        })
        .await
    }

    async fn job_delete(&self, org: &str, name: &str) -> Result<()> {
        let (org, name) = (org.to_string(), name.to_string());
        self.write(move |conn, _| {
            let n = conn
                .prepare_cached("DELETE FROM jobs WHERE org = $1 AND name = $2")?
                .execute(params![org, name])?;
            if n == 0 {
                return Err(not_found("job", &name));
            }
            conn.prepare_cached(SQL_DELETE_RUN_ATTEMPTS)?
                .execute(params![org, name])?;
            conn.prepare_cached(SQL_DELETE_RUNS)?
                .execute(params![org, name])?;
            Ok(())
        })
        .await
    }

    async fn job_run_now(&self, org: &str, name: &str, done: Option<Completion>) -> Result<Task> {
        let (org, name) = (org.to_string(), name.to_string());
        self.write_done(done, move |conn, now, done| {
            let job = get_job(conn, &org, &name, now)?;
            let run = RunInsert::new(&org, &job, RunKind::Manual, now);
            if let Some(d) = done {
                d.resource_id = format!("{name}/{}", run.run_id);
            }
            if !insert_run(conn, &org, &name, &run, now)? {
                return Err(Error::FailedPrecondition(format!(
                    "job '{name}' already has a run at this instant; retry"
                )));
            }
            get_task(conn, &org, JOBS_QUEUE, &run.run_id)?
                .ok_or_else(|| Error::Internal("inserted run vanished".into()))
        })
        .await
    }

    async fn job_runs(&self, org: &str, name: &str, page: &PageRequest) -> Result<Page<Task>> {
        let (org, name, page) = (org.to_string(), name.to_string(), page.clone());
        self.read(move |conn, now| {
            get_job_row(conn, &org, &name, now)?;
            let (before, before_id) = runs_cursor(&page)?;
            let mut stmt = conn.prepare_cached(&select_runs())?;
            let items = collect(
                &mut stmt,
                params![org, name, before, before_id, page.limit + 1],
                |r| rows::task(r),
            )?;
            Ok(runs_page(items, page.limit))
        })
        .await
    }

    async fn job_run_get(&self, org: &str, name: &str, run_id: &str) -> Result<Task> {
        let (org, name, run_id) = (org.to_string(), name.to_string(), run_id.to_string());
        self.read(move |conn, now| {
            get_job_row(conn, &org, &name, now)?;
            get_task(conn, &org, JOBS_QUEUE, &run_id)?
                .filter(|t| t.run.as_ref().is_some_and(|r| r.job == name))
                .ok_or_else(|| not_found("run", &run_id))
        })
        .await
    }

    async fn scheduler_fire(&self, params: FireParams) -> Result<FireReport> {
        self.write(move |conn, now| fire(conn, now, params)).await
    }
}
