//! A local HTTP target for the dispatch tests: records every request it
//! receives and answers as its path says, so a test states the target's
//! behaviour in the task's URL.
//!
//! Paths: `/ok`; `/fail/{n}/{status}` (answers `status` to a task's first
//! `n` requests, then 200); `/hold/{ms}` (answers 200 after `ms`);
//! `/hold-then-fail` (500 after 700 ms); `/throttle/{secs}` (429 with
//! `Retry-After: secs` once per task, then 200); `/block-first` (never answers a task's first request, 200 after);
//! `/group/{g}/{ms}` (as `/hold/{ms}`, counting the requests of group `g`
//! in flight: [`Target::max_in_flight_of`]).
//! [`Target::reset_url`] is a separate listener that closes every
//! connection without answering; [`Target::hang_url`] one that never
//! answers and records when the sender closes each connection.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

use super::{Api, install_tls_provider};

/// One request as the target saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub at: Instant,
    pub method: String,
    // Read only through `Debug`, in failure messages.
    #[allow(dead_code)]
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The task ID, or for a job's run (which has none) its run ID.
    pub fn task_id(&self) -> &str {
        self.header("idem-task-id")
            .or_else(|| self.header("idempotency-key"))
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    per_task: Mutex<HashMap<String, u32>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Per group of `/group/{g}/…`: requests in flight now, and most ever.
    group_in_flight: Mutex<HashMap<String, (usize, usize)>>,
}

/// A request the hanging listener holds, and when the sender closed its
/// connection.
#[derive(Debug, Clone)]
pub struct Held {
    pub task_id: String,
    pub closed: Option<Instant>,
}

/// A target server on 127.0.0.1, alive as long as the handle.
pub struct Target {
    pub base: String,
    shared: Arc<Shared>,
    reset_base: String,
    hang_base: String,
    held: Arc<Mutex<Vec<Held>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Target {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Target {
    pub async fn start() -> Target {
        install_tls_provider();
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new()
            .route("/{*path}", any(handle))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        let resetter = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let reset_base = format!("http://{}", resetter.local_addr().unwrap());
        let reset = tokio::spawn(async move {
            while let Ok((mut stream, _)) = resetter.accept().await {
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf).await;
                drop(stream);
            }
        });
        let hanger = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let hang_base = format!("http://{}", hanger.local_addr().unwrap());
        let held = Arc::new(Mutex::new(Vec::new()));
        let hang = tokio::spawn(hang(hanger, held.clone()));
        Target {
            base,
            shared,
            reset_base,
            hang_base,
            held,
            tasks: vec![server, reset, hang],
        }
    }

    /// A URL that reads each request and never answers.
    pub fn hang_url(&self) -> String {
        format!("{}/hang", self.hang_base)
    }

    /// The requests of `task_id` the hanging listener received.
    pub fn held(&self, task_id: &str) -> Vec<Held> {
        self.held
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.task_id == task_id)
            .cloned()
            .collect()
    }

    /// Waits until the hanging listener holds `n` open connections.
    pub async fn wait_open(&self, n: usize, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let open = self
                .held
                .lock()
                .unwrap()
                .iter()
                .filter(|h| h.closed.is_none())
                .count();
            if open >= n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{open} connections held within {within:?}, expected {n}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until the sender closed the connection of `task_id`'s latest
    /// held request; answers when it was closed.
    pub async fn wait_closed(&self, task_id: &str, within: Duration) -> Instant {
        let deadline = Instant::now() + within;
        loop {
            let latest = self.held(task_id).pop();
            if let Some(closed) = latest.as_ref().and_then(|h| h.closed) {
                return closed;
            }
            assert!(
                Instant::now() < deadline,
                "the connection of {task_id} is still open after {within:?}: {latest:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A URL whose connections are closed without an answer.
    pub fn reset_url(&self) -> String {
        format!("{}/reset", self.reset_base)
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    pub fn received_for(&self, task_id: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.task_id() == task_id)
            .collect()
    }

    /// Most requests the target was answering at one time.
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// Most requests of `/group/{group}/…` the target was answering at one
    /// time.
    pub fn max_in_flight_of(&self, group: &str) -> usize {
        let groups = self.shared.group_in_flight.lock().unwrap();
        groups.get(group).map_or(0, |(_, max)| *max)
    }

    /// Waits until `task_id` has reached the target `n` times.
    pub async fn wait_for(&self, task_id: &str, n: usize, within: Duration) -> Vec<Received> {
        let missed = |got| {
            format!("task {task_id} reached the target {got} times within {within:?}, expected {n}")
        };
        wait_for_requests(
            || self.received_for(task_id),
            n,
            within,
            Duration::from_millis(10),
            missed,
        )
        .await
    }

    /// Waits until `n` requests in all have arrived.
    pub async fn wait_total(&self, n: usize, within: Duration) -> Vec<Received> {
        let missed =
            |got| format!("{got} requests reached the target within {within:?}, expected {n}");
        wait_for_requests(
            || self.received(),
            n,
            within,
            Duration::from_millis(10),
            missed,
        )
        .await
    }
}

/// Accepts connections, reads each request's head and never answers; a
/// read that ends (EOF or reset) is the sender closing the connection.
async fn hang(listener: tokio::net::TcpListener, held: Arc<Mutex<Vec<Held>>>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let held = held.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            let index = loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
                if head.windows(4).any(|w| w == b"\r\n\r\n") {
                    let text = String::from_utf8_lossy(&head).to_string();
                    let task_id = text
                        .lines()
                        .find_map(|l| {
                            let (name, value) = l.split_once(':')?;
                            name.eq_ignore_ascii_case("idem-task-id")
                                .then(|| value.trim().to_string())
                        })
                        .unwrap_or_default();
                    let mut held = held.lock().unwrap();
                    held.push(Held {
                        task_id,
                        closed: None,
                    });
                    break held.len() - 1;
                }
            };
            // The body, if any, then nothing until the sender goes.
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            held.lock().unwrap()[index].closed = Some(Instant::now());
        });
    }
}

/// Polls `requests` every `poll` until it returns `n` or more; past
/// `within`, fails with what `missed` says of how many there were.
pub async fn wait_for_requests(
    requests: impl Fn() -> Vec<Received>,
    n: usize,
    within: Duration,
    poll: Duration,
    missed: impl Fn(usize) -> String,
) -> Vec<Received> {
    let deadline = Instant::now() + within;
    loop {
        let got = requests();
        if got.len() >= n {
            return got;
        }
        assert!(Instant::now() < deadline, "{}", missed(got.len()));
        tokio::time::sleep(poll).await;
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    Path(path): Path<String>,
    method: axum::http::Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let received = Received {
        at: Instant::now(),
        method: method.to_string(),
        path: format!("/{path}"),
        headers,
        body,
    };
    let task_id = received.task_id().to_string();
    shared.received.lock().unwrap().push(received);
    let seen = {
        let mut per_task = shared.per_task.lock().unwrap();
        let n = per_task.entry(task_id).or_default();
        *n += 1;
        *n
    };
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let group = path
        .strip_prefix("group/")
        .and_then(|rest| rest.split('/').next())
        .map(str::to_string);
    if let Some(g) = &group {
        let mut groups = shared.group_in_flight.lock().unwrap();
        let (now, max) = groups.entry(g.clone()).or_default();
        *now += 1;
        *max = (*max).max(*now);
    }
    let answer = answer(&path, seen).await;
    if let Some(g) = &group {
        let mut groups = shared.group_in_flight.lock().unwrap();
        if let Some((now, _)) = groups.get_mut(g) {
            *now -= 1;
        }
    }
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    answer
}

async fn answer(path: &str, seen: u32) -> Response {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["ok"] => StatusCode::OK.into_response(),
        // A refusal whose body says why: `size` bytes of text, the first
        // line naming the status.
        ["answer", status, size] => {
            let status = StatusCode::from_u16(status.parse().unwrap()).unwrap();
            let size: usize = size.parse().unwrap();
            let mut body = format!("refused with {}\n", status.as_u16());
            while body.len() < size {
                body.push_str("0123456789abcdef");
            }
            body.truncate(size);
            (
                status,
                [("content-type", "text/plain; charset=utf-8")],
                body,
            )
                .into_response()
        }
        ["declined"] => (
            StatusCode::PAYMENT_REQUIRED,
            [("content-type", "application/json")],
            r#"{"error":"card_declined","decline_code":"insufficient_funds"}"#,
        )
            .into_response(),
        ["fail", n, status] => {
            let n: u32 = n.parse().unwrap();
            if seen <= n {
                StatusCode::from_u16(status.parse().unwrap())
                    .unwrap()
                    .into_response()
            } else {
                StatusCode::OK.into_response()
            }
        }
        ["hold", ms] | ["group", _, ms] => {
            tokio::time::sleep(Duration::from_millis(ms.parse().unwrap())).await;
            StatusCode::OK.into_response()
        }
        ["throttle", secs] if seen == 1 => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", secs.to_string())],
        )
            .into_response(),
        ["throttle", _] => StatusCode::OK.into_response(),
        ["block-first"] if seen == 1 => {
            std::future::pending::<()>().await;
            unreachable!()
        }
        ["block-first"] => StatusCode::OK.into_response(),
        ["hold-then-fail"] => {
            tokio::time::sleep(Duration::from_millis(700)).await;
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The run key docs/API.md defines, computed here independently of Idem's code.
pub fn expected_run_key(org: &str, queue: &str, task_id: &str, created_at: &str) -> String {
    let digest = Sha256::digest(format!("{org}/{queue}/{task_id}/{created_at}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Verifies a `Webhook-Signature` header by the published Standard Webhooks
/// scheme: true when some `v1,` signature in it is the HMAC-SHA256, keyed by
/// the base64 key inside `secret` (`whsec_…`), of `"id.timestamp.body"`.
pub fn signature_verifies(secret: &str, request: &Received) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let id = request.header("webhook-id").unwrap();
    let timestamp = request.header("webhook-timestamp").unwrap();
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(&request.body);
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    request
        .header("webhook-signature")
        .unwrap_or_default()
        .split(' ')
        .any(|s| s == expected)
}

/// Polls the task until its state is `state`.
pub async fn wait_state(
    api: &Api,
    queue: &str,
    task_id: &str,
    state: &str,
    within: Duration,
) -> serde_json::Value {
    let deadline = Instant::now() + within;
    loop {
        let task = api.get_task(queue, task_id).await;
        if task["state"] == state {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task {task_id} is {} after {within:?}, expected {state}: {task}",
            task["state"]
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Milliseconds between consecutive arrivals.
pub fn gaps_ms(received: &[Received]) -> Vec<u128> {
    received
        .windows(2)
        .map(|w| w[1].at.duration_since(w[0].at).as_millis())
        .collect()
}
