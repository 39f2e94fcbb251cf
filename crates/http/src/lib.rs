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

pub use fingerprint::{BodyError, Digest, Fingerprint, Version};
pub use key::{IdempotencyKey, KeyError};

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
