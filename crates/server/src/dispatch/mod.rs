//! The dispatcher: delivers due tasks to their targets (SPEC 4).
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
//!  create / run-now ──► Handle::work_available ──► (local Notify, NOTIFY other nodes)
//!                                  │
//!                                  ▼
//!  claim loop ── dispatch_claim ──► attempt tasks ──► HTTP target
//!      ▲                                 │
//!      └── wake ◄── completer ◄──────────┘ results, batched into dispatch_complete
//! ```
//!
//! The loop sleeps until the earliest of: a wake-up (new work, a freed
//! slot, another node's NOTIFY), the store's `wake_at` (next due task,
//! lease expiry, token refill), or a poll interval that covers what nothing
//! signals (a queue resumed, a limit raised on another node).
//!
//! On shutdown the loop stops claiming, lets running attempts finish for up
//! to [`Options::dispatch_shutdown_grace`](crate::Options), then abandons the
//! rest: each is recorded as a failed attempt (the target may have seen the
//! request, exactly as when a node dies) and retried by the backoff.

pub mod client;
pub mod headers;

use crate::App;
use idem_store::dispatch::{
    AttemptOutcome, AttemptResult, ClaimedBatch, ClaimedTask, DispatchClaim, DispatchSignal,
    Finished,
};
use idem_store::{Status, Store, Task};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore, broadcast, mpsc, watch};
use tokio::task::JoinSet;
use tracing::Instrument;

/// Longest sleep without a claim: bounds how late the loop notices what no
/// wake-up announces.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Shortest sleep between claims that found nothing: a `wake_at` already
/// past (a lease another node is recovering right now) must not spin.
const MIN_SLEEP: Duration = Duration::from_millis(1);
/// Most tasks one claim takes.
const MAX_CLAIM: usize = 512;
/// Most results one completion write carries.
const MAX_COMPLETION_BATCH: usize = 512;
/// How long to keep retrying a completion write the store refuses; after
/// that the leases expire and the tasks are delivered again.
const COMPLETION_RETRIES: u32 = 6;
/// Fewest time between two cross-node work NOTIFYs of one node: creates at
/// a high rate share one.
const NOTIFY_COALESCE: Duration = Duration::from_millis(5);
const ABANDONED: &str = "dispatcher shut down before the target answered";

/// What the API and the dispatcher share: wake-ups for new work and news of
/// tasks reaching a final state. Lives in [`App`].
pub struct Handle {
    local_work: Notify,
    remote_work: Notify,
    finished: broadcast::Sender<Finished>,
}

impl Default for Handle {
    fn default() -> Self {
        Handle {
            local_work: Notify::new(),
            remote_work: Notify::new(),
            finished: broadcast::channel(4096).0,
        }
    }
}

impl Handle {
    /// New or newly due work (a create, a run-now): wakes this node's loop
    /// at once and, on a multi-node store, the other nodes.
    pub fn work_available(&self) {
        self.local_work.notify_one();
        self.remote_work.notify_one();
    }

    /// Tasks reaching a final state (`succeeded`, `failed`, `cancelled` by a
    /// failed attempt after a cancel request), on this node or — on
    /// PostgreSQL — any node. Sent after the state is committed. A receiver
    /// that lags misses events (`RecvError::Lagged`) and should re-read.
    pub fn subscribe_finished(&self) -> broadcast::Receiver<Finished> {
        self.finished.subscribe()
    }

    /// Waits up to `timeout` for the task to reach a final state and returns
    /// it as it then is (final, or as it stood when the time ran out). The
    /// task is the one of that ID that exists when the wait starts; a
    /// cancel through the API ends the wait as well.
    pub async fn wait_final(
        &self,
        store: &dyn Store,
        org: &str,
        queue: &str,
        task_id: &str,
        timeout: Duration,
    ) -> idem_store::Result<Task> {
        // Subscribed before the first read, so that a completion between the
        // read and the wait is not missed.
        let mut events = self.subscribe_finished();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut task = store.task_get(org, queue, task_id).await?;
        let uid = task.uid.clone();
        loop {
            if is_final(&task) || tokio::time::Instant::now() >= deadline {
                return Ok(task);
            }
            // A missed NOTIFY (listener reconnecting) or a cancel through the
            // API sends no event: re-read now and then regardless.
            let recheck = (tokio::time::Instant::now() + POLL_INTERVAL).min(deadline);
            loop {
                tokio::select! {
                    event = events.recv() => match event {
                        Ok(f) if f.uid == uid => break,
                        Ok(_) => continue,
                        Err(broadcast::error::RecvError::Lagged(_)) => break,
                        Err(broadcast::error::RecvError::Closed) => {
                            tokio::time::sleep_until(recheck).await;
                            break;
                        }
                    },
                    _ = tokio::time::sleep_until(recheck) => break,
                }
            }
            task = store.task_get(org, queue, task_id).await?;
            if task.uid != uid {
                // The ID was swept and reused: the task waited for is gone.
                return Ok(task);
            }
        }
    }

    fn publish(&self, finished: Finished) {
        if finished.is_final() {
            // No subscriber is not an error: nobody is waiting.
            let _ = self.finished.send(finished);
        }
    }
}

fn is_final(task: &Task) -> bool {
    !matches!(task.status, Status::Pending | Status::Running)
}

/// Runs the dispatcher until `stop` turns true, then drains as the module
/// documentation says.
pub async fn run(app: Arc<App>, mut stop: watch::Receiver<bool>) {
    let client = match client::build() {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "dispatcher not started");
            return;
        }
    };
    let background = spawn_signal_tasks(&app).await;
    let (results_tx, results_rx) = mpsc::unbounded_channel();
    let completer = tokio::spawn(complete(app.clone(), results_rx));
    let (abandon_tx, abandon_rx) = watch::channel(false);
    let slots = Arc::new(Semaphore::new(app.options.dispatch_max_in_flight.max(1)));
    let mut attempts = JoinSet::new();
    let mut claim_failures = 0u32;

    while !*stop.borrow() {
        while attempts.try_join_next().is_some() {}
        let free = slots.available_permits().min(MAX_CLAIM);
        if free == 0 {
            tokio::select! {
                _ = app.dispatch.local_work.notified() => {}
                _ = stop.changed() => {}
            }
            continue;
        }
        let claimed = app
            .store
            .dispatch_claim(DispatchClaim {
                max_tasks: free as u32,
                lease_grace: app.options.lease_grace,
            })
            .await;
        let batch = match claimed {
            Ok(batch) => {
                claim_failures = 0;
                batch
            }
            Err(e) => {
                claim_failures += 1;
                tracing::warn!(error = %e, "claiming due tasks");
                let pause = Duration::from_millis(100 << claim_failures.min(5));
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
        };
        let ClaimedBatch {
            tasks,
            signing_secrets,
            recovered,
            wake_at,
        } = batch;
        for f in recovered {
            tracing::info!(queue = %f.queue, task_id = %f.task_id, "recovered an expired lease");
            metrics::counter!(
                "idem_dispatch_attempts_total",
                "queue" => f.queue.clone(),
                "outcome" => "lease_expired"
            )
            .increment(1);
            app.dispatch.publish(f);
        }
        let claimed_all = tasks.len() == free;
        let secrets: std::collections::HashMap<String, Arc<[String]>> = signing_secrets
            .into_iter()
            .map(|(org, s)| (org, Arc::from(s)))
            .collect();
        for claimed in tasks {
            let slot = slots
                .clone()
                .try_acquire_owned()
                .expect("claims never exceed the free slots");
            let secrets = secrets.get(&claimed.org).cloned().unwrap_or_default();
            let attempt = Attempt {
                client: client.clone(),
                clock: app.clock.clone(),
                claimed,
                secrets,
            };
            let results = results_tx.clone();
            let abandon = abandon_rx.clone();
            // Every line logged during the attempt names it: a task by its
            // queue and ID, a job's run by its job and run ID.
            let task = &attempt.claimed.task;
            let run = task.run.as_ref();
            let (task_id, run_id) = match run {
                Some(_) => (None, Some(task.task_id.as_str())),
                None => (Some(task.task_id.as_str()), None),
            };
            let span = tracing::info_span!(
                "attempt",
                queue = run.is_none().then_some(task.queue.as_str()),
                task_id,
                job = run.map(|r| r.job.as_str()),
                run_id,
                attempt = attempt.claimed.attempt,
            );
            attempts.spawn(
                async move {
                    let queue = attempt.claimed.task.queue.clone();
                    let task_id = attempt.claimed.task.task_id.clone();
                    let result = attempt.run(abandon).await;
                    // The slot frees before the result is written; the claim
                    // that could reuse it still waits for the store, which only
                    // counts the task as done once the completer commits.
                    drop(slot);
                    let _ = results.send(Reported {
                        queue,
                        task_id,
                        result,
                    });
                }
                .instrument(span),
            );
        }
        if claimed_all {
            // The claim was cut short by our own slots: more may be due.
            continue;
        }
        let now = app.clock.now();
        let sleep = wake_at
            .map(|at| Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO))
            .unwrap_or(POLL_INTERVAL)
            .clamp(MIN_SLEEP, POLL_INTERVAL);
        tokio::select! {
            _ = app.dispatch.local_work.notified() => {}
            _ = tokio::time::sleep(sleep) => {}
            _ = stop.changed() => {}
        }
    }

    let grace = app.options.dispatch_shutdown_grace;
    if !attempts.is_empty() {
        tracing::info!(
            in_flight = attempts.len(),
            "waiting for running attempts before stopping"
        );
    }
    let drained = tokio::time::timeout(grace, async {
        while attempts.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            abandoned = attempts.len(),
            "attempts still running after the shutdown grace are recorded as failed"
        );
        let _ = abandon_tx.send(true);
        while attempts.join_next().await.is_some() {}
    }
    drop(results_tx);
    let _ = completer.await;
    for task in background {
        task.abort();
    }
}

/// Forwards other nodes' signals into the handle and this node's work
/// wake-ups out to them; nothing to do on a single-node store.
async fn spawn_signal_tasks(app: &Arc<App>) -> Vec<tokio::task::JoinHandle<()>> {
    let signals = match app.store.dispatch_listen().await {
        Ok(Some(signals)) => signals,
        Ok(None) => return Vec::new(),
        Err(e) => {
            tracing::warn!(error = %e, "not listening for other nodes; polling instead");
            return Vec::new();
        }
    };
    let inbound = {
        let app = app.clone();
        let mut signals = signals;
        tokio::spawn(async move {
            while let Some(signal) = signals.recv().await {
                match signal {
                    DispatchSignal::Work => app.dispatch.local_work.notify_one(),
                    DispatchSignal::TaskFinished(f) => app.dispatch.publish(f),
                }
            }
        })
    };
    let outbound = {
        let app = app.clone();
        tokio::spawn(async move {
            loop {
                app.dispatch.remote_work.notified().await;
                if let Err(e) = app.store.dispatch_notify_work().await {
                    tracing::warn!(error = %e, "notifying other nodes of new work");
                }
                tokio::time::sleep(NOTIFY_COALESCE).await;
            }
        })
    };
    vec![inbound, outbound]
}

/// An attempt's result with the names its metrics and logs need.
struct Reported {
    queue: String,
    task_id: String,
    result: AttemptResult,
}

/// One attempt of one claimed task.
struct Attempt {
    client: reqwest::Client,
    clock: Arc<dyn idem_core::Clock>,
    claimed: ClaimedTask,
    secrets: Arc<[String]>,
}

impl Attempt {
    async fn run(self, mut abandon: watch::Receiver<bool>) -> AttemptResult {
        let started = Instant::now();
        let task = &self.claimed.task;
        if task.run.is_some() && self.claimed.attempt == 1 {
            // What a cron user feels: from the instant to the request
            // leaving, run creation and claim included.
            let lag = self.clock.now().duration_since(task.schedule_time);
            metrics::histogram!("idem_scheduler_dispatch_lag_seconds")
                .record(lag.as_secs_f64().max(0.0));
        }
        let answer = tokio::select! {
            answer = self.exchange() => answer,
            _ = abandon.wait_for(|a| *a) => client::Answer {
                status_code: None,
                error: Some(ABANDONED.into()),
                retry_after: None,
            },
        };
        let duration = started.elapsed();
        metrics::histogram!(
            "idem_dispatch_duration_seconds",
            "queue" => self.claimed.task.queue.clone()
        )
        .record(duration.as_secs_f64());
        tracing::debug!(
            status_code = answer.status_code,
            error = answer.error.as_deref(),
            duration_ms = duration.as_millis() as u64,
            "attempt ended"
        );
        AttemptResult {
            task_uid: self.claimed.task.uid.clone(),
            attempt: self.claimed.attempt,
            status_code: answer.status_code,
            error: answer.error,
            duration,
            retry_after: answer.retry_after,
        }
    }

    async fn exchange(&self) -> client::Answer {
        let task = &self.claimed.task;
        let deadline = Duration::from_secs(u64::from(task.dispatch_deadline_s));
        match self.request() {
            Ok(request) => client::send(&self.client, request, deadline).await,
            Err(error) => client::Answer {
                status_code: None,
                error: Some(error),
                retry_after: None,
            },
        }
    }

    fn request(&self) -> Result<reqwest::Request, String> {
        let target = &self.claimed.task.target;
        let method = reqwest::Method::from_bytes(target.method.as_bytes())
            .map_err(|_| format!("invalid method {:?}", target.method))?;
        let url = reqwest::Url::parse(&target.url)
            .map_err(|e| format!("invalid target URL {:?}: {e}", target.url))?;
        let timestamp = self.clock.now().as_second();
        let headers = headers::delivery_headers(&self.claimed, &self.secrets, timestamp)?;
        let mut request = reqwest::Request::new(method, url);
        *request.headers_mut() = headers;
        if let Some((_, body)) = &target.body {
            *request.body_mut() = Some(body.clone().into());
        }
        Ok(request)
    }
}

/// Writes attempt results in batches: whatever arrived while the previous
/// write was committing goes into the next one.
async fn complete(app: Arc<App>, mut results: mpsc::UnboundedReceiver<Reported>) {
    while let Some(first) = results.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_COMPLETION_BATCH {
            match results.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let mut failures = 0;
        let completions = loop {
            let results = batch.iter().map(|r| r.result.clone()).collect();
            match app.store.dispatch_complete(results).await {
                Ok(c) => break Some(c),
                Err(e) if failures < COMPLETION_RETRIES => {
                    failures += 1;
                    tracing::warn!(error = %e, "recording attempt results; retrying");
                    tokio::time::sleep(Duration::from_millis(50 << failures)).await;
                }
                Err(e) => {
                    tracing::error!(
                        error = %e,
                        results = batch.len(),
                        "attempt results not recorded; the tasks are retried when their leases expire"
                    );
                    break None;
                }
            }
        };
        // Completions answer in the order the results were given.
        for (reported, completion) in batch.iter().zip(completions.into_iter().flatten()) {
            let outcome = match &completion {
                AttemptOutcome::Applied(f) => match f.status {
                    Status::Succeeded => "succeeded",
                    Status::Pending => "failed_retrying",
                    Status::Failed => "failed_final",
                    Status::Cancelled => "cancelled",
                    Status::Running => "running",
                },
                AttemptOutcome::Stale { .. } => "stale",
            };
            metrics::counter!(
                "idem_dispatch_attempts_total",
                "queue" => reported.queue.clone(),
                "outcome" => outcome
            )
            .increment(1);
            match completion {
                AttemptOutcome::Applied(f) => {
                    tracing::debug!(
                        queue = %reported.queue,
                        task_id = %reported.task_id,
                        attempt = reported.result.attempt,
                        outcome,
                        "attempt recorded"
                    );
                    app.dispatch.publish(f)
                }
                AttemptOutcome::Stale { task_uid } => tracing::info!(
                    queue = %reported.queue,
                    task_id = %reported.task_id,
                    attempt = reported.result.attempt,
                    %task_uid,
                    "late result of an attempt whose lease was lost; ignored"
                ),
            }
        }
        // Finished attempts freed concurrency in the store.
        app.dispatch.local_work.notify_one();
    }
}
