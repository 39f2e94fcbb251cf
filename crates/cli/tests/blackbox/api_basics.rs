//! Conventions every route follows: request IDs, problem documents,
//! authentication, body handling, health endpoints and the OpenAPI document.

use crate::harness;
use crate::harness::{Server, anonymous_task, fresh_key, task};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;

idem_testkit::store_tests!(
    Server::start;
    healthz_answers_without_auth,
    readyz_answers_when_the_store_does,
    every_response_carries_a_fresh_request_id,
    unknown_route_is_a_not_found_problem,
    missing_authorization_is_unauthenticated,
    unknown_or_malformed_key_is_unauthenticated,
    bearer_scheme_is_case_insensitive,
    unauthenticated_answer_carries_a_bearer_challenge,
    metrics_are_public_prometheus_text,
    malformed_json_is_invalid_argument_and_writes_nothing,
    json_route_refuses_other_media_types,
    body_over_default_limit_is_payload_too_large,
    unknown_query_parameters_are_ignored,
    json_with_a_charset_parameter_is_accepted,
    authentication_comes_before_body_parsing,
    wrong_method_is_a_problem_with_request_id,
    oversized_body_does_not_break_the_next_request,
    idempotency_key_header_does_not_break_operations,
    openapi_document_is_public_and_3_1,
    openapi_lists_every_v1_route,
    openapi_marks_exactly_the_idempotent_operations,
    openapi_documents_the_answers_the_server_gives,
);

#[test]
fn harness_helpers_are_correct() {
    harness::self_check();
}

async fn healthz_answers_without_auth(s: Server) {
    let resp = s.anonymous().get("/healthz").await;
    resp.ok(200);
    // A key must not be needed, but one must not hurt either.
    s.get("/healthz").await.ok(200);
}

async fn readyz_answers_when_the_store_does(s: Server) {
    s.anonymous().get("/readyz").await.ok(200);
}

async fn every_response_carries_a_fresh_request_id(s: Server) {
    let mut seen = BTreeSet::new();
    let responses = [
        s.anonymous().get("/healthz").await,
        s.anonymous().get("/healthz").await,
        s.get("/v1/queues").await,
        s.anonymous().get("/v1/queues").await,
        s.get("/v1/queues/missing").await,
        s.post("/v1/queues", json!({})).await,
        s.get("/no/such/route").await,
    ];
    for resp in &responses {
        let id = resp.request_id().to_string();
        assert!(
            seen.insert(id.clone()),
            "{}: request id {id} was already used by another response",
            resp.what
        );
    }
}

async fn unknown_route_is_a_not_found_problem(s: Server) {
    s.get("/v1/no-such-collection")
        .await
        .problem(404, "NOT_FOUND");
    s.get("/not-api-at-all").await.request_id();
    assert_eq!(s.get("/not-api-at-all").await.status, 404);
}

async fn missing_authorization_is_unauthenticated(s: Server) {
    let anon = s.anonymous();
    s.create_queue("guarded").await;
    let attempts = [
        anon.get("/v1/queues").await,
        anon.get("/v1/queues/guarded").await,
        anon.post("/v1/queues", json!({"name": "sneaky"})).await,
        anon.post("/v1/queues/guarded/tasks", task("sneaky")).await,
        anon.get("/v1/queues/guarded/tasks").await,
        anon.delete("/v1/queues/guarded").await,
        anon.get("/v1/principals").await,
        anon.post(
            "/v1/principals",
            json!({"name": "x", "kind": "service", "role": "admin"}),
        )
        .await,
        anon.get("/v1/signing-secrets").await,
        anon.post("/v1/organizations", json!({"name": "sneaky"}))
            .await,
    ];
    for resp in &attempts {
        resp.problem(401, "UNAUTHENTICATED");
    }
    // Nothing the anonymous requests asked for happened.
    s.get("/v1/queues/sneaky").await.problem(404, "NOT_FOUND");
    s.get("/v1/queues/guarded/tasks/sneaky")
        .await
        .problem(404, "NOT_FOUND");
    s.get_queue("guarded").await;
}

async fn unknown_or_malformed_key_is_unauthenticated(s: Server) {
    let stranger = s.with_key(&fresh_key());
    stranger
        .get("/v1/queues")
        .await
        .problem(401, "UNAUTHENTICATED");
    stranger
        .post("/v1/queues", json!({"name": "q"}))
        .await
        .problem(401, "UNAUTHENTICATED");
    // The admin key in the wrong scheme is not a bearer token.
    s.anonymous()
        .request(Method::GET, "/v1/queues")
        .header("authorization", &format!("Basic {}", s.admin_key))
        .send()
        .await
        .problem(401, "UNAUTHENTICATED");
    // A prefix of the real key is another key.
    let prefix = &s.admin_key[..s.admin_key.len() - 1];
    s.with_key(prefix)
        .get("/v1/queues")
        .await
        .problem(401, "UNAUTHENTICATED");
    s.get("/v1/queues/q").await.problem(404, "NOT_FOUND");
}

/// Authentication schemes are case-insensitive (RFC 9110 §11.1).
async fn bearer_scheme_is_case_insensitive(s: Server) {
    for scheme in ["bearer", "BEARER"] {
        s.anonymous()
            .request(Method::GET, "/v1/queues")
            .header("authorization", &format!("{scheme} {}", s.admin_key))
            .send()
            .await
            .ok(200);
    }
}

/// RFC 9110 §15.5.2: a 401 carries `WWW-Authenticate` with the scheme to use.
async fn unauthenticated_answer_carries_a_bearer_challenge(s: Server) {
    for resp in [
        s.anonymous().get("/v1/queues").await,
        s.with_key(&fresh_key()).get("/v1/queues").await,
    ] {
        resp.problem(401, "UNAUTHENTICATED");
        let challenge = resp.header("www-authenticate").unwrap_or("");
        assert!(
            challenge.to_ascii_lowercase().starts_with("bearer"),
            "{}: 401 without a Bearer WWW-Authenticate challenge (got {challenge:?})",
            resp.what
        );
    }
}

/// API.md §1: `GET /metrics` serves the Prometheus text format without auth.
async fn metrics_are_public_prometheus_text(s: Server) {
    s.create_queue("q").await;
    s.create_task("q", task("t1")).await;
    let resp = s.anonymous().get("/metrics").await;
    resp.ok(200);
    let content_type = resp.header("content-type").unwrap_or("");
    assert!(
        content_type.starts_with("text/plain")
            || content_type.starts_with("application/openmetrics-text"),
        "metrics served as {content_type:?}"
    );
    let samples: Vec<&str> = resp
        .text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert!(!samples.is_empty(), "no metric samples: {:?}", resp.text);
    for line in samples {
        let (name, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("not a sample line: {line:?}"));
        let metric = name.split('{').next().unwrap_or("");
        assert!(
            !metric.is_empty()
                && metric
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "bad metric name in {line:?}"
        );
        assert!(
            value.parse::<f64>().is_ok() || ["NaN", "+Inf", "-Inf"].contains(&value),
            "bad sample value in {line:?}"
        );
    }
}

async fn malformed_json_is_invalid_argument_and_writes_nothing(s: Server) {
    s.request(Method::POST, "/v1/queues")
        .raw("application/json", r#"{"name": "half"#)
        .send()
        .await
        .problem(400, "INVALID_ARGUMENT");
    s.request(Method::POST, "/v1/queues")
        .raw("application/json", "")
        .send()
        .await
        .problem(400, "INVALID_ARGUMENT");
    s.request(Method::POST, "/v1/queues")
        .raw("application/json", r#"["name", "half"]"#)
        .send()
        .await
        .problem(400, "INVALID_ARGUMENT");
    s.get("/v1/queues/half").await.problem(404, "NOT_FOUND");

    s.create_queue("q").await;
    s.request(Method::POST, "/v1/queues/q/tasks")
        .raw(
            "application/json",
            r#"{"task_id": "t1", "target": {"url": "http://127.0.0.1:9/"}"#,
        )
        .send()
        .await
        .problem(400, "INVALID_ARGUMENT");
    assert!(s.all_tasks("q", "").await.is_empty());
}

async fn json_route_refuses_other_media_types(s: Server) {
    s.request(Method::POST, "/v1/queues")
        .raw("text/plain", r#"{"name": "plain"}"#)
        .send()
        .await
        .problem(415, "UNSUPPORTED_MEDIA_TYPE");
    s.request(Method::POST, "/v1/queues")
        .raw("application/x-www-form-urlencoded", "name=plain")
        .send()
        .await
        .problem(415, "UNSUPPORTED_MEDIA_TYPE");
    s.get("/v1/queues/plain").await.problem(404, "NOT_FOUND");

    s.create_queue("q").await;
    s.request(Method::POST, "/v1/queues/q/tasks")
        .raw("text/plain", task("t1").to_string())
        .send()
        .await
        .problem(415, "UNSUPPORTED_MEDIA_TYPE");
    s.request(Method::PATCH, "/v1/queues/q")
        .raw("text/plain", r#"{"dispatch_deadline_s": 5}"#)
        .send()
        .await
        .problem(415, "UNSUPPORTED_MEDIA_TYPE");
    assert!(s.all_tasks("q", "").await.is_empty());
    assert_eq!(s.get_queue("q").await["dispatch_deadline_s"], json!(600));
}

async fn body_over_default_limit_is_payload_too_large(s: Server) {
    s.create_queue("q").await;
    let big = "x".repeat(1_048_576 + 1024);
    let mut body = task("big");
    body["target"]["body"] = json!(big);
    s.post("/v1/queues/q/tasks", body)
        .await
        .problem(413, "PAYLOAD_TOO_LARGE");
    let s = s.fresh_admin();
    s.get("/v1/queues/q/tasks/big")
        .await
        .problem(404, "NOT_FOUND");

    // Just under the limit is accepted.
    let mut body = task("fits");
    body["target"]["body"] = json!("y".repeat(1_048_576 - 4096));
    let created = s.create_task("q", body).await;
    assert_eq!(created["task_id"], "fits");
}

async fn json_with_a_charset_parameter_is_accepted(s: Server) {
    let resp = s
        .request(Method::POST, "/v1/queues")
        .raw("application/json; charset=utf-8", r#"{"name": "utf8"}"#)
        .send()
        .await;
    resp.ok(201);
    assert_eq!(resp.json["name"], "utf8");
    s.request(Method::PATCH, "/v1/queues/utf8")
        .raw(
            "application/json; charset=UTF-8",
            r#"{"dedup_window_s": 5}"#,
        )
        .send()
        .await
        .ok(200);
    assert_eq!(s.get_queue("utf8").await["dedup_window_s"], json!(5));
}

/// An anonymous caller learns nothing from validation: it gets 401 first.
async fn authentication_comes_before_body_parsing(s: Server) {
    let anon = s.anonymous();
    anon.request(Method::POST, "/v1/queues")
        .raw("application/json", r#"{"name": "#)
        .send()
        .await
        .problem(401, "UNAUTHENTICATED");
    anon.post("/v1/queues", json!({"name": "bad name", "bogus": 1}))
        .await
        .problem(401, "UNAUTHENTICATED");
    anon.post("/v1/queues/ghost/tasks", task("t1"))
        .await
        .problem(401, "UNAUTHENTICATED");
    anon.request(Method::POST, "/v1/queues")
        .raw("text/plain", "name")
        .send()
        .await
        .problem(401, "UNAUTHENTICATED");
}

async fn wrong_method_is_a_problem_with_request_id(s: Server) {
    s.create_queue("q").await;
    let resp = s
        .request(Method::PUT, "/v1/queues/q")
        .json(&json!({"name": "q"}))
        .send()
        .await;
    assert_eq!(resp.status, 405, "{}: {}", resp.what, resp.text);
    resp.request_id();
    assert!(
        resp.header("content-type")
            .is_some_and(|c| c.starts_with("application/problem+json")),
        "405 is not a problem document: {:?}",
        resp.headers
    );
    assert_eq!(resp.json["status"], json!(405));
}

/// A server that answers 413 without reading the body must say it closes
/// the connection (`Connection: close`); otherwise a keep-alive client sends
/// its next request into a connection the server is tearing down.
async fn oversized_body_does_not_break_the_next_request(s: Server) {
    s.create_queue("q").await;
    for round in 0..10 {
        let huge = json!({ "name": "x".repeat(2 * 1_048_576) });
        let refused = s.post("/v1/queues", huge).await;
        refused.problem(413, "PAYLOAD_TOO_LARGE");
        let closes = refused
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        if !closes {
            // The connection was announced reusable: it must be.
            let next = s
                .request(Method::GET, "/v1/queues/q")
                .try_send()
                .await
                .unwrap_or_else(|e| {
                    panic!(
                        "round {round}: the 413 had no `Connection: close`, yet the next \
                         request on the same client failed: {e}"
                    )
                });
            next.ok(200);
        }
    }
    let names: Vec<_> = s
        .fresh_admin()
        .collect_pages("/v1/queues")
        .await
        .iter()
        .map(|q| q["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("q")]);
}

async fn unknown_query_parameters_are_ignored(s: Server) {
    s.create_queue("q").await;
    s.get("/v1/queues?colour=blue").await.ok(200);
    s.post("/v1/queues/q/tasks?colour=blue", task("t1"))
        .await
        .ok(201);
    s.get("/v1/queues/q/tasks/t1?colour=blue").await.ok(200);
}

/// The Idempotency-Key header (API.md §2) may be attached to any request; a
/// fresh key must never change what the request does.
async fn idempotency_key_header_does_not_break_operations(s: Server) {
    let with_key = |method: Method, path: &str| {
        s.request(method, path)
            .header("idempotency-key", &fresh_key())
    };
    let queue = with_key(Method::POST, "/v1/queues")
        .json(&json!({"name": "q"}))
        .send()
        .await;
    queue.ok(201);
    assert_eq!(queue.json["name"], "q");
    with_key(Method::PATCH, "/v1/queues/q")
        .json(&json!({"dedup_window_s": 60}))
        .send()
        .await
        .ok(200);
    with_key(Method::POST, "/v1/queues/q/pause")
        .send()
        .await
        .ok(200);
    with_key(Method::POST, "/v1/queues/q/resume")
        .send()
        .await
        .ok(200);
    // Paused again so that no task leaves `queued` while the test counts.
    with_key(Method::POST, "/v1/queues/q/pause")
        .send()
        .await
        .ok(200);
    let mut scheduled = task("later");
    scheduled["schedule_time"] = json!(harness::time_from_now(3600));
    let created = with_key(Method::POST, "/v1/queues/q/tasks")
        .json(&scheduled)
        .send()
        .await;
    created.ok(201);
    assert_eq!(created.json["task_id"], "later");
    with_key(Method::POST, "/v1/queues/q/tasks/later/run")
        .send()
        .await
        .ok(200);
    with_key(Method::POST, "/v1/queues/q/tasks")
        .json(&anonymous_task())
        .send()
        .await
        .ok(201);
    with_key(Method::GET, "/v1/queues/q/tasks/later")
        .send()
        .await
        .ok(200);
    with_key(Method::DELETE, "/v1/queues/q/tasks/later")
        .send()
        .await
        .ok(200);
    let purged = with_key(Method::POST, "/v1/queues/q/purge").send().await;
    purged.ok(200);
    assert_eq!(purged.json["cancelled"], json!(1));
    with_key(Method::POST, "/v1/principals")
        .json(&json!({"name": "svc", "kind": "service", "role": "writer"}))
        .send()
        .await
        .ok(201);
    with_key(Method::PATCH, "/v1/principals/svc")
        .json(&json!({"role": "reader"}))
        .send()
        .await
        .ok(200);
    with_key(Method::POST, "/v1/principals/svc/keys")
        .send()
        .await
        .ok(201);
    with_key(Method::POST, "/v1/signing-secrets/rotate")
        .send()
        .await
        .ok(201);
    with_key(Method::POST, "/v1/organizations")
        .json(&json!({"name": harness::unique("org")}))
        .send()
        .await
        .ok(201);
    // Operations that are not x-idempotent ignore the header, whatever it
    // holds and however often it repeats.
    for value in ["reused-on-reads", "reused-on-reads", "a, b", "\"quoted\""] {
        s.request(Method::GET, "/v1/queues/q")
            .header("idempotency-key", value)
            .send()
            .await
            .ok(200);
        s.request(Method::GET, "/v1/queues/q/tasks")
            .header("idempotency-key", value)
            .send()
            .await
            .ok(200);
    }
    with_key(Method::DELETE, "/v1/queues/q")
        .send()
        .await
        .ok(204);
    s.get("/v1/queues/q").await.problem(404, "NOT_FOUND");
}

async fn openapi_document_is_public_and_3_1(s: Server) {
    let resp = s.anonymous().get("/openapi.json").await;
    resp.ok(200);
    let version = resp.json["openapi"].as_str().unwrap_or("");
    assert!(version.starts_with("3.1"), "openapi version is {version:?}");
    assert!(resp.json["paths"].is_object(), "no paths object");
}

/// The routes of the contract, with path parameters written as `{}`.
const ROUTES: &[(&str, &str)] = &[
    ("get", "/.well-known/openid-configuration"),
    ("get", "/.well-known/jwks.json"),
    ("get", "/v1/queues"),
    ("post", "/v1/queues"),
    ("get", "/v1/queues/{}"),
    ("patch", "/v1/queues/{}"),
    ("delete", "/v1/queues/{}"),
    ("post", "/v1/queues/{}/pause"),
    ("post", "/v1/queues/{}/resume"),
    ("post", "/v1/queues/{}/purge"),
    ("get", "/v1/queues/{}/tasks"),
    ("post", "/v1/queues/{}/tasks"),
    ("get", "/v1/queues/{}/tasks/{}"),
    ("delete", "/v1/queues/{}/tasks/{}"),
    ("get", "/v1/queues/{}/tasks/{}/attempts"),
    ("post", "/v1/queues/{}/tasks/{}/run"),
    ("get", "/v1/principals"),
    ("post", "/v1/principals"),
    ("patch", "/v1/principals/{}"),
    ("get", "/v1/principals/{}/keys"),
    ("post", "/v1/principals/{}/keys"),
    ("delete", "/v1/principals/{}/keys/{}"),
    ("post", "/v1/organizations"),
    ("get", "/v1/signing-secrets"),
    ("post", "/v1/signing-secrets/rotate"),
    ("delete", "/v1/signing-secrets/{}"),
    ("get", "/v1/jobs"),
    ("post", "/v1/jobs"),
    ("get", "/v1/jobs/{}"),
    ("patch", "/v1/jobs/{}"),
    ("delete", "/v1/jobs/{}"),
    ("post", "/v1/jobs/{}/pause"),
    ("post", "/v1/jobs/{}/resume"),
    ("post", "/v1/jobs/{}/run"),
    ("get", "/v1/jobs/{}/runs"),
    ("get", "/v1/jobs/{}/runs/{}"),
    ("get", "/v1/jobs/{}/runs/{}/attempts"),
    ("post", "/v1/schedules/preview"),
];

const IDEMPOTENT: &[(&str, &str)] = &[
    ("post", "/v1/queues"),
    ("patch", "/v1/queues/{}"),
    ("post", "/v1/queues/{}/pause"),
    ("post", "/v1/queues/{}/resume"),
    ("post", "/v1/queues/{}/purge"),
    ("post", "/v1/queues/{}/tasks"),
    ("post", "/v1/queues/{}/tasks/{}/run"),
    ("post", "/v1/principals"),
    ("patch", "/v1/principals/{}"),
    ("post", "/v1/principals/{}/keys"),
    ("post", "/v1/organizations"),
    ("post", "/v1/signing-secrets/rotate"),
    ("post", "/v1/jobs"),
    ("patch", "/v1/jobs/{}"),
    ("post", "/v1/jobs/{}/pause"),
    ("post", "/v1/jobs/{}/resume"),
    ("post", "/v1/jobs/{}/run"),
];

/// `/v1/queues/{queue}/tasks/{task_id}` → `/v1/queues/{}/tasks/{}`.
fn shape(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            if seg.starts_with('{') && seg.ends_with('}') {
                "{}"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// (method, shaped path) → operation object.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths object") {
        for method in [
            "get", "put", "post", "delete", "options", "head", "patch", "trace",
        ] {
            if let Some(op) = item.get(method) {
                out.push((method.to_string(), shape(path), op.clone()));
            }
        }
    }
    out
}

async fn openapi_lists_every_v1_route(s: Server) {
    let doc = s
        .anonymous()
        .get("/openapi.json")
        .await
        .ok(200)
        .json
        .clone();
    let ops = operations(&doc);
    let missing: Vec<_> = ROUTES
        .iter()
        .filter(|(m, p)| !ops.iter().any(|(om, op, _)| om == m && op == p))
        .map(|(m, p)| format!("{} {p}", m.to_uppercase()))
        .collect();
    assert!(
        missing.is_empty(),
        "operations missing from /openapi.json: {missing:?}"
    );
}

async fn openapi_marks_exactly_the_idempotent_operations(s: Server) {
    let doc = s
        .anonymous()
        .get("/openapi.json")
        .await
        .ok(200)
        .json
        .clone();
    let ops = operations(&doc);
    let mut wrong = Vec::new();
    for (method, path, op) in &ops {
        let marked = op.get("x-idempotent") == Some(&json!(true));
        let listed = ROUTES.contains(&(method.as_str(), path.as_str()));
        let should = IDEMPOTENT.contains(&(method.as_str(), path.as_str()));
        if (method == "get" || method == "delete") && marked {
            wrong.push(format!(
                "{} {path} is marked x-idempotent",
                method.to_uppercase()
            ));
        } else if listed && marked != should {
            wrong.push(format!(
                "{} {path}: x-idempotent is {marked}, expected {should}",
                method.to_uppercase()
            ));
        }
    }
    for (m, p) in IDEMPOTENT {
        if !ops.iter().any(|(om, op, _)| om == m && op == p) {
            wrong.push(format!("{} {p} is absent", m.to_uppercase()));
        }
    }
    assert!(wrong.is_empty(), "x-idempotent marks are wrong: {wrong:#?}");
}

/// The operation of the document that `method path` reaches.
fn documented<'a>(doc: &'a Value, method: &str, path: &str) -> &'a Value {
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path.split('/').collect();
    for (template, item) in doc["paths"].as_object().expect("paths object") {
        let t: Vec<&str> = template.split('/').collect();
        let fits = t.len() == segments.len()
            && t.iter()
                .zip(&segments)
                .all(|(t, s)| t == s || (t.starts_with('{') && t.ends_with('}')));
        if fits && let Some(op) = item.get(method.to_ascii_lowercase()) {
            return op;
        }
    }
    panic!("{method} {path} is not in the document");
}

/// Every answer below, success or problem, is one the document lists for
/// its operation: the status, the problem's code under it, and the
/// response headers it calls required.
async fn openapi_documents_the_answers_the_server_gives(s: Server) {
    let doc = s
        .anonymous()
        .get("/openapi.json")
        .await
        .ok(200)
        .json
        .clone();
    let later = json!({"task_id": "later", "target": {"url": "http://127.0.0.1:9/hook"},
                       "schedule_time": harness::time_from_now(3600)});
    let mut answers = vec![
        s.post("/v1/queues", json!({"name": "a b"})).await,
        s.post("/v1/queues", json!({"name": "q"})).await,
        s.post("/v1/queues", json!({"name": "q"})).await,
        s.with_key(&fresh_key()).get("/v1/queues").await,
        s.anonymous().get("/v1/queues").await,
        s.get("/v1/queues?limit=0").await,
        s.get("/v1/queues/nope").await,
        s.get("/v1/queues/q/tasks?page_token=a%0Ab").await,
        s.post("/v1/queues/q/tasks?wait_ms=1", later.clone()).await,
        s.post("/v1/queues/q/tasks", later).await,
        s.post("/v1/queues/q/tasks/later/redrive", json!({})).await,
        s.get("/v1/queues/q/tasks/later").await,
        s.get("/v1/queues/q/tasks/later/attempts").await,
        s.post("/v1/organizations", json!({"name": "openapi-org"}))
            .await,
        s.get("/v1/idempotency-keys/none").await,
        s.request(Method::POST, "/v1/queues/q/tasks")
            .raw("text/plain", "hello")
            .send()
            .await,
        s.request(Method::POST, "/v1/queues/q/pause")
            .header("Idempotency-Key", "a,b")
            .send()
            .await,
    ];
    for body in [task("keyed-1"), task("keyed-2")] {
        let resp = s
            .request(Method::POST, "/v1/queues/q/tasks")
            .header("Idempotency-Key", "openapi-key")
            .json(&body)
            .send()
            .await;
        answers.push(resp);
    }
    let statuses: BTreeSet<u16> = answers.iter().map(|r| r.status).collect();
    for expected in [200, 201, 202, 400, 401, 404, 409, 415, 422] {
        assert!(
            statuses.contains(&expected),
            "no {expected} among {statuses:?}"
        );
    }
    for resp in &answers {
        let method = resp.what.split(' ').next().unwrap_or("GET");
        let op = documented(&doc, method, &resp.path);
        let id = &op["operationId"];
        let r = &op["responses"][resp.status.to_string()];
        assert!(
            r.is_object(),
            "{id}: {} is not documented: {}",
            resp.status,
            resp.text
        );
        if resp.status >= 400 {
            let codes =
                &r["content"]["application/problem+json"]["schema"]["properties"]["type"]["enum"];
            let code = &resp.json["type"];
            assert!(
                codes.as_array().is_some_and(|c| c.contains(code)),
                "{id}: {} {code} is not among {codes}",
                resp.status
            );
            assert_eq!(
                resp.header("content-type"),
                Some("application/problem+json")
            );
        }
        for (name, header) in r["headers"].as_object().into_iter().flatten() {
            let name_ref = header["$ref"].as_str().unwrap_or("");
            let def = &doc["components"]["headers"][name_ref.rsplit('/').next().unwrap_or("")];
            if def["required"] == true {
                assert!(
                    resp.header(name).is_some(),
                    "{id} {}: no {name}",
                    resp.status
                );
            }
        }
    }
}
