//! Load generators for Idem's benchmarks.
//!
//! Each worker holds one keep-alive HTTP/1.1 connection and sends its
//! requests one after another, so `--concurrency` is the number of requests
//! in flight, like that many synchronous clients.

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::{Parser, Subcommand};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Creates tasks over HTTP; a share of them reuse a task ID already
    /// sent, and must be answered 409.
    Creates {
        /// host:port of a running `idem serve`.
        #[arg(long)]
        addr: String,
        /// API key of a writer.
        #[arg(long)]
        key: String,
        /// Queue to create tasks in; created if missing.
        #[arg(long, default_value = "bench")]
        queue: String,
        /// Requests in all.
        #[arg(long, default_value_t = 20_000)]
        total: u64,
        /// Requests in flight.
        #[arg(long, default_value_t = 16)]
        concurrency: u64,
        /// One request in this many repeats the previous request's task ID.
        #[arg(long, default_value_t = 4)]
        duplicate_every: u64,
        /// Prefix of task IDs, so runs against one server do not collide.
        #[arg(long, default_value = "t")]
        prefix: String,
        /// Send `Idempotency-Key: <prefix>-<n>` with request n; a second run
        /// with the same prefix then measures replays.
        #[arg(long)]
        with_keys: bool,
    },
    /// GETs one path: the HTTP floor the other figures stand on.
    Get {
        #[arg(long)]
        addr: String,
        #[arg(long, default_value = "/healthz")]
        path: String,
        #[arg(long, default_value_t = 20_000)]
        total: u64,
        #[arg(long, default_value_t = 16)]
        concurrency: u64,
        /// A `Cookie` header to send (a console session).
        #[arg(long)]
        cookie: Option<String>,
    },
}

struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
    host: String,
}

impl Conn {
    async fn open(addr: &str) -> anyhow::Result<Conn> {
        let stream = TcpStream::connect(addr)
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        Ok(Conn {
            sender,
            host: addr.to_string(),
        })
    }

    async fn get(&mut self, path: &str, cookie: Option<&str>) -> anyhow::Result<u16> {
        let mut req = Request::get(path).header("host", &self.host);
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        let req = req.body(Full::new(Bytes::new()))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        resp.into_body().collect().await?;
        Ok(status)
    }

    async fn post(
        &mut self,
        path: &str,
        key: &str,
        idempotency_key: Option<&str>,
        body: Vec<u8>,
    ) -> anyhow::Result<(u16, bool)> {
        let mut req = Request::post(path)
            .header("host", &self.host)
            .header("authorization", format!("Bearer {key}"))
            .header("content-type", "application/json");
        if let Some(k) = idempotency_key {
            req = req.header("idempotency-key", k);
        }
        let req = req.body(Full::new(Bytes::from(body)))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let replayed = resp.headers().contains_key("idempotent-replayed");
        resp.into_body().collect().await?;
        Ok((status, replayed))
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[allow(clippy::too_many_arguments)]
async fn creates(
    addr: String,
    key: String,
    queue: String,
    total: u64,
    concurrency: u64,
    duplicate_every: u64,
    prefix: String,
    with_keys: bool,
) -> anyhow::Result<()> {
    let mut setup = Conn::open(&addr).await?;
    let (status, _) = setup
        .post(
            "/v1/queues",
            &key,
            None,
            serde_json::to_vec(&serde_json::json!({"name": queue}))?,
        )
        .await?;
    if status != 201 && status != 409 {
        bail!("creating queue {queue}: HTTP {status}");
    }
    let path = format!("/v1/queues/{queue}/tasks");
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (addr, key, path, prefix, next) = (
            addr.clone(),
            key.clone(),
            path.clone(),
            prefix.clone(),
            next.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&addr).await?;
            let mut latencies = Vec::new();
            let (mut created, mut duplicates, mut other, mut replays) = (0u64, 0u64, 0u64, 0u64);
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                // Every `duplicate_every`-th request repeats its predecessor's
                // ID; whichever of the two commits second must get 409.
                let id = if duplicate_every > 0 && i % duplicate_every == duplicate_every - 1 {
                    i - 1
                } else {
                    i
                };
                let body = serde_json::to_vec(&serde_json::json!({
                    "task_id": format!("{prefix}-{id}"),
                    "target": {"url": "http://127.0.0.1:9/hook", "json": {"n": id}},
                    "schedule_time": "2099-01-01T00:00:00Z",
                }))?;
                let idempotency_key = with_keys.then(|| format!("{prefix}-{i}"));
                let t0 = Instant::now();
                let (status, replayed) = conn
                    .post(&path, &key, idempotency_key.as_deref(), body)
                    .await?;
                latencies.push(t0.elapsed());
                match status {
                    201 if replayed => replays += 1,
                    201 => created += 1,
                    409 => duplicates += 1,
                    _ => other += 1,
                }
            }
            anyhow::Ok((latencies, created, duplicates, other, replays))
        }));
    }
    let mut latencies = Vec::new();
    let (mut created, mut duplicates, mut other, mut replays) = (0, 0, 0, 0);
    for w in workers {
        let (l, c, d, o, r) = w.await??;
        latencies.extend(l);
        created += c;
        duplicates += d;
        other += o;
        replays += r;
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let secs = elapsed.as_secs_f64();
    println!(
        "requests={total} concurrency={concurrency} elapsed={secs:.2}s \
         requests_per_s={:.0} created={created} created_per_s={:.0} duplicates_409={duplicates} \
         replayed={replays} other={other} p50_ms={:.3} p99_ms={:.3}",
        total as f64 / secs,
        created as f64 / secs,
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    );
    if other > 0 {
        bail!("{other} requests got neither 201 nor 409");
    }
    Ok(())
}

async fn get(
    addr: String,
    path: String,
    total: u64,
    concurrency: u64,
    cookie: Option<String>,
) -> anyhow::Result<()> {
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (addr, path, next, cookie) = (addr.clone(), path.clone(), next.clone(), cookie.clone());
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&addr).await?;
            let mut latencies = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let t0 = Instant::now();
                let status = conn.get(&path, cookie.as_deref()).await?;
                latencies.push(t0.elapsed());
                if status != 200 {
                    bail!("GET {path}: HTTP {status}");
                }
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for w in workers {
        latencies.extend(w.await??);
    }
    let secs = started.elapsed().as_secs_f64();
    latencies.sort();
    println!(
        "requests={total} concurrency={concurrency} elapsed={secs:.2}s requests_per_s={:.0} \
         p50_ms={:.3} p99_ms={:.3}",
        total as f64 / secs,
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    match cli.command {
        Command::Creates {
            addr,
            key,
            queue,
            total,
            concurrency,
            duplicate_every,
            prefix,
            with_keys,
        } => rt.block_on(creates(
            addr,
            key,
            queue,
            total,
            concurrency,
            duplicate_every,
            prefix,
            with_keys,
        )),
        Command::Get {
            addr,
            path,
            total,
            concurrency,
            cookie,
        } => rt.block_on(get(addr, path, total, concurrency, cookie)),
    }
}
