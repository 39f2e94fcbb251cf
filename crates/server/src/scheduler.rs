//! The scheduler: turns due cron instants into runs (API.md §5).
//!
//! Every node runs this loop. Each pass asks the store to fire due jobs
//! ([`JobStore::scheduler_fire`](idem_store::JobStore::scheduler_fire)),
//! which decides and records the runs of each job in one transaction under
//! the job's row lock; the loop itself keeps no state that matters, so a
//! node can die at any instant and another (or the same one, restarted)
//! fires what is due from what the store recorded. New runs are handed to
//! the dispatcher like new tasks.
//!
//! Runs are created up to `--schedule-lookahead` before their instant, as
//! tasks scheduled for it: at the instant the dispatcher finds them due,
//! so a minute with thousands of runs does not wait for their creation.
//!
//! The loop sleeps until the store's earliest `next_run_at` (less the
//! lookahead), a job change
//! on this node, or a poll interval that bounds how late it notices a job
//! created or resumed on another node.

use crate::App;
use idem_store::jobs::{FireParams, FireReport};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// Longest sleep between passes.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Most jobs one pass fires in one transaction; a larger backlog takes
/// several passes back to back.
const MAX_JOBS_PER_PASS: u32 = 500;
/// Shortest sleep after a pass that fired nothing.
const MIN_SLEEP: Duration = Duration::from_millis(10);
/// Pause after a pass the store refused.
const ERROR_BACKOFF: Duration = Duration::from_secs(1);

/// What the API tells the scheduler. Lives in [`App`].
#[derive(Default)]
pub struct Handle {
    changed: Notify,
}

impl Handle {
    /// A job was created, changed or resumed: its next instant may be
    /// earlier than the one the loop sleeps towards.
    pub fn jobs_changed(&self) {
        self.changed.notify_one();
    }
}

fn params(app: &App) -> FireParams {
    FireParams {
        max_jobs: MAX_JOBS_PER_PASS,
        tolerance: app.options.misfire_grace,
        lookahead: app.options.schedule_lookahead,
    }
}

/// Before this node's dispatcher starts: runs created ahead of instants
/// that were missed while every node was down are judged by their job's
/// `catch_up` before anything may deliver them.
pub async fn drop_missed_runs(app: &App) {
    match app
        .store
        .scheduler_drop_missed(app.options.misfire_grace)
        .await
    {
        Ok(0) => {}
        Ok(dropped) => {
            tracing::info!(
                runs = dropped,
                "runs created ahead of missed instants dropped, as their jobs' catch_up says"
            );
            metrics::counter!("idem_scheduler_missed_runs_dropped_total").increment(dropped);
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not judge runs created ahead of missed instants")
        }
    }
}

pub async fn run(app: Arc<App>, mut stop: watch::Receiver<bool>) {
    let params = params(&app);
    loop {
        if *stop.borrow() {
            return;
        }
        let sleep = match app.store.scheduler_fire(params).await {
            Ok(report) => {
                record(&app, &report);
                if report.jobs == params.max_jobs {
                    continue;
                }
                // A due job another node holds locked right now shows as
                // due here too: let that node finish instead of spinning.
                let floor = if report.jobs == 0 {
                    MIN_SLEEP
                } else {
                    Duration::ZERO
                };
                until(&app, report.next_at, params.lookahead).max(floor)
            }
            Err(e) => {
                tracing::warn!(error = %e, "scheduler pass failed; retrying");
                ERROR_BACKOFF
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = app.scheduler.changed.notified() => {}
            _ = stop.changed() => {}
        }
    }
}

/// How long to sleep until the next run is to be created: `lookahead`
/// before `next_at` (the store's clock), within the poll interval.
fn until(app: &App, next_at: Option<jiff::Timestamp>, lookahead: Duration) -> Duration {
    let Some(at) = next_at else {
        return POLL_INTERVAL;
    };
    let lookahead = jiff::SignedDuration::try_from(lookahead).unwrap_or(jiff::SignedDuration::MAX);
    let wait = at.duration_since(app.clock.now()).saturating_sub(lookahead);
    Duration::try_from(wait)
        .unwrap_or(Duration::ZERO)
        .min(POLL_INTERVAL)
}

fn record(app: &App, report: &FireReport) {
    for job in &report.paused {
        tracing::warn!(
            org = %job.org,
            job = %job.job,
            reason = %job.reason,
            "job paused: the scheduler cannot fire it; the other jobs keep firing"
        );
    }
    if !report.paused.is_empty() {
        metrics::counter!("idem_scheduler_jobs_paused_total").increment(report.paused.len() as u64);
    }
    if report.fired.is_empty() {
        return;
    }
    for run in &report.fired {
        let lag = run.created_at.duration_since(run.schedule_time);
        metrics::histogram!("idem_scheduler_lag_seconds").record(lag.as_secs_f64().max(0.0));
        tracing::debug!(
            job = %run.job,
            run_id = %run.run_id,
            schedule_time = %run.schedule_time,
            "run created"
        );
    }
    metrics::counter!("idem_scheduler_runs_total").increment(report.fired.len() as u64);
    app.dispatch.work_available();
}
