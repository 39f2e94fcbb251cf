//! Idem's server: the HTTP API and the background work of `idem serve`.
//!
//! [`serve`] wires an opened [`Store`] to the router in [`api`] and starts
//! the [`sweeper`]; the binary only parses flags and opens the store.

pub mod api;
mod auth;
mod context;
pub mod sweeper;

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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_body_bytes: 1 << 20,
            sweep_interval: Duration::from_secs(30),
            sweep_batch: 1000,
            auth_cache_ttl: Duration::from_secs(2),
        }
    }
}

/// What every handler shares.
pub struct App {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub options: Options,
    auth: auth::AuthCache,
}

impl App {
    pub fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>, options: Options) -> Arc<App> {
        Arc::new(App {
            auth: auth::AuthCache::new(options.auth_cache_ttl),
            store,
            clock,
            options,
        })
    }
}

/// The complete HTTP service.
pub fn router(app: Arc<App>) -> Router {
    let limit = app.options.max_body_bytes;
    api::router(app)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn(context::with_context))
}

/// Serves the API on `listener` and runs the background work until
/// `shutdown` resolves, then drains in-flight requests.
pub async fn serve(
    app: Arc<App>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let sweeper = tokio::spawn(sweeper::run(app.clone(), stop_rx));
    let result = axum::serve(listener, router(app))
        .with_graceful_shutdown(shutdown)
        .await;
    let _ = stop_tx.send(true);
    let _ = sweeper.await;
    result
}
