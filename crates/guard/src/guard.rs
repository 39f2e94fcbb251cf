//! The guard itself and its tower layer.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use futures_util::FutureExt;
use http::request::Parts;
use http::{Request, Response};
use tower::{Layer, Service, ServiceExt};

use crate::key::{KeyConfig, KeyError, RunKey};
use crate::response;
use crate::store::{
    Claim, ClaimOutcome, ClaimTerms, FinishResult, GuardStore, HandlerOutcome, StoreError,
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

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

    /// Sets the lease: how long a claim holds the key before another attempt
    /// may take over. Make it at least the sender's attempt deadline.
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
    /// waiting. A panic in `work` counts as failure.
    pub(crate) async fn run_claimed<F, T>(
        &self,
        claim: Claim,
        work: F,
        outcome_of: fn(&T) -> HandlerOutcome,
    ) -> Option<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let guard = self.clone();
        let task = tokio::spawn(async move {
            let result = AssertUnwindSafe(work).catch_unwind().await;
            let outcome = match &result {
                Ok(value) => outcome_of(value),
                Err(_) => HandlerOutcome::Failure,
            };
            if let Err(error) = guard.finish(&claim, outcome).await {
                tracing::error!(
                    run_key = %claim.key,
                    %error,
                    ?outcome,
                    "could not record the outcome of a run; a retry after the lease may run it again"
                );
            }
            result.ok()
        });
        task.await.ok().flatten()
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
/// completed while anything else releases it.
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
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let key = match guard.run_key(&parts) {
                Ok(key) => key,
                Err(error) => return Ok(response::missing_identity(&error.to_string())),
            };
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
                .run_claimed(claim, work, |r: &Response<ResBody>| {
                    if r.status().is_success() {
                        HandlerOutcome::Success
                    } else {
                        HandlerOutcome::Failure
                    }
                })
                .await;
            Ok(match response {
                Some(response) => response.map(Body::new),
                None => response::internal("the handler panicked; the run was released"),
            })
        })
    }
}
