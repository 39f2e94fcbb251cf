//! The dispatcher's side of the store: claiming due tasks under their
//! queue's limits, recording attempts, and waking nodes up.
//!
//! # Leases
//!
//! A claim moves a task to `running`, increments its `attempt_count` and
//! sets `lease_expires_at` to now + dispatch deadline + lease grace. The new
//! attempt count is the lease token: [`DispatchStore::dispatch_complete`]
//! applies a result only while the task is still `running` with that count,
//! so the late answer of an attempt whose lease was taken over changes
//! nothing (DESIGN-NOTES I4). Expired leases are recovered by the next claim
//! on any node: the attempt counts as failed and the task is retried as the
//! backoff says.
//!
//! # Limits
//!
//! Rate and concurrency limits are enforced inside the claim transaction,
//! so they hold for all nodes together: the queue row carries its token
//! bucket (`dispatch_tokens`, `dispatch_refilled_at`), refilled and debited
//! under a row lock, and the concurrency limit is checked against the count
//! of the queue's `running` rows.

use crate::records::{Attempt, Status, Task};
use crate::{Error, Result};
use async_trait::async_trait;
use idem_core::backoff::{self, Next};
use idem_core::clock::{from_micros, to_micros};
use idem_core::queue::{QueueConfig, RateLimits};
use jiff::Timestamp;
use std::collections::BTreeMap;
use std::time::Duration;

/// What a claim asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchClaim {
    /// Most tasks to claim, over all queues: the caller's free slots.
    pub max_tasks: u32,
    /// Added to each task's dispatch deadline to form its lease: the time a
    /// node has to report a result after the target's deadline passed.
    pub lease_grace: Duration,
}

/// A task claimed for one attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedTask {
    pub org: String,
    /// The task as it is after the claim: `running`, with `attempt_count`
    /// counting this attempt.
    pub task: Task,
    /// The lease token: the attempt number (1-based) this claim started.
    pub attempt: u32,
    pub lease_expires_at: Timestamp,
}

impl ClaimedTask {
    /// The status code the target answered on the previous attempt, if it
    /// answered at all.
    pub fn previous_status(&self) -> Option<u16> {
        self.task
            .last_attempt
            .as_ref()
            .filter(|a| a.attempt + 1 == self.attempt)
            .and_then(|a| a.status_code)
    }
}

/// What one claim produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaimedBatch {
    /// In schedule order within each queue.
    pub tasks: Vec<ClaimedTask>,
    /// The current signing secrets (newest first) of each organization that
    /// owns a claimed task, read in the claim's transaction so a rotation is
    /// seen by the very next attempt.
    pub signing_secrets: BTreeMap<String, Vec<String>>,
    /// Tasks whose lease had expired, recovered by this claim (their attempt
    /// counted as failed).
    pub recovered: Vec<Finished>,
    /// The earliest instant more work may become claimable without anything
    /// else happening: the next due task of a running queue, the next lease
    /// expiry, or the next token of a rate-limited queue with due tasks.
    /// Completions and new tasks are signalled separately.
    pub wake_at: Option<Timestamp>,
}

/// The end of one attempt, as the dispatcher observed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptResult {
    pub task_uid: String,
    /// The lease token the claim handed out.
    pub attempt: u32,
    /// The target's status code, when it answered.
    pub status_code: Option<u16>,
    /// Why the attempt failed without a status (connection error, deadline).
    pub error: Option<String>,
    /// How long the attempt took, as measured by the dispatcher.
    pub duration: Duration,
    /// A `Retry-After` the target sent with 429 or 503.
    pub retry_after: Option<Duration>,
}

impl AttemptResult {
    pub fn succeeded(&self) -> bool {
        self.status_code.is_some_and(|c| (200..300).contains(&c))
    }
}

/// What became of an attempt result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// Recorded; the task is now in this state.
    Applied(Finished),
    /// The task no longer holds this lease (taken over after expiry,
    /// deleted with its queue): nothing changed.
    Stale { task_uid: String },
}

/// A task's state after an attempt ended: final, or pending for a retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub org: String,
    pub queue: String,
    pub task_id: String,
    pub uid: String,
    pub status: Status,
}

impl Finished {
    pub fn is_final(&self) -> bool {
        !matches!(self.status, Status::Pending | Status::Running)
    }
}

/// A wake-up from another node (PostgreSQL `LISTEN/NOTIFY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchSignal {
    /// New or newly due work may be claimable.
    Work,
    /// A task reached a final state on some node.
    TaskFinished(Finished),
}

/// The dispatcher's storage operations; every [`Store`](crate::Store) has
/// them.
#[async_trait]
pub trait DispatchStore: Send + Sync {
    /// Recovers expired leases, then claims due tasks of running queues in
    /// schedule order, as far as each queue's token bucket and concurrency
    /// limit allow, up to `max_tasks` in all. One transaction.
    async fn dispatch_claim(&self, params: DispatchClaim) -> Result<ClaimedBatch>;

    /// Applies attempt results, each only if its lease token still matches,
    /// in one transaction; answers in the order given.
    async fn dispatch_complete(&self, results: Vec<AttemptResult>) -> Result<Vec<Completion>>;

    /// Tells every node that new work may be claimable. A no-op where only
    /// one node can run (SQLite).
    async fn dispatch_notify_work(&self) -> Result<()>;

    /// Signals from other nodes, on a dedicated connection; `None` where
    /// only one node can run. The stream reconnects by itself and sends
    /// [`DispatchSignal::Work`] after each reconnection, since signals may
    /// have been missed meanwhile.
    async fn dispatch_listen(&self) -> Result<Option<tokio::sync::mpsc::Receiver<DispatchSignal>>>;
}

/// Error text of an attempt whose node stopped reporting.
pub(crate) const LEASE_EXPIRED: &str =
    "lease expired: the node running the attempt stopped before reporting a result";

/// The token bucket of a queue as stored: `None` tokens mean full.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bucket {
    pub tokens: f64,
    pub refilled_at: i64,
}

impl Bucket {
    /// The bucket at `now`: refilled at the queue's rate since it was last
    /// written, never above the burst size. A clock that went backwards
    /// refills nothing.
    pub(crate) fn at(stored: Option<(f64, i64)>, limits: &RateLimits, now: i64) -> Bucket {
        let burst = f64::from(limits.max_burst_size);
        let tokens = match stored {
            None => burst,
            Some((tokens, at)) => {
                let elapsed_s = (now - at).max(0) as f64 / 1e6;
                (tokens + elapsed_s * limits.max_dispatches_per_second).min(burst)
            }
        };
        Bucket {
            tokens,
            refilled_at: now,
        }
    }

    /// Whole tokens available.
    pub(crate) fn whole(&self) -> u32 {
        self.tokens.max(0.0).floor().min(f64::from(u32::MAX)) as u32
    }

    /// When the next whole token will be there.
    pub(crate) fn next_token_at(&self, limits: &RateLimits) -> i64 {
        let missing = (1.0 - self.tokens.fract()).max(0.0);
        let wait_us = (missing / limits.max_dispatches_per_second * 1e6).ceil() as i64;
        self.refilled_at + wait_us.max(1)
    }
}

/// How many of a queue's due tasks one claim may take.
pub(crate) fn claimable(bucket: &Bucket, limits: &RateLimits, running: u64, wanted: u32) -> u32 {
    let free = u64::from(limits.max_concurrent_dispatches).saturating_sub(running);
    let free = u32::try_from(free).unwrap_or(u32::MAX);
    wanted.min(free).min(bucket.whole())
}

/// The columns of a task's row a completion needs, whatever the backend.
pub(crate) struct RunningRow {
    pub org: String,
    pub queue: String,
    pub task_id: String,
    pub uid: String,
    pub status: Status,
    pub attempt_count: u32,
    pub cancel_requested: bool,
    pub retry_config: idem_core::queue::RetryConfig,
    pub first_attempt_at: Option<i64>,
    pub started_at: Option<i64>,
    pub dedup_window_s: u64,
}

/// The new state of a task after an attempt, as column values.
pub(crate) struct Outcome {
    pub status: Status,
    pub next_attempt_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub dedup_expires_at: Option<i64>,
    pub attempt: Attempt,
}

impl RunningRow {
    /// Whether `token` still holds this task's lease.
    pub(crate) fn holds(&self, token: u32) -> bool {
        self.status == Status::Running && self.attempt_count == token
    }

    /// Decides what an attempt's result makes of the task (SPEC 4): 2xx
    /// succeeds; a failure of a task whose cancel was requested ends it;
    /// otherwise the backoff decides between a retry and giving up.
    pub(crate) fn outcome(&self, result: &AttemptResult, now: i64) -> Outcome {
        let status = if result.succeeded() {
            Status::Succeeded
        } else if self.cancel_requested {
            Status::Cancelled
        } else {
            let first = from_micros(self.first_attempt_at.unwrap_or(now));
            match backoff::after_failure(
                &self.retry_config,
                self.attempt_count,
                first,
                from_micros(now),
                result.retry_after,
            ) {
                Next::GiveUp => Status::Failed,
                Next::RetryAt(at) => {
                    return Outcome {
                        status: Status::Pending,
                        next_attempt_at: Some(to_micros(at)),
                        finished_at: None,
                        dedup_expires_at: None,
                        attempt: self.attempt(result, now),
                    };
                }
            }
        };
        let window = i64::try_from(self.dedup_window_s)
            .unwrap_or(i64::MAX)
            .saturating_mul(1_000_000);
        Outcome {
            status,
            next_attempt_at: None,
            finished_at: Some(now),
            dedup_expires_at: Some(now.saturating_add(window)),
            attempt: self.attempt(result, now),
        }
    }

    fn attempt(&self, result: &AttemptResult, now: i64) -> Attempt {
        Attempt {
            attempt: self.attempt_count,
            started_at: from_micros(self.started_at.unwrap_or(now)),
            finished_at: Some(from_micros(now)),
            status_code: result.status_code,
            error: result.error.clone(),
            duration_ms: Some(u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX)),
        }
    }

    pub(crate) fn finished(&self, status: Status) -> Finished {
        Finished {
            org: self.org.clone(),
            queue: self.queue.clone(),
            task_id: self.task_id.clone(),
            uid: self.uid.clone(),
            status,
        }
    }

    /// The result standing for an attempt whose lease expired.
    pub(crate) fn lease_expired(&self, now: i64) -> AttemptResult {
        AttemptResult {
            task_uid: self.uid.clone(),
            attempt: self.attempt_count,
            status_code: None,
            error: Some(LEASE_EXPIRED.into()),
            duration: Duration::from_micros(
                u64::try_from(now - self.started_at.unwrap_or(now)).unwrap_or(0),
            ),
            retry_after: None,
        }
    }
}

/// Most expired leases one claim recovers; the rest wait for the next.
pub(crate) const MAX_RECOVERED_PER_CLAIM: i64 = 256;

/// Channel names of the PostgreSQL wake-ups.
pub(crate) const WORK_CHANNEL: &str = "idem_dispatch_work";
pub(crate) const FINISHED_CHANNEL: &str = "idem_task_finished";

/// `org/queue/task_id/uid/status`: names never contain `/` (SPEC 3 limits
/// them to `[A-Za-z0-9_-]`), so the payload splits unambiguously.
pub(crate) fn encode_finished(f: &Finished) -> String {
    format!(
        "{}/{}/{}/{}/{}",
        f.org,
        f.queue,
        f.task_id,
        f.uid,
        f.status.as_str()
    )
}

pub(crate) fn decode_finished(payload: &str) -> Option<Finished> {
    let mut parts = payload.split('/');
    let f = Finished {
        org: parts.next()?.to_string(),
        queue: parts.next()?.to_string(),
        task_id: parts.next()?.to_string(),
        uid: parts.next()?.to_string(),
        status: Status::parse(parts.next()?)?,
    };
    parts.next().is_none().then_some(f)
}

/// Reads a row of the running-task lookup both backends share.
pub(crate) fn running_row(r: &impl crate::sql::Row) -> Result<RunningRow> {
    let status = r.text(4)?;
    let config: QueueConfig = serde_json::from_str(&r.text(10)?)
        .map_err(|e| Error::Internal(format!("unreadable queue config: {e}")))?;
    Ok(RunningRow {
        org: r.text(0)?,
        queue: r.text(1)?,
        task_id: r.text(2)?,
        uid: r.text(3)?,
        status: Status::parse(&status)
            .ok_or_else(|| Error::Internal(format!("unreadable task status {status:?}")))?,
        attempt_count: r.i64(5)? as u32,
        cancel_requested: r.i64(6)? != 0,
        retry_config: serde_json::from_str(&r.text(7)?)
            .map_err(|e| Error::Internal(format!("unreadable retry config: {e}")))?,
        first_attempt_at: r.opt_i64(8)?,
        started_at: r.opt_i64(9)?,
        dedup_window_s: config.dedup_window_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rate: f64, burst: u32, concurrency: u32) -> RateLimits {
        RateLimits {
            max_dispatches_per_second: rate,
            max_burst_size: burst,
            max_concurrent_dispatches: concurrency,
        }
    }

    #[test]
    fn an_unused_bucket_is_full_and_refills_at_the_rate() {
        let l = limits(5.0, 3, 10);
        let b = Bucket::at(None, &l, 1_000_000);
        assert_eq!(b.whole(), 3);
        let b = Bucket::at(Some((0.0, 1_000_000)), &l, 1_300_000);
        assert_eq!(b.whole(), 1);
        assert_eq!(b.next_token_at(&l), 1_300_000 + 100_000);
        let b = Bucket::at(Some((0.0, 1_000_000)), &l, 60_000_000);
        assert_eq!(b.whole(), 3, "never above the burst");
        let b = Bucket::at(Some((2.0, 5_000_000)), &l, 1_000_000);
        assert_eq!(b.whole(), 2, "a clock going back refills nothing");
    }

    #[test]
    fn claimable_respects_tokens_concurrency_and_demand() {
        let l = limits(100.0, 50, 4);
        let full = Bucket::at(None, &l, 0);
        assert_eq!(claimable(&full, &l, 0, 10), 4);
        assert_eq!(claimable(&full, &l, 3, 10), 1);
        assert_eq!(claimable(&full, &l, 9, 10), 0);
        assert_eq!(claimable(&full, &l, 0, 2), 2);
        let empty = Bucket::at(Some((0.5, 0)), &l, 0);
        assert_eq!(claimable(&empty, &l, 0, 10), 0);
    }

    #[test]
    fn finished_payload_round_trips() {
        let f = Finished {
            org: "default".into(),
            queue: "q-1".into(),
            task_id: "t_2".into(),
            uid: "0190abc".into(),
            status: Status::Succeeded,
        };
        assert_eq!(decode_finished(&encode_finished(&f)), Some(f));
        assert_eq!(decode_finished("a/b/c/d/nonsense"), None);
        assert_eq!(decode_finished("a/b/c/d/failed/extra"), None);
    }
}
