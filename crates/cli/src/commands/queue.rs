//! `idem queue create|update|ls|get|groups|pause|resume|purge|rm`.

use super::{ApiArgs, Context, deadline_seconds, fields, millis, table, whole_seconds};
use crate::serve::parse_duration;
use clap::{Args, Subcommand};
use idem_client::{
    GroupOrder, HeaderStyle, ListOptions, NewQueue, Queue, QueueConfigPatch, QueueMode,
    RateLimitsPatch, RetryConfigPatch, TargetSpec, TaskCounts,
};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct QueueArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: QueueCommand,
}

#[derive(Subcommand, Debug)]
enum QueueCommand {
    /// Create a queue (unset settings take the server's defaults).
    Create(CreateArgs),
    /// Change a queue's settings (those given; the others stay).
    Update(UpdateArgs),
    /// List queues.
    Ls(ListArgs),
    /// Show a queue.
    Get { name: String },
    /// List a queue's groups with live tasks: running, due, scheduled.
    Groups(GroupsArgs),
    /// Stop dispatching (tasks are still accepted).
    Pause { name: String },
    /// Resume dispatching.
    Resume { name: String },
    /// Cancel every task that is not running.
    Purge { name: String },
    /// Delete a queue and its tasks.
    Rm { name: String },
}

#[derive(Args, Debug)]
struct CreateArgs {
    /// 1-100 of [A-Za-z0-9_-], unique in the organization.
    name: String,
    /// Token bucket rate.
    #[arg(long)]
    max_dispatches_per_second: Option<f64>,
    /// Token bucket size.
    #[arg(long)]
    max_burst_size: Option<u32>,
    /// Attempts in flight at once.
    #[arg(long)]
    max_concurrent_dispatches: Option<u32>,
    /// Attempts per task, the first included (0 = unlimited).
    #[arg(long)]
    max_attempts: Option<u32>,
    #[command(flatten)]
    backoff: BackoffArgs,
    /// How long a target has to answer (`10m`, 1s-30m).
    #[arg(long, value_parser = parse_duration)]
    dispatch_deadline: Option<Duration>,
    /// How long a task ID stays taken after its task ended (`24h`).
    #[arg(long, value_parser = parse_duration)]
    dedup_window: Option<Duration>,
    /// How long a failed task is kept after it ended, to be redriven
    /// (`168h`; at least the dedup window).
    #[arg(long, value_parser = parse_duration)]
    failed_retention: Option<Duration>,
    /// URL that receives a signed `task.succeeded` event (POST, JSON) when
    /// a task ends succeeded, unless the task names its own.
    #[arg(long)]
    on_success: Option<String>,
    /// URL that receives a signed `task.failed` event (POST, JSON) when a
    /// task ends failed, unless the task names its own.
    #[arg(long)]
    on_failure: Option<String>,
    /// Compatibility headers of its tasks' deliveries, unless a task names
    /// its own: idem (the default) or cloud_tasks (Cloud Tasks'
    /// X-CloudTasks-* headers).
    #[arg(long, value_parser = parse_task_header_style)]
    header_style: Option<HeaderStyle>,
    /// `push` (default): Idem delivers each task to its target; `pull`:
    /// workers claim the tasks (`idem task claim`). Fixed at creation.
    #[arg(long, value_parser = parse_mode)]
    mode: Option<QueueMode>,
    /// Pull queues: only a person's key may complete or fail their tasks.
    #[arg(long)]
    person_only: bool,
    #[command(flatten)]
    groups: GroupLimitArgs,
}

/// A queue's limits inside its groups: flags of create and update.
#[derive(Args, Debug)]
struct GroupLimitArgs {
    /// Most tasks of one group running at once, across nodes (1-10000), or
    /// `none` for no limit.
    #[arg(long, value_parser = parse_group_concurrency)]
    group_concurrency: Option<GroupLimit>,
    /// none or fifo: fifo runs each group's tasks one at a time in
    /// (schedule time, creation) order.
    #[arg(long, value_parser = parse_group_order)]
    group_order: Option<GroupOrder>,
}

/// `--group-concurrency`'s value: a limit, or none.
#[derive(Clone, Copy, Debug)]
struct GroupLimit(Option<u32>);

fn parse_group_concurrency(s: &str) -> Result<GroupLimit, String> {
    if s == "none" {
        return Ok(GroupLimit(None));
    }
    s.parse::<u32>()
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .map(|n| GroupLimit(Some(n)))
        .ok_or_else(|| "must be an integer from 1 to 10000, or none".to_string())
}

fn parse_group_order(s: &str) -> Result<GroupOrder, String> {
    match s {
        "none" => Ok(GroupOrder::None),
        "fifo" => Ok(GroupOrder::Fifo),
        _ => Err("must be none or fifo".to_string()),
    }
}

#[derive(Args, Debug)]
struct GroupsArgs {
    /// The queue.
    name: String,
    /// Only groups whose name starts with it.
    #[arg(long)]
    prefix: Option<String>,
    #[command(flatten)]
    list: ListArgs,
}

#[derive(Args, Debug)]
struct UpdateArgs {
    name: String,
    /// idem or cloud_tasks: the compatibility headers of the tasks created
    /// from now on that do not name their own.
    #[arg(long, value_parser = parse_task_header_style)]
    header_style: Option<HeaderStyle>,
    #[command(flatten)]
    groups: GroupLimitArgs,
}

/// A task's or a queue's header style, in the API's spelling.
pub fn parse_task_header_style(s: &str) -> Result<HeaderStyle, String> {
    match HeaderStyle::parse(s) {
        Some(style @ (HeaderStyle::Idem | HeaderStyle::CloudTasks)) => Ok(style),
        _ => Err("must be one of idem, cloud_tasks".to_string()),
    }
}

fn parse_mode(s: &str) -> Result<QueueMode, String> {
    QueueMode::parse(s).ok_or_else(|| "must be push or pull".to_string())
}

/// How retries are spaced: flags shared by queues and jobs.
#[derive(Args, Debug)]
pub struct BackoffArgs {
    /// Give up retrying this long after the first attempt (`1h`; 0 = never).
    #[arg(long, value_parser = parse_duration)]
    max_retry_duration: Option<Duration>,
    /// First retry delay (`100ms`).
    #[arg(long, value_parser = parse_duration)]
    min_backoff: Option<Duration>,
    /// Longest retry delay (`1h`).
    #[arg(long, value_parser = parse_duration)]
    max_backoff: Option<Duration>,
    /// Times the delay doubles before growing linearly.
    #[arg(long)]
    max_doublings: Option<u32>,
}

/// [`BackoffArgs`] in the units of the API's `retry_config` fields.
pub struct Backoff {
    pub max_retry_duration_s: Option<u64>,
    pub min_backoff_ms: Option<u64>,
    pub max_backoff_ms: Option<u64>,
    pub max_doublings: Option<u32>,
}

impl BackoffArgs {
    pub fn backoff(&self) -> anyhow::Result<Backoff> {
        Ok(Backoff {
            max_retry_duration_s: self
                .max_retry_duration
                .map(|d| whole_seconds("--max-retry-duration", d))
                .transpose()?,
            min_backoff_ms: self.min_backoff.map(millis),
            max_backoff_ms: self.max_backoff.map(millis),
            max_doublings: self.max_doublings,
        })
    }
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Items per page (server default 50, at most 1000).
    #[arg(long)]
    pub limit: Option<u32>,
    /// Token printed by the previous page.
    #[arg(long)]
    pub page_token: Option<String>,
}

impl ListArgs {
    pub fn options(&self) -> ListOptions {
        ListOptions {
            limit: self.limit,
            page_token: self.page_token.clone(),
        }
    }
}

impl CreateArgs {
    fn queue(&self) -> anyhow::Result<NewQueue> {
        let rate = RateLimitsPatch {
            max_dispatches_per_second: self.max_dispatches_per_second,
            max_burst_size: self.max_burst_size,
            max_concurrent_dispatches: self.max_concurrent_dispatches,
        };
        let b = self.backoff.backoff()?;
        let retry = RetryConfigPatch {
            max_attempts: self.max_attempts,
            max_retry_duration_s: b.max_retry_duration_s,
            min_backoff_ms: b.min_backoff_ms,
            max_backoff_ms: b.max_backoff_ms,
            max_doublings: b.max_doublings,
        };
        let dispatch_deadline_s = deadline_seconds("--dispatch-deadline", self.dispatch_deadline)?;
        Ok(NewQueue {
            name: self.name.clone(),
            config: QueueConfigPatch {
                mode: self.mode,
                person_only: self.person_only.then_some(true),
                rate_limits: (rate != RateLimitsPatch::default()).then_some(rate),
                retry_config: (!retry.is_empty()).then_some(retry),
                dispatch_deadline_s,
                dedup_window_s: self
                    .dedup_window
                    .map(|d| whole_seconds("--dedup-window", d))
                    .transpose()?,
                failed_retention_s: self
                    .failed_retention
                    .map(|d| whole_seconds("--failed-retention", d))
                    .transpose()?,
                on_success: self.on_success.clone().map(|url| Some(callback(url))),
                on_failure: self.on_failure.clone().map(|url| Some(callback(url))),
                header_style: self.header_style,
                group_concurrency: self.groups.group_concurrency.map(|l| l.0),
                group_order: self.groups.group_order,
            },
        })
    }
}

/// A callback target given by its URL alone: a POST of the event.
pub fn callback(url: String) -> TargetSpec {
    TargetSpec {
        url,
        ..TargetSpec::default()
    }
}

/// The spacing part of a `retry_config`, for a `retries:` line.
pub fn describe_backoff(
    max_retry_duration_s: u64,
    min_backoff_ms: u64,
    max_backoff_ms: u64,
    max_doublings: u32,
) -> String {
    format!(
        "max duration {max_retry_duration_s}s, backoff {min_backoff_ms}ms-{max_backoff_ms}ms, {max_doublings} doublings"
    )
}

fn show_queue(q: &Queue) {
    let r = &q.retry_config;
    fields(&[
        ("name", q.name.clone()),
        ("state", q.state.as_str().into()),
        (
            "mode",
            if q.person_only {
                format!("{} (person-only)", q.mode.as_str())
            } else {
                q.mode.as_str().into()
            },
        ),
        (
            "rate limits",
            format!(
                "{}/s, burst {}, {} concurrent",
                q.rate_limits.max_dispatches_per_second,
                q.rate_limits.max_burst_size,
                q.rate_limits.max_concurrent_dispatches
            ),
        ),
        (
            "retries",
            format!(
                "max {} attempts, {}",
                r.max_attempts,
                describe_backoff(
                    r.max_retry_duration_s,
                    r.min_backoff_ms,
                    r.max_backoff_ms,
                    r.max_doublings
                )
            ),
        ),
        ("dispatch deadline", format!("{}s", q.dispatch_deadline_s)),
        ("dedup window", format!("{}s", q.dedup_window_s)),
        ("failed retention", format!("{}s", q.failed_retention_s)),
        ("header style", q.header_style.as_str().into()),
        (
            "groups",
            format!(
                "{} per group, {} order, {} with due tasks",
                q.group_concurrency
                    .map_or_else(|| "no limit".to_string(), |n| format!("{n} running")),
                q.group_order.as_str(),
                q.stats.groups_with_due
            ),
        ),
        (
            "on success",
            q.on_success.as_ref().map_or("-".into(), |t| t.url.clone()),
        ),
        (
            "on failure",
            q.on_failure.as_ref().map_or("-".into(), |t| t.url.clone()),
        ),
        ("created", q.created_at.to_string()),
        ("updated", q.updated_at.to_string()),
        ("tasks", describe_counts(&q.stats.tasks)),
        (
            "oldest due",
            q.stats
                .oldest_due_time
                .map_or_else(|| "none".into(), |t| t.to_string()),
        ),
        (
            "dispatch",
            format!(
                "{} in the last minute, {} in flight",
                q.stats.dispatched_last_minute, q.stats.in_flight
            ),
        ),
    ]);
}

fn describe_counts(t: &TaskCounts) -> String {
    format!(
        "{} scheduled, {} queued, {} running, {} succeeded, {} failed, {} cancelled",
        t.scheduled, t.queued, t.running, t.succeeded, t.failed, t.cancelled
    )
}

pub async fn run(args: QueueArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    let c = &cx.client;
    match args.command {
        QueueCommand::Create(create) => {
            let answer = c.create_queue(&create.queue()?).await?;
            cx.show(&answer, show_queue)
        }
        QueueCommand::Update(update) => {
            let patch = QueueConfigPatch {
                header_style: update.header_style,
                group_concurrency: update.groups.group_concurrency.map(|l| l.0),
                group_order: update.groups.group_order,
                ..QueueConfigPatch::default()
            };
            cx.show(&c.update_queue(&update.name, &patch).await?, show_queue)
        }
        QueueCommand::Ls(list) => {
            let answer = c.list_queues(&list.options()).await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|q| {
                        vec![
                            q.name.clone(),
                            q.state.as_str().into(),
                            q.rate_limits.max_dispatches_per_second.to_string(),
                            q.rate_limits.max_concurrent_dispatches.to_string(),
                            q.retry_config.max_attempts.to_string(),
                            q.created_at.to_string(),
                        ]
                    })
                    .collect();
                table(
                    &[
                        "NAME",
                        "STATE",
                        "RATE/S",
                        "CONCURRENCY",
                        "MAX ATTEMPTS",
                        "CREATED",
                    ],
                    &rows,
                );
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        QueueCommand::Get { name } => cx.show(&c.get_queue(&name).await?, show_queue),
        QueueCommand::Groups(groups) => {
            let answer = c
                .list_queue_groups(
                    &groups.name,
                    groups.prefix.as_deref(),
                    &groups.list.options(),
                )
                .await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|g| {
                        vec![
                            g.group.clone(),
                            g.running.to_string(),
                            g.due.to_string(),
                            g.scheduled.to_string(),
                        ]
                    })
                    .collect();
                table(&["GROUP", "RUNNING", "DUE", "SCHEDULED"], &rows);
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        QueueCommand::Pause { name } => cx.show(&c.pause_queue(&name).await?, show_queue),
        QueueCommand::Resume { name } => cx.show(&c.resume_queue(&name).await?, show_queue),
        QueueCommand::Purge { name } => cx.show(&c.purge_queue(&name).await?, |p| {
            println!("cancelled {} task(s) in queue {name}", p.cancelled)
        }),
        QueueCommand::Rm { name } => {
            c.delete_queue(&name).await?;
            cx.done(&format!("deleted queue {name}"));
            Ok(())
        }
    }
}
