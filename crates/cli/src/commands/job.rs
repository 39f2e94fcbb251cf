//! `idem job create|ls|get|pause|resume|run|runs|attempts|rm|preview`.

use super::queue::{BackoffArgs, ListArgs, describe_backoff};
use super::task::{
    TargetArgs, attempts_table, describe_body, describe_target, last_status, parse_time,
};
use super::{ApiArgs, Context, deadline_seconds, fields, hint_on_lost_answer, or_dash, table};
use crate::serve::parse_duration;
use clap::{Args, Subcommand};
use idem_client::{
    CatchUp, HeaderStyle, Job, JobConfig, JobRetryConfigPatch, NewJob, Run, SchedulePreview,
    Timestamp, new_idempotency_key,
};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct JobArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: JobCommand,
}

#[derive(Subcommand, Debug)]
enum JobCommand {
    /// Create a cron job. Sends an Idempotency-Key and retries lost answers
    /// with it, so a retried create never makes a second job.
    Create(Box<CreateArgs>),
    /// List jobs.
    Ls(ListArgs),
    /// Show a job, with its next run time and last run.
    Get { name: String },
    /// Stop the schedule from firing.
    Pause { name: String },
    /// Let the schedule fire again.
    Resume { name: String },
    /// Start a manual run now; the next scheduled run still happens.
    Run { name: String },
    /// List a job's runs, newest first.
    Runs {
        name: String,
        #[command(flatten)]
        page: ListArgs,
    },
    /// List a run's delivery attempts kept, oldest first.
    Attempts {
        name: String,
        run_id: String,
        #[command(flatten)]
        page: ListArgs,
    },
    /// Delete a job.
    Rm { name: String },
    /// Print the next instants of a schedule, exactly as the scheduler
    /// would fire them (DST changes included).
    Preview(PreviewArgs),
}

#[derive(Args, Debug)]
struct CreateArgs {
    /// 1-100 of [A-Za-z0-9_-], unique in the organization.
    name: String,
    #[command(flatten)]
    schedule: ScheduleArgs,
    #[command(flatten)]
    target: TargetArgs,
    /// How long the target has to answer each attempt (`3m`, 1s-30m;
    /// server default 3m).
    #[arg(long, value_parser = parse_duration)]
    attempt_deadline: Option<Duration>,
    /// Retries after a failed attempt (server default 0).
    #[arg(long)]
    retry_count: Option<u32>,
    #[command(flatten)]
    backoff: BackoffArgs,
    /// Instants missed while no scheduler ran: none, latest (server
    /// default) or all.
    #[arg(long, value_parser = parse_catch_up)]
    catch_up: Option<CatchUp>,
    /// Headers of each run: idem (server default), or cloud_scheduler to
    /// add Cloud Scheduler's X-CloudScheduler-* headers.
    #[arg(long, value_parser = parse_header_style)]
    header_style: Option<HeaderStyle>,
    /// Create the job paused.
    #[arg(long)]
    paused: bool,
    /// The Idempotency-Key to send instead of a fresh one: repeat a create
    /// whose answer was lost with the key it printed to get its result.
    #[arg(long)]
    idempotency_key: Option<String>,
}

/// A cron expression and the zone it is read in.
#[derive(Args, Debug)]
struct ScheduleArgs {
    /// Cron expression: 5 fields (`*/5 * * * *`), 6 with seconds first, or
    /// @hourly, @daily, @weekly, @monthly, @yearly.
    #[arg(long)]
    schedule: String,
    /// IANA time zone the schedule is read in (server default UTC).
    #[arg(long)]
    time_zone: Option<String>,
}

#[derive(Args, Debug)]
struct PreviewArgs {
    #[command(flatten)]
    schedule: ScheduleArgs,
    /// Instants after this time: RFC 3339 or a delay from now (`+1h`);
    /// now by default.
    #[arg(long, value_parser = parse_time)]
    after: Option<Timestamp>,
    /// How many instants (server default 10, at most 1000).
    #[arg(long)]
    count: Option<u32>,
}

fn parse_catch_up(s: &str) -> Result<CatchUp, String> {
    match s {
        "none" => Ok(CatchUp::None),
        "latest" => Ok(CatchUp::Latest),
        "all" => Ok(CatchUp::All),
        _ => Err("must be one of none, latest, all".into()),
    }
}

fn catch_up_str(c: CatchUp) -> &'static str {
    match c {
        CatchUp::None => "none",
        CatchUp::Latest => "latest",
        CatchUp::All => "all",
    }
}

fn parse_header_style(s: &str) -> Result<HeaderStyle, String> {
    match HeaderStyle::parse(s) {
        Some(style @ (HeaderStyle::Idem | HeaderStyle::CloudScheduler)) => Ok(style),
        _ => Err("must be one of idem, cloud_scheduler".to_string()),
    }
}

impl CreateArgs {
    fn job(&self) -> anyhow::Result<NewJob> {
        let b = self.backoff.backoff()?;
        let retry = JobRetryConfigPatch {
            retry_count: self.retry_count,
            max_retry_duration_s: b.max_retry_duration_s,
            min_backoff_ms: b.min_backoff_ms,
            max_backoff_ms: b.max_backoff_ms,
            max_doublings: b.max_doublings,
        };
        Ok(NewJob {
            name: self.name.clone(),
            schedule: self.schedule.schedule.clone(),
            target: self.target.target()?,
            config: JobConfig {
                time_zone: self.schedule.time_zone.clone(),
                attempt_deadline_s: deadline_seconds("--attempt-deadline", self.attempt_deadline)?,
                retry_config: (retry != JobRetryConfigPatch::default()).then_some(retry),
                catch_up: self.catch_up,
                header_style: self.header_style,
            },
            paused: self.paused,
        })
    }
}

/// A run in one cell: its state and schedule time.
fn run_summary(r: &Run) -> String {
    format!(
        "{} {} ({})",
        r.kind.as_str(),
        r.state.as_str(),
        r.schedule_time
    )
}

fn show_job(j: &Job) {
    let r = &j.retry_config;
    fields(&[
        ("name", j.name.clone()),
        ("state", j.state.as_str().into()),
        ("schedule", j.schedule.clone()),
        ("time zone", j.time_zone.clone()),
        ("next run", or_dash(j.next_run_time)),
        ("last run", or_dash(j.last_run.as_ref().map(run_summary))),
        ("target", describe_target(&j.target)),
        ("body", describe_body(&j.target)),
        ("attempt deadline", format!("{}s", j.attempt_deadline_s)),
        (
            "retries",
            format!(
                "{} retries, {}",
                r.retry_count,
                describe_backoff(
                    r.max_retry_duration_s,
                    r.min_backoff_ms,
                    r.max_backoff_ms,
                    r.max_doublings
                )
            ),
        ),
        ("catch up", catch_up_str(j.catch_up).into()),
        ("header style", j.header_style.as_str().into()),
        ("created", j.created_at.to_string()),
        ("updated", j.updated_at.to_string()),
    ]);
}

fn show_run(r: &Run) {
    fields(&[
        ("run", r.run_id.clone()),
        ("job", r.job.clone()),
        ("kind", r.kind.as_str().into()),
        ("state", r.state.as_str().into()),
        ("schedule time", r.schedule_time.to_string()),
        ("attempts", r.attempt_count.to_string()),
        ("last attempt", last_status(r.last_attempt.as_ref())),
        ("created", r.created_at.to_string()),
        ("finished", or_dash(r.finished_at)),
    ]);
}

async fn create(cx: &Context, args: CreateArgs) -> anyhow::Result<()> {
    let job = args.job()?;
    // Chosen here so that it can be printed when every attempt failed.
    let key = args.idempotency_key.unwrap_or_else(new_idempotency_key);
    match cx.client.create_job_with(&job, Some(key.clone())).await {
        Ok(answer) => cx.show(&answer, show_job),
        Err(e) => {
            hint_on_lost_answer(&e, "the job", &key);
            Err(e.into())
        }
    }
}

pub async fn run(args: JobArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    let c = &cx.client;
    match args.command {
        JobCommand::Create(create_args) => create(&cx, *create_args).await,
        JobCommand::Ls(list) => {
            let answer = c.list_jobs(&list.options()).await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|j| {
                        vec![
                            j.name.clone(),
                            j.state.as_str().into(),
                            j.schedule.clone(),
                            j.time_zone.clone(),
                            or_dash(j.next_run_time),
                            or_dash(j.last_run.as_ref().map(|r| r.state.as_str())),
                            describe_target(&j.target),
                        ]
                    })
                    .collect();
                table(
                    &[
                        "NAME",
                        "STATE",
                        "SCHEDULE",
                        "TIME ZONE",
                        "NEXT RUN",
                        "LAST RUN",
                        "TARGET",
                    ],
                    &rows,
                );
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        JobCommand::Get { name } => cx.show(&c.get_job(&name).await?, show_job),
        JobCommand::Pause { name } => cx.show(&c.pause_job(&name).await?, show_job),
        JobCommand::Resume { name } => cx.show(&c.resume_job(&name).await?, show_job),
        JobCommand::Run { name } => cx.show(&c.run_job(&name).await?, show_run),
        JobCommand::Attempts { name, run_id, page } => {
            let answer = c.run_attempts(&name, &run_id, &page.options()).await?;
            cx.show(&answer, |list| attempts_table(&list.items))?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        JobCommand::Runs { name, page } => {
            let answer = c.list_runs(&name, &page.options()).await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|r| {
                        vec![
                            r.run_id.clone(),
                            r.kind.as_str().into(),
                            r.state.as_str().into(),
                            r.attempt_count.to_string(),
                            r.schedule_time.to_string(),
                            // Last: an error message may be long.
                            last_status(r.last_attempt.as_ref()),
                        ]
                    })
                    .collect();
                table(
                    &[
                        "RUN ID",
                        "KIND",
                        "STATE",
                        "ATTEMPTS",
                        "SCHEDULE TIME",
                        "LAST",
                    ],
                    &rows,
                );
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        JobCommand::Rm { name } => {
            c.delete_job(&name).await?;
            cx.done(&format!("deleted job {name}"));
            Ok(())
        }
        JobCommand::Preview(p) => {
            let preview = SchedulePreview {
                schedule: p.schedule.schedule,
                time_zone: p.schedule.time_zone,
                after: p.after,
                count: p.count.map(|n| n as usize),
            };
            cx.show(&c.preview_schedule(&preview).await?, |answer| {
                for t in &answer.times {
                    println!("{t}");
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catch_up_and_header_style_take_the_api_spelling() {
        for c in [CatchUp::None, CatchUp::Latest, CatchUp::All] {
            assert_eq!(parse_catch_up(catch_up_str(c)), Ok(c));
        }
        assert!(parse_catch_up("Latest").is_err());
        assert_eq!(
            parse_header_style("cloud_scheduler"),
            Ok(HeaderStyle::CloudScheduler)
        );
        let err = parse_header_style("cloud-scheduler").unwrap_err();
        assert_eq!(err, "must be one of idem, cloud_scheduler");
    }
}
