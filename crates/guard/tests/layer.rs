//! The guard and signature layers on an axum router, driven without a
//! network.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::routing::post;
use axum::{Extension, Router};
use common::Harness;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use idem_guard::{
    Claim, ClaimOutcome, ClaimTerms, FinishResult, Guard, GuardStore, HandlerOutcome,
    IdentitySource, KeyConfig, RecordView, RenewResult, RunKey, RunState, Scope, SigningSecret,
    StoreError, Swept, WebhookVerifier,
};
use serde_json::Value;
use tower::ServiceExt;

#[derive(Default)]
struct Counts {
    started: AtomicUsize,
    finished: AtomicUsize,
    /// The claim each handler run was given, in the order they started.
    claims: std::sync::Mutex<Vec<Claim>>,
}

/// `?status=N&sleep_ms=N&panic=1` steer the handler.
async fn handler(
    State(counts): State<Arc<Counts>>,
    Extension(claim): Extension<Claim>,
    uri: http::Uri,
    body: String,
) -> (StatusCode, String) {
    counts.claims.lock().unwrap().push(claim.clone());
    counts.started.fetch_add(1, Ordering::SeqCst);
    let query = uri.query().unwrap_or("");
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.parse::<u64>().ok())
    };
    if let Some(ms) = param("sleep_ms") {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if param("panic").is_some() {
        panic!("handler failure injected by the test");
    }
    counts.finished.fetch_add(1, Ordering::SeqCst);
    let status = StatusCode::from_u16(param("status").unwrap_or(200) as u16).unwrap();
    (status, format!("fence={} body={body}", claim.fence))
}

fn app(store: Arc<dyn GuardStore>, keys: KeyConfig) -> (Router, Arc<Counts>) {
    app_with_lease(store, keys, Duration::from_secs(60))
}

fn app_with_lease(
    store: Arc<dyn GuardStore>,
    keys: KeyConfig,
    lease: Duration,
) -> (Router, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let guard = Guard::new(store).with_keys(keys).with_lease(lease);
    let router = Router::new()
        .route("/projects/{project}/run", post(handler))
        .route_layer(guard.layer())
        .with_state(Arc::clone(&counts));
    (router, counts)
}

fn request(uri: &str, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut builder = Request::post(uri);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Body::from(body.to_owned())).unwrap()
}

async fn send(router: &Router, request: Request<Body>) -> (StatusCode, http::HeaderMap, String) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8(body.to_vec()).unwrap())
}

fn scheduler(job: &str, at: &str) -> Vec<(&'static str, String)> {
    vec![
        ("X-CloudScheduler-JobName", job.to_owned()),
        ("X-CloudScheduler-ScheduleTime", at.to_owned()),
    ]
}

fn as_refs<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test]
async fn handler_runs_once_and_sees_its_claim() {
    let harness = Harness::memory_on_system_clock().await;
    let (router, counts) = app(Arc::clone(&harness.store), KeyConfig::new());
    let headers = [("Idempotency-Key", "k-1")];
    let (status, h, body) = send(&router, request("/projects/a/run", &headers, "hello")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(h.get("idempotent-replayed").is_none());
    let fence: u64 = body
        .strip_prefix("fence=")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|f| f.parse().ok())
        .expect("handler saw a fence");
    assert!(fence > 0);
    assert!(body.ends_with("body=hello"));

    let (status, h, body) = send(&router, request("/projects/a/run", &headers, "hello")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(h["idempotent-replayed"], "true");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["status"], "duplicate");
    assert_eq!(counts.started.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn failed_or_panicking_handler_releases_the_run() {
    let harness = Harness::memory_on_system_clock().await;
    let (router, counts) = app(Arc::clone(&harness.store), KeyConfig::new());
    let headers = [("Idempotency-Key", "k-2")];
    let (status, _, _) = send(&router, request("/projects/a/run?status=503", &headers, "")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (status, _, body) = send(&router, request("/projects/a/run?panic=1", &headers, "")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(body.contains("released"), "{body}");
    let (status, h, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(h.get("idempotent-replayed").is_none());
    assert_eq!(counts.started.load(Ordering::SeqCst), 3);
    let (_, h, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(h["idempotent-replayed"], "true");
    assert_eq!(counts.started.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn concurrent_delivery_gets_409_not_503() {
    let harness = Harness::memory_on_system_clock().await;
    let (router, counts) = app(Arc::clone(&harness.store), KeyConfig::new());
    let headers = [("Idempotency-Key", "k-3")];
    let first = tokio::spawn({
        let router = router.clone();
        async move {
            send(
                &router,
                request("/projects/a/run?sleep_ms=300", &headers, ""),
            )
            .await
        }
    });
    while counts.started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (status, h, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(h["retry-after"], "1");
    assert_eq!(first.await.unwrap().0, StatusCode::OK);
    assert_eq!(counts.started.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn missing_identity_or_scope_never_reaches_the_handler() {
    let harness = Harness::memory_on_system_clock().await;
    let keys = KeyConfig::new()
        .with_sources(vec![IdentitySource::CloudScheduler])
        .with_scope(Scope::QueryParam("region".into()));
    let (router, counts) = app(Arc::clone(&harness.store), keys);
    let (status, _, body) = send(
        &router,
        request("/projects/a/run?region=eu", &[("Idempotency-Key", "k")], ""),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("X-CloudScheduler-JobName"), "{body}");
    let job = scheduler("nightly", "2026-10-16T12:00:00Z");
    let (status, _, body) = send(&router, request("/projects/a/run", &as_refs(&job), "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("query:region"), "{body}");
    let problem: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(problem["instance"], "/projects/a/run");
    assert!(problem["request_id"].is_string(), "{body}");
    assert_eq!(counts.started.load(Ordering::SeqCst), 0);

    let (status, _, _) = send(
        &router,
        request("/projects/a/run?region=eu", &as_refs(&job), ""),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = send(
        &router,
        request("/projects/a/run?region=us", &as_refs(&job), ""),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(counts.started.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn dropped_caller_does_not_cancel_the_claimed_run() {
    let harness = Harness::memory_on_system_clock().await;
    let (router, counts) = app(Arc::clone(&harness.store), KeyConfig::new());
    let headers = [("Idempotency-Key", "k-4")];
    let abandoned = tokio::time::timeout(
        Duration::from_millis(50),
        send(
            &router,
            request("/projects/a/run?sleep_ms=250", &headers, ""),
        ),
    )
    .await;
    assert!(
        abandoned.is_err(),
        "the caller gave up before the handler ended"
    );
    for _ in 0..100 {
        if counts.finished.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(counts.finished.load(Ordering::SeqCst), 1);
    // The outcome is recorded right after the handler returns.
    let mut replayed = None;
    for _ in 0..50 {
        let (status, h, _) = send(&router, request("/projects/a/run", &headers, "")).await;
        if status != StatusCode::CONFLICT {
            replayed = Some((status, h));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, h) = replayed.expect("the run was recorded");
    assert_eq!(status, StatusCode::OK);
    assert_eq!(h["idempotent-replayed"], "true");
    assert_eq!(counts.started.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn signature_layer_guards_the_guard() {
    let harness = Harness::memory_on_system_clock().await;
    let counts = Arc::new(Counts::default());
    let secret = SigningSecret::parse("whsec_bGF5ZXItdGVzdC1rZXk=").unwrap();
    let guard = Guard::new(Arc::clone(&harness.store));
    let router = Router::new()
        .route("/projects/{project}/run", post(handler))
        .route_layer(guard.layer())
        .route_layer(WebhookVerifier::new(vec![secret.clone()]).layer())
        .with_state(Arc::clone(&counts));

    let unsigned = request("/projects/a/run", &[("Idempotency-Key", "k-5")], "body");
    assert_eq!(send(&router, unsigned).await.0, StatusCode::UNAUTHORIZED);
    let now = jiff::Timestamp::now().as_second();
    let stale = now - 301;
    let stale_sig = secret.sign("k-5", stale, b"body");
    let stale_ts = stale.to_string();
    let stale_request = request(
        "/projects/a/run",
        &[
            ("Idempotency-Key", "k-5"),
            ("Webhook-Id", "k-5"),
            ("Webhook-Timestamp", &stale_ts),
            ("Webhook-Signature", &stale_sig),
        ],
        "body",
    );
    assert_eq!(
        send(&router, stale_request).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(counts.started.load(Ordering::SeqCst), 0);
    // Refused before the guard: nothing was claimed.
    let (parts, _) = request("/projects/a/run", &[("Idempotency-Key", "k-5")], "").into_parts();
    let key = guard.run_key(&parts).unwrap();
    assert_eq!(harness.store.inspect(&key).await.unwrap(), None);

    let sig = secret.sign("k-5", now, b"body");
    let ts = now.to_string();
    let signed = request(
        "/projects/a/run",
        &[
            ("Idempotency-Key", "k-5"),
            ("Webhook-Id", "k-5"),
            ("Webhook-Timestamp", &ts),
            ("Webhook-Signature", &sig),
        ],
        "body",
    );
    let (status, _, body) = send(&router, signed).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.ends_with("body=body"),
        "the handler gets the body: {body}"
    );
    assert_eq!(counts.started.load(Ordering::SeqCst), 1);
}

/// The signature layer plus the guard layer: one signed message is one
/// run, whatever unsigned identity or scope travels beside it, and a
/// message with only the Standard Webhooks headers is keyed by its ID.
#[tokio::test]
async fn a_signed_message_runs_the_handler_once_whatever_travels_unsigned() {
    let harness = Harness::memory_on_system_clock().await;
    let counts = Arc::new(Counts::default());
    let secret = SigningSecret::parse("whsec_bGF5ZXItdGVzdC1rZXk=").unwrap();
    let guard = Guard::new(Arc::clone(&harness.store))
        .with_keys(KeyConfig::new().with_scope(Scope::PathSegment(1)));
    let router = Router::new()
        .route("/projects/{project}/run", post(handler))
        .route_layer(guard.layer())
        .route_layer(WebhookVerifier::new(vec![secret.clone()]).layer())
        .with_state(Arc::clone(&counts));
    let now = jiff::Timestamp::now().as_second();
    let ts = now.to_string();
    let sig = secret.sign("msg-1", now, b"body");
    let signed = |uri: &str, extra: &[(&'static str, &'static str)]| {
        let mut headers = vec![
            ("Webhook-Id", "msg-1"),
            ("Webhook-Timestamp", ts.as_str()),
            ("Webhook-Signature", sig.as_str()),
        ];
        headers.extend_from_slice(extra);
        request(uri, &headers, "body")
    };
    let (status, _, _) = send(&router, signed("/projects/a/run", &[])).await;
    assert_eq!(status, StatusCode::OK, "keyed by its webhook-id");
    for (uri, extra) in [
        ("/projects/a/run", &[("Idempotency-Key", "evil-1")][..]),
        (
            "/projects/b/run",
            &[
                ("X-CloudTasks-QueueName", "q"),
                ("X-CloudTasks-TaskName", "evil-2"),
            ][..],
        ),
    ] {
        let (status, headers, _) = send(&router, signed(uri, extra)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["idempotent-replayed"], "true");
    }
    assert_eq!(counts.started.load(Ordering::SeqCst), 1);
}

/// A store that passes everything to a real one, except that its renewals
/// can be made to fail as an unreachable store's would, and so can its
/// next `failing_finishes` finishes; it counts renewals and finishes.
#[derive(Debug)]
struct FlakyRenewals {
    inner: Arc<dyn GuardStore>,
    failing: AtomicBool,
    renewals: AtomicUsize,
    failing_finishes: AtomicUsize,
    finishes: AtomicUsize,
}

impl FlakyRenewals {
    fn new(inner: Arc<dyn GuardStore>) -> Arc<Self> {
        Arc::new(Self {
            inner,
            failing: AtomicBool::new(false),
            renewals: AtomicUsize::new(0),
            failing_finishes: AtomicUsize::new(0),
            finishes: AtomicUsize::new(0),
        })
    }
}

#[async_trait::async_trait]
impl GuardStore for FlakyRenewals {
    async fn claim(&self, key: &RunKey, terms: ClaimTerms) -> Result<ClaimOutcome, StoreError> {
        self.inner.claim(key, terms).await
    }

    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        self.finishes.fetch_add(1, Ordering::SeqCst);
        let failing = self
            .failing_finishes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if failing.is_ok() {
            return Err(StoreError::Closed("this finish fails in this test".into()));
        }
        self.inner.finish(claim, outcome).await
    }

    async fn renew(&self, claim: &Claim, terms: ClaimTerms) -> Result<RenewResult, StoreError> {
        self.renewals.fetch_add(1, Ordering::SeqCst);
        if self.failing.load(Ordering::SeqCst) {
            return Err(StoreError::Closed("renewals fail in this test".into()));
        }
        self.inner.renew(claim, terms).await
    }

    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError> {
        self.inner.sweep(limit).await
    }

    async fn inspect(&self, key: &RunKey) -> Result<Option<RecordView>, StoreError> {
        self.inner.inspect(key).await
    }

    async fn bind_token(
        &self,
        token: &str,
        key: &RunKey,
        ttl: Duration,
    ) -> Result<RunKey, StoreError> {
        self.inner.bind_token(token, key, ttl).await
    }
}

/// Waits until `n` handler runs have started.
async fn started(counts: &Counts, n: usize) {
    for _ in 0..500 {
        if counts.started.load(Ordering::SeqCst) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{n} handler runs did not start");
}

fn problem_type(answer: (StatusCode, http::HeaderMap, String)) -> (StatusCode, String) {
    let (status, _, body) = answer;
    let body: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{body}"));
    (status, body["type"].as_str().unwrap_or_default().to_owned())
}

mod renewal {
    use super::*;

    const LEASE: Duration = Duration::from_millis(300);

    /// The handler takes four leases; a delivery repeated two leases in
    /// still finds it in flight, and it runs once.
    pub async fn a_handler_slower_than_its_lease_runs_once(h: Harness) {
        let (router, counts) = app_with_lease(Arc::clone(&h.store), KeyConfig::new(), LEASE);
        let headers = [("Idempotency-Key", "slow-1")];
        let first = tokio::spawn({
            let router = router.clone();
            async move {
                send(
                    &router,
                    request("/projects/a/run?sleep_ms=1200", &headers, ""),
                )
                .await
            }
        });
        started(&counts, 1).await;
        tokio::time::sleep(2 * LEASE).await;
        let second = send(&router, request("/projects/a/run", &headers, "")).await;
        assert_eq!(
            problem_type(second),
            (StatusCode::CONFLICT, "IDEMPOTENCY_KEY_IN_PROGRESS".into())
        );
        let (status, _, _) = first.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        let (status, h, _) = send(&router, request("/projects/a/run", &headers, "")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(h["idempotent-replayed"], "true");
        assert_eq!(counts.started.load(Ordering::SeqCst), 1);
    }

    /// The handler's record is released under it (as a sweep or an
    /// operator could) and another attempt takes the run: the first hears
    /// so at its next renewal, is stopped, answers 409 `LEASE_LOST`, and
    /// never touches the record the other attempt wrote.
    pub async fn a_lost_claim_answers_lease_lost_and_records_nothing(h: Harness) {
        let (router, counts) = app_with_lease(Arc::clone(&h.store), KeyConfig::new(), LEASE);
        let headers = [("Idempotency-Key", "lost-1")];
        let first = tokio::spawn({
            let router = router.clone();
            async move {
                send(
                    &router,
                    request("/projects/a/run?sleep_ms=1500", &headers, ""),
                )
                .await
            }
        });
        started(&counts, 1).await;
        let lost = counts.claims.lock().unwrap()[0].clone();
        assert_eq!(
            h.store
                .finish(&lost, HandlerOutcome::Failure)
                .await
                .unwrap(),
            FinishResult::Applied
        );
        let (status, _, _) = send(&router, request("/projects/a/run", &headers, "")).await;
        assert_eq!(status, StatusCode::OK, "another attempt ran the run");
        let winner = counts.claims.lock().unwrap()[1].clone();
        assert!(winner.fence > lost.fence);

        let answer = tokio::time::timeout(2 * LEASE, first)
            .await
            .expect("the lost attempt is answered at its next renewal")
            .unwrap();
        assert_eq!(
            problem_type(answer),
            (StatusCode::CONFLICT, "LEASE_LOST".into())
        );
        // The lost attempt's handler was stopped, not left to finish.
        tokio::time::sleep(Duration::from_millis(1700)).await;
        assert_eq!(counts.finished.load(Ordering::SeqCst), 1);
        let record = h.store.inspect(&winner.key).await.unwrap().expect("record");
        assert_eq!(record.state, RunState::Completed);
        assert_eq!(record.attempt_id, winner.attempt_id);
    }
}

use renewal::*;

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    memory: Harness::memory_on_system_clock().await,
    sqlite: Harness::sqlite_on_system_clock().await,
    postgres: Harness::postgres_by_url().await,
    redis: Harness::redis().await;
    a_handler_slower_than_its_lease_runs_once,
    a_lost_claim_answers_lease_lost_and_records_nothing,
}

/// A store that cannot be reached for a while does not lose the claim
/// while its lease may still hold: renewals are retried and the run ends
/// normally once they succeed again.
#[tokio::test]
async fn failed_renewals_are_retried_while_the_lease_holds() {
    let harness = Harness::memory_on_system_clock().await;
    let store = FlakyRenewals::new(Arc::clone(&harness.store));
    let lease = Duration::from_millis(600);
    let (router, counts) = app_with_lease(store.clone(), KeyConfig::new(), lease);
    let headers = [("Idempotency-Key", "flaky-1")];
    store.failing.store(true, Ordering::SeqCst);
    let first = tokio::spawn({
        let router = router.clone();
        async move {
            send(
                &router,
                request("/projects/a/run?sleep_ms=1200", &headers, ""),
            )
            .await
        }
    });
    started(&counts, 1).await;
    // The first renewal (at 200 ms) fails, and so do retries until 400 ms.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(store.renewals.load(Ordering::SeqCst) >= 2);
    store.failing.store(false, Ordering::SeqCst);
    let (status, _, _) = first.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(counts.finished.load(Ordering::SeqCst), 1);
    // The renewals ended with the handler.
    let renewals = store.renewals.load(Ordering::SeqCst);
    tokio::time::sleep(lease).await;
    assert_eq!(store.renewals.load(Ordering::SeqCst), renewals);
    let (_, h, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(h["idempotent-replayed"], "true");
}

/// The handler's work is done but the store cannot take its outcome for a
/// moment (a PostgreSQL restart): the outcome is recorded once the store
/// answers, within the lease, so a later delivery is answered as the run's
/// replay instead of finding it in flight and, after the lease, running it
/// again. Past the lease the outcome is given up.
#[tokio::test]
async fn an_outcome_the_store_missed_is_recorded_once_it_answers() {
    let harness = Harness::memory_on_system_clock().await;
    let store = FlakyRenewals::new(Arc::clone(&harness.store));
    let lease = Duration::from_millis(600);
    let (router, counts) = app_with_lease(store.clone(), KeyConfig::new(), lease);
    let headers = [("Idempotency-Key", "unrecorded-1")];
    store.failing_finishes.store(3, Ordering::SeqCst);
    let (status, _, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        store.finishes.load(Ordering::SeqCst),
        4,
        "three failed, one held"
    );
    let (status, h, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(h["idempotent-replayed"], "true");
    assert_eq!(counts.started.load(Ordering::SeqCst), 1);

    // A store that stays away past the lease: the guard stops trying.
    let headers = [("Idempotency-Key", "unrecorded-2")];
    store.failing_finishes.store(usize::MAX, Ordering::SeqCst);
    let before = store.finishes.load(Ordering::SeqCst);
    let began = std::time::Instant::now();
    let (status, _, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(status, StatusCode::OK, "the upstream's answer stands");
    let took = began.elapsed();
    assert!(took < lease + Duration::from_millis(300), "{took:?}");
    let tries = store.finishes.load(Ordering::SeqCst) - before;
    assert!(tries > 1, "{tries} tries");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(store.finishes.load(Ordering::SeqCst) - before, tries);
}

/// Renewals that cannot be had until the lease runs out give the claim up:
/// another attempt may hold the run by then. The handler is stopped, and
/// its run is neither completed nor released by it.
#[tokio::test]
async fn a_lease_that_cannot_be_renewed_in_time_is_given_up() {
    let harness = Harness::memory_on_system_clock().await;
    let store = FlakyRenewals::new(Arc::clone(&harness.store));
    let lease = Duration::from_millis(300);
    let (router, counts) = app_with_lease(store.clone(), KeyConfig::new(), lease);
    let headers = [("Idempotency-Key", "unrenewed-1")];
    store.failing.store(true, Ordering::SeqCst);
    let started_at = std::time::Instant::now();
    let answer = send(
        &router,
        request("/projects/a/run?sleep_ms=2000", &headers, ""),
    )
    .await;
    let took = started_at.elapsed();
    let (status, _, body) = answer.clone();
    assert_eq!(
        problem_type(answer),
        (StatusCode::CONFLICT, "LEASE_LOST".into())
    );
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(body.contains("could not renew"), "{body}");
    assert!(
        took >= lease && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert_eq!(counts.finished.load(Ordering::SeqCst), 0);
    let claim = counts.claims.lock().unwrap()[0].clone();
    let record = harness
        .store
        .inspect(&claim.key)
        .await
        .unwrap()
        .expect("record");
    assert_eq!(
        record.state,
        RunState::InProgress,
        "left for its lease to end"
    );
    // Once the lease has run out, a retry takes the run over.
    store.failing.store(false, Ordering::SeqCst);
    let (status, _, _) = send(&router, request("/projects/a/run", &headers, "")).await;
    assert_eq!(status, StatusCode::OK);
}
