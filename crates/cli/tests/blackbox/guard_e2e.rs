//! Exactly-once effects end to end: Idem dispatches through a real
//! `idem proxy` process to an upstream that is slower than the dispatch
//! deadline. Idem's first attempt times out and is retried while the proxy
//! still holds the claim (409), and once the upstream has finished a retry is
//! answered as a duplicate (200) without calling it again. Every combination
//! of Idem store (SQLite, PostgreSQL) and proxy store (memory, SQLite,
//! PostgreSQL, Redis) runs the same scenario.
//!
//! Between Idem and the proxy sits a recording tap, so the test sees what
//! Idem sent on each attempt and what the proxy answered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::harness::target::{expected_run_key, wait_state};
use crate::harness::{PROXY_LISTENING_PREFIX, Process, Server, command, install_tls_provider};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// Tasks per scenario: enough that claims of different runs interleave.
const TASKS: usize = 15;
/// Longer than the 1 s dispatch deadline, with margin on both sides: the
/// first retry (about 1.2 s in) must find the claim still held, and the run
/// must be over well before the retries give up.
const UPSTREAM_TAKES: Duration = Duration::from_millis(2000);
const WITHIN: Duration = Duration::from_secs(25);

/// Where the proxy keeps its claims, and whatever must outlive the proxy.
pub(crate) enum ProxyStore {
    Memory,
    Sqlite(tempfile::TempDir),
    Postgres(idem_testkit::TestDatabase),
    Redis,
}

impl ProxyStore {
    pub(crate) async fn sqlite() -> ProxyStore {
        ProxyStore::Sqlite(tempfile::tempdir().expect("temporary directory"))
    }

    pub(crate) async fn postgres() -> ProxyStore {
        ProxyStore::Postgres(idem_testkit::TestDatabase::create().await)
    }

    pub(crate) fn url(&self) -> String {
        match self {
            ProxyStore::Memory => "memory".into(),
            ProxyStore::Sqlite(dir) => {
                format!("sqlite://{}", dir.path().join("guard.db").display())
            }
            ProxyStore::Postgres(db) => db.url.clone(),
            // The proxy always uses the prefix `idem:guard:`. Runs of
            // different tests cannot collide there: a run key hashes the
            // task's creation instant. Records expire with the short
            // retention the proxy is given.
            ProxyStore::Redis => idem_testkit::redis_url(),
        }
    }
}

/// Starts `idem proxy` in front of `upstream`, keeping its claims in `store`.
async fn start_proxy(upstream: &str, store: &ProxyStore, secret: &str) -> Process {
    let mut cmd = command();
    cmd.args(["proxy", "--listen", "127.0.0.1:0", "--upstream", upstream])
        .args(["--store", &store.url(), "--signing-secret", secret])
        // Far longer than the upstream takes: only the proxy's claim, not
        // an expired lease, may decide what a retry gets.
        .args(["--lease", "60s", "--retention", "10m"]);
    Process::run(cmd, PROXY_LISTENING_PREFIX).await
}

/// One request as the upstream saw it.
#[derive(Clone, Debug)]
struct Call {
    task_id: String,
    idempotency_key: String,
    fence: Option<String>,
}

/// The non-idempotent service behind the proxy: it records every call and
/// answers after [`UPSTREAM_TAKES`].
struct Upstream {
    base: String,
    calls: Arc<Mutex<Vec<Call>>>,
    _server: AbortOnDrop,
}

impl Upstream {
    async fn start() -> Upstream {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .fallback(upstream_handle)
            .with_state(Arc::clone(&calls));
        let (base, server) = serve(app).await;
        Upstream {
            base,
            calls,
            _server: server,
        }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}

async fn upstream_handle(
    State(calls): State<Arc<Mutex<Vec<Call>>>>,
    headers: HeaderMap,
) -> &'static str {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    calls.lock().unwrap().push(Call {
        task_id: header("idem-task-id").unwrap_or_default(),
        idempotency_key: header("idempotency-key").unwrap_or_default(),
        fence: header("idem-fence"),
    });
    tokio::time::sleep(UPSTREAM_TAKES).await;
    "charged"
}

/// One request as it passed from Idem to the proxy.
#[derive(Clone, Debug)]
struct Delivery {
    method: String,
    path: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Delivery {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

/// What the proxy answered to one delivery that Idem waited for.
#[derive(Clone, Debug)]
struct Answer {
    task_id: String,
    retry_count: String,
    status: u16,
    replayed: Option<String>,
    body: String,
}

#[derive(Default)]
struct TapLog {
    deliveries: Vec<Delivery>,
    answers: Vec<Answer>,
}

struct TapState {
    proxy: String,
    client: reqwest::Client,
    log: Mutex<TapLog>,
}

/// A recording pass-through between Idem and the proxy.
struct Tap {
    base: String,
    state: Arc<TapState>,
    _server: AbortOnDrop,
}

impl Tap {
    async fn start(proxy: &str) -> Tap {
        install_tls_provider();
        let state = Arc::new(TapState {
            proxy: proxy.to_string(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("tap client"),
            log: Mutex::default(),
        });
        let app = axum::Router::new()
            .fallback(tap_handle)
            .with_state(Arc::clone(&state));
        let (base, server) = serve(app).await;
        Tap {
            base,
            state,
            _server: server,
        }
    }

    fn deliveries_for(&self, task_id: &str) -> Vec<Delivery> {
        let log = self.state.log.lock().unwrap();
        log.deliveries
            .iter()
            .filter(|d| d.header("idem-task-id") == task_id)
            .cloned()
            .collect()
    }

    fn answers_for(&self, task_id: &str) -> Vec<Answer> {
        let log = self.state.log.lock().unwrap();
        log.answers
            .iter()
            .filter(|a| a.task_id == task_id)
            .cloned()
            .collect()
    }
}

async fn tap_handle(State(tap): State<Arc<TapState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .expect("request body");
    let mut headers = parts.headers.clone();
    for name in ["host", "content-length", "connection", "transfer-encoding"] {
        headers.remove(name);
    }
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let delivery = Delivery {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: headers.clone(),
        body: body.clone(),
    };
    tap.log.lock().unwrap().deliveries.push(delivery.clone());
    // When Idem gives up on an attempt it closes the connection and this
    // future is dropped here, so only answers Idem could see are logged.
    let forwarded = tap
        .client
        .request(parts.method, format!("{}{path}", tap.proxy))
        .headers(headers)
        .body(body)
        .send()
        .await;
    let answer = match forwarded {
        Ok(answer) => answer,
        Err(error) => {
            return (StatusCode::BAD_GATEWAY, format!("tap: {error}")).into_response();
        }
    };
    let status = answer.status();
    let mut headers = answer.headers().clone();
    headers.remove("content-length");
    headers.remove("transfer-encoding");
    let text = answer.text().await.unwrap_or_default();
    tap.log.lock().unwrap().answers.push(Answer {
        task_id: delivery.header("idem-task-id").to_string(),
        retry_count: delivery.header("idem-retry-count").to_string(),
        status: status.as_u16(),
        replayed: headers
            .get("idempotent-replayed")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        body: text.clone(),
    });
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// Aborts a spawned server when the test is done with it.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn serve(app: axum::Router) -> (String, AbortOnDrop) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("local address"));
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    (base, AbortOnDrop(server))
}

/// The organization's current signing secret (newest first).
async fn signing_secret(s: &Server) -> String {
    let listed = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    listed["secrets"][0]["secret"]
        .as_str()
        .unwrap_or_else(|| panic!("no signing secret in {listed}"))
        .to_string()
}

/// The key the proxy derives from Idem's `Idempotency-Key` and forwards
/// upstream, computed by the guard library's public key derivation.
fn guard_key_of(idem_key: &str) -> String {
    let request = axum::http::Request::builder()
        .header("idempotency-key", idem_key)
        .body(())
        .expect("request");
    let (parts, ()) = request.into_parts();
    idem_guard::KeyConfig::new()
        .derive(&parts)
        .expect("run key")
        .as_str()
        .to_string()
}

async fn exactly_once_through_the_proxy(s: Server, store: ProxyStore) {
    let upstream = Upstream::start().await;
    let secret = signing_secret(&s).await;
    let proxy = start_proxy(&upstream.base, &store, &secret).await;
    let tap = Tap::start(&proxy.base).await;
    s.create_queue_with(json!({
        "name": "charges",
        "dispatch_deadline_s": 1,
        "retry_config": {"min_backoff_ms": 200, "max_backoff_ms": 1000,
                         "max_doublings": 2, "max_attempts": 20},
    }))
    .await;

    let mut created = HashMap::new();
    for i in 0..TASKS {
        let id = format!("charge-{i}");
        let task = s
            .create_task(
                "charges",
                json!({"task_id": id, "target": {
                    "url": format!("{}/charge?n={i}", tap.base),
                    "json": {"amount": i}}}),
            )
            .await;
        created.insert(id, task);
    }

    let mut conflicts = 0;
    for (id, task) in &created {
        let done = wait_state(&s, "charges", id, "succeeded", WITHIN).await;
        let context = || format!("task {id}; proxy stderr:\n{}", proxy.stderr());

        // The sender's view: the deadline passed, zero or more conflicts
        // while the claim was held, then success.
        let attempts = s
            .get(&format!("/v1/queues/charges/tasks/{id}/attempts"))
            .await
            .ok(200)
            .json["items"]
            .as_array()
            .expect("attempts")
            .clone();
        assert_eq!(
            done["attempt_count"],
            json!(attempts.len()),
            "{}",
            context()
        );
        assert!(attempts.len() >= 2, "{attempts:?}: {}", context());
        let first = &attempts[0];
        assert!(
            first["status_code"].is_null()
                && first["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("deadline")),
            "first attempt should miss the deadline: {first}; {}",
            context()
        );
        let last = attempts.last().expect("an attempt");
        assert_eq!(last["status_code"], 200, "{last}; {}", context());
        for middle in &attempts[1..attempts.len() - 1] {
            assert_eq!(middle["status_code"], 409, "{attempts:?}; {}", context());
            conflicts += 1;
        }

        // What Idem sent: one delivery per attempt, all with the run key.
        let run_key = expected_run_key(
            "default",
            "charges",
            id,
            task["created_at"].as_str().expect("created_at"),
        );
        let deliveries = tap.deliveries_for(id);
        assert_eq!(deliveries.len(), attempts.len(), "{}", context());
        for (n, d) in deliveries.iter().enumerate() {
            assert_eq!(d.header("idempotency-key"), run_key, "{}", context());
            assert_eq!(d.header("idem-retry-count"), n.to_string());
        }

        // The upstream ran once, under the key the proxy derived from it.
        let calls: Vec<Call> = upstream
            .calls()
            .into_iter()
            .filter(|c| &c.task_id == id)
            .collect();
        assert_eq!(calls.len(), 1, "upstream calls {calls:?}; {}", context());
        assert_eq!(calls[0].idempotency_key, guard_key_of(&run_key));
        assert!(calls[0].fence.is_some(), "no fencing number forwarded");

        // The attempt Idem counted as a success was the proxy's replay.
        let final_answer = tap
            .answers_for(id)
            .into_iter()
            .find(|a| a.retry_count == (attempts.len() - 1).to_string())
            .unwrap_or_else(|| panic!("no answer to the last attempt; {}", context()));
        assert_eq!(final_answer.status, 200);
        assert_eq!(final_answer.replayed.as_deref(), Some("true"));
        let body: Value = serde_json::from_str(&final_answer.body).expect("duplicate body");
        assert_eq!(body["status"], "duplicate");
        assert_eq!(body["run_key"], calls[0].idempotency_key.as_str());
    }
    assert_eq!(upstream.calls().len(), TASKS);
    // The first retry comes about 1.2 s in and the upstream holds the run
    // for 2 s, so conflicts must have happened; without any the test would
    // not have exercised a held claim.
    assert!(conflicts > 0, "no retry found the claim held");
}

async fn exactly_once_with_a_memory_proxy_store(s: Server) {
    exactly_once_through_the_proxy(s, ProxyStore::Memory).await;
}

async fn exactly_once_with_a_sqlite_proxy_store(s: Server) {
    exactly_once_through_the_proxy(s, ProxyStore::sqlite().await).await;
}

async fn exactly_once_with_a_postgres_proxy_store(s: Server) {
    exactly_once_through_the_proxy(s, ProxyStore::postgres().await).await;
}

async fn exactly_once_with_a_redis_proxy_store(s: Server) {
    exactly_once_through_the_proxy(s, ProxyStore::Redis).await;
}

/// Idem's signed deliveries pass; a caller without the secret is refused
/// before anything is claimed or forwarded, whatever else it copies.
async fn unsigned_or_tampered_requests_are_refused(s: Server) {
    let upstream = Upstream::start().await;
    let secret = signing_secret(&s).await;
    let proxy = start_proxy(&upstream.base, &ProxyStore::Memory, &secret).await;
    let tap = Tap::start(&proxy.base).await;
    // The default deadline (600 s) outlasts the upstream: one attempt.
    s.create_queue("signed").await;
    s.create_task(
        "signed",
        json!({"task_id": "t1", "target": {"url": format!("{}/charge", tap.base),
                                          "json": {"amount": 100}}}),
    )
    .await;
    let done = wait_state(&s, "signed", "t1", "succeeded", WITHIN).await;
    assert_eq!(
        done["attempt_count"],
        1,
        "proxy stderr:\n{}",
        proxy.stderr()
    );
    let delivered = tap.deliveries_for("t1").remove(0);
    let answers = tap.answers_for("t1");
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].status, 200);
    assert_eq!(answers[0].body, "charged");

    let http = reqwest::Client::new();
    let send = |headers: HeaderMap, body: Bytes| {
        http.request(
            delivered.method.parse().expect("method"),
            format!("{}{}", proxy.base, delivered.path),
        )
        .headers(headers)
        .body(body)
        .send()
    };

    let mut missing = delivered.headers.clone();
    missing.remove("webhook-signature");
    let mut foreign = delivered.headers.clone();
    foreign.insert(
        "webhook-signature",
        // A well-formed signature under some other key.
        "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
            .parse()
            .unwrap(),
    );
    let tampered_body = Bytes::from_static(br#"{"amount":1000000}"#);
    for (what, headers, body) in [
        ("missing signature", missing, delivered.body.clone()),
        ("foreign signature", foreign, delivered.body.clone()),
        ("tampered body", delivered.headers.clone(), tampered_body),
    ] {
        let answer = send(headers, body).await.expect("send to the proxy");
        assert_eq!(answer.status(), 401, "{what}");
    }

    // Idem's own delivery, sent again within the signature's tolerance, is
    // authentic and is answered as a duplicate.
    let replay = send(delivered.headers.clone(), delivered.body.clone())
        .await
        .expect("send to the proxy");
    assert_eq!(replay.status(), 200);
    assert_eq!(
        replay
            .headers()
            .get("idempotent-replayed")
            .and_then(|v| v.to_str().ok()),
        Some("true")
    );
    assert_eq!(upstream.calls().len(), 1, "only Idem's delivery ran");
}

idem_testkit::store_tests!(
    Server::start;
    exactly_once_with_a_memory_proxy_store,
    exactly_once_with_a_sqlite_proxy_store,
    exactly_once_with_a_postgres_proxy_store,
    exactly_once_with_a_redis_proxy_store,
    unsigned_or_tampered_requests_are_refused,
);

/// A delivery captured on its way and re-sent to another route of the same
/// receiver (`/admin/refund-everything?all=1`) is refused by the proxy
/// (its `Idem-Target-Signature` names the path and query Idem sent to), and
/// does not use up the run: the genuine delivery still runs once. With
/// `--require-target-signature`, a delivery stripped of the header is
/// refused too.
#[tokio::test]
async fn a_captured_delivery_cannot_be_re_sent_to_another_route() {
    let s = Server::start(crate::harness::Backend::Sqlite).await;
    let secret = signing_secret(&s).await;
    let capture = crate::harness::target::Target::start().await;
    s.create_queue("captured").await;
    s.create_task(
        "captured",
        json!({"task_id": "refund-1", "target": {
            "url": capture.url("/ok?order=42"), "json": {"amount": 100}}}),
    )
    .await;
    wait_state(&s, "captured", "refund-1", "succeeded", WITHIN).await;
    let delivery = capture.received_for("refund-1").remove(0);
    assert!(delivery.header("idem-target-signature").is_some());

    let upstream = crate::harness::target::Target::start().await;
    let store = ProxyStore::Memory;
    let proxy = start_proxy(&upstream.base, &store, &secret).await;
    let http = reqwest::Client::new();
    let resend = |path: &str, strip_target_signature: bool| {
        let mut headers = delivery.headers.clone();
        headers.remove("host");
        headers.remove("content-length");
        if strip_target_signature {
            headers.remove("idem-target-signature");
        }
        http.post(format!("{}{path}", proxy.base))
            .headers(headers)
            .body(delivery.body.clone())
            .send()
    };
    for elsewhere in ["/admin/refund-everything?all=1", "/ok?order=43", "/ok"] {
        let moved = resend(elsewhere, false).await.unwrap();
        assert_eq!(moved.status(), 401, "{elsewhere}");
        let problem: Value = moved.json().await.unwrap();
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("Idem-Target-Signature"),
            "{problem}"
        );
    }
    assert!(
        upstream.received().is_empty(),
        "nothing reached the upstream"
    );
    let genuine = resend("/ok?order=42", false).await.unwrap();
    assert_eq!(genuine.status(), 200, "{}", proxy.stderr());
    assert!(genuine.headers().get("idempotent-replayed").is_none());
    assert_eq!(upstream.received().len(), 1);

    let strict = {
        let mut cmd = command();
        cmd.args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream.base,
        ])
        .args(["--store", "memory", "--signing-secret", &secret])
        .arg("--require-target-signature");
        Process::run(cmd, PROXY_LISTENING_PREFIX).await
    };
    let stripped = http
        .post(format!("{}/ok?order=42", strict.base))
        .headers({
            let mut headers = delivery.headers.clone();
            headers.remove("host");
            headers.remove("content-length");
            headers.remove("idem-target-signature");
            headers
        })
        .body(delivery.body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(stripped.status(), 401);
    assert_eq!(upstream.received().len(), 1);
    // Without the flag a delivery that lacks the header (an older sender)
    // is still taken on its body signature.
    let lenient = resend("/ok?order=42", true).await.unwrap();
    assert_eq!(lenient.status(), 200);
}
