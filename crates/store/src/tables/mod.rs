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
use crate::driver::{Conn, Dialect, args};
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

/// Takes one of `quota`'s resources in `org`'s counter, or refuses when the
/// organization holds its limit already. Run it in the creation's
/// transaction, before the insert, whose failure rolls the count back with
/// it. One statement, whatever the organization's size: the upsert's lock on
/// the counter row (PostgreSQL) makes concurrent creations of one
/// organization's resource take it one after the other, each seeing the
/// count the one before committed; SQLite's one writer already does. The
/// count is taken under no limit too, for a limit raised or lowered later.
pub(crate) async fn within_quota<C: Conn>(
    c: &C,
    quotas: &Quotas,
    quota: Quota,
    org: &str,
) -> crate::Result<()> {
    let limit = quota.of(quotas);
    let taken = c
        .query_opt(
            "INSERT INTO org_usage (org, resource, n) VALUES ($1, $2, 1) \
             ON CONFLICT (org, resource) DO UPDATE SET n = org_usage.n + 1 \
             WHERE org_usage.n < $3 RETURNING n",
            &args![org, quota.resource(), quotas::ceiling(limit)],
            |r| r.i64(0),
        )
        .await?;
    match taken {
        Some(_) => Ok(()),
        None => Err(Error::ResourceExhausted(QuotaExceeded { quota, limit })),
    }
}

/// Counts one resource made without a quota check: an organization's
/// first principal, key and secret, and what a bootstrap restores.
pub(crate) async fn counted<C: Conn>(c: &C, quota: Quota, org: &str) -> crate::Result<()> {
    c.execute(
        "INSERT INTO org_usage (org, resource, n) VALUES ($1, $2, 1) \
         ON CONFLICT (org, resource) DO UPDATE SET n = org_usage.n + 1",
        &args![org, quota.resource()],
    )
    .await?;
    Ok(())
}

/// Runs `delete`, which answers how many of `quota`'s resources in `org` it
/// removed, and gives those back to the counter in the same transaction.
/// On PostgreSQL the counter row is locked first, as a creation takes it
/// before its insert: a deletion that held the resource's row while
/// waiting for the counter could deadlock with a creation of the same
/// name waiting for that row.
pub(crate) async fn removing<C: Conn>(
    c: &C,
    quota: Quota,
    org: &str,
    delete: impl AsyncFnOnce() -> crate::Result<u64>,
) -> crate::Result<u64> {
    if C::DIALECT == Dialect::Postgres {
        c.query_opt(
            "SELECT 1 FROM org_usage WHERE org = $1 AND resource = $2 FOR UPDATE",
            &args![org, quota.resource()],
            |_| Ok(()),
        )
        .await?;
    }
    let n = delete().await?;
    if n > 0 {
        c.execute(
            "UPDATE org_usage SET n = n - $1 WHERE org = $2 AND resource = $3",
            &args![n as i64, org, quota.resource()],
        )
        .await?;
    }
    Ok(n)
}
