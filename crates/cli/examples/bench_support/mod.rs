//! What the benchmark examples share: arguments, the local target, a
//! release `idem serve` on a scratch store, and the raw-client baseline.

#![allow(dead_code)]

use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};

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
    child: tokio::process::Child,
    _dir: tempfile::TempDir,
    _db: Option<idem_testkit::TestDatabase>,
}

impl Node {
    /// Starts on `store` (`sqlite` or `postgres`), with `KEY` as its admin
    /// key; returns once it listens.
    pub async fn start(store: &str) -> Node {
        let binary = std::env::var("IDEM_BIN").expect("IDEM_BIN: path of a release idem binary");
        let dir = tempfile::tempdir().unwrap();
        let mut db = None;
        let mut args = vec!["serve".to_string(), "--listen".into(), "127.0.0.1:0".into()];
        match store {
            "sqlite" => args.extend(["--data-dir".into(), dir.path().display().to_string()]),
            "postgres" => {
                let created = idem_testkit::TestDatabase::create().await;
                args.extend(["--database-url".into(), created.url.clone()]);
                db = Some(created);
            }
            other => panic!("unknown store {other}"),
        }
        args.extend(["--bootstrap-key".into(), KEY.into()]);
        let mut child = tokio::process::Command::new(&binary)
            .args(&args)
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
        Node {
            base,
            child,
            _dir: dir,
            _db: db,
        }
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
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
