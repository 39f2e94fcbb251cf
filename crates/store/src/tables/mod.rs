//! The store's operations, one module per table, written once for both
//! backends over [`Conn`](crate::driver::Conn): statement text, parameters,
//! and the rules that decide between statements.

pub(crate) mod dispatch;
pub(crate) mod events;
pub(crate) mod idempotency;
pub(crate) mod jobs;
pub(crate) mod oidc_keys;
pub(crate) mod queues;
pub(crate) mod stats;
pub(crate) mod tasks;
pub(crate) mod tenancy;
pub(crate) mod work;

use crate::Error;
use crate::driver::{Conn, args};
use crate::quotas::{self, Quota, QuotaExceeded, Quotas};
use crate::records::PageRequest;
use crate::sql::Row as _;

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

/// Refuses one more of `quota`'s resources in `org` when it is full. Run it
/// in the creation's transaction, before the insert: it locks the
/// organization's row first, so that concurrent creations in one
/// organization count one after the other (SQLite's one writer already
/// does). `count` is a statement counting the organization's resources,
/// with the organization as `$1`.
pub(crate) async fn within_quota<C: Conn>(
    c: &C,
    quotas: &Quotas,
    quota: Quota,
    org: &str,
    count: &str,
) -> crate::Result<()> {
    let limit = quota.of(quotas);
    if limit == 0 {
        return Ok(());
    }
    let lock = format!(
        "SELECT 1 FROM organizations WHERE name = $1 {}",
        c.lock("FOR NO KEY UPDATE")
    );
    c.query_opt(&lock, &args![org], |_| Ok(())).await?;
    let n = c
        .query_opt(count, &args![org], |r| r.i64(0))
        .await?
        .unwrap_or(0);
    if quotas::allows(limit, n) {
        Ok(())
    } else {
        Err(Error::ResourceExhausted(QuotaExceeded { quota, limit }))
    }
}
