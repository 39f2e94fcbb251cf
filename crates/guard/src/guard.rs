//! The guard itself and its tower layer.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use futures_util::FutureExt;
use http::request::Parts;
use http::{Request, Response};
use tower::{Layer, Service, ServiceExt};
use tracing::Instrument;

use crate::key::{KeyConfig, KeyError, RunKey};
use crate::response;
use crate::store::{
    Claim, ClaimOutcome, ClaimTerms, FinishResult, GuardStore, HandlerOutcome, RenewResult,
    StoreError,
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Shortest wait between renewals, so that a tiny lease cannot make the
/// guard renew in a busy loop.
const MIN_RENEW_EVERY: Duration = Duration::from_millis(10);

/// How a claimed attempt ended, as [`Guard::run_claimed`] reports it.
pub(crate) enum Attempt<T> {
    /// The work ended (its outcome was recorded, or tried to be).
    Done(T),
    /// The work panicked; the run was released.
    Panicked,
    /// The claim stopped being this attempt's while the work ran: the work
    /// was stopped and nothing was recorded.
    LeaseLost(LeaseLost),
}

/// Why a claim stopped being an attempt's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeaseLost {
    /// A renewal found the record finished, taken over or gone.
    Taken,
    /// The store could not be reached until the lease had run out, so
    /// another attempt may hold the run by now.
    Unrenewed,
}

/// Claims runs in a store before a handler runs, and records how they ended.
///
/// Cheap to clone; clones share the store.
#[derive(Debug, Clone)]
pub struct Guard {
    store: Arc<dyn GuardStore>,
    keys: KeyConfig,
    terms: ClaimTerms,
}

impl Guard {
    /// A guard on `store` with the default key sources, a 5-minute lease and
    /// 24-hour retention.
    pub fn new(store: Arc<dyn GuardStore>) -> Self {
        Self {
            store,
            keys: KeyConfig::default(),
            terms: ClaimTerms::default(),
        }
    }

    /// Replaces how run keys are derived from requests.
    pub fn with_keys(mut self, keys: KeyConfig) -> Self {
        self.keys = keys;
        self
    }

    /// Sets the lease: how long a claim survives a guard that died. While
    /// the handler runs, the guard renews the lease every `lease / 3`, so a
    /// slow handler keeps its claim however long it takes; the lease only
    /// bounds how long a run stays blocked after its guard stopped
    /// renewing (a crash, a lost network).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.terms.lease = lease;
        self
    }

    /// Sets the retention: how long a record is honoured.
    pub fn with_retention(mut self, retention: Duration) -> Self {
        self.terms.retention = retention;
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn GuardStore> {
        &self.store
    }

    /// The lease and retention used for claims.
    pub fn terms(&self) -> ClaimTerms {
        self.terms
    }

    /// The run key of a request, or why it has none.
    pub fn run_key(&self, parts: &Parts) -> Result<RunKey, KeyError> {
        self.keys.derive(parts)
    }

    /// Claims `key` (see [`GuardStore::claim`]).
    pub async fn claim(&self, key: &RunKey) -> Result<ClaimOutcome, StoreError> {
        self.store.claim(key, self.terms).await
    }

    /// Records how a claimed attempt ended (see [`GuardStore::finish`]).
    pub async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        let finished = self.store.finish(claim, outcome).await?;
        if finished == FinishResult::Stale {
            tracing::warn!(
                run_key = %claim.key,
                attempt_id = %claim.attempt_id,
                ?outcome,
                "attempt finished after losing its claim; its outcome is not recorded"
            );
        }
        Ok(finished)
    }

    /// A tower layer that guards every request of the wrapped service.
    pub fn layer(&self) -> GuardLayer {
        GuardLayer {
            guard: self.clone(),
        }
    }

    /// Sweeps expired records every `every`, in batches of `batch`, until
    /// the returned future is dropped.
    pub async fn run_sweeper(&self, every: Duration, batch: usize) {
        let batch = batch.max(1);
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            loop {
                match self.store.sweep(batch).await {
                    Ok(swept)
                        if swept.records < batch
                            && swept.fences < batch
                            && swept.tokens < batch =>
                    {
                        break;
                    }
                    Ok(_) => tokio::task::yield_now().await,
                    Err(error) => {
                        tracing::warn!(%error, "sweeping expired guard records failed");
                        break;
                    }
                }
            }
        }
    }

    /// Runs `work` as the claimed attempt in its own task, so that the
    /// attempt finishes and its outcome is recorded even if the caller stops
    /// waiting. A panic in `work` counts as failure. `claimed_at` is an
    /// instant from before the claim was asked for: the lease is counted
    /// from it.
    ///
    /// While `work` runs, the claim's lease is renewed every `lease / 3`.
    /// If a renewal finds the claim lost, `work` is dropped and nothing is
    /// recorded: another attempt owns the run now, so whatever this one
    /// still did would be done twice, and its fence is already stale.
    ///
    /// The outcome is then recorded, retried while the store cannot be
    /// reached for as long as the lease last granted holds: the work's
    /// effect has happened, and an outcome not recorded lets a retry run it
    /// again once the lease has run out.
    pub(crate) async fn run_claimed<F, T>(
        &self,
        claim: Claim,
        claimed_at: tokio::time::Instant,
        work: F,
        outcome_of: fn(&T) -> HandlerOutcome,
    ) -> Attempt<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let guard = self.clone();
        let task = tokio::spawn(async move {
            let work = AssertUnwindSafe(work).catch_unwind();
            let held_until = Mutex::new(claimed_at + guard.terms.lease);
            // The renewals live in this future: they stop when the work
            // ends, whichever way, and with them nothing is left behind.
            let result = tokio::select! {
                biased;
                result = work => result,
                lost = guard.keep_claim(&claim, &held_until) => {
                    tracing::warn!(
                        run_key = %claim.key,
                        attempt_id = %claim.attempt_id,
                        fence = %claim.fence,
                        reason = ?lost,
                        "the claim was lost while its work ran; the work was stopped and its outcome is not recorded"
                    );
                    return Attempt::LeaseLost(lost);
                }
            };
            let outcome = match &result {
                Ok(value) => outcome_of(value),
                Err(_) => HandlerOutcome::Failure,
            };
            let held_until = *held_until.lock().unwrap_or_else(|e| e.into_inner());
            let finished = guard
                .finish_while_held(&claim, outcome, held_until)
                .instrument(tracing::info_span!("finish"))
                .await;
            if let Err(error) = finished {
                tracing::error!(
                    run_key = %claim.key,
                    %error,
                    ?outcome,
                    "could not record the outcome of a run while its lease held; a retry after \
                     the lease may run it again"
                );
            }
            match result {
                Ok(value) => Attempt::Done(value),
                Err(_) => Attempt::Panicked,
            }
        }
        // The caller's span (a proxied request's) goes on with the work.
        .instrument(tracing::Span::current()));
        task.await.unwrap_or(Attempt::Panicked)
    }

    /// [`Guard::finish`], retried while the store fails or stalls until
    /// `held_until`, the end of the lease last granted: after it another
    /// attempt may own the run, and a finish could only find it stale.
    async fn finish_while_held(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
        held_until: tokio::time::Instant,
    ) -> Result<FinishResult, StoreError> {
        let mut pause = MIN_RENEW_EVERY * 5;
        loop {
            let error = match tokio::time::timeout_at(held_until, self.finish(claim, outcome)).await
            {
                Ok(Ok(finished)) => return Ok(finished),
                Ok(Err(error)) => error,
                Err(_) => StoreError::TimedOut("no answer before the lease ran out".into()),
            };
            let now = tokio::time::Instant::now();
            if now + pause >= held_until {
                return Err(error);
            }
            tracing::warn!(
                run_key = %claim.key,
                %error,
                "recording a run's outcome failed; retrying while its lease holds"
            );
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(self.terms.lease / 12).max(MIN_RENEW_EVERY);
        }
    }

    /// Renews `claim` every `lease / 3` for as long as it is polled;
    /// returns only once the claim is no longer this attempt's. The end of
    /// the lease last granted is kept in `held_until`.
    ///
    /// Only the store's answer loses a claim while its lease may still
    /// hold. A renewal that fails or takes longer than `lease / 3` (the
    /// store unreachable or stalled) is retried, more often, until the lease
    /// granted by the last successful renewal would have run out; past that
    /// instant another attempt may have taken the run over and the two
    /// would run at once, so a renewal that still cannot be had gives the
    /// claim up. That instant is counted from before each renewal was sent,
    /// so it never falls after the store's own. A renewal that is late for
    /// any other reason (this process stalled) is still asked for: the store
    /// renews only a claim nobody took over.
    async fn keep_claim(&self, claim: &Claim, held: &Mutex<tokio::time::Instant>) -> LeaseLost {
        let lease = self.terms.lease;
        let every = (lease / 3).max(MIN_RENEW_EVERY);
        let retry_every = (every / 4).max(MIN_RENEW_EVERY);
        let mut held_until = *held.lock().unwrap_or_else(|e| e.into_inner());
        let mut next = held_until - lease + every;
        loop {
            tokio::time::sleep_until(next).await;
            let sent = tokio::time::Instant::now();
            let renewal = self.store.renew(claim, self.terms);
            // An answer after the lease ran out is not waited for, except
            // by a renewal that is already late.
            let deadline = (sent + every).min(held_until).max(sent + MIN_RENEW_EVERY);
            let error = match tokio::time::timeout_at(deadline, renewal).await {
                Ok(Ok(RenewResult::Renewed)) => {
                    held_until = sent + lease;
                    *held.lock().unwrap_or_else(|e| e.into_inner()) = held_until;
                    next = sent + every;
                    continue;
                }
                Ok(Ok(RenewResult::Lost)) => return LeaseLost::Taken,
                Ok(Err(error)) => error.to_string(),
                Err(_) => format!(
                    "no answer within {} ms",
                    deadline.duration_since(sent).as_millis()
                ),
            };
            let now = tokio::time::Instant::now();
            if now >= held_until {
                return LeaseLost::Unrenewed;
            }
            tracing::warn!(
                run_key = %claim.key,
                %error,
                "renewing a claim's lease failed; retrying until the lease runs out"
            );
            next = (now + retry_every).min(held_until);
        }
    }
}

/// Layer produced by [`Guard::layer`].
#[derive(Debug, Clone)]
pub struct GuardLayer {
    guard: Guard,
}

impl<S> Layer<S> for GuardLayer {
    type Service = GuardService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GuardService {
            guard: self.guard.clone(),
            inner,
        }
    }
}

/// The service of [`GuardLayer`].
///
/// A request without a run identity gets 400; a duplicate of a completed run
/// gets 200 `{"status": "duplicate", …}` with `Idempotent-Replayed: true`; a
/// run in flight gets 409. Otherwise the inner service runs with the
/// [`Claim`] as a request extension, and a 2xx answer records the run as
/// completed while anything else releases it. The claim's lease is renewed
/// while the inner service runs; should the claim be lost meanwhile, the
/// inner service's future is dropped and the answer is 409 `LEASE_LOST`.
#[derive(Debug, Clone)]
pub struct GuardService<S> {
    guard: Guard,
    inner: S,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for GuardService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    ReqBody: Send + 'static,
    ResBody: HttpBody<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        // The readied service is the one that must handle this request.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let guard = self.guard.clone();
        let path = request.uri().path().to_owned();
        let answer = async move {
            let (parts, body) = request.into_parts();
            let key = match guard.run_key(&parts) {
                Ok(key) => key,
                Err(error) => return Ok(response::missing_identity(&error.to_string())),
            };
            let claimed_at = tokio::time::Instant::now();
            let claim = match guard.claim(&key).await {
                Ok(ClaimOutcome::Claimed(claim)) => claim,
                Ok(ClaimOutcome::Completed) => return Ok(response::duplicate(&key)),
                Ok(ClaimOutcome::InProgress) => return Ok(response::in_progress(&key)),
                Err(error) => {
                    tracing::error!(run_key = %key, %error, "guard store unavailable");
                    return Ok(response::store_unavailable(
                        "the guard store is unavailable",
                    ));
                }
            };
            let mut request = Request::from_parts(parts, body);
            request.extensions_mut().insert(claim.clone());
            let work = async move {
                match inner.oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            };
            let response = guard
                .run_claimed(claim, claimed_at, work, |r: &Response<ResBody>| {
                    if r.status().is_success() {
                        HandlerOutcome::Success
                    } else {
                        HandlerOutcome::Failure
                    }
                })
                .await;
            Ok(match response {
                Attempt::Done(response) => response.map(Body::new),
                Attempt::Panicked => {
                    response::internal("the handler panicked; the run was released")
                }
                Attempt::LeaseLost(lost) => response::lease_lost(&key, lost),
            })
        };
        Box::pin(async move { answer.await.map(|r| response::stamped(&path, r)) })
    }
}
