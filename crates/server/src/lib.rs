//! Idem's server: the HTTP API and the background work of `idem serve`.
//!
//! [`serve`] wires an opened [`Store`] to the router in [`api`] and starts
//! the [`sweeper`]; the binary only parses flags and opens the store.

pub mod api;
mod auth;
mod context;
pub mod dispatch;
pub mod oidc;
pub mod scheduler;
pub mod supervise;
pub mod sweeper;
pub mod telemetry;
pub mod traces;
pub mod ui;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use idem_core::Clock;
use idem_store::Store;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Settings of a running server.
#[derive(Debug, Clone)]
pub struct Options {
    /// Largest accepted request body; larger ones get 413.
    pub max_body_bytes: usize,
    /// How often expired tombstones are swept.
    pub sweep_interval: Duration,
    /// Most rows one sweep deletes per transaction.
    pub sweep_batch: u32,
    /// How long a resolved API key is trusted without asking the store.
    pub auth_cache_ttl: Duration,
    /// Added to a task's dispatch deadline to form an attempt's lease.
    pub lease_grace: Duration,
    /// Most attempts this node runs at once, over all queues.
    pub dispatch_max_in_flight: usize,
    /// Most of those one organization may hold; `None` for a fair share
    /// (`idem_store::dispatch::fair_share_cap`).
    pub dispatch_max_in_flight_per_org: Option<u32>,
    /// How long a stopping node lets open requests and running attempts
    /// finish; attempts still running then are given back.
    pub shutdown_grace: Duration,
    /// Idempotency-Key handling.
    pub idempotency: api::idempotency::IdempotencyOptions,
    /// Origins allowed to call the API from a browser.
    pub cors_origins: Vec<String>,
    /// The request-ID header whose value becomes a task's ID when a create
    /// names none (API.md §3).
    pub request_id_header: http::HeaderName,
    /// How late a cron instant may be fired and still count as on time;
    /// older ones were missed and follow the job's `catch_up` policy.
    pub misfire_grace: Duration,
    /// How long before its instant a run is created (as a task scheduled
    /// for the instant).
    pub schedule_lookahead: Duration,
    /// Which addresses deliveries may go to (`--target-policy`).
    pub target_policy: idem_core::target_policy::TargetPolicy,
    /// Attempts kept per task; older ones are deleted as new ones start.
    pub max_attempts_kept: u32,
    /// Header-read and idle timeouts of connections, and how many there may
    /// be at once.
    pub connections: idem_edge::Limits,
    /// Longest a request may take before it is answered 503.
    pub request_timeout: Duration,
    /// Who may scrape `/metrics`, which tenant names it shows, how often
    /// it counts the tasks.
    pub metrics: telemetry::MetricsOptions,
    /// The console at `/ui`: its session cookie and lifetime.
    pub console: ui::ConsoleOptions,
    /// The issuer, key rotation and lifetime of the ID tokens sent to
    /// targets that ask for them.
    pub oidc: oidc::OidcOptions,
    /// Times the dispatcher panics as it starts, before it runs: a test
    /// hook for the supervision of background work (0 in production).
    pub test_dispatcher_panics: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_body_bytes: 1 << 20,
            sweep_interval: Duration::from_secs(30),
            sweep_batch: 1000,
            auth_cache_ttl: Duration::from_secs(2),
            lease_grace: Duration::from_secs(30),
            dispatch_max_in_flight: 2000,
            dispatch_max_in_flight_per_org: None,
            shutdown_grace: Duration::from_secs(30),
            idempotency: Default::default(),
            cors_origins: Vec::new(),
            request_id_header: http::HeaderName::from_static("x-fc-request-id"),
            misfire_grace: Duration::try_from(idem_core::schedule::ON_TIME_TOLERANCE)
                .expect("a positive tolerance"),
            schedule_lookahead: Duration::from_secs(5),
            target_policy: Default::default(),
            max_attempts_kept: 100,
            connections: idem_edge::Limits::default(),
            request_timeout: Duration::from_secs(60),
            metrics: Default::default(),
            console: Default::default(),
            oidc: Default::default(),
            test_dispatcher_panics: 0,
        }
    }
}

/// What every handler shares.
pub struct App {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub options: Options,
    /// Dispatch wake-ups and task completions; see [`dispatch::Handle`].
    pub dispatch: dispatch::Handle,
    /// Job change wake-ups; see [`scheduler::Handle`].
    pub scheduler: scheduler::Handle,
    /// Signs the ID tokens of deliveries; serves the discovery document
    /// and the JWKS.
    pub oidc: Arc<oidc::Issuer>,
    /// The background tasks down now; see [`supervise`].
    pub health: supervise::Health,
    /// Panics of `Options::test_dispatcher_panics` still to come.
    dispatcher_panics_left: std::sync::atomic::AtomicU32,
    auth: auth::AuthCache,
    metrics: telemetry::Metrics,
}

impl App {
    pub fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>, options: Options) -> Arc<App> {
        telemetry::handle();
        Arc::new(App {
            auth: auth::AuthCache::new(options.auth_cache_ttl),
            health: supervise::Health::default(),
            dispatcher_panics_left: options.test_dispatcher_panics.into(),
            metrics: telemetry::Metrics::new(&options.metrics),
            dispatch: dispatch::Handle::default(),
            scheduler: scheduler::Handle::default(),
            oidc: Arc::new(oidc::Issuer::new(
                options.oidc.clone(),
                store.clone(),
                clock.clone(),
            )),
            store,
            clock,
            options,
        })
    }
}

/// The complete HTTP service.
pub fn router(app: Arc<App>) -> Router {
    let limit = app.options.max_body_bytes;
    // The console calls the API router in process, with the body limit it
    // has for everyone else.
    let api = api::router(app.clone()).layer(DefaultBodyLimit::max(limit));
    let options = app.options.clone();
    edge(api.clone().merge(ui::router(app, api)), &options)
}

/// What every route's answer passes through: the request context, the
/// time limit, panics answered as problems, CORS.
pub fn edge(routes: Router, options: &Options) -> Router {
    let cors = cors(&options.cors_origins, &options.request_id_header);
    let timeout = options.request_timeout;
    // The context is outermost so that every answer carries the request ID,
    // the preflights CORS answers on its own included; it bounds the time of
    // the rest, so that the timeout's problem document carries it too. A
    // panic is caught inside it, so that its answer carries the ID too.
    routes
        .layer(cors)
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            api::problem::from_panic,
        ))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                context::with_context(timeout, req, next)
            },
        ))
}

/// Browsers may send `Idempotency-Key` and read the headers that tell a
/// replay and when to retry.
fn cors(origins: &[String], request_id_header: &http::HeaderName) -> tower_http::cors::CorsLayer {
    use http::{HeaderName, HeaderValue, Method, header};
    use tower_http::cors::{AllowOrigin, CorsLayer};
    // `*` means any origin. The API authenticates with a bearer key, never
    // a cookie, so no credentials are allowed and any origin is safe to
    // name; a list holding `*` would make tower-http panic.
    let allow = if origins.iter().any(|o| o.trim() == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o).ok())
                .collect::<Vec<_>>(),
        )
    };
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::POST, Method::PATCH, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("idem-task-id"),
            HeaderName::from_static("x-fc-stateful-async-invocation-id"),
            request_id_header.clone(),
        ])
        .expose_headers([
            HeaderName::from_static("idempotent-replayed"),
            header::RETRY_AFTER,
            header::LOCATION,
            HeaderName::from_static(context::REQUEST_ID_HEADER),
        ])
}

/// Runs `run(app, stop)` under [`supervise::supervise`] on a task of its
/// own.
fn watched<F, Fut>(
    app: &Arc<App>,
    task: &'static str,
    stop: &tokio::sync::watch::Receiver<bool>,
    run: F,
) -> tokio::task::JoinHandle<()>
where
    F: Fn(Arc<App>, tokio::sync::watch::Receiver<bool>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (app, stop) = (app.clone(), stop.clone());
    tokio::spawn(async move {
        let restart = || run(app.clone(), stop.clone());
        supervise::supervise(&app.health, task, stop.clone(), restart).await
    })
}

/// Serves the API on `listener` and runs the background work until
/// `shutdown` resolves, then drains in-flight requests and attempts
/// together.
pub async fn serve(
    app: Arc<App>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let sweeper = watched(&app, "sweeper", &stop_rx, sweeper::run);
    scheduler::drop_missed_runs(&app).await;
    let dispatcher = watched(&app, "dispatcher", &stop_rx, dispatch::run);
    let scheduler = watched(&app, "scheduler", &stop_rx, scheduler::run);
    let telemetry = tokio::spawn(telemetry::run(stop_rx.clone()));
    let signal = stop_tx.clone();
    let shutdown_watch = tokio::spawn(async move {
        shutdown.await;
        signal.send_replace(true);
    });
    let mut http_stop = stop_rx.clone();
    let limits = app.options.connections;
    let grace = app.options.shutdown_grace;
    let http = idem_edge::serve(listener, router(app), limits, async move {
        let _ = http_stop.wait_for(|stop| *stop).await;
    });
    // Requests get the grace that attempts get: a long poll still open
    // after it must not keep the node from stopping (the service manager
    // would kill it, attempts and all).
    let mut grace_over = stop_rx;
    let result = tokio::select! {
        result = http => result,
        () = async {
            let _ = grace_over.wait_for(|stop| *stop).await;
            tokio::time::sleep(grace).await;
        } => {
            tracing::warn!("requests still open after the shutdown grace were cut off");
            Ok(())
        }
    };
    stop_tx.send_replace(true);
    shutdown_watch.abort();
    let _ = sweeper.await;
    let _ = scheduler.await;
    let _ = dispatcher.await;
    let _ = telemetry.await;
    result
}
