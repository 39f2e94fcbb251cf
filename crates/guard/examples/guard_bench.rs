//! Load generator for the "Guard and proxy" section of docs/BENCHMARKS.md.
//!
//! 1. Claim+finish pairs per second on each guard store: `concurrency`
//!    workers claim fresh run keys and finish them as successes for
//!    `seconds`, after a short warm-up.
//! 2. The proxy's added latency: an upstream answering 200 at once, and the
//!    proxy (the library `idem proxy` runs) in front of it, with a signing
//!    secret required. One request at a time, alternating a direct request
//!    to the upstream with a proxied one, so that both see the same machine
//!    load; the direct requests are the same-run baseline.
//!
//! ```text
//! guard_bench [seconds-per-store=5] [concurrency=16] [latency-samples=2000] [stores=memory,sqlite,postgres,redis] [via=store]
//! ```
//!
//! `via` is how part 1 makes a pair: `store` calls `Guard::claim` and
//! `Guard::finish` directly; `layer` sends each pair as a request through
//! `Guard::layer` around a handler that answers 200 at once, so a pair also
//! runs the handler in its own task beside the renewal of its lease.
//!
//! `latency-samples` 0 skips part 2. For SQLite and PostgreSQL, part 1 also
//! reports how many operations (claims and finishes) each commit carried on
//! average: the group commit's batch size.
//!
//! PostgreSQL: `IDEM_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`; a database is created for the
//! run and dropped after). Redis: `IDEM_TEST_REDIS_URL` (default
//! `redis://127.0.0.1:6379`; keys live under a prefix of their own and are
//! deleted after).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use idem_guard::proxy::{ProxyConfig, serve};
use idem_guard::{
    ClaimOutcome, GroupCommits, Guard, GuardStore, HandlerOutcome, MemoryStore, PostgresStore,
    RedisStore, RunKey, SigningSecret, SqliteStore,
};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

const DATABASE_URL_VAR: &str = "IDEM_TEST_DATABASE_URL";
const REDIS_URL_VAR: &str = "IDEM_TEST_REDIS_URL";
const WARM_UP: Duration = Duration::from_millis(500);

type Cleanup = Pin<Box<dyn Future<Output = ()>>>;

/// A store for one measurement, and how to remove what it left behind.
struct BenchStore {
    name: &'static str,
    store: Arc<dyn GuardStore>,
    /// The store's group commit counters, where it has them.
    commits: Option<Box<dyn Fn() -> GroupCommits>>,
    cleanup: Cleanup,
}

impl BenchStore {
    /// Closes the store, then removes its data.
    async fn remove(self) {
        drop(self.store);
        drop(self.commits);
        self.cleanup.await;
    }
}

fn run_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

async fn open(name: &'static str) -> BenchStore {
    match name {
        "memory" => BenchStore {
            name,
            store: Arc::new(MemoryStore::new()),
            commits: None,
            cleanup: Box::pin(async {}),
        },
        "SQLite" => {
            let path = std::env::temp_dir().join(format!("idem-guard-bench-{}.db", run_id()));
            let store = SqliteStore::open(&path).await.expect("open SQLite");
            let counted = store.clone();
            BenchStore {
                name,
                store: Arc::new(store),
                commits: Some(Box::new(move || counted.group_commits())),
                cleanup: Box::pin(async move { remove_sqlite(path) }),
            }
        }
        "PostgreSQL" => {
            let admin = std::env::var(DATABASE_URL_VAR)
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
            let db = format!("guard_bench_{}", run_id());
            postgres_admin(&admin, &format!("CREATE DATABASE {db}")).await;
            let mut config = tokio_postgres::Config::from_str(&admin)
                .unwrap_or_else(|e| panic!("{DATABASE_URL_VAR} is not a PostgreSQL URL: {e}"));
            config.dbname(&db);
            let store = PostgresStore::from_config(config)
                .await
                .expect("open PostgreSQL");
            let counted = store.clone();
            BenchStore {
                name,
                store: Arc::new(store),
                commits: Some(Box::new(move || counted.group_commits())),
                cleanup: Box::pin(async move {
                    postgres_admin(
                        &admin,
                        &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
                    )
                    .await;
                }),
            }
        }
        "Redis" => {
            let url =
                std::env::var(REDIS_URL_VAR).unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
            let prefix = format!("guard_bench_{}:", run_id());
            let store = RedisStore::connect(&url, &prefix)
                .await
                .unwrap_or_else(|e| panic!("Redis is unreachable at {url}: {e}"));
            BenchStore {
                name,
                store: Arc::new(store),
                commits: None,
                cleanup: Box::pin(async move { redis_cleanup(&url, &prefix).await }),
            }
        }
        other => unreachable!("unknown store {other}"),
    }
}

async fn postgres_admin(url: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL is unreachable at {url}: {e}"));
    tokio::spawn(connection);
    client
        .batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn remove_sqlite(path: PathBuf) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

async fn redis_cleanup(url: &str, prefix: &str) {
    let client = redis::Client::open(url).expect("Redis URL");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("Redis connection");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .expect("KEYS");
    // In slices: one DEL of a long run's keys outlasts the connection's
    // response timeout.
    for slice in keys.chunks(1000) {
        let _: i64 = redis::cmd("DEL")
            .arg(slice)
            .query_async(&mut conn)
            .await
            .expect("DEL");
    }
}

/// How part 1 makes a claim+finish pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// `Guard::claim`, then `Guard::finish`.
    Store,
    /// A request through `Guard::layer` around a handler answering at once.
    Layer,
}

/// Claims and finishes fresh keys until `until`; returns each pair's time.
async fn claim_finish_loop(guard: Guard, worker: usize, until: Instant, via: Via) -> Vec<Duration> {
    use tower::{Layer, ServiceExt};
    let handler = guard.layer().layer(tower::service_fn(
        |_: http::Request<axum::body::Body>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(axum::body::Body::empty()))
        },
    ));
    let mut times = Vec::new();
    let mut i = 0u64;
    while Instant::now() < until {
        i += 1;
        let name = format!("bench-{worker}-{i}");
        let started = Instant::now();
        match via {
            Via::Store => {
                let key = RunKey::from_parts([name]);
                let claim = match guard.claim(&key).await.expect("claim") {
                    ClaimOutcome::Claimed(claim) => claim,
                    other => panic!("a fresh key was not claimable: {other:?}"),
                };
                guard
                    .finish(&claim, HandlerOutcome::Success)
                    .await
                    .expect("finish");
            }
            Via::Layer => {
                let request = http::Request::post("/run")
                    .header("idempotency-key", name)
                    .body(axum::body::Body::empty())
                    .expect("request");
                let answer = handler.clone().oneshot(request).await.expect("answer");
                assert_eq!(answer.status(), http::StatusCode::OK, "a fresh key runs");
            }
        }
        times.push(started.elapsed());
    }
    times
}

async fn claims_per_second(
    store: &Arc<dyn GuardStore>,
    seconds: u64,
    concurrency: usize,
    via: Via,
) -> (f64, Duration, Duration) {
    let guard = Guard::new(Arc::clone(store));
    // Workers of the warm-up and of the measurement use distinct key spaces.
    let warm = Instant::now() + WARM_UP;
    let warm_up: Vec<_> = (0..concurrency)
        .map(|w| tokio::spawn(claim_finish_loop(guard.clone(), concurrency + w, warm, via)))
        .collect();
    for w in warm_up {
        w.await.expect("warm-up worker");
    }
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..concurrency)
        .map(|w| tokio::spawn(claim_finish_loop(guard.clone(), w, until, via)))
        .collect();
    let mut times = Vec::new();
    for w in workers {
        times.extend(w.await.expect("worker"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    times.sort();
    (
        times.len() as f64 / elapsed,
        percentile(&times, 50),
        percentile(&times, 99),
    )
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// The upstream: answers every request 200 at once.
async fn start_upstream() -> String {
    let app = axum::Router::new().fallback(|| async { "ok" });
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("upstream") });
    base
}

struct Latency {
    direct: Vec<Duration>,
    proxied: Vec<Duration>,
}

async fn proxy_latency(store: Arc<dyn GuardStore>, upstream: &str, samples: usize) -> Latency {
    let secret = SigningSecret::from_key(b"guard-bench-signing-key".to_vec());
    let mut config = ProxyConfig::new(upstream.parse().expect("upstream URL"), store);
    config.signing_secrets = vec![secret.clone()];
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let proxy = format!("http://{}", listener.local_addr().expect("address"));
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(serve(config, listener, async {
        let _ = stopped.await;
    }));

    let client = reqwest::Client::new();
    let body = br#"{"task":"charge","amount":100}"#;
    let run = run_id();
    let mut latency = Latency {
        direct: Vec::with_capacity(samples),
        proxied: Vec::with_capacity(samples),
    };
    // The first requests open connections; they are not counted.
    let warm_up = 50;
    for i in 0..samples + warm_up {
        // Both requests carry the same kind of headers and body; only the
        // proxied one is checked, claimed and recorded on its way.
        let id = format!("{run}-{i}");
        let timestamp = jiff::Timestamp::now().as_second();
        let signature = secret.sign(&id, timestamp, body);
        for (base, into) in [
            (upstream, &mut latency.direct),
            (proxy.as_str(), &mut latency.proxied),
        ] {
            let request = client
                .post(format!("{base}/charge"))
                .header("idempotency-key", &id)
                .header("webhook-id", &id)
                .header("webhook-timestamp", timestamp.to_string())
                .header("webhook-signature", &signature)
                .header("content-type", "application/json")
                .body(&body[..]);
            let started = Instant::now();
            let answer = request.send().await.expect("request");
            let status = answer.status();
            answer.bytes().await.expect("answer body");
            let took = started.elapsed();
            assert!(status.is_success(), "{base}: {status}");
            if i >= warm_up {
                into.push(took);
            }
        }
    }
    let _ = stop.send(());
    server.await.expect("proxy task").expect("proxy");
    latency.direct.sort();
    latency.proxied.sort();
    latency
}

#[tokio::main]
async fn main() {
    // reqwest is built with rustls and no default crypto provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| -> u64 {
        args.get(i)
            .map(|a| {
                a.parse()
                    .unwrap_or_else(|_| panic!("{a:?} is not a number"))
            })
            .unwrap_or(default)
    };
    let seconds = arg(0, 5);
    let concurrency = arg(1, 16) as usize;
    let samples = arg(2, 2000) as usize;
    let stores: Vec<&'static str> = args
        .get(3)
        .map_or("memory,sqlite,postgres,redis", String::as_str)
        .split(',')
        .map(|name| match name.trim().to_ascii_lowercase().as_str() {
            "memory" => "memory",
            "sqlite" => "SQLite",
            "postgres" | "postgresql" => "PostgreSQL",
            "redis" => "Redis",
            other => panic!("unknown store {other:?}: memory, sqlite, postgres or redis"),
        })
        .collect();
    let via = match args.get(4).map_or("store", String::as_str) {
        "store" => Via::Store,
        "layer" => Via::Layer,
        other => panic!("unknown way {other:?}: store or layer"),
    };

    println!(
        "claim+finish pairs ({via:?}): {concurrency} workers, {seconds} s per store after a {} ms warm-up",
        WARM_UP.as_millis()
    );
    println!("| store | pairs/s | pair p50 | pair p99 | operations per commit |");
    println!("| --- | --- | --- | --- | --- |");
    for &name in &stores {
        let bench = open(name).await;
        let (rate, p50, p99) = claims_per_second(&bench.store, seconds, concurrency, via).await;
        let per_commit = bench.commits.as_ref().map_or("-".to_owned(), |count| {
            let c = count();
            format!("{:.1}", c.operations as f64 / c.commits.max(1) as f64)
        });
        println!(
            "| {} | {rate:.0} | {} | {} | {per_commit} |",
            bench.name,
            ms(p50),
            ms(p99)
        );
        bench.remove().await;
    }
    if samples == 0 {
        return;
    }

    let upstream = start_upstream().await;
    println!();
    println!(
        "proxy latency: {samples} sequential requests each, direct and proxied alternating, signature required"
    );
    println!(
        "| proxy store | direct p50 | direct p99 | proxied p50 | proxied p99 | added p50 | added p99 |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for &name in &stores {
        let bench = open(name).await;
        let l = proxy_latency(Arc::clone(&bench.store), &upstream, samples).await;
        let (d50, d99) = (percentile(&l.direct, 50), percentile(&l.direct, 99));
        let (p50, p99) = (percentile(&l.proxied, 50), percentile(&l.proxied, 99));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            bench.name,
            ms(d50),
            ms(d99),
            ms(p50),
            ms(p99),
            ms(p50.saturating_sub(d50)),
            ms(p99.saturating_sub(d99)),
        );
        bench.remove().await;
    }
}
