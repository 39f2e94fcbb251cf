//! The counts per-organization quotas are checked against (`org_usage`),
//! so that a check costs the same however many resources the organization
//! holds ([`crate::quotas`]).
//!
//! Every function here runs last in its transaction, after the insert or
//! delete it counts, which a refusal rolls back: a count's row lock then
//! covers the commit alone rather than the whole creation, and a
//! transaction holding a count waits for no row but other counts (an
//! organization's creation takes three, a bootstrap two, in the order of
//! [`Quota`]'s variants, each in slot 0), so counts take part in no
//! deadlock.
//!
//! SQLite's one writer takes counts one at a time: each is one row (slot 0),
//! checked and taken by one upsert.
//!
//! On PostgreSQL one row per organization and resource made an
//! organization's creations wait for each other's commits, one at a time
//! under its lock (jobs went in at 340–850/s on a disk that commits
//! thousands per second). So each count is spread over [`SLOTS`] rows: a
//! creation adds one to its connection's slot, then reads the sum in a
//! statement of its own (a snapshot taken once it holds the slot). Every
//! creation not yet committed holds one slot, so the sum a creation reads
//! misses at most `SLOTS - 1` of them; one that finds room for all those
//! besides itself commits without waiting for anyone. Within `SLOTS` of the
//! limit it counts exactly ([`exactly`]): it locks every slot in order,
//! waiting for the creations in flight, and only then decides.

use crate::Error;
use crate::driver::{Conn, Dialect, args};
use crate::quotas::{self, Quota, QuotaExceeded, Quotas};
use crate::sql::Row as _;

/// The rows each PostgreSQL count is spread over: up to this many
/// creations of one organization's resource commit together. The
/// statements below name it as a literal ([`slots!`]).
const SLOTS: i64 = 16;
macro_rules! slots {
    () => {
        "16"
    };
}

/// Adds one to the connection's slot while the committed sum leaves room
/// for every slot's creation in flight and this one's again (`$3`), so
/// that the check after it ([`SQL_SUM`]) rarely falls within the margin
/// of the limit; no row changes (and no lock is taken) otherwise, or when
/// the slot has no row yet. `$1` org, `$2` resource.
const SQL_TAKE_IN_SLOT: &str = concat!(
    "UPDATE org_usage SET n = n + 1 WHERE org = $1 AND resource = $2 \
     AND slot = pg_backend_pid() % ",
    slots!(),
    " AND (SELECT sum(n) FROM org_usage WHERE org = $1 AND resource = $2) <= $3::bigint"
);

const SQL_SUM: &str = "SELECT sum(n)::bigint FROM org_usage WHERE org = $1 AND resource = $2";

/// Makes every slot's row, so that locking them all ([`SQL_LOCK_SLOTS`])
/// leaves no slot a creation could take meanwhile.
const SQL_MAKE_SLOTS: &str = concat!(
    "INSERT INTO org_usage (org, resource, slot, n) SELECT $1, $2, s - 1, 0 \
     FROM generate_series(1, ",
    slots!(),
    ") AS s ON CONFLICT DO NOTHING"
);

/// In slot order, so that two exact counts wait for each other rather than
/// deadlock.
const SQL_LOCK_SLOTS: &str = "SELECT n FROM org_usage WHERE org = $1 AND resource = $2 \
     ORDER BY slot FOR UPDATE";

/// Takes one of `quota`'s resources in `org`'s count, or refuses when the
/// organization holds its limit already. The count is kept under no limit
/// too, so that a limit raised or lowered later holds at once.
pub(crate) async fn within_quota<C: Conn>(
    c: &C,
    quotas: &Quotas,
    quota: Quota,
    org: &str,
) -> crate::Result<()> {
    let limit = quota.of(quotas);
    let ceiling = quotas::ceiling(limit);
    let refused = || Err(Error::ResourceExhausted(QuotaExceeded { quota, limit }));
    if C::DIALECT == Dialect::Sqlite {
        let taken = c
            .query_opt(
                "INSERT INTO org_usage (org, resource, slot, n) VALUES ($1, $2, 0, 1) \
                 ON CONFLICT (org, resource, slot) DO UPDATE SET n = org_usage.n + 1 \
                 WHERE org_usage.n < $3 RETURNING n",
                &args![org, quota.resource(), ceiling],
                |r| r.i64(0),
            )
            .await?;
        return if taken.is_some() { Ok(()) } else { refused() };
    }
    let resource = quota.resource();
    let room_for_all = ceiling.saturating_sub(2 * SLOTS);
    // Two statements, one after the other: the sum's snapshot must be
    // taken once the slot is held (sent together, a statement still being
    // prepared would reach the server after one that is not).
    let took = c
        .execute(SQL_TAKE_IN_SLOT, &args![org, resource, room_for_all])
        .await?;
    let sum = c
        .query_opt(SQL_SUM, &args![org, resource], |r| r.opt_i64(0))
        .await?;
    let sum = sum.flatten().unwrap_or(0);
    if took == 0 {
        return match exactly(c, org, resource).await? < ceiling {
            true => take_in_slot_0(c, org, resource).await,
            false => refused(),
        };
    }
    if sum > ceiling {
        return refused();
    }
    if sum + (SLOTS - 1) > ceiling {
        // Within reach of the limit, the creations in flight may be what
        // decides: run again, counting exactly as the committed sum now
        // says to (the lock on this slot goes with the rollback).
        return Err(Error::Retryable(format!(
            "{} counted near its limit; counting exactly",
            quota.as_str()
        )));
    }
    Ok(())
}

/// The count of `resource` with every slot locked: no creation of it is in
/// flight, and none can start until this transaction ends.
async fn exactly<C: Conn>(c: &C, org: &str, resource: &str) -> crate::Result<i64> {
    c.execute(SQL_MAKE_SLOTS, &args![org, resource]).await?;
    let slots = c
        .query(SQL_LOCK_SLOTS, &args![org, resource], |r| r.i64(0))
        .await?;
    Ok(slots.iter().sum())
}

async fn take_in_slot_0<C: Conn>(c: &C, org: &str, resource: &str) -> crate::Result<()> {
    c.execute(
        "UPDATE org_usage SET n = n + 1 WHERE org = $1 AND resource = $2 AND slot = 0",
        &args![org, resource],
    )
    .await?;
    Ok(())
}

/// Counts one resource made without a quota check: an organization's
/// first principal, key and secret, and what a bootstrap restores.
pub(crate) async fn counted<C: Conn>(c: &C, quota: Quota, org: &str) -> crate::Result<()> {
    c.execute(
        "INSERT INTO org_usage (org, resource, slot, n) VALUES ($1, $2, 0, 1) \
         ON CONFLICT (org, resource, slot) DO UPDATE SET n = org_usage.n + 1",
        &args![org, quota.resource()],
    )
    .await?;
    Ok(())
}

/// Gives back to `org`'s count of `quota` the `n` resources a deletion's
/// statement removed, as it reported them, so that the count cannot drift
/// from the rows. Slot 0 may go below zero: the count is the sum. Its row
/// is there: a resource's first creation counts exactly, which makes every
/// slot's.
pub(crate) async fn released<C: Conn>(c: &C, quota: Quota, org: &str, n: u64) -> crate::Result<()> {
    if n > 0 {
        c.execute(
            "UPDATE org_usage SET n = n - $1 WHERE org = $2 AND resource = $3 AND slot = 0",
            &args![n as i64, org, quota.resource()],
        )
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_statements_name_the_slots_there_are() {
        assert_eq!(slots!().parse::<i64>().unwrap(), super::SLOTS);
    }
}
