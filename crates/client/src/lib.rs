//! A typed async client for Idem's HTTP API.
//!
//! Every route of the API is a method on [`Client`], grouped by resource
//! (queues, tasks, cron jobs and their runs, tenancy); each returns the
//! resource in a [`Response`] that also says whether the server **replayed**
//! an earlier result and which request ID to quote.
//!
//! # Safe retries
//!
//! A request whose answer is lost (a timeout, a dropped connection) may or
//! may not have been executed. Retrying it blindly can create a task twice;
//! not retrying it loses work. This client closes that gap the way API.md §2
//! intends:
//!
//! - Every POST and PATCH carries an `Idempotency-Key`: **one** fresh
//!   random UUID per logical call, the same on every attempt of that call.
//!   The server executes the first attempt that reaches it and answers
//!   later ones with the original status and `Idempotent-Replayed: true`.
//! - Timeouts, connection errors, 429 (not a quota's `RESOURCE_EXHAUSTED`),
//!   5xx and 409 `IDEMPOTENCY_KEY_IN_PROGRESS` are retried with jittered exponential
//!   backoff, honouring `Retry-After`, within the attempts and time of the
//!   [`RetryPolicy`]. Any other 4xx is returned at once: sending the same
//!   request again would get the same answer.
//! - GET and DELETE carry no key and are retried the same way; they change
//!   nothing twice by themselves. A DELETE whose first attempt took effect
//!   and whose answer was lost answers 404 on the retry.
//!
//! Task IDs complement keys: an ID taken within the queue's dedup window is
//! *refused* (409 `TASK_ALREADY_EXISTS`), while a key *replays*.
//!
//! # Example
//!
//! ```no_run
//! use idem_client::{Body, Client, Error, NewQueue, NewTarget, NewTask, ProblemCode};
//!
//! # async fn example() -> Result<(), Error> {
//! let client = Client::new("http://127.0.0.1:7070", "idem_…")?;
//! client.create_queue(&NewQueue::new("payments")).await?;
//!
//! let task = NewTask::new(
//!     NewTarget::new("http://pay.internal/charge")
//!         .body(Body::json(&serde_json::json!({"amount": 100}))?),
//! )
//! .task_id("payment-12345");
//! match client.create_task("payments", &task).await {
//!     Ok(created) => println!(
//!         "{} is {:?} (replayed: {})",
//!         created.value.task_id, created.value.state, created.replayed
//!     ),
//!     Err(e) if e.problem_code() == Some(ProblemCode::TaskAlreadyExists) => {
//!         println!("already queued")
//!     }
//!     Err(e) => return Err(e),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Retries are configured on the builder:
//!
//! ```no_run
//! use std::time::Duration;
//! use idem_client::{Client, RetryPolicy};
//!
//! # fn example() -> Result<(), idem_client::Error> {
//! let client = Client::builder("http://127.0.0.1:7070")
//!     .api_key("idem_…")
//!     .retry(RetryPolicy {
//!         max_attempts: 8,
//!         max_elapsed: Duration::from_secs(60),
//!         ..RetryPolicy::default()
//!     })
//!     .build()?;
//! # let _ = client;
//! # Ok(())
//! # }
//! ```
//!
//! # Transport
//!
//! The base URL is `http://` or `https://`. Over https the server's
//! certificate is checked against the system's trust store, plus the CA
//! certificates of [`ClientBuilder::ca_file`] (a private CA, say). TLS is
//! rustls with the ring provider, installed as the process-wide default
//! when none is installed yet.
//!
//! # Layout
//!
//! One module per resource (`queues`, `tasks`, `jobs`, `tenancy`), each
//! holding its types and an `impl Client` block; every method builds a call
//! and hands it to the one place that sends and retries.

#![deny(missing_docs)]

mod client;
mod error;
mod events;
mod jobs;
mod list;
mod queues;
pub mod retry;
mod tasks;
mod tenancy;
mod work;

pub use client::{
    Client, ClientBuilder, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, REQUEST_ID, Response, Upload,
    new_idempotency_key,
};
pub use error::{Error, Problem};
pub use jobs::{JobConfig, JobUpdate, NewJob, RunState};
pub use list::ListOptions;
pub use queues::NewQueue;
pub use retry::RetryPolicy;
pub use tasks::{
    BatchOptions, Body, CreateOptions, NewTarget, NewTask, RedriveOptions, TaskFilter,
};
pub use work::ClaimOptions;

/// The wire format, re-exported so that callers need not depend on
/// `idem-api`: what the calls return, and the parts of what they send.
pub use idem_api::{
    ApiKey, Attempt, AttemptResponse, BatchResult, BatchResults, CatchUp, ClaimedTasks, CreateTask,
    EndTask, EventType, Group, GroupOrder, HeaderStyle, Job, JobRetryConfig, JobRetryConfigPatch,
    JobRunEvent, JobState, Lease, List, NewApiKey, Organization, Payload, Preview, Principal,
    PrincipalKind, ProblemCode, Purged, Queue, QueueConfigPatch, QueueMode, QueueState, QueueStats,
    RateLimits, RateLimitsPatch, Redriven, RetryConfig, RetryConfigPatch, Role, Run, RunKind,
    SigningSecret, SigningSecrets, Target, TargetSpec, Task, TaskCounts, TaskEvent, TaskState,
    Webhook,
};
/// Request bodies under the names this client has always given them.
pub use idem_api::{CreatePrincipal as NewPrincipal, PreviewRequest as SchedulePreview};
pub use jiff::Timestamp;
