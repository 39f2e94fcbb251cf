//! The guard and signature layers on an axum router, driven without a
//! network.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::routing::post;
use axum::{Extension, Router};
use common::Harness;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use idem_guard::{
    Claim, Guard, GuardStore, IdentitySource, KeyConfig, Scope, SigningSecret, WebhookVerifier,
};
use serde_json::Value;
use tower::ServiceExt;

#[derive(Default)]
struct Counts {
    started: AtomicUsize,
    finished: AtomicUsize,
}

/// `?status=N&sleep_ms=N&panic=1` steer the handler.
async fn handler(
    State(counts): State<Arc<Counts>>,
    Extension(claim): Extension<Claim>,
    uri: http::Uri,
    body: String,
) -> (StatusCode, String) {
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
    let counts = Arc::new(Counts::default());
    let guard = Guard::new(store)
        .with_keys(keys)
        .with_lease(Duration::from_secs(60));
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
