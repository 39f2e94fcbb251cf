//! Idem's wire format: every request body, response body and problem code
//! of the HTTP API, defined once.
//!
//! The server decodes requests into these types and encodes its answers
//! from them; its OpenAPI document derives its schemas from them (feature
//! `openapi`); `idem-client` sends and decodes the same types. A field added
//! here therefore reaches all three, and none can drift from the others.
//!
//! The value types that the rules and the store also use (`RetryConfig`,
//! `QueueState`, `Role`, `Attempt`, the configuration patches, the target
//! and job bodies that `idem-core` resolves, …) are defined in `idem-core`
//! with their validation and re-exported here, so that a user of the wire
//! format needs only this crate.
//!
//! # Features
//!
//! - `openapi` (off by default): derives `utoipa::ToSchema` on these types
//!   and on the core types they contain. Only the server enables it.

mod events;
mod idempotency;
mod jobs;
mod list;
mod oidc;
pub mod problem;
mod queues;
mod tasks;
mod tenancy;
pub mod work;

pub use events::{CreateWebhook, JobRunEvent, TaskEvent, Webhook};
pub use idempotency::{IdempotencyKey, Resource};
pub use jobs::{Job, Preview, PreviewRequest, Run};
pub use list::List;
pub use oidc::{Jwk, Jwks, OpenIdConfiguration};
pub use problem::{Problem, ProblemCode};
pub use queues::{
    CreateQueue, Group, Purged, Queue, QueueStats, RedriveTasks, Redriven, TaskCounts,
};
pub use tasks::{BatchResult, BatchResults, CreateTask, CreateTasks, Lease, Payload, Target, Task};
pub use tenancy::{
    ApiKey, CreateOrganization, CreatePrincipal, NewApiKey, Organization, Principal, SigningSecret,
    SigningSecrets, UpdatePrincipal,
};
pub use work::{
    AssignTask, ClaimTask, ClaimTasks, ClaimedTasks, CompleteTask, EndTask, EndTasks, FailTask,
    Heartbeat, ReassignTask, ReleaseTask,
};

pub use idem_core::event::EventType;
pub use idem_core::job::{
    CreateJob, HeaderStyle, JobRetryConfig, JobRetryConfigPatch, JobState, RunKind, UpdateJob,
};
pub use idem_core::queue::{
    GroupOrder, QueueConfigPatch, QueueMode, QueueState, RateLimits, RateLimitsPatch, RetryConfig,
    RetryConfigPatch,
};
pub use idem_core::schedule::CatchUp;
pub use idem_core::task::{
    Attempt, AttemptResponse, Oidc, OidcSpec, PayloadSpec, TargetSpec, TaskState,
};
pub use idem_core::tenancy::{PrincipalKind, Role};
