//! The claim of a queue's due tasks, written once: which due tasks a claim
//! takes ([`due!`]) and the statement that leases them, in each store's
//! dialect ([`Dialect::pick`](crate::driver::Dialect::pick)). The dispatcher's claim of a push queue
//! ([`push`], for `dispatch::claim`) and a worker's claim of a pull queue
//! ([`pull`], for `work::claim`) are the same statement and differ only in
//! the lease they set: a push task's runs for its dispatch deadline and the
//! node's grace, a pull task's for the worker's lease, under a token of its
//! own. Whatever decides which tasks a claim takes (per-group limits and
//! turns among groups, say) belongs in [`due!`], where both claims and
//! both dialects take it from.
//!
//! Parameters, in order of first use (as SQLite numbers them) in both
//! dialects: `$1` organization, `$2` queue, `$3` now, `$4` a tag the tasks
//! must carry (`''`: any), `$5` most tasks; then the lease's own from `$6`.
//!
//! PostgreSQL takes the rows in a CTE `FOR UPDATE SKIP LOCKED`, so that
//! concurrent claims (nodes, workers) never wait on each other nor take a
//! task twice; SQLite's one writer runs one claim at a time and locks
//! nothing.

use crate::Result;
use crate::dispatch::ClaimedTask;
use crate::driver::{Conn, Value, args};
use crate::records::Task;
use crate::sql::Row as _;
use crate::task_row::{self, task_columns};
use idem_core::clock::from_micros;

/// The due tasks of a queue, in the order claims take them (next attempt,
/// then uid, which `tasks_due_by_queue` holds in that order), up to `$5`.
macro_rules! due {
    () => {
        "SELECT uid FROM tasks WHERE org = $1 AND queue = $2 AND status = 'pending' \
         AND next_attempt_at <= $3 AND ($4 = '' OR tag = $4) \
         ORDER BY next_attempt_at, uid LIMIT $5"
    };
}

/// What every claim sets on a task it takes, `$now` the claim's instant:
/// running, one more attempt, the first attempt's time kept.
macro_rules! claimed {
    ($now:literal) => {
        concat!(
            "status = 'running', attempt_count = attempt_count + 1, \
             first_attempt_at = COALESCE(first_attempt_at, ",
            $now,
            ")"
        )
    };
}

/// The claim statement of a dialect, setting [`claimed!`] and `$lease` on
/// the [`due!`] tasks and answering their rows ([`task_row::COLUMNS`]).
macro_rules! claim_due {
    (Sqlite, $lease:expr) => {
        concat!(
            "WITH due AS (",
            due!(),
            ") UPDATE tasks SET ",
            claimed!("$3"),
            ", ",
            $lease,
            " WHERE uid IN (SELECT uid FROM due) RETURNING ",
            task_columns!()
        )
    };
    (Postgres, $lease:expr) => {
        concat!(
            "WITH due AS (",
            due!(),
            " FOR UPDATE SKIP LOCKED) UPDATE tasks SET ",
            claimed!("$3"),
            ", ",
            $lease,
            " FROM due WHERE tasks.uid = due.uid RETURNING ",
            task_columns!(tasks)
        )
    };
}

/// A push task's lease: its dispatch deadline and the node's grace (`$6`,
/// µs) from now.
macro_rules! push_lease {
    () => {
        "lease_expires_at = $3 + dispatch_deadline_s * 1000000 + $6"
    };
}

/// A pull task's lease, its parameters named: `$length` (µs) from `$now`,
/// held by `$claimant` under a token of the claim's `$nonce`, a random
/// part of the task's own and the attempt number, so that the tasks of one
/// claim hold different tokens and a token handed on with one task
/// (`reassign`) opens no other.
macro_rules! pull_lease {
    ($dialect:ident, $now:literal, $length:literal, $nonce:literal, $claimant:literal) => {
        concat!(
            "lease_expires_at = ",
            $now,
            " + ",
            $length,
            ", attempt_id = ",
            $nonce,
            " || '-' || ",
            pull_lease!(@own $dialect),
            " || '-' || (attempt_count + 1), claimant = ",
            $claimant
        )
    };
    (@own Sqlite) => {
        "lower(hex(randomblob(8)))"
    };
    (@own Postgres) => {
        "substr(md5(gen_random_uuid()::text), 1, 16)"
    };
}

const SQL_CLAIM_PUSH: [&str; 2] = [
    claim_due!(Sqlite, push_lease!()),
    claim_due!(Postgres, push_lease!()),
];

const SQL_CLAIM_PULL: [&str; 2] = [
    claim_due!(Sqlite, pull_lease!(Sqlite, "$3", "$6", "$7", "$8")),
    claim_due!(Postgres, pull_lease!(Postgres, "$3", "$6", "$7", "$8")),
];

/// Leases one pending task by its uid (`$5`) as a pull claim would: `$1`
/// now, `$2` the lease's length, `$3` the nonce, `$4` the claimant.
const SQL_LEASE_ONE: [&str; 2] = [
    concat!(
        "UPDATE tasks SET ",
        claimed!("$1"),
        ", ",
        pull_lease!(Sqlite, "$1", "$2", "$3", "$4"),
        " WHERE uid = $5 AND status = 'pending' RETURNING ",
        task_columns!()
    ),
    concat!(
        "UPDATE tasks SET ",
        claimed!("$1"),
        ", ",
        pull_lease!(Postgres, "$1", "$2", "$3", "$4"),
        " WHERE uid = $5 AND status = 'pending' RETURNING ",
        task_columns!()
    ),
];

fn pick<C: Conn>(texts: &[&'static str; 2]) -> &'static str {
    C::DIALECT.pick(texts[0], texts[1])
}

/// Which due tasks a claim asks for: of one queue, with the tag if one is
/// given, at most `max`.
pub(crate) struct Due<'a> {
    pub org: &'a str,
    pub queue: &'a str,
    pub tag: Option<&'a str>,
    pub max: u32,
}

/// Runs a claim statement whose lease takes `lease` from `$6`; answers the
/// tasks it took, with their lease's end, in schedule order (`RETURNING`
/// gives none).
async fn claim<C: Conn>(
    c: &C,
    sql: &str,
    now: i64,
    due: &Due<'_>,
    lease: &[Value<'_>],
) -> Result<Vec<(Task, i64)>> {
    let mut params = Vec::with_capacity(5 + lease.len());
    params.extend(args![
        due.org,
        due.queue,
        now,
        due.tag.unwrap_or(""),
        i64::from(due.max),
    ]);
    params.extend_from_slice(lease);
    let mut claimed = c
        .query(sql, &params, |r| {
            Ok((task_row::read(r)?, r.i64(task_row::col::lease_expires_at)?))
        })
        .await?;
    claimed.sort_by(|(a, _), (b, _)| (a.next_attempt_at, &a.uid).cmp(&(b.next_attempt_at, &b.uid)));
    Ok(claimed)
}

/// The dispatcher's claim of a push queue's due tasks, each leased for its
/// dispatch deadline and `grace` (µs).
pub(crate) async fn push<C: Conn>(
    c: &C,
    now: i64,
    due: &Due<'_>,
    grace: i64,
) -> Result<Vec<ClaimedTask>> {
    let claimed = claim(c, pick::<C>(&SQL_CLAIM_PUSH), now, due, &args![grace]).await?;
    Ok(claimed
        .into_iter()
        .map(|(task, until)| ClaimedTask {
            org: due.org.to_string(),
            attempt: task.attempt_count,
            lease_expires_at: from_micros(until),
            task,
        })
        .collect())
}

/// A pull lease: its length (µs), the claim's nonce and who holds it.
pub(crate) struct PullLease<'a> {
    pub length: i64,
    pub nonce: &'a str,
    pub claimant: &'a str,
}

/// A worker's claim of a pull queue's due tasks, each leased as `lease`
/// says.
pub(crate) async fn pull<C: Conn>(
    c: &C,
    now: i64,
    due: &Due<'_>,
    lease: &PullLease<'_>,
) -> Result<Vec<Task>> {
    let lease = args![lease.length, lease.nonce, lease.claimant];
    let claimed = claim(c, pick::<C>(&SQL_CLAIM_PULL), now, due, &lease).await?;
    Ok(claimed.into_iter().map(|(task, _)| task).collect())
}

/// Leases the pending task `uid` as [`pull`] would, whatever its schedule
/// time; `None` if it is no longer pending.
pub(crate) async fn lease_one<C: Conn>(
    c: &C,
    now: i64,
    uid: &str,
    lease: &PullLease<'_>,
) -> Result<Option<Task>> {
    c.query_opt(
        pick::<C>(&SQL_LEASE_ONE),
        &args![now, lease.length, lease.nonce, lease.claimant, uid],
        |r| task_row::read(r),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite numbers `$n` in order of first use: each text must use them
    /// in ascending order.
    #[test]
    fn parameters_are_first_used_in_order() {
        for sql in SQL_CLAIM_PUSH
            .iter()
            .chain(&SQL_CLAIM_PULL)
            .chain(&SQL_LEASE_ONE)
        {
            let mut seen: Vec<usize> = Vec::new();
            for part in sql.split('$').skip(1) {
                let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
                let n: usize = digits.parse().unwrap();
                if !seen.contains(&n) {
                    assert_eq!(n, seen.len() + 1, "{sql}");
                    seen.push(n);
                }
            }
        }
    }

    #[test]
    fn both_claims_take_the_same_due_tasks() {
        for sql in SQL_CLAIM_PUSH.iter().chain(&SQL_CLAIM_PULL) {
            assert!(sql.contains(due!()), "{sql}");
        }
    }
}
