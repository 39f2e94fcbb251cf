//! The layer in front of a real axum application, in the non-atomic mode
//! with the in-memory store (and a claiming route at the end).

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Request, StatusCode};
use axum::routing::post;
use idem_http::{Config, IdempotencyLayer, MemoryRecordStore};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tower::ServiceExt;

#[derive(Default)]
struct Counter {
    calls: AtomicU64,
}

async fn handler(State(c): State<Arc<Counter>>, body: String) -> (StatusCode, String) {
    let n = c.calls.fetch_add(1, Ordering::SeqCst) + 1;
    if body.contains("fail") {
        return (StatusCode::INTERNAL_SERVER_ERROR, "boom".into());
    }
    if body.contains("panic") && n == 1 {
        panic!("an injected bug");
    }
    if body.contains("slow") {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    (StatusCode::CREATED, format!("call {n}"))
}

fn app(required: bool) -> (Router, Arc<Counter>) {
    let counter = Arc::new(Counter::default());
    let layer = IdempotencyLayer::non_atomic(
        Arc::new(MemoryRecordStore::new()),
        Config {
            required,
            ..Config::default()
        },
        |parts| {
            parts
                .headers
                .get("x-tenant")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        },
    );
    let router = Router::new()
        .route("/things", post(handler).layer(layer))
        .with_state(counter.clone());
    (router, counter)
}

fn req(key: Option<&str>, tenant: &str, body: &str) -> Request<Body> {
    let mut b = Request::post("/things")
        .header("x-tenant", tenant)
        .header("content-type", "application/json");
    if let Some(k) = key {
        b = b.header("idempotency-key", k);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

async fn send(app: &Router, r: Request<Body>) -> (StatusCode, Option<String>, String) {
    let resp = app.clone().oneshot(r).await.unwrap();
    let status = resp.status();
    let replayed = resp
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_string());
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, replayed, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn a_retry_replays_the_stored_answer_without_running_again() {
    let (app, calls) = app(false);
    let first = send(&app, req(Some("k"), "t1", r#"{"a":1}"#)).await;
    assert_eq!(first, (StatusCode::CREATED, None, "call 1".into()));
    let again = send(&app, req(Some("k"), "t1", r#"{ "a" : 1 }"#)).await;
    assert_eq!(
        again,
        (StatusCode::CREATED, Some("true".into()), "call 1".into())
    );
    assert_eq!(calls.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn another_request_under_the_same_key_is_422() {
    let (app, calls) = app(false);
    send(&app, req(Some("k"), "t1", r#"{"a":1}"#)).await;
    let (status, _, body) = send(&app, req(Some("k"), "t1", r#"{"a":1.0}"#)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        body.contains("IDEMPOTENCY_KEY_MISMATCH") && body.contains("body"),
        "{body}"
    );
    assert_eq!(calls.calls.load(Ordering::SeqCst), 1);
}

/// A handler that panics answers the layer's problem document (500
/// `INTERNAL`), and its key is free again: the retry runs afresh.
#[tokio::test]
async fn a_panicking_handler_answers_a_problem_and_frees_its_key() {
    let (app, calls) = app(false);
    let (status, _, body) = send(&app, req(Some("k"), "t1", r#"{"panic":true}"#)).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(body.contains(r#""type":"INTERNAL""#), "{body}");
    assert!(
        !body.contains("injected"),
        "the panic stays in the log: {body}"
    );
    let retried = send(&app, req(Some("k"), "t1", r#"{"panic":true}"#)).await;
    assert_eq!(retried, (StatusCode::CREATED, None, "call 2".into()));
    assert_eq!(calls.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn failures_are_not_recorded() {
    let (app, calls) = app(false);
    let (status, _, _) = send(&app, req(Some("k"), "t1", r#"{"fail":true}"#)).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let (status, replayed, _) = send(&app, req(Some("k"), "t1", r#"{"fail":true}"#)).await;
    assert_eq!(
        (status, replayed),
        (StatusCode::INTERNAL_SERVER_ERROR, None)
    );
    assert_eq!(
        calls.calls.load(Ordering::SeqCst),
        2,
        "each retry ran again"
    );
}

#[tokio::test]
async fn a_running_request_answers_409_to_its_twin() {
    let (app, calls) = app(false);
    let slow = tokio::spawn({
        let app = app.clone();
        async move { send(&app, req(Some("k"), "t1", r#"{"slow":true}"#)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (status, _, body) = send(&app, req(Some("k"), "t1", r#"{"slow":true}"#)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(body.contains("IDEMPOTENCY_KEY_IN_PROGRESS"));
    assert_eq!(slow.await.unwrap().0, StatusCode::CREATED);
    assert_eq!(calls.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn scopes_keep_tenants_apart_and_keys_can_be_required() {
    let (app, calls) = app(true);
    send(&app, req(Some("k"), "t1", "{}")).await;
    let (_, replayed, _) = send(&app, req(Some("k"), "t2", "{}")).await;
    assert_eq!(replayed, None);
    assert_eq!(calls.calls.load(Ordering::SeqCst), 2);
    let (status, _, body) = send(&app, req(None, "t1", "{}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("IDEMPOTENCY_KEY_MISSING"));
    let (status, _, body) = send(&app, req(Some("a,b"), "t1", "{}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("IDEMPOTENCY_KEY_INVALID"));
}

/// A claiming route: the handler's "write" claims the key itself (here in
/// the in-memory store, as a database transaction would) and tells the
/// layer what held it.
mod claiming {
    use super::*;
    use axum::Extension;
    use axum::response::{IntoResponse, Response};
    use bytes::Bytes;
    use idem_http::layer::StoredReplayer;
    use idem_http::record::{Begin, BeginRequest, CompletedRecord, RecordStore, StoredResponse};
    use idem_http::{Claim, IdempotencyContext};

    struct Claims {
        store: Arc<MemoryRecordStore>,
        calls: AtomicU64,
    }

    async fn handler(
        State(c): State<Arc<Claims>>,
        Extension(ctx): Extension<IdempotencyContext>,
        body: String,
    ) -> Response {
        assert!(ctx.claim, "no lock was taken for the handler");
        if body.contains("bad") {
            return (StatusCode::BAD_REQUEST, "bad body").into_response();
        }
        let begun = c
            .store
            .begin(BeginRequest {
                scope: ctx.scope.clone(),
                key: ctx.key.clone(),
                fingerprint: ctx.fingerprint,
                lock_for: Duration::from_secs(60),
                retain_for: Duration::from_secs(60),
            })
            .await
            .unwrap();
        let token = match begun {
            Begin::Started { token } => token,
            held => {
                let mut r = StatusCode::CONFLICT.into_response();
                r.extensions_mut().insert(Claim::Held(Box::new(held)));
                return r;
            }
        };
        let n = c.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let answer = format!("call {n}");
        let record = CompletedRecord {
            fingerprint: ctx.fingerprint,
            status: 201,
            resource: None,
            response: Some(StoredResponse {
                status: 201,
                headers: Vec::new(),
                body: Bytes::from(answer.clone()),
            }),
            completed_at: None,
        };
        c.store
            .complete(&ctx.scope, &ctx.key, &token, record)
            .await
            .unwrap();
        (StatusCode::CREATED, answer).into_response()
    }

    fn app() -> (Router, Arc<Claims>) {
        let store = Arc::new(MemoryRecordStore::new());
        let claims = Arc::new(Claims {
            store: store.clone(),
            calls: AtomicU64::new(0),
        });
        let layer = IdempotencyLayer::atomic(
            store,
            Config::default(),
            |parts| {
                parts
                    .headers
                    .get("x-tenant")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            },
            Arc::new(StoredReplayer),
        )
        .claiming();
        let router = Router::new()
            .route("/things", post(handler).layer(layer))
            .with_state(claims.clone());
        (router, claims)
    }

    #[tokio::test]
    async fn the_handler_s_claim_decides_replay_mismatch_and_refusal() {
        let (app, claims) = app();
        let first = send(&app, req(Some("k"), "t1", r#"{"a":1}"#)).await;
        assert_eq!(first, (StatusCode::CREATED, None, "call 1".into()));
        let again = send(&app, req(Some("k"), "t1", r#"{ "a" : 1 }"#)).await;
        assert_eq!(
            again,
            (StatusCode::CREATED, Some("true".into()), "call 1".into())
        );
        let (status, _, body) = send(&app, req(Some("k"), "t1", r#"{"a":2}"#)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        // Refused before its write looked at the key: the record answers.
        let (status, _, body) = send(&app, req(Some("k"), "t1", r#"{"bad":1}"#)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        // A fresh key: the handler's own refusal stands.
        let (status, _, body) = send(&app, req(Some("k2"), "t1", r#"{"bad":1}"#)).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::BAD_REQUEST, "bad body")
        );
        assert_eq!(claims.calls.load(Ordering::SeqCst), 1);
    }
}
