//! `idem serve`.

use anyhow::Context;
use clap::{Args, ValueEnum};
use idem_core::tenancy::{generate_api_key, generate_id, hash_api_key};
use idem_core::{Clock, SystemClock};
use idem_server::{App, Options};
use idem_store::postgres::{DatabaseClock, PostgresStore};
use idem_store::sqlite::SqliteStore;
use idem_store::{NewApiKey, Store};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "IDEM_LISTEN", default_value = "127.0.0.1:7070")]
    listen: String,
    /// Folder of the embedded SQLite store (used unless --database-url is given).
    #[arg(long, env = "IDEM_DATA_DIR", default_value = "./idem-data")]
    data_dir: PathBuf,
    /// PostgreSQL URL (`postgres://…`): the store for several nodes. TLS as
    /// in libpq: `?sslmode=` `disable`, `prefer` (default), `require`,
    /// `verify-ca` or `verify-full`, and `sslrootcert=PATH`, a PEM file of
    /// the CA certificates to trust instead of the system's.
    #[arg(long, env = "IDEM_DATABASE_URL")]
    database_url: Option<String>,
    /// Most PostgreSQL connections this node holds.
    #[arg(long, env = "IDEM_DATABASE_MAX_CONNECTIONS", default_value_t = 32)]
    database_max_connections: usize,
    /// API key of the first admin, instead of a generated one; ignored once
    /// the store holds any key.
    #[arg(long, env = "IDEM_BOOTSTRAP_KEY", hide_env_values = true)]
    bootstrap_key: Option<String>,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "IDEM_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    max_body_bytes: usize,
    /// How often expired task tombstones are swept (`30s`, `5m`).
    #[arg(long, env = "IDEM_SWEEP_INTERVAL", default_value = "30s", value_parser = parse_duration)]
    sweep_interval: Duration,
    /// Added to a task's dispatch deadline to form an attempt's lease: how
    /// long after the deadline a silent node's attempt is presumed lost.
    #[arg(long, env = "IDEM_LEASE_GRACE", default_value = "30s", value_parser = parse_duration)]
    lease_grace: Duration,
    /// How late a cron instant may fire and still count as on time; older
    /// instants were missed (every node down) and follow the job's
    /// `catch_up` policy.
    #[arg(long, env = "IDEM_MISFIRE_GRACE", default_value = "60s", value_parser = parse_duration)]
    misfire_grace: Duration,
    /// How long before its instant a cron run is created (as a task
    /// scheduled for the instant), so that the dispatcher alone stands
    /// between the instant and the delivery. Runs created ahead are
    /// deleted when their job is paused or changed. When every node was
    /// down past their instant, a starting node judges them by the job's
    /// `catch_up`, as if they had not been created yet.
    #[arg(long, env = "IDEM_SCHEDULE_LOOKAHEAD", default_value = "5s", value_parser = parse_duration)]
    schedule_lookahead: Duration,
    /// Refuse operations that honour Idempotency-Key when they come without
    /// one.
    #[arg(long, env = "IDEM_REQUIRE_IDEMPOTENCY_KEY")]
    require_idempotency_key: bool,
    /// How long Idempotency-Key records are kept (`24h`).
    #[arg(long, env = "IDEM_IDEMPOTENCY_TTL", default_value = "24h", value_parser = parse_duration)]
    idempotency_ttl: Duration,
    /// How long the lock of a request that never finished (its node
    /// crashed) keeps a key busy.
    #[arg(long, env = "IDEM_IDEMPOTENCY_LOCK", default_value = "60s", value_parser = parse_duration)]
    idempotency_lock: Duration,
    /// An origin allowed to call the API from a browser (repeatable; a
    /// comma-separated list in the environment); `*` allows any origin,
    /// without credentials (the API authenticates by bearer key).
    #[arg(long = "cors-origin", env = "IDEM_CORS_ORIGIN", value_delimiter = ',')]
    cors_origins: Vec<String>,
    /// The request-ID header whose value becomes a task's ID when a create
    /// names none in its body, `Idem-Task-Id` or
    /// `X-Fc-Stateful-Async-Invocation-Id`. The default is Function
    /// Compute's own, which ingresses do not inject; name a header that
    /// proxies set per request (such as `X-Request-Id`) only if every retry
    /// of a create carries the same value. A value that is not a valid task
    /// ID is ignored.
    #[arg(long, env = "IDEM_REQUEST_ID_HEADER", default_value = "x-fc-request-id", value_parser = parse_header_name)]
    request_id_header: reqwest::header::HeaderName,
    /// Log line format.
    #[arg(long, env = "IDEM_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

pub(crate) fn parse_header_name(s: &str) -> Result<reqwest::header::HeaderName, String> {
    reqwest::header::HeaderName::from_bytes(s.trim().as_bytes())
        .map_err(|_| format!("{s:?} is not a header name"))
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Durations in the short human form (`500ms`, `30s`, `5m`, `24h`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("{s:?} is not a duration like 500ms, 30s, 5m or 24h ({e})"))?;
    Duration::try_from(d).map_err(|_| format!("{s:?} must not be negative"))
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("IDEM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

async fn open_store(args: &ServeArgs, clock: Arc<dyn Clock>) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match &args.database_url {
        Some(url) => Arc::new(
            PostgresStore::open(url, args.database_max_connections, clock)
                .await
                .context("opening the PostgreSQL store")?,
        ),
        None => {
            std::fs::create_dir_all(&args.data_dir)
                .with_context(|| format!("creating {}", args.data_dir.display()))?;
            Arc::new(
                SqliteStore::open(args.data_dir.join("idem.db"), clock)
                    .await
                    .context("opening the SQLite store")?,
            )
        }
    })
}

/// Creates the first organization's admin on an empty store. A generated
/// key is printed once, on stdout, for the operator to keep.
async fn bootstrap(store: &dyn Store, given: Option<&str>) -> anyhow::Result<()> {
    let key = match given {
        Some(k) if k.trim().is_empty() => anyhow::bail!("--bootstrap-key must not be empty"),
        Some(k) => k.to_string(),
        None => generate_api_key(),
    };
    let created = store
        .bootstrap(NewApiKey {
            id: generate_id("key"),
            key_hash: hash_api_key(&key),
        })
        .await
        .context("creating the default organization")?;
    if created {
        tracing::info!("created organization 'default' with principal 'admin'");
        if given.is_none() {
            println!("admin API key (shown once): {key}");
        }
    }
    Ok(())
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    // Nodes sharing a PostgreSQL database read time from it, so that their
    // leases and Idempotency-Key locks agree.
    let clock: Arc<dyn Clock> = match &args.database_url {
        Some(url) => DatabaseClock::start(url)
            .await
            .context("reading the database's clock")?,
        None => Arc::new(SystemClock),
    };
    let store = open_store(&args, clock.clone()).await?;
    bootstrap(store.as_ref(), args.bootstrap_key.as_deref()).await?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let app = App::new(
        store,
        clock,
        Options {
            max_body_bytes: args.max_body_bytes,
            sweep_interval: args.sweep_interval,
            lease_grace: args.lease_grace,
            misfire_grace: args.misfire_grace,
            schedule_lookahead: args.schedule_lookahead,
            idempotency: idem_server::api::idempotency::IdempotencyOptions {
                required: args.require_idempotency_key,
                ttl: args.idempotency_ttl,
                lock: args.idempotency_lock,
            },
            cors_origins: args.cors_origins,
            request_id_header: args.request_id_header,
            ..Options::default()
        },
    );
    println!("idem listening on http://{addr}");
    std::io::stdout().flush()?;
    idem_server::serve(app, listener, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C: both `serve` and `proxy` stop on it.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing the SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down");
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn parses_the_short_human_form() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("24h").unwrap(), Duration::from_secs(86_400));
        assert!(parse_duration("soon").is_err());
    }
}
