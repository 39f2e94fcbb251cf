//! `idem task create|ls|get|attempts|run|rm|redrive|redrive-all`.

use super::queue::ListArgs;
use super::{
    ApiArgs, Context, Failed, Usage, deadline_seconds, fields, hint_on_lost_answer, or_dash,
    read_input, table,
};
use crate::serve::parse_duration;
use clap::{Args, Subcommand};
use idem_client::{
    Attempt, BatchOptions, BatchResult, Body, ClaimOptions, CreateOptions, CreateTask, NewTarget,
    NewTask, Payload, RedriveOptions, RetryConfigPatch, Target, Task, TaskFilter, TaskState,
    Timestamp, Upload, new_idempotency_key,
};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct TaskArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: TaskCommand,
}

#[derive(Subcommand, Debug)]
enum TaskCommand {
    /// Create a task. Sends an Idempotency-Key and retries lost answers
    /// with it, so a retried create never makes a second task.
    Create(Box<CreateArgs>),
    /// List a queue's tasks.
    Ls {
        queue: String,
        /// Only tasks in this state (scheduled, queued, running, succeeded,
        /// failed, cancelled).
        #[arg(long, value_parser = parse_state)]
        state: Option<TaskState>,
        /// With a creation time, the list goes by creation time.
        #[command(flatten)]
        select: Selection,
        #[command(flatten)]
        page: ListArgs,
    },
    /// Show a task.
    Get { queue: String, task_id: String },
    /// List a task's delivery attempts kept, oldest first.
    Attempts {
        queue: String,
        task_id: String,
        #[command(flatten)]
        page: ListArgs,
    },
    /// Dispatch a scheduled or backing-off task now.
    Run { queue: String, task_id: String },
    /// Cancel a task that has not finished; a running attempt is aborted
    /// (its connection to the target closed). The ID stays taken for the
    /// queue's dedup window.
    Rm { queue: String, task_id: String },
    /// Run a failed or cancelled task again: the same task ID and run key,
    /// a fresh retry budget, its earlier attempts kept.
    Redrive { queue: String, task_id: String },
    /// Redrive a queue's failed (or cancelled) tasks, as many requests of
    /// at most 1000 tasks as it takes; only tasks that ended before the
    /// command started, so that one failing again is not redriven twice.
    RedriveAll(RedriveAllArgs),
    /// Pull queues: lease due tasks, in schedule order. Prints each task's
    /// ID, its attempt ID (which complete, fail, release and heartbeat
    /// name) and its payload; nothing when none came within --wait.
    Claim {
        queue: String,
        /// Most tasks to take (1-100).
        #[arg(long, default_value_t = 1)]
        max_tasks: u32,
        /// Wait this long (at most 30s) for a task when none is due.
        #[arg(long, value_parser = parse_duration)]
        wait: Option<Duration>,
        /// How long each lease lasts unless extended (`60s`, 1s-1h).
        #[arg(long, value_parser = parse_duration)]
        lease: Option<Duration>,
        /// Only tasks with this tag.
        #[arg(long)]
        tag: Option<String>,
    },
    /// Pull queues: extend a lease.
    Heartbeat {
        queue: String,
        task_id: String,
        #[arg(long)]
        attempt_id: String,
        /// The lease then ends this long from now (`60s`).
        #[arg(long, value_parser = parse_duration)]
        lease: Option<Duration>,
    },
    /// Pull queues: end a leased task succeeded.
    Complete {
        queue: String,
        task_id: String,
        #[arg(long)]
        attempt_id: String,
        /// The result to record, as JSON text (at most 64 KiB).
        #[arg(long)]
        result: Option<String>,
    },
    /// Pull queues: fail a leased attempt; the retry policy decides what
    /// follows.
    Fail {
        queue: String,
        task_id: String,
        #[arg(long)]
        attempt_id: String,
        /// Why it failed.
        #[arg(long, default_value = "")]
        error: String,
    },
    /// Pull queues: give a leased task back, due now (the attempt does not
    /// count).
    Release {
        queue: String,
        task_id: String,
        #[arg(long)]
        attempt_id: String,
    },
}

/// The ID prefix and creation range that pick a queue's tasks, for a list
/// and a bulk redrive alike.
#[derive(Args, Debug)]
struct Selection {
    /// Only tasks whose ID starts with this.
    #[arg(long)]
    id_prefix: Option<String>,
    /// Only tasks created at or after this time (RFC 3339, or `-1h` for a
    /// time before now).
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    created_after: Option<Timestamp>,
    /// Only tasks created before this time (RFC 3339, or `-1h`).
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    created_before: Option<Timestamp>,
}

#[derive(Args, Debug)]
struct RedriveAllArgs {
    queue: String,
    /// Which tasks: failed (default) or cancelled.
    #[arg(long, value_parser = parse_ended_state)]
    state: Option<TaskState>,
    /// Only tasks that ended at or after this time (RFC 3339, or `-1h`).
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    finished_after: Option<Timestamp>,
    /// Only tasks that ended before this time (RFC 3339, or `-1h`).
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    finished_before: Option<Timestamp>,
    #[command(flatten)]
    select: Selection,
    /// Print how many tasks match and redrive none.
    #[arg(long)]
    dry_run: bool,
    /// The request's Idempotency-Key: repeat a command whose answer was
    /// lost with the key it printed.
    #[arg(long)]
    idempotency_key: Option<String>,
}

#[derive(Args, Debug)]
struct CreateArgs {
    /// The queue.
    queue: String,
    #[command(flatten)]
    target: TargetArgs,
    /// When to deliver: an RFC 3339 time (`2026-10-16T12:00:00Z`) or a delay
    /// from now (`+5m`).
    #[arg(long, value_parser = parse_time)]
    schedule_time: Option<Timestamp>,
    /// The task ID (1-500 of [A-Za-z0-9_-]); a taken ID is refused with exit
    /// code 5.
    #[arg(long)]
    task_id: Option<String>,
    /// The Idempotency-Key to send instead of a fresh one: repeat a create
    /// whose answer was lost with the key it printed to get its result.
    #[arg(long)]
    idempotency_key: Option<String>,
    /// How long the target has to answer (`30s`, 1s-30m).
    #[arg(long, value_parser = parse_duration)]
    dispatch_deadline: Option<Duration>,
    /// Attempts, the first included (0 = unlimited); the queue's otherwise.
    #[arg(long)]
    max_attempts: Option<u32>,
    /// Wait up to this long (at most 30s) for the task to finish.
    #[arg(long, value_parser = parse_duration)]
    wait: Option<Duration>,
    /// URL that receives the signed `task.succeeded` event instead of the
    /// queue's on-success callback.
    #[arg(long)]
    on_success: Option<String>,
    /// URL that receives the signed `task.failed` event instead of the
    /// queue's on-failure callback.
    #[arg(long)]
    on_failure: Option<String>,
    /// Compatibility headers of its deliveries: idem or cloud_tasks
    /// (Cloud Tasks' X-CloudTasks-* headers); the queue's when unset.
    #[arg(long, value_parser = super::queue::parse_task_header_style)]
    header_style: Option<idem_client::HeaderStyle>,
    /// Create the tasks of a file (`-` for stdin) instead: a JSON array of
    /// tasks, or NDJSON (one task per line), each as the API's create takes
    /// it. Sent in batches of 1000, each committed at once; prints each
    /// task's result.
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "url", "method", "headers", "body", "body_file", "body_json", "schedule_time",
        "task_id", "dispatch_deadline", "max_attempts", "wait", "on_success", "on_failure",
        "header_style", "tag", "group", "priority",
    ])]
    from_file: Option<String>,
    /// With --from-file: each batch of 1000 is created whole or not at all.
    #[arg(long, requires = "from_file")]
    atomic: bool,
    /// A pull queue's task: a tag claims may filter on.
    #[arg(long)]
    tag: Option<String>,
    /// The group it takes turns and counts its queue's group limit in (a
    /// customer, an account: 1-200 of [A-Za-z0-9_.:@-]).
    #[arg(long)]
    group: Option<String>,
    /// -100 to 100: higher runs first within its group (default 0).
    #[arg(long, allow_hyphen_values = true)]
    priority: Option<i32>,
}

/// The HTTP request a task or a job's runs deliver.
#[derive(Args, Debug)]
pub struct TargetArgs {
    /// Where to deliver (http or https). A task without one is a pull
    /// queue's: its body is then the payload workers claim.
    #[arg(long)]
    url: Option<String>,
    /// HTTP method of the delivery (default POST).
    #[arg(long)]
    method: Option<String>,
    /// A header of the delivery, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// The delivery's body, as text.
    #[arg(long, group = "payload")]
    body: Option<String>,
    /// The delivery's body, read from a file (`-` for stdin) and sent
    /// as-is; its Content-Type is the one given with --header, if any.
    #[arg(long, group = "payload")]
    body_file: Option<String>,
    /// The delivery's body as JSON text, sent as application/json with its
    /// numbers spelled as given.
    #[arg(long, group = "payload")]
    body_json: Option<String>,
    /// Send an OIDC ID token signed by the organization with each delivery
    /// (`Authorization: Bearer …`), its audience the URL's origin.
    #[arg(long)]
    oidc: bool,
    /// Send an OIDC ID token with each delivery, for this audience.
    #[arg(long)]
    oidc_audience: Option<String>,
}

impl TargetArgs {
    /// The target; a --body-file is read here and becomes an upload.
    pub fn target(&self) -> anyhow::Result<NewTarget> {
        let url = self
            .url
            .as_ref()
            .ok_or_else(|| Usage("--url is required".into()))?;
        let mut target = NewTarget::new(url);
        target.method = self.method.clone();
        if self.oidc || self.oidc_audience.is_some() {
            target = target.oidc(self.oidc_audience.clone());
        }
        for (name, value) in &self.headers {
            target = target.header(name, value);
        }
        target.body = self.body()?;
        Ok(target)
    }

    /// The body given, if any; a --body-file is read here and becomes an
    /// upload.
    fn body(&self) -> anyhow::Result<Option<Body>> {
        Ok(if let Some(text) = &self.body {
            Some(Body::Text(text.clone()))
        } else if let Some(json) = &self.body_json {
            Some(Body::json_text(json.clone()).map_err(|e| Usage(format!("--body-json: {e}")))?)
        } else if let Some(path) = &self.body_file {
            let content_type = self
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.clone());
            Some(Body::Upload(Upload {
                bytes: read_input(path)?.into(),
                content_type,
                file_name: std::path::Path::new(path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned()),
            }))
        } else {
            None
        })
    }
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?} is not `Name: value`"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("{s:?} has no header name"));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

fn parse_state(s: &str) -> Result<TaskState, String> {
    TaskState::parse(s).ok_or_else(|| {
        "must be one of scheduled, queued, running, succeeded, failed, cancelled".to_string()
    })
}

fn parse_ended_state(s: &str) -> Result<TaskState, String> {
    match TaskState::parse(s) {
        Some(st @ (TaskState::Failed | TaskState::Cancelled)) => Ok(st),
        _ => Err("must be failed or cancelled".to_string()),
    }
}

pub fn parse_time(s: &str) -> Result<Timestamp, String> {
    if let Some(ago) = s.strip_prefix('-') {
        let d = parse_duration(ago)?;
        let d = jiff::SignedDuration::try_from(d).map_err(|e| e.to_string())?;
        return Timestamp::now()
            .checked_sub(d)
            .map_err(|e| format!("{s:?}: {e}"));
    }
    if let Some(delay) = s.strip_prefix('+') {
        let d = parse_duration(delay)?;
        let d = jiff::SignedDuration::try_from(d).map_err(|e| e.to_string())?;
        return Timestamp::now()
            .checked_add(d)
            .map_err(|e| format!("{s:?}: {e}"));
    }
    s.parse()
        .map_err(|e| format!("{s:?} is neither an RFC 3339 time nor +DURATION ({e})"))
}

impl CreateArgs {
    fn task(&self) -> anyhow::Result<NewTask> {
        let mut task = if self.target.url.is_some() {
            if self.tag.is_some() {
                return Err(
                    Usage("--tag is for a pull queue's task, which has no --url".into()).into(),
                );
            }
            NewTask::new(self.target.target()?)
        } else {
            NewTask::work(self.target.body()?)
        };
        task.tag = self.tag.clone();
        task.group = self.group.clone();
        task.priority = self.priority;
        task.on_success = self.on_success.clone().map(NewTarget::new);
        task.on_failure = self.on_failure.clone().map(NewTarget::new);
        task.task_id = self.task_id.clone();
        task.header_style = self.header_style;
        task.schedule_time = self.schedule_time;
        task.dispatch_deadline_s = deadline_seconds("--dispatch-deadline", self.dispatch_deadline)?;
        task.retry_config = self.max_attempts.map(|n| RetryConfigPatch {
            max_attempts: Some(n),
            ..RetryConfigPatch::default()
        });
        Ok(task)
    }
}

/// A task's or run's attempts; a failed attempt without an error shows
/// the first line of what its target answered.
pub fn attempts_table(attempts: &[Attempt]) {
    let rows: Vec<Vec<String>> = attempts
        .iter()
        .map(|a| {
            let answer = a
                .response
                .as_ref()
                .and_then(|r| r.body.lines().find(|l| !l.trim().is_empty()))
                .map(|l| l.trim().chars().take(80).collect::<String>());
            vec![
                a.attempt.to_string(),
                a.started_at.to_string(),
                or_dash(a.finished_at),
                or_dash(a.status_code),
                or_dash(a.duration_ms.map(|ms| format!("{ms}ms"))),
                // Last: an error message may be long.
                or_dash(a.error.as_deref().or(answer.as_deref())),
            ]
        })
        .collect();
    table(
        &[
            "ATTEMPT", "STARTED", "FINISHED", "STATUS", "DURATION", "ERROR",
        ],
        &rows,
    );
}

pub fn last_status(a: Option<&Attempt>) -> String {
    match a {
        None => "-".into(),
        Some(a) => match (a.status_code, &a.error) {
            (Some(code), _) => code.to_string(),
            (None, Some(e)) => e.clone(),
            (None, None) => "in flight".into(),
        },
    }
}

/// A target's body, for a `body:` line.
pub fn describe_body(target: &Target) -> String {
    if let Some(b) = &target.body {
        format!("{} bytes of text", b.len())
    } else if let Some(j) = &target.json {
        j.get().to_string()
    } else if let Some(b) = &target.body_base64 {
        format!("base64 {b}")
    } else {
        "-".into()
    }
}

/// A pull task's payload, for a `body:` line.
pub fn describe_payload(p: &Payload) -> String {
    if let Some(b) = &p.body {
        b.clone()
    } else if let Some(j) = &p.json {
        j.get().to_string()
    } else if let Some(b) = &p.body_base64 {
        format!("base64 {b}")
    } else {
        "-".into()
    }
}

/// A target's method and URL, for tables.
pub fn describe_target(target: &Target) -> String {
    format!("{} {}", target.method, target.url)
}

fn show_task(t: &Task) {
    fields(&[
        ("task", t.task_id.clone()),
        ("queue", t.queue.clone()),
        ("state", t.state.as_str().into()),
        (
            "target",
            t.target.as_ref().map_or("-".into(), describe_target),
        ),
        (
            "body",
            match (&t.target, &t.payload) {
                (Some(target), _) => describe_body(target),
                (None, Some(p)) => describe_payload(p),
                (None, None) => "-".into(),
            },
        ),
        ("tag", or_dash(t.tag.as_deref())),
        ("group", or_dash(t.group.as_deref())),
        ("priority", t.priority.to_string()),
        (
            "lease",
            t.lease.as_ref().map_or("-".into(), |l| {
                // The token is shown to its holder and admins only.
                match &l.attempt_id {
                    Some(id) => format!("{id} held by {} until {}", l.claimant, l.lease_expires_at),
                    None => format!("held by {} until {}", l.claimant, l.lease_expires_at),
                }
            }),
        ),
        ("result", or_dash(t.result.as_ref().map(|r| r.get()))),
        ("schedule time", t.schedule_time.to_string()),
        ("attempts", t.attempt_count.to_string()),
        ("last attempt", last_status(t.last_attempt.as_ref())),
        ("created", t.created_at.to_string()),
        ("finished", or_dash(t.finished_at)),
    ]);
}

/// The tasks of a `--from-file` file: a JSON array, or one task per line.
fn tasks_from_file(bytes: &[u8]) -> anyhow::Result<Vec<CreateTask>> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| Usage("--from-file: not UTF-8 text".into()))?;
    if text.trim_start().starts_with('[') {
        return serde_json::from_str(text)
            .map_err(|e| Usage(format!("--from-file: not a JSON array of tasks: {e}")).into());
    }
    let mut tasks = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let task = serde_json::from_str(line)
            .map_err(|e| Usage(format!("--from-file: line {}: {e}", n + 1)))?;
        tasks.push(task);
    }
    Ok(tasks)
}

/// `idem task create --from-file`: batches of [`BATCH`] tasks, one
/// Idempotency-Key each, so that a batch whose answer was lost is retried
/// without creating anything twice.
async fn create_from_file(cx: &Context, args: &CreateArgs, path: &str) -> anyhow::Result<()> {
    const BATCH: usize = 1000;
    let tasks = tasks_from_file(&read_input(path)?)?;
    if tasks.is_empty() {
        return Err(Usage(format!("--from-file: {path} holds no task")).into());
    }
    let base = args
        .idempotency_key
        .clone()
        .unwrap_or_else(new_idempotency_key);
    let (mut invalid, mut taken) = (0usize, 0usize);
    let mut rows = Vec::new();
    let chunks = tasks.len().div_ceil(BATCH);
    let mut tasks = tasks.into_iter();
    for chunk in 0..chunks {
        let batch: Vec<CreateTask> = tasks.by_ref().take(BATCH).collect();
        let key = if chunks == 1 {
            base.clone()
        } else {
            format!("{base}-{chunk}")
        };
        let options = BatchOptions {
            atomic: args.atomic,
            idempotency_key: Some(key.clone()),
        };
        let answer = match cx
            .client
            .create_tasks_batch_wire(&args.queue, batch, &options)
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                if chunk > 0 {
                    eprintln!("note: the first {} tasks were sent", chunk * BATCH);
                }
                hint_on_lost_answer(&e, "the batch", &key);
                return Err(e.into());
            }
        };
        for (i, result) in answer.value.results.iter().enumerate() {
            match result.status {
                201 => {}
                409 => taken += 1,
                _ => invalid += 1,
            }
            rows.push(batch_row(chunk * BATCH + i + 1, result));
        }
        if cx.json {
            cx.show(&answer, |_| {})?;
        }
    }
    if !cx.json {
        table(&["#", "STATUS", "TASK", "STATE OR PROBLEM"], &rows);
    }
    match (invalid, taken) {
        (0, 0) => Ok(()),
        (0, n) => Err(Failed(5, format!("{n} of the tasks exist already")).into()),
        (n, _) => Err(Failed(3, format!("{n} of the tasks were refused")).into()),
    }
}

fn batch_row(n: usize, r: &BatchResult) -> Vec<String> {
    let task = r
        .task
        .as_ref()
        .map(|t| t.task_id.clone())
        .unwrap_or_else(|| "-".into());
    let what = match (&r.task, &r.problem) {
        (Some(t), None) => t.state.as_str().to_string(),
        (_, Some(p)) => format!("{}: {}", p.code, p.detail.as_deref().unwrap_or("")),
        (None, None) => "-".into(),
    };
    vec![n.to_string(), r.status.to_string(), task, what]
}

async fn create(cx: &Context, args: CreateArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.from_file {
        return create_from_file(cx, &args, path).await;
    }
    let task = args.task()?;
    // The key is chosen here rather than in the client so that it can be
    // printed when every attempt failed: re-running with it is safe.
    let key = args
        .idempotency_key
        .clone()
        .unwrap_or_else(new_idempotency_key);
    let options = CreateOptions {
        idempotency_key: Some(key.clone()),
        wait: args.wait,
    };
    match cx
        .client
        .create_task_with(&args.queue, &task, &options)
        .await
    {
        Ok(answer) => cx.show(&answer, show_task),
        Err(e) => {
            hint_on_lost_answer(&e, "the task", &key);
            Err(e.into())
        }
    }
}

pub async fn run(args: TaskArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    let c = &cx.client;
    match args.command {
        TaskCommand::Create(create_args) => create(&cx, *create_args).await,
        TaskCommand::Ls {
            queue,
            state,
            select,
            page,
        } => {
            let filter = TaskFilter {
                state,
                id_prefix: select.id_prefix,
                created_after: select.created_after,
                created_before: select.created_before,
            };
            let answer = c.list_tasks(&queue, &filter, &page.options()).await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|t| {
                        vec![
                            t.task_id.clone(),
                            t.state.as_str().into(),
                            t.attempt_count.to_string(),
                            last_status(t.last_attempt.as_ref()),
                            t.schedule_time.to_string(),
                            t.target.as_ref().map_or("-".into(), describe_target),
                        ]
                    })
                    .collect();
                table(
                    &[
                        "TASK ID",
                        "STATE",
                        "ATTEMPTS",
                        "LAST",
                        "SCHEDULE TIME",
                        "TARGET",
                    ],
                    &rows,
                );
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        TaskCommand::Get { queue, task_id } => {
            cx.show(&c.get_task(&queue, &task_id).await?, show_task)
        }
        TaskCommand::Attempts {
            queue,
            task_id,
            page,
        } => {
            let answer = c.task_attempts(&queue, &task_id, &page.options()).await?;
            cx.show(&answer, |list| attempts_table(&list.items))?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        TaskCommand::Run { queue, task_id } => {
            cx.show(&c.run_task(&queue, &task_id).await?, show_task)
        }
        TaskCommand::Rm { queue, task_id } => {
            cx.show(&c.cancel_task(&queue, &task_id).await?, |t| {
                println!(
                    "cancelled task {} in queue {} ({})",
                    t.task_id,
                    t.queue,
                    t.state.as_str()
                )
            })
        }
        TaskCommand::Redrive { queue, task_id } => {
            cx.show(&c.redrive_task(&queue, &task_id).await?, show_task)
        }
        TaskCommand::RedriveAll(args) => redrive_all(&cx, args).await,
        TaskCommand::Claim {
            queue,
            max_tasks,
            wait,
            lease,
            tag,
        } => {
            let options = ClaimOptions {
                max_tasks,
                wait: wait.unwrap_or_default(),
                lease: lease.unwrap_or(Duration::from_secs(60)),
                tag,
            };
            cx.show(&c.claim_tasks(&queue, &options).await?, |claimed| {
                for t in &claimed.tasks {
                    let attempt_id = t
                        .lease
                        .as_ref()
                        .and_then(|l| l.attempt_id.as_deref())
                        .unwrap_or("-");
                    let payload = t.payload.as_ref().map_or("-".into(), describe_payload);
                    println!("{}\t{attempt_id}\t{payload}", t.task_id);
                }
            })
        }
        TaskCommand::Heartbeat {
            queue,
            task_id,
            attempt_id,
            lease,
        } => {
            let lease = lease.unwrap_or(Duration::from_secs(60));
            let answer = c
                .heartbeat_task(&queue, &task_id, &attempt_id, lease)
                .await?;
            cx.show(&answer, show_task)
        }
        TaskCommand::Complete {
            queue,
            task_id,
            attempt_id,
            result,
        } => {
            let result = result
                .map(|r| {
                    serde_json::value::RawValue::from_string(r)
                        .map_err(|e| Usage(format!("--result is not JSON: {e}")))
                })
                .transpose()?;
            let answer = c
                .complete_task(&queue, &task_id, &attempt_id, result)
                .await?;
            cx.show(&answer, show_task)
        }
        TaskCommand::Fail {
            queue,
            task_id,
            attempt_id,
            error,
        } => cx.show(
            &c.fail_task(&queue, &task_id, &attempt_id, &error).await?,
            show_task,
        ),
        TaskCommand::Release {
            queue,
            task_id,
            attempt_id,
        } => cx.show(
            &c.release_task(&queue, &task_id, &attempt_id).await?,
            show_task,
        ),
    }
}

/// One bulk redrive: every matching task, in one request under one
/// Idempotency-Key (the given one, or a fresh one that a failure prints, so
/// that repeating the command with it cannot redrive twice).
async fn redrive_all(cx: &Context, args: RedriveAllArgs) -> anyhow::Result<()> {
    let key = args.idempotency_key.unwrap_or_else(new_idempotency_key);
    let options = RedriveOptions {
        state: args.state,
        finished_after: args.finished_after,
        finished_before: args.finished_before,
        id_prefix: args.select.id_prefix,
        created_after: args.select.created_after,
        created_before: args.select.created_before,
        dry_run: args.dry_run,
        idempotency_key: Some(key.clone()),
    };
    let answer = match cx.client.redrive_tasks(&args.queue, &options).await {
        Ok(answer) => answer,
        Err(e) => {
            if matches!(e, idem_client::Error::Transport { .. })
                || e.status().is_some_and(|s| s >= 500)
            {
                eprintln!(
                    "hint: the redrive may have taken effect; repeat with \
                     --idempotency-key {key} to find out without redriving twice"
                );
            }
            return Err(e.into());
        }
    };
    cx.show(&answer, |r| match r.matching {
        Some(n) => println!("{n} task(s) in queue {} would be redriven", args.queue),
        None => println!("redrove {} task(s) in queue {}", r.redriven, args.queue),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_split_at_the_first_colon() {
        assert_eq!(
            parse_header("Content-Type: application/json; charset=utf-8").unwrap(),
            (
                "Content-Type".into(),
                "application/json; charset=utf-8".into()
            )
        );
        assert_eq!(
            parse_header("X-A:b:c").unwrap(),
            ("X-A".into(), "b:c".into())
        );
        assert!(parse_header("no-colon").is_err());
        assert!(parse_header(": v").is_err());
    }

    #[test]
    fn schedule_times_are_absolute_or_relative() {
        assert_eq!(
            parse_time("2026-10-16T12:00:00Z").unwrap().to_string(),
            "2026-10-16T12:00:00Z"
        );
        let later = parse_time("+1h").unwrap();
        let delta = later.duration_since(Timestamp::now()).as_secs();
        assert!((3590..=3600).contains(&delta), "{delta}");
        assert!(parse_time("tomorrow").is_err());
    }
}
