//! Idem's storage contract and its two backends.
//!
//! [`Store`] is the one abstraction the server talks to. [`sqlite`] keeps
//! everything in one file and funnels writes through a single writer thread
//! that commits many requests together (group commit), so that a response
//! sent after its commit stays affordable with `synchronous=FULL`.
//! [`postgres`] serves any number of `idem` nodes on one database.
//!
//! # Layout
//!
//! The two backends must behave the same, so what decides behaviour is
//! written once: `tables` holds one module per table (tenancy, queues,
//! tasks, jobs, dispatch, work, events, idempotency) with its statements, their
//! parameters and the rules that choose between them, as `async` code over
//! a connection that runs one primitive statement at a time (`driver`).
//! The row of `tasks`, which several tables' statements read and insert,
//! is defined once in `task_row`.
//! A backend supplies only that connection and its transaction: opening,
//! migrating, and the helper that runs an operation's body and completes
//! its Idempotency-Key record in the same commit, so that no write path can
//! leave the record out. What stays in a backend is what its dialect or
//! its concurrency model requires: PostgreSQL's row locks and
//! `SKIP LOCKED`, its `unnest` batches, group commit of task creates and
//! of the ends of pull tasks, and `LISTEN/NOTIFY`; SQLite's writer thread, its in-memory key locks and its
//! exact queue-configuration cache.
//!
//! Both run the same conformance suite (`tests/conformance.rs`). Every
//! operation takes "now" from the [`Clock`](idem_core::Clock) the store was
//! opened with, so tests move time instead of sleeping.

pub mod dispatch;
mod driver;
pub mod error;
pub mod events;
pub mod idempotency;
pub mod jobs;
pub mod oidc;
mod operations;
pub mod postgres;
pub mod quotas;
pub mod records;
pub mod schema;
mod sql;
pub mod sqlite;
mod tables;
mod task_row;
pub mod usage;

pub use dispatch::DispatchStore;
pub use error::Error;
pub use idempotency::IdempotencyStore;
pub use jobs::JobStore;
pub use quotas::{Quota, QuotaExceeded, Quotas};
pub use records::*;

use async_trait::async_trait;
use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState};
use idem_core::tenancy::{PrincipalKind, Role};
use idempotency::KeyCompletion;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything Idem persists. Operations are named noun-first so they sort by
/// table; each either commits entirely or leaves nothing behind.
#[async_trait]
pub trait Store: DispatchStore + IdempotencyStore + JobStore + Send + Sync + 'static {
    /// Sets the per-organization quotas that creations check from now on
    /// ([`Quotas::default`] until then).
    fn set_quotas(&self, quotas: Quotas);

    /// Whether the store answers; `/readyz`.
    async fn ping(&self) -> Result<()>;

    /// The schema version the store records now, against this binary's.
    async fn schema(&self) -> Result<schema::SchemaState>;

    /// Makes sure organization `default` exists and an admin of it holds a
    /// key: on an empty store, creates it with an admin principal holding
    /// `key` and a signing secret; when it exists but no admin of it holds a
    /// key, gives `key` to its principal `admin` (made an admin); otherwise
    /// changes nothing. Safe to race from several nodes.
    async fn bootstrap(&self, key: NewApiKey) -> Result<Bootstrap>;

    /// Creates an organization with its admin principal, key and signing
    /// secret, in one transaction.
    async fn organization_create(
        &self,
        name: &str,
        admin_key: NewApiKey,
        done: Option<KeyCompletion>,
    ) -> Result<()>;

    async fn principal_create(
        &self,
        org: &str,
        name: &str,
        kind: PrincipalKind,
        role: Role,
        done: Option<KeyCompletion>,
    ) -> Result<Principal>;
    async fn principal_get(&self, org: &str, name: &str) -> Result<Principal>;
    async fn principal_list(&self, org: &str, page: &PageRequest) -> Result<Page<Principal>>;
    async fn principal_set_role(
        &self,
        org: &str,
        name: &str,
        role: Role,
        done: Option<KeyCompletion>,
    ) -> Result<Principal>;

    /// Adds a key to an existing principal.
    async fn api_key_create(
        &self,
        org: &str,
        principal: &str,
        key: NewApiKey,
        done: Option<KeyCompletion>,
    ) -> Result<ApiKey>;
    async fn api_key_list(
        &self,
        org: &str,
        principal: &str,
        page: &PageRequest,
    ) -> Result<Page<ApiKey>>;
    /// One key of a principal, by its ID; a revoked key is not found.
    async fn api_key_get(&self, org: &str, principal: &str, id: &str) -> Result<ApiKey>;
    async fn api_key_revoke(&self, org: &str, principal: &str, id: &str) -> Result<()>;
    /// Resolves a key by its hash; `None` for unknown or revoked keys.
    async fn api_key_authenticate(&self, key_hash: &str) -> Result<Option<Caller>>;
    /// Records that a key was used now.
    async fn api_key_touch(&self, id: &str) -> Result<()>;

    /// Newest first.
    async fn signing_secret_list(&self, org: &str) -> Result<Vec<SigningSecret>>;
    /// A completion is recorded with the new secret's ID.
    async fn signing_secret_rotate(
        &self,
        org: &str,
        done: Option<KeyCompletion>,
    ) -> Result<SigningSecret>;
    /// Refuses to delete the organization's last secret: deliveries would go
    /// out unsigned.
    async fn signing_secret_delete(&self, org: &str, id: &str) -> Result<()>;

    /// The organization's OIDC signing key younger than `rotation`; when it
    /// has none, `candidate` becomes it (one key however many nodes ask at
    /// once) and its keys older than `keep` are deleted.
    async fn oidc_key_current(
        &self,
        org: &str,
        rotation: std::time::Duration,
        keep: std::time::Duration,
        candidate: oidc::NewOidcKey,
    ) -> Result<oidc::OidcKey>;
    /// Every organization's OIDC keys younger than `keep`, newest first:
    /// what the JWKS publishes.
    async fn oidc_key_published(
        &self,
        keep: std::time::Duration,
    ) -> Result<Vec<oidc::OidcPublicKey>>;

    /// Adds an event webhook; the caller validated `url` and `events`. A
    /// completion is recorded with the new webhook's ID.
    async fn webhook_create(
        &self,
        org: &str,
        url: &str,
        events: &[idem_core::event::EventType],
        done: Option<KeyCompletion>,
    ) -> Result<Webhook>;
    async fn webhook_list(&self, org: &str, page: &PageRequest) -> Result<Page<Webhook>>;
    async fn webhook_get(&self, org: &str, id: &str) -> Result<Webhook>;
    /// Events already raised for it are still delivered.
    async fn webhook_delete(&self, org: &str, id: &str) -> Result<()>;

    async fn queue_create(
        &self,
        org: &str,
        name: &str,
        config: &QueueConfig,
        done: Option<KeyCompletion>,
    ) -> Result<Queue>;
    async fn queue_get(&self, org: &str, name: &str) -> Result<Queue>;
    async fn queue_list(&self, org: &str, page: &PageRequest) -> Result<Page<Queue>>;
    /// Applies `patch` to the current configuration, validating the result,
    /// in one transaction.
    async fn queue_update(
        &self,
        org: &str,
        name: &str,
        patch: &QueueConfigPatch,
        done: Option<KeyCompletion>,
    ) -> Result<Queue>;
    async fn queue_set_state(
        &self,
        org: &str,
        name: &str,
        state: QueueState,
        done: Option<KeyCompletion>,
    ) -> Result<Queue>;
    /// Deletes the queue and every task in it, tombstones included.
    async fn queue_delete(&self, org: &str, name: &str) -> Result<()>;
    /// Cancels every task of the queue that is neither running nor final;
    /// returns how many.
    /// A completion is recorded with the answer's body, `{"cancelled": n}`.
    async fn queue_purge(&self, org: &str, name: &str, done: Option<KeyCompletion>) -> Result<u64>;

    /// Creates a task, unless its ID is taken: by a live task, or by a
    /// tombstone inside its dedup window ([`Error::TaskExists`]). A
    /// tombstone past its window is replaced in the same transaction.
    async fn task_create(&self, params: TaskCreate) -> Result<Task>;
    /// Creates a batch of tasks into one queue with one commit, each item
    /// under the rules of [`Store::task_create`], answered in request
    /// order. A missing queue fails the whole batch; so does the first item
    /// not created when the batch is atomic ([`Error::BatchItem`]), and
    /// then nothing is written.
    async fn task_create_batch(&self, batch: TaskBatch) -> Result<BatchCreated>;
    /// Whether the queue was paused when this store last read it for a
    /// create: exact on SQLite, up to a second old on PostgreSQL, and
    /// `false` for a queue it has not read. A create into a paused queue
    /// need not wake the dispatcher, which could claim none of it.
    fn queue_paused_hint(&self, org: &str, queue: &str) -> bool;
    async fn task_get(&self, org: &str, queue: &str, task_id: &str) -> Result<Task>;
    async fn task_list(
        &self,
        org: &str,
        queue: &str,
        filter: TaskFilter,
        page: &PageRequest,
    ) -> Result<Page<Task>>;
    /// One page of a task's attempts, oldest first, keyed by attempt
    /// number; only the latest `--max-attempts-kept` are kept.
    async fn task_attempts(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        page: &PageRequest,
    ) -> Result<Page<Attempt>>;
    /// Cancels a task that has not finished. A running attempt cannot be
    /// recalled: the task is marked so that no retry follows it.
    async fn task_cancel(&self, org: &str, queue: &str, task_id: &str) -> Result<Task>;
    /// Makes a scheduled or backing-off task due now.
    async fn task_run_now(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        done: Option<KeyCompletion>,
    ) -> Result<Task>;

    /// Runs a `failed` or `cancelled` task again: the same ID and run key,
    /// due now, with a fresh retry budget; its attempts are kept and their
    /// numbering continues. Any other state is
    /// [`Error::FailedPrecondition`].
    async fn task_redrive(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        done: Option<KeyCompletion>,
    ) -> Result<Task>;
    /// Redrives every task of the queue that `filter` matches, in one
    /// transaction. A completion is recorded with the answer's body,
    /// `{"redriven": n}`.
    async fn task_redrive_many(
        &self,
        org: &str,
        queue: &str,
        filter: RedriveFilter,
        done: Option<KeyCompletion>,
    ) -> Result<Redriven>;

    /// Deletes at most `limit` tombstones whose dedup window has passed,
    /// with their attempts; returns how many.
    async fn task_sweep_tombstones(&self, limit: u32) -> Result<u64>;

    /// The queue's statistics, read from the counts kept with every change
    /// of a task's state and a few index ranges, never a scan of its tasks.
    async fn queue_stats(&self, org: &str, name: &str) -> Result<QueueStats>;

    /// One page of a queue's groups with live tasks (pending or running),
    /// by name, those that start with `prefix`.
    async fn queue_groups(
        &self,
        org: &str,
        queue: &str,
        prefix: &str,
        page: &PageRequest,
    ) -> Result<Page<GroupStats>>;

    /// The number of tasks per organization, queue and state, from the
    /// counts kept with every change of a task's state, for the queue depth
    /// metric.
    async fn task_counts_by_state(&self) -> Result<Vec<TaskCount>>;

    /// The oldest due time of each running queue with tasks due (pending
    /// and due, not yet attempted or waiting for a retry): one index seek
    /// per queue, for the queue age metric. Paused queues are left out:
    /// their backlog waits on purpose.
    async fn queue_oldest_due(&self) -> Result<Vec<QueueOldestDue>>;

    /// Claims up to `claim.max_tasks` due tasks of a pull queue in schedule
    /// order, in one statement and one commit (API.md §11). Concurrent
    /// claims never take one task twice.
    async fn work_claim(&self, claim: WorkClaim) -> Result<Vec<Task>>;

    /// One action on one task of a pull queue, in one transaction: the task
    /// as it left it and, when the action ended the task, its final state
    /// (announced on PostgreSQL by the transaction itself); or, for the
    /// holder's repeated end of an ended attempt, the task as it is, marked
    /// replayed.
    async fn work_act(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        action: WorkAction,
    ) -> Result<dispatch::WorkDone>;

    /// Ends (`WorkAction::Complete` and `WorkAction::Fail`) of tasks of
    /// one pull queue, each answered as [`Store::work_act`] answers it, in
    /// order; of two ends of one task, the first is applied first. They
    /// share their commits. A queue that is missing, a push queue, or
    /// person-only while an end is not a person's refuses them all, and
    /// nothing is written.
    async fn work_end_many(
        &self,
        org: &str,
        queue: &str,
        ends: Vec<(String, WorkAction)>,
    ) -> Result<Vec<Result<dispatch::WorkDone>>>;

    /// The names of every organization and queue; the metrics drop the
    /// series of those that are gone.
    async fn metric_scopes(&self) -> Result<MetricScopes>;
}
