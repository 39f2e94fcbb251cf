//! [`JobStore`] on PostgreSQL. Nodes fire jobs concurrently: each pass
//! locks the due rows it takes (`FOR UPDATE OF j SKIP LOCKED`), so two
//! nodes share the due jobs between them instead of both firing each.

use super::idempotency;
use super::{PostgresStore, execute, get_task, not_found, query, query_opt};
use crate::idempotency::Completion;
use crate::jobs::*;
use crate::records::{Job, Page, PageRequest, Task};
use crate::sql::{self as rows, Row as _};
use crate::{Error, Result};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use futures_util::future::try_join_all;
use idem_core::clock::from_micros;
use idem_core::job::{JobConfig, JobPatch, JobState, RunKind};

async fn get_job_row<C: GenericClient>(
    c: &C,
    org: &str,
    name: &str,
    now: i64,
    lock: &str,
) -> Result<JobRow> {
    let sql = format!("{} AND j.name = $3 {lock}", select_jobs(Dialect::Postgres));
    match query_opt(c, &sql, &[&now, &org, &name]).await? {
        Some(r) => job_row(&r),
        None => Err(not_found("job", name)),
    }
}

async fn insert_run<C: GenericClient>(
    c: &C,
    org: &str,
    job: &str,
    run: &RunInsert,
    now: i64,
) -> Result<bool> {
    let n = execute(
        c,
        SQL_INSERT_RUN,
        &[
            &org,
            &run.run_id,
            &run.uid,
            &run.cols.target,
            &run.cols.body_form,
            &run.cols.body,
            &run.schedule_time,
            &run.cols.attempt_deadline_s,
            &run.retry_config,
            &now,
            &job,
            &run.kind,
            &run.cols.header_style,
        ],
    )
    .await?;
    Ok(n == 1)
}

impl PostgresStore {
    /// Fires each locked due job: its runs and its row's update are sent
    /// together, pipelined on the transaction's connection, so a pass over
    /// many jobs costs a few round trips rather than two per job.
    async fn fire<C: GenericClient>(
        &self,
        tx: &C,
        now: i64,
        params: FireParams,
    ) -> Result<FireReport> {
        let sql = format!("{} FOR UPDATE OF j SKIP LOCKED", select_due());
        let horizon = params.horizon(now);
        let due = query(tx, &sql, &[&horizon, &i64::from(params.max_jobs)]).await?;
        let mut jobs = Vec::with_capacity(due.len());
        for r in &due {
            let org = r.text(DUE_ORG_COLUMN)?;
            let row = job_columns(r)?;
            let plan = plan(&org, &row, now, &params)?;
            jobs.push((org, row, plan));
        }
        let inserted = try_join_all(jobs.iter().flat_map(|(org, row, plan)| {
            plan.runs
                .iter()
                .map(move |run| insert_run(tx, org, &row.job.name, run, now))
        }))
        .await?;
        let mut inserted = inserted.into_iter();
        let mut report = FireReport::default();
        let mut updates = Vec::with_capacity(jobs.len());
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
            updates.push((org, &row.job.name, plan.last_fired_at, plan.next_run_at));
        }
        try_join_all(updates.iter().map(|(org, name, last, next)| async move {
            execute(tx, SQL_FIRED, &[last, next, org, name]).await
        }))
        .await?;
        report.jobs = jobs.len() as u32;
        let next: Option<i64> = query_opt(tx, SQL_NEXT_DUE, &[])
            .await?
            .map(|r| r.opt_i64(0))
            .transpose()?
            .flatten();
        report.next_at = next.map(from_micros);
        Ok(report)
    }
}

#[async_trait]
impl JobStore for PostgresStore {
    async fn job_create(
        &self,
        org: &str,
        name: &str,
        config: &JobConfig,
        paused: bool,
        done: Option<Completion>,
    ) -> Result<Job> {
        let now = self.now();
        let state = initial_state(paused);
        let next_run_at = match state {
            JobState::Enabled => first_run_at(config, now)?,
            JobState::Paused => None,
        };
        let c = JobColumns::of(config);
        let queue_config = rows::to_json(&jobs_queue_config());
        transaction!(self, done, now, |tx| {
            let n = execute(
                &tx,
                SQL_INSERT_JOB,
                &[
                    &org,
                    &name,
                    &c.schedule,
                    &c.time_zone,
                    &c.target,
                    &c.body_form,
                    &c.body,
                    &c.attempt_deadline_s,
                    &c.retry_config,
                    &c.catch_up,
                    &c.header_style,
                    &state.as_str(),
                    &next_run_at,
                    &now,
                ],
            )
            .await?;
            if n == 0 {
                Err(Error::AlreadyExists {
                    kind: "job",
                    id: name.to_string(),
                })
            } else {
                execute(&tx, SQL_ENSURE_JOBS_QUEUE, &[&org, &queue_config, &now]).await?;
                get_job_row(&tx, org, name, now, "").await.map(|r| r.job)
            }
        })
    }

    async fn job_get(&self, org: &str, name: &str) -> Result<Job> {
        let client = self.pool.get().await?;
        get_job_row(&client, org, name, self.now(), "")
            .await
            .map(|r| r.job)
    }

    async fn job_list(&self, org: &str, page: &PageRequest) -> Result<Page<Job>> {
        let client = self.pool.get().await?;
        let sql = format!(
            "{} AND j.name > $3 ORDER BY j.name LIMIT $4",
            select_jobs(Dialect::Postgres)
        );
        let after = page.after.clone().unwrap_or_default();
        let now = self.now();
        let items = query(
            &client,
            &sql,
            &[&now, &org, &after, &i64::from(page.limit + 1)],
        )
        .await?
        .iter()
        .map(|r| job_row(r).map(|r| r.job))
        .collect::<Result<Vec<_>>>()?;
        Ok(Page::from_rows(items, page.limit, |j| j.name.clone()))
    }

    async fn job_update(
        &self,
        org: &str,
        name: &str,
        patch: &JobPatch,
        done: Option<Completion>,
    ) -> Result<Job> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            let row = get_job_row(&tx, org, name, now, "FOR UPDATE OF j").await?;
            let (config, restart) = update(&row, patch, now)?;
            execute(&tx, SQL_DELETE_FUTURE_RUNS, &[&org, &name, &now]).await?;
            let c = JobColumns::of(&config);
            execute(
                &tx,
                SQL_UPDATE_JOB,
                &[
                    &c.schedule,
                    &c.time_zone,
                    &c.target,
                    &c.body_form,
                    &c.body,
                    &c.attempt_deadline_s,
                    &c.retry_config,
                    &c.catch_up,
                    &c.header_style,
                    &restart.next_run_at,
                    &now,
                    &restart.since,
                    &restart.last_fired_at,
                    &org,
                    &name,
                ],
            )
            .await?;
            get_job_row(&tx, org, name, now, "").await.map(|r| r.job)
        })
    }

    async fn job_set_state(
        &self,
        org: &str,
        name: &str,
        state: JobState,
        done: Option<Completion>,
    ) -> Result<Job> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            let row = get_job_row(&tx, org, name, now, "FOR UPDATE OF j").await?;
            if let Some(restart) = state_change(&row, state, now)? {
                execute(&tx, SQL_DELETE_FUTURE_RUNS, &[&org, &name, &now]).await?;
                execute(
                    &tx,
                    SQL_SET_JOB_STATE,
                    &[
                        &state.as_str(),
                        &restart.next_run_at,
                        &now,
                        &restart.since,
                        &restart.last_fired_at,
                        &org,
                        &name,
                    ],
                )
                .await?;
            }
            get_job_row(&tx, org, name, now, "").await.map(|r| r.job)
        })
    }

    async fn job_delete(&self, org: &str, name: &str) -> Result<()> {
        transaction!(self, |tx| {
            let n = execute(
                &tx,
                "DELETE FROM jobs WHERE org = $1 AND name = $2",
                &[&org, &name],
            )
            .await?;
            if n == 0 {
                return Err(not_found("job", name));
            }
            execute(&tx, SQL_DELETE_RUN_ATTEMPTS, &[&org, &name]).await?;
            execute(&tx, SQL_DELETE_RUNS, &[&org, &name]).await?;
            Ok(())
        })
    }

    async fn job_run_now(&self, org: &str, name: &str, done: Option<Completion>) -> Result<Task> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            let job = get_job_row(&tx, org, name, now, "FOR UPDATE OF j")
                .await?
                .job;
            let run = RunInsert::new(org, &job, RunKind::Manual, now);
            if let Some(d) = done.as_mut() {
                d.resource_id = format!("{name}/{}", run.run_id);
            }
            if insert_run(&tx, org, name, &run, now).await? {
                get_task(&tx, org, JOBS_QUEUE, &run.run_id, "")
                    .await?
                    .ok_or_else(|| Error::Internal("inserted run vanished".into()))
            } else {
                Err(Error::FailedPrecondition(format!(
                    "job '{name}' already has a run at this instant; retry"
                )))
            }
        })
    }

    async fn job_runs(&self, org: &str, name: &str, page: &PageRequest) -> Result<Page<Task>> {
        let client = self.pool.get().await?;
        get_job_row(&client, org, name, self.now(), "").await?;
        let (before, before_id) = runs_cursor(page)?;
        let items = query(
            &client,
            &select_runs(),
            &[&org, &name, &before, &before_id, &i64::from(page.limit + 1)],
        )
        .await?
        .iter()
        .map(rows::task)
        .collect::<Result<Vec<_>>>()?;
        Ok(runs_page(items, page.limit))
    }

    async fn job_run_get(&self, org: &str, name: &str, run_id: &str) -> Result<Task> {
        let client = self.pool.get().await?;
        get_job_row(&client, org, name, self.now(), "").await?;
        get_task(&client, org, JOBS_QUEUE, run_id, "")
            .await?
            .filter(|t| t.run.as_ref().is_some_and(|r| r.job == name))
            .ok_or_else(|| not_found("run", run_id))
    }

    async fn scheduler_fire(&self, params: FireParams) -> Result<FireReport> {
        let now = self.now();
        transaction!(self, |tx| { self.fire(&tx, now, params).await })
    }
}
