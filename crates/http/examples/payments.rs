//! An axum application that makes its payment endpoint safe to retry with
//! `idem_http`, keeping records in its own store.
//!
//! The handler cannot share a transaction with the record store here, so
//! the layer runs in the non-atomic mode: it stores the successful response
//! after the handler returns. Run it and try:
//!
//! ```sh
//! cargo run -p idem-http --example payments &
//! curl -si -X POST localhost:3000/payments -H 'Idempotency-Key: order-7' \
//!      -H 'Content-Type: application/json' -d '{"amount": 100}'
//! # the same again: the same payment, with Idempotent-Replayed: true
//! ```

use axum::Router;
use axum::extract::{Json, State};
use axum::http::StatusCode;
use axum::routing::post;
use idem_http::{Config, IdempotencyLayer, MemoryRecordStore};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
struct Ledger {
    next_id: AtomicU64,
}

async fn charge(
    State(ledger): State<Arc<Ledger>>,
    Json(body): Json<serde_json::Value>,
) -> (StatusCode, Json<serde_json::Value>) {
    let id = ledger.next_id.fetch_add(1, Ordering::SeqCst) + 1;
    (
        StatusCode::CREATED,
        Json(serde_json::json!({"payment": id, "amount": body["amount"]})),
    )
}

/// The application: only the payment route honours keys.
fn app() -> Router {
    // The ledger is not the record store, so the layer records each
    // response itself: non-atomic, chosen explicitly.
    let keys = IdempotencyLayer::non_atomic(
        Arc::new(MemoryRecordStore::new()),
        Config::default(),
        // Whose key: here one tenant per API token.
        |parts| {
            parts
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
                .or_else(|| Some("anonymous".into()))
        },
    );
    Router::new()
        .route("/payments", post(charge).layer(keys))
        .with_state(Arc::new(Ledger::default()))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app()).await
}
