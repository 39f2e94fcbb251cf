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
        /// The tasks' schedule time; `now` sends none, so they are due.
        #[arg(long, default_value = "2099-01-01T00:00:00Z")]
        schedule_time: String,
    },
    /// Creates tasks in batches (`POST …/tasks:batch`), every ID new; the
    /// rate counts tasks, not requests.
    BatchCreates {
        /// host:port of a running `idem serve`.
        #[arg(long)]
        addr: String,
        /// API key of a writer.
        #[arg(long)]
        key: String,
        /// Queue to create tasks in; created if missing.
        #[arg(long, default_value = "bench")]
        queue: String,
        /// Tasks in all.
        #[arg(long, default_value_t = 200_000)]
        total: u64,
        /// Tasks per request (at most 1000).
        #[arg(long, default_value_t = 1000)]
        batch: u64,
        /// Requests in flight.
        #[arg(long, default_value_t = 1)]
        concurrency: u64,
        /// Prefix of task IDs, so runs against one server do not collide.
        #[arg(long, default_value = "b")]
        prefix: String,
        /// The tasks' schedule time; `now` sends none, so they are due.
        #[arg(long, default_value = "2099-01-01T00:00:00Z")]
        schedule_time: String,
    },
    /// Creates cron jobs in one organization (`POST /v1/jobs`), every name
    /// new, and prints the rate of the first jobs and of each following
    /// block, so that a creation slowing as the organization grows shows.
    /// The server's `--max-jobs-per-org` must allow them all.
    JobCreates {
        /// host:port of a running `idem serve`.
        #[arg(long)]
        addr: String,
        /// API key of a writer.
        #[arg(long)]
        key: String,
        /// Jobs in all.
        #[arg(long, default_value_t = 10_000)]
        total: u64,
        /// Requests in flight.
        #[arg(long, default_value_t = 16)]
        concurrency: u64,
        /// Jobs of the first line.
        #[arg(long, default_value_t = 100)]
        first: u64,
        /// Jobs of each line after the first.
        #[arg(long, default_value_t = 1000)]
        block: u64,
        /// Prefix of job names, so runs against one server do not collide.
        #[arg(long, default_value = "j")]
        prefix: String,
    },
    /// Latency of the reads of one full queue: its resource with `stats`,
    /// the first page of its tasks, a page from the middle (reached through
    /// page tokens) and the first page of its queued tasks.
    QueueReads {
        #[arg(long)]
        addr: String,
        /// API key of a reader.
        #[arg(long)]
        key: String,
        #[arg(long, default_value = "bench")]
        queue: String,
        /// Requests per read.
        #[arg(long, default_value_t = 2_000)]
        total: u64,
        /// Requests in flight.
        #[arg(long, default_value_t = 4)]
        concurrency: u64,
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

    /// An authenticated GET: its status and body.
    async fn get_as(&mut self, path: &str, key: &str) -> anyhow::Result<(u16, Bytes)> {
        let req = Request::get(path)
            .header("host", &self.host)
            .header("authorization", format!("Bearer {key}"))
            .body(Full::new(Bytes::new()))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    /// A JSON POST: its status and body.
    async fn post_read(
        &mut self,
        path: &str,
        key: &str,
        body: impl Into<Bytes>,
    ) -> anyhow::Result<(u16, Bytes)> {
        let req = Request::post(path)
            .header("host", &self.host)
            .header("authorization", format!("Bearer {key}"))
            .header("content-type", "application/json")
            .body(Full::new(body.into()))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok((status, body))
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
    schedule_time: String,
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
        let (addr, key, path, prefix, next, schedule_time) = (
            addr.clone(),
            key.clone(),
            path.clone(),
            prefix.clone(),
            next.clone(),
            schedule_time.clone(),
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
                let mut task = serde_json::json!({
                    "task_id": format!("{prefix}-{id}"),
                    "target": {"url": "http://127.0.0.1:9/hook", "json": {"n": id}},
                });
                if schedule_time != "now" {
                    task["schedule_time"] = schedule_time.as_str().into();
                }
                let body = serde_json::to_vec(&task)?;
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

#[allow(clippy::too_many_arguments)]
async fn batch_creates(
    addr: String,
    key: String,
    queue: String,
    total: u64,
    batch: u64,
    concurrency: u64,
    prefix: String,
    schedule_time: String,
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
    let path = format!("/v1/queues/{queue}/tasks:batch");
    // The bodies are made before the clock starts, as a producer's data is
    // at hand when it sends: what is timed is the server's work.
    let bodies: Arc<Vec<Bytes>> = Arc::new(
        (0..total.div_ceil(batch))
            .map(|r| {
                let first = r * batch;
                let tasks: Vec<serde_json::Value> = (first..(first + batch).min(total))
                    .map(|id| {
                        let mut task = serde_json::json!({
                            "task_id": format!("{prefix}-{id}"),
                            "target": {"url": "http://127.0.0.1:9/hook", "json": {"n": id}},
                        });
                        if schedule_time != "now" {
                            task["schedule_time"] = schedule_time.as_str().into();
                        }
                        task
                    })
                    .collect();
                serde_json::to_vec(&serde_json::json!({ "tasks": tasks })).map(Bytes::from)
            })
            .collect::<Result<_, _>>()?,
    );
    let requests = bodies.len() as u64;
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (addr, key, path, next, bodies) = (
            addr.clone(),
            key.clone(),
            path.clone(),
            next.clone(),
            bodies.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&addr).await?;
            let mut latencies = Vec::new();
            let (mut created, mut other) = (0u64, 0u64);
            loop {
                let r = next.fetch_add(1, Ordering::Relaxed);
                if r >= requests {
                    break;
                }
                let body = bodies[r as usize].clone();
                let t0 = Instant::now();
                let (status, answer) = conn.post_read(&path, &key, body).await?;
                latencies.push(t0.elapsed());
                if status != 200 {
                    bail!(
                        "batch {r}: HTTP {status}: {}",
                        String::from_utf8_lossy(&answer)
                    );
                }
                // Only each item's status is read; the tasks are skipped.
                let answer: BatchAnswer = serde_json::from_slice(&answer)?;
                for item in answer.results {
                    if item.status == 201 {
                        created += 1;
                    } else {
                        other += 1;
                    }
                }
            }
            anyhow::Ok((latencies, created, other))
        }));
    }
    let mut latencies = Vec::new();
    let (mut created, mut other) = (0, 0);
    for w in workers {
        let (l, c, o) = w.await??;
        latencies.extend(l);
        created += c;
        other += o;
    }
    let secs = started.elapsed().as_secs_f64();
    latencies.sort();
    println!(
        "tasks={total} batch={batch} concurrency={concurrency} elapsed={secs:.2}s \
         tasks_per_s={:.0} created={created} other={other} batch_p50_ms={:.1} batch_p99_ms={:.1}",
        created as f64 / secs,
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    );
    if other > 0 {
        bail!("{other} tasks were not created");
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn job_creates(
    addr: String,
    key: String,
    total: u64,
    concurrency: u64,
    first: u64,
    block: u64,
    prefix: String,
) -> anyhow::Result<()> {
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (addr, key, prefix, next) = (addr.clone(), key.clone(), prefix.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&addr).await?;
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                // Once a year: no run falls due while the bench creates.
                let body = serde_json::to_vec(&serde_json::json!({
                    "name": format!("{prefix}-{i}"),
                    "schedule": "0 0 1 1 *",
                    "target": {"url": "http://127.0.0.1:9/hook"},
                }))?;
                let (status, answer) = conn.post_read("/v1/jobs", &key, body).await?;
                if status != 201 {
                    bail!(
                        "job {i}: HTTP {status}: {}",
                        String::from_utf8_lossy(&answer)
                    );
                }
                done.push(started.elapsed());
            }
            anyhow::Ok(done)
        }));
    }
    // The instant each job was answered, in order: the n-th of them is
    // when the organization came to hold n jobs.
    let mut done = Vec::new();
    for w in workers {
        done.extend(w.await??);
    }
    done.sort();
    let mut from = (0u64, Duration::ZERO);
    let mut line = |to: u64, at: Duration| {
        let secs = (at - from.1).as_secs_f64();
        println!(
            "jobs {:>6}-{:<6} {:>7.0} jobs/s ({secs:.2} s)",
            from.0 + 1,
            to,
            (to - from.0) as f64 / secs,
        );
        from = (to, at);
    };
    let mut edge = first.min(total);
    while edge > 0 {
        line(edge, done[edge as usize - 1]);
        if edge == total {
            break;
        }
        edge = (edge + block).min(total);
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "jobs={total} concurrency={concurrency} elapsed={secs:.2}s jobs_per_s={:.0}",
        total as f64 / secs
    );
    Ok(())
}

/// What `batch-creates` reads of a `tasks:batch` answer.
#[derive(serde::Deserialize)]
struct BatchAnswer {
    results: Vec<BatchItem>,
}

#[derive(serde::Deserialize)]
struct BatchItem {
    status: u16,
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

/// `GET path` answered 200, as JSON.
async fn get_json(conn: &mut Conn, path: &str, key: &str) -> anyhow::Result<serde_json::Value> {
    let (status, body) = conn.get_as(path, key).await?;
    if status != 200 {
        bail!(
            "GET {path}: HTTP {status}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    Ok(serde_json::from_slice(&body)?)
}

async fn queue_reads(
    addr: String,
    key: String,
    queue: String,
    total: u64,
    concurrency: u64,
) -> anyhow::Result<()> {
    let mut setup = Conn::open(&addr).await?;
    let resource = get_json(&mut setup, &format!("/v1/queues/{queue}"), &key).await?;
    println!("stats={}", resource["stats"]);
    // A token from the middle of the list, found by walking it.
    let tasks = format!("/v1/queues/{queue}/tasks");
    let (mut token, mut seen) = (String::new(), 0u64);
    let mut listed = 0u64;
    let counts = &resource["stats"]["tasks"];
    for state in [
        "scheduled",
        "queued",
        "running",
        "succeeded",
        "failed",
        "cancelled",
    ] {
        listed += counts[state].as_u64().unwrap_or(0);
    }
    while seen < listed / 2 {
        let sep = if token.is_empty() {
            String::new()
        } else {
            format!("&page_token={token}")
        };
        let page = get_json(&mut setup, &format!("{tasks}?limit=1000{sep}"), &key).await?;
        seen += page["items"].as_array().map_or(0, |i| i.len() as u64);
        match page["next_page_token"].as_str() {
            Some(t) => token = t.to_string(),
            None => break,
        }
    }
    let reads = [
        ("queue_with_stats", format!("/v1/queues/{queue}")),
        ("tasks_first_page", format!("{tasks}?limit=50")),
        (
            "tasks_deep_page",
            format!("{tasks}?limit=50&page_token={token}"),
        ),
        (
            "queued_tasks_first_page",
            format!("{tasks}?limit=50&state=queued"),
        ),
    ];
    for (label, path) in reads {
        let next = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let mut workers = Vec::new();
        for _ in 0..concurrency {
            let (addr, key, path, next) = (addr.clone(), key.clone(), path.clone(), next.clone());
            workers.push(tokio::spawn(async move {
                let mut conn = Conn::open(&addr).await?;
                let mut latencies = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < total {
                    let t0 = Instant::now();
                    let (status, _) = conn.get_as(&path, &key).await?;
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
            "{label:<24} requests={total} concurrency={concurrency} requests_per_s={:.0} \
             p50_ms={:.3} p99_ms={:.3} max_ms={:.3}",
            total as f64 / secs,
            percentile(&latencies, 0.50).as_secs_f64() * 1e3,
            percentile(&latencies, 0.99).as_secs_f64() * 1e3,
            latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        );
    }
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
            schedule_time,
        } => rt.block_on(creates(
            addr,
            key,
            queue,
            total,
            concurrency,
            duplicate_every,
            prefix,
            with_keys,
            schedule_time,
        )),
        Command::BatchCreates {
            addr,
            key,
            queue,
            total,
            batch,
            concurrency,
            prefix,
            schedule_time,
        } => rt.block_on(batch_creates(
            addr,
            key,
            queue,
            total,
            batch,
            concurrency,
            prefix,
            schedule_time,
        )),
        Command::JobCreates {
            addr,
            key,
            total,
            concurrency,
            first,
            block,
            prefix,
        } => rt.block_on(job_creates(
            addr,
            key,
            total,
            concurrency,
            first,
            block,
            prefix,
        )),
        Command::QueueReads {
            addr,
            key,
            queue,
            total,
            concurrency,
        } => rt.block_on(queue_reads(addr, key, queue, total, concurrency)),
        Command::Get {
            addr,
            path,
            total,
            concurrency,
            cookie,
        } => rt.block_on(get(addr, path, total, concurrency, cookie)),
    }
}
