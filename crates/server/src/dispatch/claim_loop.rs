//! The claim loop: claims due tasks as far as free slots allow, starts one
//! attempt per task, sleeps until there may be more, and drains on shutdown.

use super::attempt::{Attempt, Ended};
use super::completer::{self, Reported};
use super::{POLL_INTERVAL, client, headers, signals};
use crate::App;
use idem_store::dispatch::{ClaimedBatch, DispatchClaim, FairShare};
use idem_webhooks::SigningSecret;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::JoinSet;
use tracing::Instrument;

/// Shortest sleep between claims that found nothing: a `wake_at` already
/// past (a lease another node is recovering right now) must not spin.
const MIN_SLEEP: Duration = Duration::from_millis(1);
/// Most tasks one claim takes.
const MAX_CLAIM: usize = 512;

/// Runs the dispatcher until `stop` turns true, then drains as the module
/// documentation says.
pub async fn run(app: Arc<App>, mut stop: watch::Receiver<bool>) {
    let left = &app.dispatcher_panics_left;
    if left
        .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        panic!("the dispatcher panics as --test-dispatcher-panics asked");
    }
    let policy = Arc::new(app.options.target_policy.clone());
    let client = match client::build(&policy) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "dispatcher not started");
            return;
        }
    };
    // Ended with the loop however it ends: a panic must not leave them
    // running beside the ones a restart spawns.
    let background = AbortOnDrop(signals::spawn(&app).await);
    let (results_tx, results_rx) = mpsc::unbounded_channel();
    let completer = tokio::spawn(completer::run(app.clone(), results_rx));
    let (abandon_tx, abandon_rx) = watch::channel(false);
    let slot_count = app.options.dispatch_max_in_flight.max(1);
    let slots = Arc::new(Semaphore::new(slot_count));
    let held = OrgSlots::default();
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
                attempts_kept: app.options.max_attempts_kept,
                fair_share: Some(FairShare {
                    slots: u32::try_from(slot_count).unwrap_or(u32::MAX),
                    max_per_org: app.options.dispatch_max_in_flight_per_org,
                    in_flight: held.snapshot(),
                }),
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
            app.metrics.count(
                "idem_dispatch_attempts_total",
                &f.org,
                &f.queue,
                Some(("outcome", "lease_expired")),
                1,
            );
            app.dispatch.publish(f);
        }
        let claimed_all = tasks.len() == free;
        let secrets: HashMap<String, Arc<[SigningSecret]>> = signing_secrets
            .into_iter()
            .map(|(org, s)| (org, headers::signing_secrets(&s)))
            .collect();
        for claimed in tasks {
            // A claim takes at most the free slots; were a store ever to
            // answer more, the task is claimed all the same and runs beyond
            // the limit rather than wait out its lease.
            let slot = slots.clone().try_acquire_owned().ok();
            if slot.is_none() {
                tracing::error!(
                    task_id = %claimed.task.task_id,
                    "a claim answered more tasks than free slots"
                );
            }
            let org_slot = held.take(&claimed.org);
            let registration = app
                .dispatch
                .in_flight
                .register(&claimed.task.uid, claimed.attempt);
            let secrets = secrets.get(&claimed.org).cloned().unwrap_or_default();
            let attempt = Attempt {
                client: client.clone(),
                policy: policy.clone(),
                clock: app.clock.clone(),
                claimed,
                secrets,
                executions: 0,
                oidc: app.oidc.clone(),
            };
            let results = results_tx.clone();
            let abandon = abandon_rx.clone();
            let app = app.clone();
            let span = attempt.span();
            attempts.spawn(
                async move {
                    let org = attempt.claimed.org.clone();
                    let queue = attempt.claimed.task.queue.clone();
                    let task_id = attempt.claimed.task.task_id.clone();
                    let (uid, lease) = (attempt.claimed.task.uid.clone(), attempt.claimed.attempt);
                    let mut attempt = attempt;
                    attempt.executions =
                        super::attempt::executions(app.store.as_ref(), &attempt.claimed).await;
                    let started = Instant::now();
                    let result = attempt.run(abandon, registration).await;
                    app.metrics
                        .dispatch_duration(&org, &queue, started.elapsed());
                    // The slot frees before the result is written; the claim
                    // that could reuse it still waits for the store, which only
                    // counts the task as done once the completer commits.
                    drop((slot, org_slot));
                    match result {
                        Ended::Reported(result) => {
                            let _ = results.send(Reported {
                                org,
                                queue,
                                task_id,
                                result,
                            });
                            None
                        }
                        // The cancel that aborted it recorded the attempt.
                        Ended::Cancelled => {
                            app.metrics.count(
                                "idem_dispatch_attempts_total",
                                &org,
                                &queue,
                                Some(("outcome", "cancelled")),
                                1,
                            );
                            None
                        }
                        Ended::Abandoned => Some(Abandoned {
                            org,
                            queue,
                            uid,
                            attempt: lease,
                        }),
                    }
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

    let grace = app.options.shutdown_grace;
    if !attempts.is_empty() {
        tracing::info!(
            in_flight = attempts.len(),
            grace_s = grace.as_secs_f64(),
            "waiting for running attempts before stopping"
        );
    }
    let drained = tokio::time::timeout(grace, async {
        while attempts.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        let _ = abandon_tx.send(true);
        let mut abandoned = Vec::new();
        while let Some(ended) = attempts.join_next().await {
            abandoned.extend(ended.ok().flatten());
        }
        release(&app, abandoned).await;
    }
    drop(results_tx);
    let _ = completer.await;
    drop(background);
}

/// An attempt still running when the shutdown grace ran out.
struct Abandoned {
    org: String,
    queue: String,
    uid: String,
    attempt: u32,
}

/// Gives back the leases of abandoned attempts without counting them, so
/// that another node (or this one, restarted) starts those tasks at once
/// instead of after their leases expire; the targets may have seen the
/// requests, exactly as when a node dies. Should the store refuse, the
/// leases expire as they would after a crash.
async fn release(app: &App, abandoned: Vec<Abandoned>) {
    if abandoned.is_empty() {
        return;
    }
    let leases = abandoned
        .iter()
        .map(|a| (a.uid.clone(), a.attempt))
        .collect();
    match app.store.dispatch_release(leases).await {
        Ok(released) => {
            tracing::warn!(
                abandoned = abandoned.len(),
                released,
                "attempts still running after the shutdown grace were given back"
            );
            for a in &abandoned {
                app.metrics.count(
                    "idem_dispatch_attempts_total",
                    &a.org,
                    &a.queue,
                    Some(("outcome", "released")),
                    1,
                );
            }
        }
        Err(e) => tracing::error!(
            error = %e,
            abandoned = abandoned.len(),
            "could not give back the leases of abandoned attempts: they expire instead"
        ),
    }
}

/// Tasks aborted when this is dropped.
struct AbortOnDrop(Vec<tokio::task::JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The slots each organization holds on this node, for the claim's fair
/// share. Counted here rather than in the store: the share is of this
/// node's slots, and a node knows its own attempts exactly.
#[derive(Clone, Default)]
struct OrgSlots(Arc<Mutex<BTreeMap<String, u32>>>);

impl OrgSlots {
    fn snapshot(&self) -> BTreeMap<String, u32> {
        self.0.lock().expect("org slots").clone()
    }

    fn take(&self, org: &str) -> OrgSlot {
        *self
            .0
            .lock()
            .expect("org slots")
            .entry(org.to_string())
            .or_default() += 1;
        OrgSlot {
            slots: self.clone(),
            org: org.to_string(),
        }
    }
}

/// One slot an organization holds; given back when dropped, with the
/// node's slot.
struct OrgSlot {
    slots: OrgSlots,
    org: String,
}

impl Drop for OrgSlot {
    fn drop(&mut self) {
        let mut held = self.slots.0.lock().expect("org slots");
        if let Some(n) = held.get_mut(&self.org) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.org);
            }
        }
    }
}
