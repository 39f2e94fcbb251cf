//! Idempotency-Key support for HTTP services.
//!
//! A client that retries a request after a timeout cannot know whether the
//! first attempt did its work. Sending the same `Idempotency-Key` on every
//! attempt lets the server run the request once and answer retries with the
//! original result. This crate holds the parts of that mechanism that do not
//! depend on a store or a framework:
//!
//! * [`key`] parses and validates the `Idempotency-Key` header (1–255
//!   printable ASCII characters, bare or as a Structured-Fields string).
//! * [`fingerprint`] computes what makes a retry *the same request*: one
//!   digest each for the method, the path, the query and the body, under a
//!   versioned canonicalization. A key reused with a different fingerprint is
//!   a client error (422 `IDEMPOTENCY_KEY_MISMATCH`), and the separate digests
//!   name what differs.
//! * [`layer`] is the tower layer that applies the protocol to the routes it
//!   wraps: it takes the key's lock in a [`RecordStore`], runs the handler
//!   once (on its own task, so a client that gives up does not cancel it),
//!   answers a concurrent twin 409 `IDEMPOTENCY_KEY_IN_PROGRESS`, records only
//!   success, and replays. The application chooses how a record completes:
//!   [`IdempotencyLayer::atomic`] (the safe mode) lets the handler complete
//!   the record in its own transaction, using the [`IdempotencyContext`] the
//!   layer puts in the request, and replays the resource as it is now;
//!   [`IdempotencyLayer::non_atomic`] stores the response afterwards, which a
//!   crash in between can lose, and replays that copy.
//!
//! ```no_run
//! use axum::{Router, routing::post};
//! use idem_http::{Config, IdempotencyLayer, MemoryRecordStore};
//! use std::sync::Arc;
//!
//! async fn create_payment() -> &'static str { "created" }
//!
//! // The handler cannot share a transaction with this in-memory record
//! // store, so the layer records responses itself (non-atomic). A handler
//! // that writes to the same database as its records should use
//! // `IdempotencyLayer::atomic` instead.
//! let keys = IdempotencyLayer::non_atomic(
//!     Arc::new(MemoryRecordStore::new()),
//!     Config::default(),
//!     // Whose key: one scope per caller.
//!     |parts| parts.headers.get("authorization")?.to_str().ok().map(String::from),
//! );
//! let app: Router = Router::new().route("/payments", post(create_payment).layer(keys));
//! ```
//!
//! `examples/payments.rs` is a runnable application.
//!
//! # What the fingerprint covers
//!
//! The method; the path, with escapes of unreserved characters decoded; the
//! query parameters, in any order of names but with the order of repeated
//! values kept; and the body. JSON bodies are compared as documents: object
//! key order, whitespace and string escapes do not matter, array order does,
//! and duplicate keys are rejected. `multipart/form-data` bodies are compared
//! part by part, independently of the boundary. Other bodies are compared as
//! media type and bytes. Headers other than `Content-Type` (which selects how
//! the body is read) are not part of it.
//!
//! # Why JSON numbers are kept as text
//!
//! The fingerprint keeps each JSON number exactly as it was written: `1`,
//! `1.0`, `1e0` and `1E0` all differ, as do `0` and `-0`. Whether such
//! spellings mean the same thing is the handler's business (an integer field
//! may reject `1.0`; a decimal amount may keep digits a float would lose), so
//! declaring them equal could replay a result for a request that would have
//! behaved differently. A genuine retry repeats the same bytes, so nothing is
//! lost by being exact. General-purpose JSON libraries convert numbers, and
//! RFC 8785 re-serializes them, so the crate carries its own small
//! validating parser.

#![deny(missing_docs)]

pub mod fingerprint;
pub mod key;
pub mod layer;
pub mod memory;
pub mod record;

pub use fingerprint::{BodyError, Digest, Fingerprint, Version};
pub use key::{IdempotencyKey, KeyError};
pub use layer::{
    Claim, Config, IDEMPOTENT_REPLAYED, IdempotencyContext, IdempotencyLayer, Mode, Rejection,
    Replayer, panic_message,
};
pub use memory::MemoryRecordStore;
pub use record::{Begin, BeginRequest, CompletedRecord, RecordStore, ResourceRef, StoredResponse};

/// Strips HTTP optional whitespace (spaces and tabs) from both ends.
pub(crate) fn trim_ows(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}
