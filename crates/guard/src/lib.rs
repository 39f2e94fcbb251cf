//! Exactly-once effects for handlers called by at-least-once senders (Idem,
//! Cloud Scheduler, Cloud Tasks, webhooks).
//!
//! A sender that times out, crashes or simply retries will deliver the same
//! request again. This crate makes the *effect* of a delivery happen once:
//! before the handler runs, the guard **claims** the delivery's run key in a
//! store; afterwards it **finishes** the claim.
//!
//! # The claim state machine
//!
//! ```text
//!            claim (no record, lease expired, or record past expire_at)
//!   (none) ──────────────────────────────────────────────► in_progress
//!     ▲                                                      │      │
//!     │        finish(failure): record deleted               │      │ finish(success)
//!     └──────────────────────────────────────────────────────┘      ▼
//!                                                               completed
//! ```
//!
//! - A live `completed` record answers at once (200, the handler does not
//!   run): the sender should stop retrying.
//! - A live `in_progress` record whose lease has not expired answers **409**.
//!   Not 503: some senders retry 503 without counting the attempt, and a
//!   run held by another attempt is a conflict, not an outage.
//! - Otherwise the caller gets a fresh `attempt_id`, a lease
//!   (`lease_expires`) and a retention deadline (`expire_at`, 24 h by
//!   default). A crashed attempt therefore blocks retries only until its
//!   lease ends.
//!
//! Each claim is atomic in every store: one `BEGIN IMMEDIATE` transaction in
//! SQLite, one `INSERT … ON CONFLICT DO UPDATE … RETURNING` statement in
//! PostgreSQL, one Lua script in Redis, one lock in memory.
//!
//! **Finish** acts only if the record still carries the claim's
//! `attempt_id`: a slow attempt whose lease expired and was taken over can
//! neither complete nor delete the newer claim. On success the record becomes
//! `completed`. On failure it is **deleted**, so that the sender's next retry
//! runs at once instead of waiting out the lease.
//!
//! # Fencing
//!
//! Each claim carries a [`Fence`] that only grows per key. A lease is a
//! promise about time, and a paused process can outlive it; pass the fence
//! to whatever the handler writes to, and let that store refuse a write with
//! a smaller fence than one it has seen. Because failure deletes the record,
//! the last fence of each key lives in a separate watermark that failure does
//! not touch; a new fence is `max(watermark + 1, now in µs)`, which keeps
//! growing even after the watermark itself is swept (see [`store`]).
//!
//! # Time
//!
//! PostgreSQL and Redis take "now" from the server, so nodes with skewed
//! clocks agree on leases. The in-memory and SQLite stores read an injected
//! [`Clock`], so tests move time instead of sleeping.
//!
//! # Use
//!
//! As a tower layer on an axum router. The handler sees its [`Claim`] as a
//! request extension:
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use axum::{Extension, Router, routing::post};
//! use idem_guard::{Claim, Guard, KeyConfig, MemoryStore, Scope};
//!
//! async fn report(Extension(claim): Extension<Claim>) -> String {
//!     // Hand `claim.fence` to the store the report is written to.
//!     format!("report written with fence {}", claim.fence)
//! }
//!
//! let guard = Guard::new(Arc::new(MemoryStore::new()))
//!     .with_keys(KeyConfig::new().with_scope(Scope::PathSegment(1)))
//!     .with_lease(Duration::from_secs(180));
//! let app: Router = Router::new()
//!     .route("/projects/{project}/report", post(report))
//!     .route_layer(guard.layer());
//! ```
//!
//! Or call [`Guard::claim`] and [`Guard::finish`] yourself, or run the
//! reverse proxy with [`proxy::serve`] (what `idem proxy` does).
//!
//! Signed requests (the Standard Webhooks scheme Idem uses) are checked by
//! [`VerifySignatureLayer`] or [`verify_signature`]; put that layer outside
//! the guard so that an unsigned request claims nothing.
//!
//! Senders that authenticate with OIDC ID tokens (Idem's `oidc` targets,
//! Cloud Scheduler, Cloud Tasks) are checked by [`OidcVerifier`] and its
//! [`VerifyOidcLayer`], outside the guard in the same way.

#![deny(missing_docs)]

pub mod clock;
mod guard;
pub mod key;
pub mod oidc;
pub mod proxy;
mod response;
pub mod signature;
pub mod store;
pub mod upstream_auth;

pub use clock::{Clock, ManualClock, SystemClock};
pub use guard::{Guard, GuardLayer, GuardService};
pub use key::{IdentitySource, KeyConfig, KeyError, RunKey, Scope};
pub use oidc::{OidcError, OidcVerifier, VerifiedToken, VerifyOidcLayer};
pub use proxy::{ProxyConfig, ProxyError, ProxyTracing, serve};
pub use response::IDEMPOTENT_REPLAYED;
pub use signature::{
    SecretError, SignatureError, SignedHead, SigningSecret, VerifiedMessage, VerifySignatureLayer,
    WebhookVerifier, check_signature_head, verify_signature,
};
pub use store::{
    Claim, ClaimOutcome, ClaimTerms, Fence, FinishResult, GroupCommits, GuardStore, HandlerOutcome,
    MemoryStore, PostgresLimits, PostgresStore, RecordView, RedisStore, RenewResult, RunState,
    SqliteStore, StoreError, Swept, open_store, open_store_with,
};
pub use upstream_auth::UpstreamAuth;
