//! The store's operations, one module per table, written once for both
//! backends over [`Conn`](crate::driver::Conn): statement text, parameters,
//! and the rules that decide between statements.

pub(crate) mod dispatch;
pub(crate) mod due;
pub(crate) mod events;
pub(crate) mod idempotency;
pub(crate) mod jobs;
pub(crate) mod oidc_keys;
mod org_usage;
pub(crate) mod queues;
pub(crate) mod stats;
pub(crate) mod tasks;
pub(crate) mod tenancy;
pub(crate) mod work;

use crate::Error;
use crate::records::PageRequest;

pub(crate) use org_usage::{counted, released, within_quota};

pub(crate) fn not_found(kind: &'static str, id: &str) -> Error {
    Error::NotFound {
        kind,
        id: id.to_string(),
    }
}

/// The rows a page query asks for: one more than the page, to tell whether
/// another follows.
pub(crate) fn limit(page: &PageRequest) -> i64 {
    i64::from(page.limit) + 1
}

/// Where a page by name or ID continues.
pub(crate) fn after(page: &PageRequest) -> &str {
    page.after.as_deref().unwrap_or_default()
}
