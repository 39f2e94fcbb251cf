//! What the benchmark examples share: arguments, the local target, a
//! release `idem serve` on a scratch store, and the raw-client baseline.

#![allow(dead_code)]

pub mod pg_cost;

use axum::http::HeaderMap;
use axum::routing::any;
use serde_json::json;
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Notify;

// The bench's own side (targets, workers, clients) allocates as the `idem`
// binary does, so that glibc's allocator is not what a figure measures.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The API key the benchmarked server is bootstrapped with.
pub const KEY: &str = "idem_bench_key_0123456789abcdefghijklmnop";

/// Positional argument `n`, or `default`.
pub fn arg(n: usize, default: &str) -> String {
    std::env::args()
        .nth(n)
        .unwrap_or_else(|| default.to_string())
}

/// Serves `router` on a free local port; returns its base URL.
pub async fn serve_target(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}

/// A running `idem serve` (`IDEM_BIN`) on a fresh store; killed on drop,
/// its scratch store with it.
pub struct Node {
    pub base: String,
    args: Vec<String>,
    child: tokio::process::Child,
    _dir: tempfile::TempDir,
    _db: Option<idem_testkit::TestDatabase>,
}

impl Node {
    /// Starts on `store` (`sqlite` or `postgres`), with `KEY` as its admin
    /// key; returns once it listens.
    pub async fn start(store: &str) -> Node {
        Node::start_with(store, &[]).await
    }

    /// As [`Node::start`], with more arguments for `idem serve`.
    pub async fn start_with(store: &str, extra: &[&str]) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let mut db = None;
        let mut args = vec!["serve".to_string(), "--listen".into(), "127.0.0.1:0".into()];
        match store {
            "sqlite" => args.extend(["--data-dir".into(), dir.path().display().to_string()]),
            "postgres" => {
                let created = idem_testkit::TestDatabase::create().await;
                if std::env::var_os("IDEM_BENCH_PG_COST").is_some() {
                    let _ = pg_cost::DATABASE.set(created.url.clone());
                }
                args.extend(["--database-url".into(), server_url(&created.url)]);
                db = Some(created);
            }
            other => panic!("unknown store {other}"),
        }
        args.extend(["--bootstrap-key".into(), KEY.into()]);
        args.extend(extra.iter().map(|a| a.to_string()));
        let (child, base) = spawn(&args).await;
        Node {
            base,
            args,
            child,
            _dir: dir,
            _db: db,
        }
    }

    /// Kills the process and starts another on the same store.
    pub async fn restart(mut self) -> Node {
        let _ = self.child.kill().await;
        let (child, base) = spawn(&self.args).await;
        Node {
            base,
            child,
            ..self
        }
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// The database URL the server under test connects with: the scratch
/// database's, with `IDEM_BENCH_PG_PARAMS` added (default
/// `?sslmode=disable`, as `bench/pg_cost.sh` and `bench/ab_creates.sh`).
/// Left to libpq's default (`prefer`) a build negotiates TLS with a local
/// server that offers it, while a build from before TLS support speaks
/// plaintext, and a same-run A/B of the two would time TLS as the change.
/// `IDEM_BENCH_PG_PARAMS='?sslmode=require'` measures over TLS.
fn server_url(url: &str) -> String {
    let params =
        std::env::var("IDEM_BENCH_PG_PARAMS").unwrap_or_else(|_| "?sslmode=disable".into());
    match (url.contains('?'), params.strip_prefix('?')) {
        (true, Some(rest)) => format!("{url}&{rest}"),
        _ => format!("{url}{params}"),
    }
}

/// Starts `idem` with `args`; returns once it listens, with its URL.
async fn spawn(args: &[String]) -> (tokio::process::Child, String) {
    let binary = std::env::var("IDEM_BIN").expect("IDEM_BIN: path of a release idem binary");
    let mut child = tokio::process::Command::new(&binary)
        .args(args)
        .env("IDEM_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start idem");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = loop {
        let line = lines.next_line().await.unwrap().expect("idem exited");
        if let Some(url) = line.strip_prefix("idem listening on ") {
            break url.trim().to_string();
        }
    };
    (child, base)
}

/// A client configured like the dispatcher's, for the baseline.
pub fn raw_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        .build()
        .unwrap()
}

/// How long `client` takes to send `requests` POSTs to the target, at most
/// `in_flight` at a time: the floor any dispatcher faces.
pub async fn raw_pass(
    client: &reqwest::Client,
    target_url: &str,
    requests: usize,
    in_flight: usize,
) -> Duration {
    let started = Instant::now();
    let in_flight = in_flight.min(requests).max(1);
    let mut workers = Vec::new();
    for worker in 0..in_flight {
        let client = client.clone();
        let url = format!("{target_url}/baseline");
        workers.push(tokio::spawn(async move {
            for _ in (worker..requests).step_by(in_flight) {
                client
                    .post(&url)
                    .send()
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap();
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    started.elapsed()
}

/// When each delivery reached the target, by `Idem-Task-Id`.
#[derive(Default)]
pub struct Arrivals {
    pub at: Mutex<HashMap<String, Instant>>,
    pub changed: Notify,
}

impl Arrivals {
    /// Waits until `n` deliveries have arrived, at most `limit`.
    pub async fn wait_for(&self, n: usize, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            if self.at.lock().unwrap().len() >= n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{n} deliveries did not arrive in {limit:?}"
            );
            let _ = tokio::time::timeout(Duration::from_millis(50), notified).await;
        }
    }
}

/// A target that answers 200 at once and records each delivery's arrival;
/// returns its base URL.
pub async fn arrival_target(arrivals: Arc<Arrivals>) -> String {
    serve_target(axum::Router::new().route(
        "/{*path}",
        any(move |headers: HeaderMap| {
            let arrivals = arrivals.clone();
            async move {
                if let Some(id) = headers.get("idem-task-id").and_then(|v| v.to_str().ok()) {
                    arrivals
                        .at
                        .lock()
                        .unwrap()
                        .insert(id.to_string(), Instant::now());
                    arrivals.changed.notify_waiters();
                }
                "ok"
            }
        }),
    ))
    .await
}

/// POSTs `body` to the node as its admin; panics unless it succeeds.
pub async fn post(http: &reqwest::Client, base: &str, path: &str, body: serde_json::Value) {
    let r = http
        .post(format!("{base}{path}"))
        .bearer_auth(KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{path}: {}", r.status());
}

/// Limits that leave the dispatcher unthrottled.
pub fn unlimited() -> serde_json::Value {
    json!({"max_dispatches_per_second": 100000, "max_burst_size": 100000,
           "max_concurrent_dispatches": 10000})
}

/// Push dispatch throughput: `tasks` tasks for `target_url` created (32
/// clients) in a fresh paused queue `queue`, then the queue resumed; the
/// rate is first to last arrival at the target. Prints the create rate.
pub async fn push_rate(
    base: &str,
    queue: &str,
    target_url: &str,
    arrivals: &Arrivals,
    tasks: usize,
) -> f64 {
    push_rate_in_groups(base, queue, json!({}), 0, target_url, arrivals, tasks).await
}

/// As [`push_rate`], the queue created with `settings` as well, and task
/// `i` in group `g{i % groups}` unless `groups` is 0.
pub async fn push_rate_in_groups(
    base: &str,
    queue: &str,
    settings: serde_json::Value,
    groups: usize,
    target_url: &str,
    arrivals: &Arrivals,
    tasks: usize,
) -> f64 {
    let http = reqwest::Client::new();
    let mut body = json!({"name": queue, "rate_limits": unlimited()});
    body.as_object_mut()
        .unwrap()
        .extend(settings.as_object().cloned().unwrap_or_default());
    post(&http, base, "/v1/queues", body).await;
    post(&http, base, &format!("/v1/queues/{queue}/pause"), json!({})).await;

    let created = Instant::now();
    let url = format!("{target_url}/hook");
    let mut creators = Vec::new();
    for worker in 0..32 {
        let (http, url, queue) = (http.clone(), url.clone(), queue.to_string());
        let path = format!("{base}/v1/queues/{queue}/tasks");
        creators.push(tokio::spawn(async move {
            for i in (worker..tasks).step_by(32) {
                let mut task = json!({"task_id": format!("{queue}-{i}"), "target": {"url": url}});
                if groups > 0 {
                    task["group"] = json!(format!("g{}", i % groups));
                }
                let r = http
                    .post(&path)
                    .bearer_auth(KEY)
                    .json(&task)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201);
            }
        }));
    }
    for c in creators {
        c.await.unwrap();
    }
    let create_rate = tasks as f64 / created.elapsed().as_secs_f64();
    println!("creates: {create_rate:.0}/s ({tasks} tasks, 32 concurrent clients)");

    let before = arrivals.at.lock().unwrap().len();
    let probe = pg_cost::PgCost::start().await;
    post(
        &http,
        base,
        &format!("/v1/queues/{queue}/resume"),
        json!({}),
    )
    .await;
    arrivals
        .wait_for(before + tasks, Duration::from_secs(300))
        .await;
    if let Some(probe) = probe {
        // The last arrival is before its completion commits.
        tokio::time::sleep(Duration::from_millis(500)).await;
        println!("postgres per delivery: {}", probe.per(tasks).await);
    }
    let prefix = format!("{queue}-");
    let (first, last) = {
        let at = arrivals.at.lock().unwrap();
        let mine = || {
            at.iter()
                .filter(|(id, _)| id.starts_with(&prefix))
                .map(|(_, t)| *t)
        };
        (mine().min().unwrap(), mine().max().unwrap())
    };
    (tasks - 1) as f64 / last.duration_since(first).as_secs_f64()
}

/// Creates a pull queue with `settings` holding `tasks` due tasks, task
/// `i` (ID `p{i}`) in group `g{i % groups}` unless `groups` is 0
/// (`tasks:batch`, 1,000 a call, each all or nothing).
pub async fn fill(
    base: &str,
    queue: &str,
    settings: serde_json::Value,
    groups: usize,
    tasks: usize,
) {
    let http = reqwest::Client::new();
    let mut body = json!({"name": queue, "mode": "pull"});
    body.as_object_mut()
        .unwrap()
        .extend(settings.as_object().cloned().unwrap_or_default());
    post(&http, base, "/v1/queues", body).await;
    for first in (0..tasks).step_by(1000) {
        let items: Vec<_> = (first..(first + 1000).min(tasks))
            .map(|i| {
                let mut t = json!({"task_id": format!("p{i}"), "payload": {"json": {"n": i}}});
                if groups > 0 {
                    t["group"] = json!(format!("g{}", i % groups));
                }
                t
            })
            .collect();
        post(
            &http,
            base,
            &format!("/v1/queues/{queue}/tasks:batch"),
            json!({ "tasks": items, "atomic": true }),
        )
        .await;
    }
}
