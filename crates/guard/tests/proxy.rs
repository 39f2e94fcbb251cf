//! Black-box tests of the proxy: a real proxy on 127.0.0.1:0 in front of a
//! real upstream that counts its calls.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use common::Harness;
use http::{HeaderMap, Method, StatusCode};
use idem_guard::{GuardStore, ProxyConfig, SigningSecret};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    uri: String,
    headers: HeaderMap,
    body: Bytes,
}

#[derive(Default)]
struct UpstreamState {
    calls: AtomicUsize,
    finished: AtomicUsize,
    seen: Mutex<Vec<Seen>>,
}

/// An upstream that answers `?status=N` (default 200) after `?sleep_ms=N`.
struct Upstream {
    url: String,
    state: Arc<UpstreamState>,
}

impl Upstream {
    async fn start() -> Self {
        async fn handler(State(state): State<Arc<UpstreamState>>, request: Request) -> Response {
            let n = state.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            state.seen.lock().unwrap().push(Seen {
                method: parts.method.clone(),
                uri: parts.uri.to_string(),
                headers: parts.headers.clone(),
                body: body.clone(),
            });
            let query = parts.uri.query().unwrap_or("");
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
            let status = param("status").unwrap_or(200) as u16;
            state.finished.fetch_add(1, Ordering::SeqCst);
            Response::builder()
                .status(status)
                .header("x-upstream", format!("call-{n}"))
                .body(Body::from(format!("upstream call {n}: {}", body.len())))
                .unwrap()
        }
        let state = Arc::new(UpstreamState::default());
        let app = Router::new()
            .fallback(handler)
            .with_state(Arc::clone(&state));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { url, state }
    }

    fn calls(&self) -> usize {
        self.state.calls.load(Ordering::SeqCst)
    }

    fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    async fn wait_for_calls(&self, n: usize) {
        for _ in 0..200 {
            if self.calls() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("upstream was called {} times, expected {n}", self.calls());
    }
}

struct Proxy {
    url: String,
    addr: std::net::SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), idem_guard::ProxyError>>,
}

impl Proxy {
    async fn start(
        store: Arc<dyn GuardStore>,
        upstream: &str,
        configure: impl FnOnce(&mut ProxyConfig),
    ) -> Self {
        install_tls_provider();
        let mut config = ProxyConfig::new(upstream.parse().unwrap(), store);
        // These tests are about claims; the ones about authentication set
        // secrets, which make this flag moot.
        config.insecure_no_auth = true;
        configure(&mut config);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(idem_guard::serve(config, listener, async move {
            let _ = rx.await;
        }));
        Self {
            url: format!("http://{addr}"),
            addr,
            shutdown: Some(tx),
            task,
        }
    }

    async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("proxy stops")
            .expect("proxy task")
            .expect("proxy result");
    }
}

/// In a workspace build reqwest carries rustls without a default crypto
/// provider (the server picks ring); any client needs one installed.
fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn client() -> reqwest::Client {
    install_tls_provider();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", common::random_hex())
}

async fn post_with_key(proxy: &Proxy, path: &str, key: &str) -> reqwest::Response {
    client()
        .post(format!("{}{path}", proxy.url))
        .header("Idempotency-Key", key)
        .body("payload")
        .send()
        .await
        .unwrap()
}

async fn assert_duplicate(response: reqwest::Response) -> String {
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response
            .headers()
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true")
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "duplicate");
    let key = body["run_key"].as_str().unwrap().to_owned();
    assert_eq!(key.len(), 64);
    key
}

/// Sends a raw HTTP/1.1 request, so header names keep the letter case given.
async fn raw(addr: std::net::SocketAddr, head: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /raw HTTP/1.1\r\nHost: proxy\r\n{head}Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status line");
    (status, answer)
}

mod scenarios {
    use super::*;

    pub async fn completed_run_is_replayed_without_calling_upstream(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |_| {}).await;
        let key = unique("replay");

        let first = post_with_key(&proxy, "/jobs/run", &key).await;
        assert_eq!(first.status(), StatusCode::OK);
        assert!(first.headers().get("idempotent-replayed").is_none());
        assert_eq!(first.text().await.unwrap(), "upstream call 1: 7");

        let run_key = assert_duplicate(post_with_key(&proxy, "/jobs/run", &key).await).await;
        assert_duplicate(post_with_key(&proxy, "/jobs/run", &key).await).await;
        assert_eq!(upstream.calls(), 1);
        let seen = upstream.seen();
        assert_eq!(
            seen[0]
                .headers
                .get("idempotency-key")
                .unwrap()
                .to_str()
                .unwrap(),
            run_key,
            "the upstream receives the run key"
        );
        proxy.stop().await;
    }

    pub async fn run_in_flight_answers_409(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |_| {}).await;
        let key = unique("inflight");

        let first = tokio::spawn({
            let url = format!("{}/slow?sleep_ms=800", proxy.url);
            let key = key.clone();
            async move {
                client()
                    .post(url)
                    .header("Idempotency-Key", key)
                    .send()
                    .await
                    .unwrap()
            }
        });
        upstream.wait_for_calls(1).await;
        let second = post_with_key(&proxy, "/slow?sleep_ms=800", &key).await;
        assert_eq!(second.status(), StatusCode::CONFLICT);
        let problem: Value = second.json().await.unwrap();
        assert_eq!(problem["type"], "IDEMPOTENCY_KEY_IN_PROGRESS");

        assert_eq!(first.await.unwrap().status(), StatusCode::OK);
        assert_duplicate(post_with_key(&proxy, "/slow", &key).await).await;
        assert_eq!(upstream.calls(), 1);
        proxy.stop().await;
    }

    /// The proxy renews the claim while the upstream works, so a delivery
    /// repeated after the lease would have run out still finds the run in
    /// flight, and the upstream runs once.
    pub async fn an_upstream_slower_than_the_lease_runs_once(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |c| {
            c.lease = Duration::from_millis(300);
        })
        .await;
        let key = unique("slow-upstream");

        let first = tokio::spawn({
            let url = format!("{}/slow?sleep_ms=1200", proxy.url);
            let key = key.clone();
            async move {
                client()
                    .post(url)
                    .header("Idempotency-Key", key)
                    .send()
                    .await
                    .unwrap()
            }
        });
        upstream.wait_for_calls(1).await;
        // Twice the lease in: without renewals this would take the run over.
        tokio::time::sleep(Duration::from_millis(600)).await;
        let second = post_with_key(&proxy, "/slow", &key).await;
        assert_eq!(second.status(), StatusCode::CONFLICT);
        let problem: Value = second.json().await.unwrap();
        assert_eq!(problem["type"], "IDEMPOTENCY_KEY_IN_PROGRESS");

        assert_eq!(first.await.unwrap().status(), StatusCode::OK);
        assert_duplicate(post_with_key(&proxy, "/slow", &key).await).await;
        assert_eq!(upstream.calls(), 1);
        proxy.stop().await;
    }

    /// The upstream's time is bounded by its own timeout, not the lease;
    /// past it the answer is 504 and a retry may run at once.
    pub async fn an_upstream_past_its_timeout_gets_504_and_releases_the_run(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |c| {
            c.lease = Duration::from_secs(60);
            c.upstream_timeout = Duration::from_millis(300);
        })
        .await;
        let key = unique("upstream-timeout");

        let timed_out = post_with_key(&proxy, "/slow?sleep_ms=1000", &key).await;
        assert_eq!(timed_out.status(), StatusCode::GATEWAY_TIMEOUT);
        let problem: Value = timed_out.json().await.unwrap();
        assert_eq!(problem["type"], "UPSTREAM_UNAVAILABLE");

        // Released: no minute-long lease to wait out.
        let retried = post_with_key(&proxy, "/quick", &key).await;
        assert_eq!(retried.status(), StatusCode::OK);
        assert_duplicate(post_with_key(&proxy, "/quick", &key).await).await;
        assert_eq!(upstream.calls(), 2);
        proxy.stop().await;
    }

    pub async fn upstream_failure_releases_the_run(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |_| {}).await;
        let key = unique("failure");

        let failed = post_with_key(&proxy, "/work?status=500", &key).await;
        assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(failed.text().await.unwrap(), "upstream call 1: 7");

        // The retry runs at once: no lease to wait out.
        let retried = post_with_key(&proxy, "/work", &key).await;
        assert_eq!(retried.status(), StatusCode::OK);
        assert_eq!(retried.text().await.unwrap(), "upstream call 2: 7");
        assert_duplicate(post_with_key(&proxy, "/work", &key).await).await;
        assert_eq!(upstream.calls(), 2);
        proxy.stop().await;
    }

    pub async fn unreachable_upstream_releases_the_run(h: Harness) {
        let store = Arc::clone(&h.store);
        // A port that was just free: nothing listens there.
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let dead = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let proxy = Proxy::start(store, &dead, |_| {}).await;
        let key = unique("unreachable");
        for _ in 0..2 {
            let answer = post_with_key(&proxy, "/x", &key).await;
            assert_eq!(answer.status(), StatusCode::BAD_GATEWAY);
        }
        proxy.stop().await;
    }

    pub async fn cloud_headers_match_in_any_letter_case(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |_| {}).await;
        let job = unique("nightly");

        let mixed = format!(
            "X-CloudScheduler-JobName: {job}\r\nX-CloudScheduler-ScheduleTime: 2026-10-16T12:00:00Z\r\n"
        );
        let lower = format!(
            "x-cloudscheduler-jobname: {job}\r\nx-cloudscheduler-scheduletime: 2026-10-16T12:00:00Z\r\n"
        );
        let upper = format!(
            "X-CLOUDSCHEDULER-JOBNAME: {job}\r\nX-CLOUDSCHEDULER-SCHEDULETIME: 2026-10-16T12:00:00Z\r\n"
        );
        let (status, _) = raw(proxy.addr, &mixed).await;
        assert_eq!(status, 200);
        for head in [&lower, &upper] {
            let (status, answer) = raw(proxy.addr, head).await;
            assert_eq!(status, 200);
            assert!(answer.contains("\"duplicate\""), "{answer}");
            assert!(
                answer
                    .to_ascii_lowercase()
                    .contains("idempotent-replayed: true")
            );
        }
        // The next scheduled instant is a new run.
        let next = format!(
            "x-CloudScheduler-JobName: {job}\r\nX-CloudScheduler-scheduletime: 2026-10-16T12:05:00Z\r\n"
        );
        assert_eq!(raw(proxy.addr, &next).await.0, 200);
        assert_eq!(upstream.calls(), 2);

        let task = unique("task");
        let tasks = format!("X-CloudTasks-QueueName: q\r\nX-CloudTasks-TaskName: {task}\r\n");
        let tasks_lower = format!("x-cloudtasks-queuename: q\r\nx-cloudtasks-taskname: {task}\r\n");
        assert_eq!(raw(proxy.addr, &tasks).await.0, 200);
        let (status, answer) = raw(proxy.addr, &tasks_lower).await;
        assert_eq!(status, 200);
        assert!(answer.contains("\"duplicate\""), "{answer}");
        assert_eq!(upstream.calls(), 3);
        proxy.stop().await;
    }

    pub async fn missing_identity_answers_400(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |_| {}).await;
        let bare = client()
            .post(format!("{}/x", proxy.url))
            .send()
            .await
            .unwrap();
        assert_eq!(bare.status(), StatusCode::BAD_REQUEST);
        let request_id = bare
            .headers()
            .get("idem-request-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let problem: Value = bare.json().await.unwrap();
        assert_eq!(problem["type"], "INVALID_ARGUMENT");
        // As the API's problems: the request's ID, as in the header and
        // the log, and its path.
        assert_eq!(problem["instance"], "/x");
        assert!(request_id.is_some());
        assert_eq!(problem["request_id"].as_str(), request_id.as_deref());
        let half = client()
            .post(format!("{}/x", proxy.url))
            .header("X-CloudScheduler-JobName", "only-the-name")
            .send()
            .await
            .unwrap();
        assert_eq!(half.status(), StatusCode::BAD_REQUEST);
        assert_eq!(upstream.calls(), 0);
        proxy.stop().await;
    }

    pub async fn signatures_are_mandatory_when_secrets_are_set(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let old = SigningSecret::parse("whsec_b2xkLXNpZ25pbmcta2V5").unwrap();
        let new = SigningSecret::parse("whsec_bmV3LXNpZ25pbmcta2V5LTEyMw==").unwrap();
        let stranger = SigningSecret::from_key(b"not-configured".to_vec());
        let proxy = Proxy::start(store, &upstream.url, |config| {
            config.signing_secrets = vec![old.clone(), new.clone()];
        })
        .await;
        let key = unique("signed");
        let body = "{\"amount\": 100}";
        let now = jiff::Timestamp::now().as_second();
        let send = |secret: Option<&SigningSecret>, ts: i64, sent_body: &'static str| {
            let mut request = client()
                .post(format!("{}/pay", proxy.url))
                .header("Idempotency-Key", &key)
                .body(sent_body);
            if let Some(secret) = secret {
                request = request
                    .header("Webhook-Id", &key)
                    .header("Webhook-Timestamp", ts.to_string())
                    .header("Webhook-Signature", secret.sign(&key, ts, body.as_bytes()));
            }
            request.send()
        };
        let body: &'static str = body;

        let unsigned = send(None, now, body).await.unwrap();
        assert_eq!(unsigned.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            unsigned.json::<Value>().await.unwrap()["type"],
            "UNAUTHENTICATED"
        );
        assert_eq!(
            send(Some(&stranger), now, body).await.unwrap().status(),
            401
        );
        assert_eq!(
            send(Some(&new), now - 400, body).await.unwrap().status(),
            401
        );
        assert_eq!(
            send(Some(&new), now + 400, body).await.unwrap().status(),
            401
        );
        assert_eq!(
            send(Some(&new), now, "{\"amount\": 999}")
                .await
                .unwrap()
                .status(),
            401
        );
        // Even a request without identity is refused for its signature first.
        let anonymous = client()
            .post(format!("{}/pay", proxy.url))
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(upstream.calls(), 0, "nothing unsigned reaches the upstream");

        // Both secrets are valid during a rotation.
        assert_eq!(
            send(Some(&new), now - 250, body).await.unwrap().status(),
            200
        );
        assert_duplicate(send(Some(&old), now, body).await.unwrap()).await;
        assert_eq!(upstream.calls(), 1);
        assert_eq!(upstream.seen()[0].body, body.as_bytes());

        // A captured delivery resent under another key is not a new run.
        let replayed_under_new_key = client()
            .post(format!("{}/pay", proxy.url))
            .header("Idempotency-Key", unique("forged"))
            .header("Webhook-Id", &key)
            .header("Webhook-Timestamp", now.to_string())
            .header("Webhook-Signature", new.sign(&key, now, body.as_bytes()))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(replayed_under_new_key.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(upstream.calls(), 1);
        proxy.stop().await;
    }

    pub async fn abandoned_delivery_still_finishes(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |_| {}).await;
        let key = unique("abandoned");
        {
            let mut stream = TcpStream::connect(proxy.addr).await.unwrap();
            let request = format!(
                "POST /slow?sleep_ms=700 HTTP/1.1\r\nHost: proxy\r\nIdempotency-Key: {key}\r\nContent-Length: 0\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).await.unwrap();
            upstream.wait_for_calls(1).await;
            // The sender gives up mid-flight and closes its connection.
        }
        for _ in 0..300 {
            if upstream.state.finished.load(Ordering::SeqCst) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(upstream.state.finished.load(Ordering::SeqCst), 1);
        // Finishing the claim follows the upstream's answer closely; a
        // retry that still lands in between sees 409 and retries again.
        let mut answer = post_with_key(&proxy, "/slow?sleep_ms=700", &key).await;
        for _ in 0..50 {
            if answer.status() != StatusCode::CONFLICT {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            answer = post_with_key(&proxy, "/slow?sleep_ms=700", &key).await;
        }
        assert_duplicate(answer).await;
        assert_eq!(upstream.calls(), 1);
        proxy.stop().await;
    }

    pub async fn request_and_answer_are_forwarded_whole(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &format!("{}/base/", upstream.url), |_| {}).await;
        let key = unique("fidelity");
        let answer = client()
            .put(format!("{}/a/b?x=1&y=two&status=201", proxy.url))
            .header("Idempotency-Key", &key)
            .header("X-Custom", "kept")
            .header("Content-Type", "application/octet-stream")
            .body(vec![0u8, 1, 2, 255])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::CREATED);
        assert_eq!(answer.headers()["x-upstream"], "call-1");
        assert_eq!(answer.text().await.unwrap(), "upstream call 1: 4");

        let seen = upstream.seen();
        let seen = &seen[0];
        assert_eq!(seen.method, Method::PUT);
        assert_eq!(seen.uri, "/base/a/b?x=1&y=two&status=201");
        assert_eq!(seen.headers["x-custom"], "kept");
        assert_eq!(seen.headers["content-type"], "application/octet-stream");
        assert_eq!(seen.body.as_ref(), &[0u8, 1, 2, 255]);
        let run_key = seen.headers["idempotency-key"].to_str().unwrap().to_owned();
        assert_ne!(run_key, key, "the upstream gets the hashed run key");
        assert!(
            seen.headers["idem-fence"]
                .to_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                > 0
        );

        let duplicate = client()
            .put(format!("{}/a/b?x=1&y=two&status=201", proxy.url))
            .header("Idempotency-Key", &key)
            .send()
            .await
            .unwrap();
        assert_eq!(assert_duplicate(duplicate).await, run_key);
        assert_eq!(upstream.calls(), 1);
        proxy.stop().await;
    }

    pub async fn scope_headers_separate_runs(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |config| {
            config.scopes = vec![idem_guard::Scope::Header(http::HeaderName::from_static(
                "x-project",
            ))];
        })
        .await;
        let job = unique("report");
        let send = |project: Option<&'static str>| {
            let mut request = client()
                .post(format!("{}/run", proxy.url))
                .header("X-CloudScheduler-JobName", &job)
                .header("X-CloudScheduler-ScheduleTime", "2026-10-16T12:00:00Z");
            if let Some(project) = project {
                request = request.header("X-Project", project);
            }
            request.send()
        };
        assert_eq!(send(Some("acme")).await.unwrap().status(), 200);
        assert_eq!(send(Some("globex")).await.unwrap().status(), 200);
        assert_duplicate(send(Some("acme")).await.unwrap()).await;
        assert_eq!(send(None).await.unwrap().status(), 400);
        assert_eq!(upstream.calls(), 2);
        proxy.stop().await;
    }

    /// A captured signed delivery, resent with other unsigned identity
    /// headers, another path or query, reaches the upstream once: the key
    /// of a signed message is its signed webhook-id alone.
    pub async fn a_signed_message_runs_once_whatever_travels_unsigned(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let secret = SigningSecret::parse("whsec_c2lnbmVkLW1lc3NhZ2Uta2V5").unwrap();
        let proxy = Proxy::start(store, &upstream.url, |config| {
            config.signing_secrets = vec![secret.clone()];
        })
        .await;
        let id = unique("msg");
        let body = "{\"amount\": 100}";
        let now = jiff::Timestamp::now().as_second();
        let signature = secret.sign(&id, now, body.as_bytes());
        let signed = |path: &str| {
            client()
                .post(format!("{}{path}", proxy.url))
                .header("Webhook-Id", &id)
                .header("Webhook-Timestamp", now.to_string())
                .header("Webhook-Signature", &signature)
                .body(body)
        };
        let first = signed("/pay")
            .header("Idempotency-Key", &id)
            .send()
            .await
            .unwrap();
        assert_eq!(first.status(), 200);
        for evil in ["evil-1", "evil-2"] {
            let resent = signed("/pay")
                .header("X-CloudTasks-QueueName", "payments")
                .header("X-CloudTasks-TaskName", evil)
                .send()
                .await
                .unwrap();
            assert_duplicate(resent).await;
        }
        let elsewhere = signed("/other/path?tenant=x")
            .header("X-CloudScheduler-JobName", "job")
            .header("X-CloudScheduler-ScheduleTime", "2026-10-16T12:00:00Z")
            .send()
            .await
            .unwrap();
        assert_duplicate(elsewhere).await;
        assert_eq!(upstream.calls(), 1, "one signed message, one run");

        // A message with only the Standard Webhooks headers, as the official
        // libraries send it, is keyed by its webhook-id.
        let other = unique("msg");
        let signature = secret.sign(&other, now, body.as_bytes());
        let standard = || {
            client()
                .post(format!("{}/pay", proxy.url))
                .header("Webhook-Id", &other)
                .header("Webhook-Timestamp", now.to_string())
                .header("Webhook-Signature", &signature)
                .body(body)
                .send()
        };
        assert_eq!(standard().await.unwrap().status(), 200);
        let run_key = assert_duplicate(standard().await.unwrap()).await;
        assert_eq!(upstream.calls(), 2);
        assert_eq!(
            upstream.seen()[1].headers["idempotency-key"]
                .to_str()
                .unwrap(),
            run_key
        );
        proxy.stop().await;
    }

    pub async fn identity_header_and_url_scopes_make_the_key(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |config| {
            config.identity_headers = vec![http::HeaderName::from_static("x-idempotency-key")];
            config.scopes = vec![
                idem_guard::Scope::PathSegment(1),
                idem_guard::Scope::QueryParam("region".into()),
            ];
        })
        .await;
        let key = unique("delivery");
        let send = |path: &str| {
            client()
                .post(format!("{}{path}", proxy.url))
                .header("X-Idempotency-Key", &key)
                .send()
        };
        assert_eq!(
            send("/projects/acme/run?region=eu").await.unwrap().status(),
            200
        );
        assert_eq!(
            send("/projects/globex/run?region=eu")
                .await
                .unwrap()
                .status(),
            200
        );
        assert_eq!(
            send("/projects/acme/run?region=us").await.unwrap().status(),
            200
        );
        assert_duplicate(send("/projects/acme/run?region=eu&x=1").await.unwrap()).await;
        assert_eq!(upstream.calls(), 3, "path and query scopes separate runs");
        assert_eq!(
            send("/projects/acme/run").await.unwrap().status(),
            400,
            "a configured scope is required"
        );
        assert_eq!(upstream.calls(), 3);
        proxy.stop().await;
    }

    pub async fn run_key_is_injected_into_json_bodies(h: Harness) {
        let store = Arc::clone(&h.store);
        let upstream = Upstream::start().await;
        let proxy = Proxy::start(store, &upstream.url, |config| {
            config.run_key_json_field = Some("run_key".into());
        })
        .await;
        let key = unique("inject");
        let send = |body: &'static str| {
            client()
                .post(format!("{}/charge", proxy.url))
                .header("Idempotency-Key", &key)
                .header("Content-Type", "application/json")
                .body(body)
                .send()
        };
        let refused = send("[1, 2]").await.unwrap();
        assert_eq!(refused.status(), 400);
        assert_eq!(
            upstream.calls(),
            0,
            "a body that cannot carry the key is not forwarded"
        );

        assert_eq!(send(r#"{"amount": 100}"#).await.unwrap().status(), 200);
        let seen = upstream.seen();
        let forwarded: Value = serde_json::from_slice(&seen[0].body).unwrap();
        let run_key = seen[0].headers["idempotency-key"].to_str().unwrap();
        assert_eq!(
            forwarded,
            serde_json::json!({"amount": 100, "run_key": run_key})
        );
        assert_eq!(
            assert_duplicate(send(r#"{"amount": 100}"#).await.unwrap()).await,
            run_key
        );
        assert_eq!(upstream.calls(), 1);
        proxy.stop().await;
    }
}

/// Without a signing secret the proxy does not start, unless told to accept
/// anyone: an unauthenticated proxy lets whoever reaches it pick new keys.
#[tokio::test]
async fn proxy_refuses_to_serve_without_authentication() {
    let store: Arc<dyn GuardStore> = Arc::new(idem_guard::MemoryStore::new());
    let mut config = ProxyConfig::new("http://127.0.0.1:9".parse().unwrap(), store);
    assert!(config.check_authentication().is_err());
    // An OIDC issuer authenticates senders as a signing secret does, once
    // it says whose tokens it takes: every subject only when asked to.
    let issuer = idem_guard::OidcVerifier::new("https://issuer.example", vec!["aud".into()]);
    config.oidc = Some(issuer.clone());
    assert!(matches!(
        config.check_authentication(),
        Err(idem_guard::ProxyError::OidcAnySubject)
    ));
    config.oidc_any_subject = true;
    assert!(config.check_authentication().is_ok());
    config.oidc_any_subject = false;
    config.oidc = Some(issuer.with_subjects(vec!["org/acme".into()]));
    assert!(config.check_authentication().is_ok());
    config.oidc = None;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = idem_guard::serve(config, listener, async {}).await;
    assert!(
        matches!(served, Err(idem_guard::ProxyError::NoAuthentication)),
        "{served:?}"
    );
}

/// A signature list made to cost work is refused before the body is read
/// or any HMAC computed, and a valid delivery right after is unaffected.
#[tokio::test]
async fn a_hostile_signature_list_is_refused_quickly() {
    let upstream = Upstream::start().await;
    let secret = SigningSecret::parse("whsec_c2lnbmVkLW1lc3NhZ2Uta2V5").unwrap();
    let store: Arc<dyn GuardStore> = Arc::new(idem_guard::MemoryStore::new());
    let proxy = Proxy::start(store, &upstream.url, |config| {
        config.signing_secrets = vec![secret.clone()];
    })
    .await;
    let now = jiff::Timestamp::now().as_second();
    let body = vec![b'x'; 1 << 20];
    let junk = secret.sign("m", now, b"other");
    for count in [100_000, 1_000, 33] {
        let list = vec![junk.as_str(); count].join(" ");
        let started = std::time::Instant::now();
        let refused = client()
            .post(format!("{}/pay", proxy.url))
            .header("Webhook-Id", "m")
            .header("Webhook-Timestamp", now.to_string())
            .header("Webhook-Signature", list)
            .body(body.clone())
            .send()
            .await;
        // hyper itself refuses a header past its buffer (431), or the
        // connection; the proxy refuses any longer list than it reads.
        if let Ok(refused) = refused {
            assert!(
                [401, 431].contains(&refused.status().as_u16()),
                "{count} candidates: {}",
                refused.status()
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{count} candidates took {:?}",
            started.elapsed()
        );
    }
    let valid = secret.sign("m", now, b"{}");
    let accepted = client()
        .post(format!("{}/pay", proxy.url))
        .header("Webhook-Id", "m")
        .header("Webhook-Timestamp", now.to_string())
        .header("Webhook-Signature", format!("{junk} {valid}"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 200);
    assert_eq!(upstream.calls(), 1);
    proxy.stop().await;
}

/// Scopes and identity headers are unsigned; with signatures required they
/// could only give one signed message several keys, so the proxy refuses
/// the combination instead of ignoring part of its configuration.
#[tokio::test]
async fn proxy_refuses_unsigned_key_parts_beside_signatures() {
    for configure in [
        (|c: &mut ProxyConfig| c.scopes = vec![idem_guard::Scope::PathSegment(0)])
            as fn(&mut ProxyConfig),
        |c| c.identity_headers = vec![http::HeaderName::from_static("x-idempotency-key")],
    ] {
        let store: Arc<dyn GuardStore> = Arc::new(idem_guard::MemoryStore::new());
        let mut config = ProxyConfig::new("http://127.0.0.1:9".parse().unwrap(), store);
        config.signing_secrets = vec![SigningSecret::from_key(b"k".to_vec())];
        configure(&mut config);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let served = idem_guard::serve(config, listener, async {}).await;
        assert!(
            matches!(served, Err(idem_guard::ProxyError::UnsignedKeyParts)),
            "{served:?}"
        );
    }
}

// The generated tests call each scenario as `super::<name>`.
use scenarios::*;

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    memory: Harness::memory_on_system_clock().await,
    sqlite: Harness::sqlite_on_system_clock().await,
    postgres: Harness::postgres_by_url().await,
    redis: Harness::redis().await;
    completed_run_is_replayed_without_calling_upstream,
    run_in_flight_answers_409,
    an_upstream_slower_than_the_lease_runs_once,
    an_upstream_past_its_timeout_gets_504_and_releases_the_run,
    upstream_failure_releases_the_run,
    unreachable_upstream_releases_the_run,
    cloud_headers_match_in_any_letter_case,
    missing_identity_answers_400,
    signatures_are_mandatory_when_secrets_are_set,
    abandoned_delivery_still_finishes,
    request_and_answer_are_forwarded_whole,
    scope_headers_separate_runs,
    a_signed_message_runs_once_whatever_travels_unsigned,
    identity_header_and_url_scopes_make_the_key,
    run_key_is_injected_into_json_bodies,
}
