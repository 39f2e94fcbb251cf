//! `idem serve`.

use anyhow::Context;
use clap::{Args, ValueEnum};
use idem_core::target_policy::{Exception, Mode, TargetPolicy};
use idem_core::tenancy::{generate_api_key, generate_id, hash_api_key};
use idem_core::{Clock, SystemClock};
use idem_server::api::views::EventViews;
use idem_server::{App, Options};
use idem_store::postgres::{DatabaseClock, PoolOptions, PostgresStore};
use idem_store::sqlite::SqliteStore;
use idem_store::{Bootstrap, NewApiKey, Store};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "IDEM_LISTEN", default_value = "127.0.0.1:7070")]
    listen: String,
    /// The URL targets reach this server at: the `iss` of the OIDC ID tokens
    /// sent to targets, and the base of the discovery document and JWKS
    /// they verify them with. Default: http:// and the address listened on.
    #[arg(long, env = "IDEM_PUBLIC_URL", value_parser = parse_public_url)]
    public_url: Option<String>,
    /// How long an organization's OIDC signing key is used before a new one
    /// is made; the old one stays published until its tokens expired.
    #[arg(long, env = "IDEM_OIDC_KEY_ROTATION", default_value = "720h", value_parser = parse_key_rotation)]
    oidc_key_rotation: Duration,
    /// Lifetime of the OIDC ID tokens sent to targets (at most 1h).
    #[arg(long, env = "IDEM_OIDC_TOKEN_LIFETIME", default_value = "1h", value_parser = parse_token_lifetime)]
    oidc_token_lifetime: Duration,
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
    /// Threads that serve requests and run deliveries and schedules.
    /// Default: one per core, less one (at least one) with the embedded
    /// SQLite store, which leaves a core to its writer thread.
    #[arg(long, env = "IDEM_WORKER_THREADS",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    worker_threads: Option<u16>,
    /// Refuse to start on a store with pending migrations instead of
    /// applying them (`idem migrate` does, as a step of its own).
    #[arg(long, env = "IDEM_NO_MIGRATE")]
    no_migrate: bool,
    /// API key of the first admin of organization `default`, instead of a
    /// generated one (at least 32 characters). Used when the store is empty,
    /// or when no admin of `default` holds a key any more (it is then given
    /// to principal `admin`); ignored otherwise.
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
    /// On SIGTERM, how long running deliveries and open requests get to
    /// finish; deliveries still running then are given back without
    /// counting an attempt, so another node starts them at once.
    #[arg(long, env = "IDEM_SHUTDOWN_GRACE", default_value = "30s", value_parser = parse_duration)]
    shutdown_grace: Duration,
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
    /// Which addresses tasks and job runs may be delivered to. `allow-all`
    /// suits a server whose only user is its operator; a server shared by
    /// tenants should use `deny-private`, which refuses loopback,
    /// link-local (cloud metadata services included), private, shared
    /// (CGNAT), unique-local, multicast and reserved addresses, judged on
    /// the address each connection goes to after DNS resolution. A refused
    /// attempt fails the task at once with `refused by target policy`; a
    /// create whose URL holds a refused IP literal answers 400. Under
    /// `deny-private` deliveries ignore HTTP(S)_PROXY.
    #[arg(long, env = "IDEM_TARGET_POLICY", value_enum, default_value_t = TargetPolicyMode::AllowAll)]
    target_policy: TargetPolicyMode,
    /// An exception to `--target-policy deny-private` (repeatable; a
    /// comma-separated list in the environment): a network in CIDR form
    /// (`10.1.0.0/16`), one address (`127.0.0.1`), or a host name
    /// (`hooks.internal`) whose every address may be reached.
    #[arg(long = "target-allow", env = "IDEM_TARGET_ALLOW", value_delimiter = ',', value_parser = parse_target_allow)]
    target_allow: Vec<Exception>,
    /// A test hook: the dispatcher panics this many times as it starts,
    /// for testing that the node restarts it and reports it not ready.
    #[arg(
        long,
        env = "IDEM_TEST_DISPATCHER_PANICS",
        default_value_t = 0,
        hide = true
    )]
    test_dispatcher_panics: u32,
    /// Attempts kept per task (at least 1): when a task starts an attempt
    /// past this many, its oldest are deleted, so a task retried without end
    /// keeps bounded history. Its `attempt_count` still counts every attempt.
    #[arg(long, env = "IDEM_MAX_ATTEMPTS_KEPT", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    max_attempts_kept: u32,
    /// Which tenant names the series of `/metrics` carry: `none` (totals
    /// only), `org` (per organization) or `org-queue` (per organization and
    /// queue). Anyone who may scrape sees them; the series of a deleted
    /// queue go.
    #[arg(long, env = "IDEM_METRICS_LABELS", value_enum, default_value_t = MetricsLabels::None)]
    metrics_labels: MetricsLabels,
    /// A bearer token `/metrics` requires (`Authorization: Bearer
    /// <token>`); without one, `/metrics` is open to anyone who reaches the
    /// port.
    #[arg(long, env = "IDEM_METRICS_TOKEN", hide_env_values = true)]
    metrics_token: Option<String>,
    /// How long one count of the tasks by state (`idem_queue_tasks`)
    /// answers scrapes, however often they come; `0s` counts on every
    /// scrape.
    #[arg(long, env = "IDEM_METRICS_REFRESH", default_value = "10s", value_parser = parse_duration)]
    metrics_refresh: Duration,
    #[command(flatten)]
    logs: crate::logs::LogArgs,
    #[command(flatten)]
    traces: crate::traces::TraceArgs,
    #[command(flatten)]
    tenant_limits: crate::tenants::TenantLimits,
    #[command(flatten)]
    connections: ConnectionArgs,
    /// Longest a request may take, body included, before it is answered 503
    /// `UNAVAILABLE`; longer than the longest `wait_ms` (30 s).
    #[arg(long, env = "IDEM_REQUEST_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    request_timeout: Duration,
    #[command(flatten)]
    database: DatabaseTimeoutArgs,
    /// Mark the console's session cookie `Secure` even when the TLS proxy
    /// in front sends no `X-Forwarded-Proto: https` (with it, the cookie is
    /// `Secure` anyway).
    #[arg(long, env = "IDEM_CONSOLE_SECURE_COOKIE")]
    console_secure_cookie: bool,
    /// How long a console session lasts without a request.
    #[arg(long, env = "IDEM_CONSOLE_SESSION_IDLE", default_value = "8h", value_parser = parse_duration)]
    console_session_idle: Duration,
    /// Console login attempts one client address may make per minute
    /// (more are answered 429 with `Retry-After`); 0: no limit.
    #[arg(long, env = "IDEM_CONSOLE_LOGINS_PER_MINUTE", default_value_t = 10)]
    console_logins_per_minute: u32,
}

/// What a client's connection may hold, for `serve` and `proxy`.
#[derive(Args, Debug)]
pub struct ConnectionArgs {
    /// A new connection whose first request has not arrived whole this long
    /// after it opened is closed, as is one whose later request's headers
    /// are not complete this long after their first byte.
    #[arg(long, env = "IDEM_HEADER_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    header_timeout: Duration,
    /// A keep-alive connection without a request for this long is closed.
    #[arg(long, env = "IDEM_IDLE_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    idle_timeout: Duration,
    /// Most connections served at once; more wait to be accepted until one
    /// closes.
    #[arg(long, env = "IDEM_MAX_CONNECTIONS", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// Most connections open at once from one client address; more are
    /// closed as they come, so one client cannot take every slot. 0: no
    /// limit (behind a proxy that is every client's address, raise it).
    #[arg(long, env = "IDEM_MAX_CONNECTIONS_PER_IP", default_value_t = 256)]
    max_connections_per_ip: u32,
}

impl ConnectionArgs {
    pub fn limits(&self) -> idem_edge::Limits {
        idem_edge::Limits {
            header_timeout: self.header_timeout,
            idle_timeout: self.idle_timeout,
            max_connections: self.max_connections as usize,
            max_connections_per_ip: self.max_connections_per_ip as usize,
        }
    }
}

impl DatabaseTimeoutArgs {
    pub fn timeouts(&self) -> idem_postgres_tls::Timeouts {
        idem_postgres_tls::Timeouts {
            acquire_timeout: self.database_acquire_timeout,
            statement_timeout: self.database_statement_timeout,
        }
    }
}

/// How long a PostgreSQL store is waited on, for `serve` and `proxy`.
#[derive(Args, Debug)]
pub struct DatabaseTimeoutArgs {
    /// Longest wait for a PostgreSQL connection from the pool; past it the
    /// request is answered 503 `UNAVAILABLE` rather than queued on.
    #[arg(long, env = "IDEM_DATABASE_ACQUIRE_TIMEOUT", default_value = "5s", value_parser = parse_duration)]
    database_acquire_timeout: Duration,
    /// `statement_timeout` of every PostgreSQL connection: a statement
    /// running longer is cancelled and its request answered 503
    /// `UNAVAILABLE`. Also its `idle_in_transaction_session_timeout`, so
    /// that a node that vanished mid-transaction holds no locks past it.
    /// `0s` turns both off.
    #[arg(long, env = "IDEM_DATABASE_STATEMENT_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    database_statement_timeout: Duration,
}

/// Fewer characters than a generated key's entropy would need make a key
/// that can be guessed; an administrator's key guards every organization.
const MIN_BOOTSTRAP_KEY_CHARS: usize = 32;

/// Checked before the store is opened, and never through clap, whose
/// message would echo the refused key.
fn check_bootstrap_key(s: &str) -> anyhow::Result<()> {
    let chars = s.chars().count();
    if s.trim() != s || s.chars().any(char::is_control) {
        anyhow::bail!(
            "--bootstrap-key (IDEM_BOOTSTRAP_KEY) must not have spaces at either end \
             or control characters"
        );
    }
    if chars < MIN_BOOTSTRAP_KEY_CHARS {
        anyhow::bail!(
            "--bootstrap-key (IDEM_BOOTSTRAP_KEY) must be at least {MIN_BOOTSTRAP_KEY_CHARS} \
             characters long, it has {chars}; without it, a generated key is printed"
        );
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum MetricsLabels {
    /// Totals over every organization and queue.
    None,
    /// Per organization.
    Org,
    /// Per organization and queue.
    OrgQueue,
}

impl From<MetricsLabels> for idem_server::telemetry::MetricsLabels {
    fn from(l: MetricsLabels) -> Self {
        match l {
            MetricsLabels::None => Self::None,
            MetricsLabels::Org => Self::Org,
            MetricsLabels::OrgQueue => Self::OrgQueue,
        }
    }
}

pub(crate) fn parse_header_name(s: &str) -> Result<reqwest::header::HeaderName, String> {
    reqwest::header::HeaderName::from_bytes(s.trim().as_bytes())
        .map_err(|_| format!("{s:?} is not a header name"))
}

fn parse_target_allow(s: &str) -> Result<Exception, String> {
    s.parse()
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TargetPolicyMode {
    /// Any address: for a server whose only user is its operator.
    AllowAll,
    /// Refuse private, loopback, link-local and reserved addresses.
    DenyPrivate,
}

fn parse_public_url(s: &str) -> Result<String, String> {
    idem_server::oidc::parse_issuer(s)
}

fn parse_key_rotation(s: &str) -> Result<Duration, String> {
    match parse_duration(s)? {
        d if d < Duration::from_secs(1) => Err(format!("{s:?} must be at least 1s")),
        d => Ok(d),
    }
}

fn parse_token_lifetime(s: &str) -> Result<Duration, String> {
    let max = idem_server::oidc::MAX_TOKEN_LIFETIME;
    match parse_duration(s)? {
        d if d < Duration::from_secs(10) || d > max => {
            Err(format!("{s:?} must be between 10s and 1h"))
        }
        d => Ok(d),
    }
}

/// Durations in the short human form (`500ms`, `30s`, `5m`, `24h`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("{s:?} is not a duration like 500ms, 30s, 5m or 24h ({e})"))?;
    Duration::try_from(d).map_err(|_| format!("{s:?} must not be negative"))
}

/// The store, writing its events with the API's views: a receiver reads a
/// task or run as `GET` shows it.
async fn open_store(args: &ServeArgs, clock: Arc<dyn Clock>) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match &args.database_url {
        Some(url) => Arc::new(
            PostgresStore::open_with(
                url,
                PoolOptions {
                    max_connections: args.database_max_connections,
                    timeouts: args.database.timeouts(),
                },
                clock,
                Arc::new(EventViews),
            )
            .await
            .context("opening the PostgreSQL store")?,
        ),
        None => {
            std::fs::create_dir_all(&args.data_dir)
                .with_context(|| format!("creating {}", args.data_dir.display()))?;
            Arc::new(
                SqliteStore::open(args.data_dir.join("idem.db"), clock, Arc::new(EventViews))
                    .await
                    .context("opening the SQLite store")?,
            )
        }
    })
}

/// Makes sure organization `default` has an admin holding a key: on an
/// empty store, or one where no admin of `default` holds a key any more,
/// the given key (or a generated one, printed once on stdout for the
/// operator to keep) becomes its principal `admin`'s. Otherwise nothing
/// changes and the given key is ignored.
async fn bootstrap(store: &dyn Store, given: Option<&str>) -> anyhow::Result<()> {
    let key = match given {
        Some(k) => k.to_string(),
        None => generate_api_key(),
    };
    let outcome = store
        .bootstrap(NewApiKey {
            id: generate_id("key"),
            key_hash: hash_api_key(&key),
        })
        .await
        .context("making sure organization 'default' has an admin key")?;
    match outcome {
        Bootstrap::Created => {
            tracing::info!("created organization 'default' with principal 'admin'");
        }
        Bootstrap::Restored => tracing::warn!(
            "no admin of organization 'default' held an API key: principal 'admin' is an \
             admin again, holding the {} key",
            if given.is_some() {
                "bootstrap"
            } else {
                "printed"
            }
        ),
        Bootstrap::Unchanged => {
            if given.is_some() {
                tracing::info!(
                    "organization 'default' has an admin key already; the bootstrap key is ignored"
                );
            }
            return Ok(());
        }
    }
    if given.is_none() {
        println!("admin API key (shown once): {key}");
    }
    Ok(())
}

impl ServeArgs {
    /// The threads of the runtime `run` runs on (see `--worker-threads`).
    pub fn worker_threads(&self) -> usize {
        self.worker_threads.map_or_else(
            || {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                default_worker_threads(cores, self.database_url.is_none())
            },
            usize::from,
        )
    }
}

/// One worker thread per core, less one with the embedded SQLite store,
/// whose writer thread needs a core of its own: each idle worker the
/// runtime wakes to look for work took the writer's. On two cores, one
/// worker served one client's SQLite creates about 30 % faster than two,
/// 16 clients' within the spread of the rounds; on PostgreSQL it drained
/// pull queues about 8 % slower (docs/BENCHMARKS.md, "Worker threads").
fn default_worker_threads(cores: usize, sqlite: bool) -> usize {
    if sqlite {
        cores.saturating_sub(1).max(1)
    } else {
        cores.max(1)
    }
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let (exporter, spans) = args.traces.exporter()?.unzip();
    args.logs.init(spans);
    if let Some(key) = &args.bootstrap_key {
        check_bootstrap_key(key)?;
    }
    // Nodes sharing a PostgreSQL database read time from it, so that their
    // leases and Idempotency-Key locks agree.
    let clock: Arc<dyn Clock> = match &args.database_url {
        Some(url) => DatabaseClock::start(url)
            .await
            .context("reading the database's clock")?,
        None => Arc::new(SystemClock),
    };
    let metrics_token = match args.metrics_token.as_deref() {
        Some(t) if t.trim().is_empty() => anyhow::bail!("--metrics-token must not be empty"),
        Some(t) => Some(idem_server::telemetry::MetricsToken::new(t)),
        None => None,
    };
    if args.no_migrate {
        crate::migrate::Location::of(args.database_url.as_deref(), &args.data_dir)
            .schema()
            .await?
            .check_current()
            .context("--no-migrate")?;
    }
    let store = open_store(&args, clock.clone()).await?;
    store.set_quotas(args.tenant_limits.quotas());
    bootstrap(store.as_ref(), args.bootstrap_key.as_deref()).await?;
    let mode = match args.target_policy {
        TargetPolicyMode::AllowAll => Mode::AllowAll,
        TargetPolicyMode::DenyPrivate => Mode::DenyPrivate,
    };
    if mode == Mode::AllowAll && !args.target_allow.is_empty() {
        tracing::warn!("--target-allow has no effect under --target-policy allow-all");
    }
    let target_policy = TargetPolicy::new(mode, args.target_allow);
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let issuer = match args.public_url {
        Some(url) => url,
        None => {
            // An address that is every address is not one a target can use.
            let mut reachable = addr;
            if addr.ip().is_unspecified() {
                reachable.set_ip(match addr {
                    std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                    std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
                });
                tracing::warn!(
                    "--public-url is not set: OIDC tokens name http://{reachable} as their \
                     issuer, which only targets on this host can reach"
                );
            }
            format!("http://{reachable}")
        }
    };
    let app = App::new(
        store,
        clock,
        Options {
            test_dispatcher_panics: args.test_dispatcher_panics,
            max_body_bytes: args.max_body_bytes,
            sweep_interval: args.sweep_interval,
            lease_grace: args.lease_grace,
            shutdown_grace: args.shutdown_grace,
            misfire_grace: args.misfire_grace,
            schedule_lookahead: args.schedule_lookahead,
            idempotency: idem_server::api::idempotency::IdempotencyOptions {
                required: args.require_idempotency_key,
                ttl: args.idempotency_ttl,
                lock: args.idempotency_lock,
            },
            cors_origins: args.cors_origins,
            request_id_header: args.request_id_header,
            target_policy,
            max_attempts_kept: args.max_attempts_kept,
            dispatch_max_in_flight: args.tenant_limits.max_in_flight as usize,
            dispatch_max_in_flight_per_org: args.tenant_limits.max_in_flight_per_org,
            connections: args.connections.limits(),
            request_timeout: args.request_timeout,
            console: idem_server::ui::ConsoleOptions {
                secure_cookie: args.console_secure_cookie,
                session_idle: args.console_session_idle,
                logins_per_minute: args.console_logins_per_minute,
            },
            metrics: idem_server::telemetry::MetricsOptions {
                labels: args.metrics_labels.into(),
                token: metrics_token,
                refresh: args.metrics_refresh,
            },
            oidc: idem_server::oidc::OidcOptions {
                issuer,
                key_rotation: args.oidc_key_rotation,
                token_lifetime: args.oidc_token_lifetime,
            },
            ..Options::default()
        },
    );
    tracing::info!(
        worker_threads = tokio::runtime::Handle::current().metrics().num_workers(),
        "runtime started"
    );
    println!("idem listening on http://{addr}");
    std::io::stdout().flush()?;
    idem_server::serve(app, listener, shutdown_signal()).await?;
    tracing::info!("stopped");
    if let Some(exporter) = exporter {
        exporter.shutdown();
    }
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
    use super::{check_bootstrap_key, default_worker_threads, parse_duration};
    use std::time::Duration;

    #[test]
    fn a_bootstrap_key_has_at_least_32_characters() {
        let short = "k".repeat(31);
        let err = check_bootstrap_key(&short).unwrap_err().to_string();
        assert!(err.contains("at least 32 characters"), "{err}");
        assert!(!err.contains(&short), "the message echoes the key: {err}");
        assert!(check_bootstrap_key("").is_err());
        assert!(check_bootstrap_key(&format!(" {}", "k".repeat(40))).is_err());
        assert!(check_bootstrap_key(&format!("{}\n", "k".repeat(40))).is_err());
        check_bootstrap_key(&"k".repeat(32)).unwrap();
        check_bootstrap_key(&"é".repeat(32)).unwrap();
    }

    #[test]
    fn sqlite_leaves_its_writer_a_core() {
        assert_eq!(default_worker_threads(1, true), 1);
        assert_eq!(default_worker_threads(2, true), 1);
        assert_eq!(default_worker_threads(8, true), 7);
        assert_eq!(default_worker_threads(1, false), 1);
        assert_eq!(default_worker_threads(2, false), 2);
    }

    #[test]
    fn parses_the_short_human_form() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("24h").unwrap(), Duration::from_secs(86_400));
        assert!(parse_duration("soon").is_err());
    }
}
