//! The dispatcher: delivers due tasks to their targets (API.md §4).
//!
//! One loop per node claims due tasks from the store, never more than it has
//! free slots for, and starts one attempt per claimed task; the store
//! enforces each queue's rate and concurrency limits inside the claim, so
//! they hold across nodes. Attempts report to a completer that writes
//! results in batches (one store write per batch, not per attempt), which is
//! what lets the SQLite single writer keep up with thousands of deliveries a
//! second.
//!
//! ```text
//!  create / run-now ──► Handle::work_available ──► local Notify; signals: NOTIFY other nodes
//!                                  │
//!                                  ▼
//!  claim_loop ── dispatch_claim ──► attempt (one per task) ──► HTTP target
//!      ▲                                 │
//!      └── wake ◄── completer ◄──────────┘ results, batched into dispatch_complete
//!                      │
//!                      └──► Handle::subscribe_finished / wait_final (and, via signals, other nodes)
//! ```
//!
//! - `handle`: the cheap [`Handle`] the API and the dispatcher share.
//! - `signals`: other nodes' wake-ups and finished tasks in, ours out.
//! - `claim_loop`: claiming, sleeping, and the shutdown drain.
//! - `attempt`: one delivery of one claimed task.
//! - `completer`: attempt results, written in batches.
//! - `in_flight`: this node's attempts, so that a cancel (here, or on
//!   another node by way of `signals`) can abort one; dropping the attempt
//!   closes its connection to the target.
//! - [`headers`] and [`client`]: what an attempt sends, and how.
//!
//! The loop sleeps until the earliest of: a wake-up (new work, a freed
//! slot, another node's NOTIFY), the store's `wake_at` (next due task,
//! lease expiry, token refill), or a poll interval that covers what nothing
//! signals (a queue resumed, a limit raised on another node).
//!
//! On shutdown the loop stops claiming, lets running attempts finish for up
//! to [`Options::shutdown_grace`](crate::Options), then abandons the rest and
//! gives back their leases without counting the attempts, so that another
//! node starts those tasks at once (the target may have seen the request,
//! exactly as when a node dies).

mod attempt;
mod claim_loop;
pub mod client;
mod completer;
mod handle;
pub mod headers;
mod in_flight;
mod signals;

use std::time::Duration;

pub use claim_loop::run;
pub use handle::Handle;

/// Longest sleep without a claim, and longest wait for a final state
/// without a re-read: bounds how late either notices what no wake-up
/// announces.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
