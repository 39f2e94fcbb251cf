//! Hostile request bodies through the real router, on a real (SQLite)
//! store: arbitrary JSON documents and arbitrary bytes sent where a queue, a
//! task, a job or a queue update is expected are answered with a 4xx
//! problem document, never a panic or a 500, and nothing is written. Every
//! generated document is made certainly invalid (not an object, or with a
//! field no body has), so that "nothing is written" can be checked by a
//! list afterwards. Case counts are bounded so the suite runs in seconds.

use axum::Router;
use axum::body::Body;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use idem_core::SystemClock;
use idem_core::tenancy::hash_api_key;
use idem_server::api::views::EventViews;
use idem_server::{App, Options};
use idem_store::sqlite::SqliteStore;
use idem_store::{NewApiKey, Store};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;

const KEY: &str = "idem_hostile-bodies-test-key";

struct Env {
    runtime: tokio::runtime::Runtime,
    router: Router,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let dir = std::env::temp_dir().join(format!(
            "idem-hostile-{}-{}",
            std::process::id(),
            uuid_like()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let router = runtime.block_on(async {
            let store = SqliteStore::open(
                dir.join("idem.db"),
                Arc::new(SystemClock),
                Arc::new(EventViews),
            )
            .await
            .unwrap();
            store
                .bootstrap(NewApiKey {
                    id: "key_hostile".into(),
                    key_hash: hash_api_key(KEY),
                })
                .await
                .unwrap();
            let app = App::new(Arc::new(store), Arc::new(SystemClock), Options::default());
            let router = idem_server::router(app);
            let (status, _) = send(
                &router,
                Method::POST,
                "/v1/queues",
                json_body(&json!({"name": "q"})),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED);
            router
        });
        Env { runtime, router }
    })
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn json_body(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

async fn send(
    router: &Router,
    method: Method,
    path: &str,
    body: Vec<u8>,
) -> (StatusCode, (String, Value)) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {KEY}"))
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let doc = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, (content_type, doc))
}

/// Sends `body` and checks the answer is a client error as a problem
/// document.
fn refused(method: Method, path: &str, body: Vec<u8>) -> Result<(), TestCaseError> {
    let env = env();
    let shown = String::from_utf8_lossy(&body).into_owned();
    let (status, (content_type, doc)) = env.runtime.block_on(send(&env.router, method, path, body));
    prop_assert!(status.is_client_error(), "{path} {shown}: {status} {doc}");
    prop_assert!(
        content_type.starts_with("application/problem+json"),
        "{path} {shown}: {content_type}"
    );
    prop_assert_eq!(&doc["status"], &json!(status.as_u16()), "{}", doc);
    Ok(())
}

fn items(path: &str) -> Vec<Value> {
    let env = env();
    let request = Request::builder()
        .uri(path)
        .header("authorization", format!("Bearer {KEY}"))
        .body(Body::empty())
        .unwrap();
    env.runtime.block_on(async {
        let response = env.router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        doc["items"].as_array().unwrap().clone()
    })
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop::sample::select(vec![
            "q",
            "t",
            "* * * * *",
            "http://127.0.0.1:9/x",
            "UTC",
            ""
        ])
        .prop_map(Value::from),
        ".{0,10}".prop_map(Value::from),
    ];
    let keys = prop::sample::select(vec![
        "name",
        "task_id",
        "target",
        "url",
        "headers",
        "rate_limits",
        "retry_config",
        "max_dispatches_per_second",
        "max_burst_size",
        "min_backoff_ms",
        "schedule",
        "schedule_time",
        "dispatch_deadline_s",
        "dedup_window_s",
        "json",
        "body",
    ]);
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map(keys.clone(), inner, 0..6).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

/// Any JSON document no body accepts: not an object, or one with a field
/// that no body has.
fn invalid_json() -> impl Strategy<Value = Vec<u8>> {
    any_json().prop_map(|mut v| {
        if let Value::Object(m) = &mut v {
            m.insert("zz_no_such_field".into(), json!(1));
        }
        json_body(&v)
    })
}

/// Bytes that are not JSON or, rarely, JSON that is not an object.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"{}[]\",:0123456789.eE+- \\\n".to_vec()),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn queue_bodies(body in prop_oneof![invalid_json(), garbage()]) {
        refused(Method::POST, "/v1/queues", body.clone())?;
        refused(Method::PATCH, "/v1/queues/q", body)?;
    }

    #[test]
    fn task_bodies(body in prop_oneof![invalid_json(), garbage()]) {
        refused(Method::POST, "/v1/queues/q/tasks", body)?;
    }

    #[test]
    fn job_bodies(body in prop_oneof![invalid_json(), garbage()]) {
        refused(Method::POST, "/v1/jobs", body.clone())?;
        refused(Method::POST, "/v1/schedules/preview", body)?;
    }
}

#[test]
fn nothing_was_written() {
    // Runs the suites' cases first, so that this checks what they left.
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
    runner
        .run(&prop_oneof![invalid_json(), garbage()], |body| {
            refused(Method::POST, "/v1/queues", body.clone())?;
            refused(Method::POST, "/v1/queues/q/tasks", body.clone())?;
            refused(Method::POST, "/v1/jobs", body)
        })
        .unwrap();
    let queues = items("/v1/queues");
    assert_eq!(queues.len(), 1, "{queues:?}");
    assert_eq!(
        queues[0]["rate_limits"]["max_burst_size"], 100,
        "{queues:?}"
    );
    assert!(items("/v1/queues/q/tasks").is_empty());
    assert!(items("/v1/jobs").is_empty());
}
