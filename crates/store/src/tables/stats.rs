//! Queue statistics, read without scanning the queue's tasks.
//!
//! - Tasks per stored status come from `task_counts`, which triggers keep in
//!   the transaction of every change of a task's status (migration 009):
//!   a handful of rows per queue, summed over their shards.
//! - `scheduled` and `queued` split the pending count by time: a pending
//!   task never attempted whose next attempt is in the future is
//!   scheduled. Only the scheduled part is counted, from an index range
//!   (`tasks_due_by_queue`, which carries the attempt count), and `queued`
//!   is the rest, so the cost grows with the tasks scheduled ahead, never
//!   with those waiting or finished.
//! - The oldest due time is one index seek; the attempts started in the last
//!   minute a range of `task_dispatches`, bounded by the queue's rate (on
//!   PostgreSQL; the SQLite store counts them in memory and replaces the
//!   figure, see `sqlite/dispatched.rs`).
//!
//! Everything is one statement, so that all figures come from one snapshot.

use super::not_found;
use crate::Result;
use crate::driver::{Conn, args};
use crate::records::QueueStats;
use crate::sql::Row;
use idem_core::clock::from_micros;

/// How far back `dispatched_last_minute` looks, in µs.
const MINUTE_US: i64 = 60_000_000;

/// Parameters: org, queue, now, now minus a minute.
const SQL_QUEUE_STATS: &str = "SELECT \
     (SELECT count(*) FROM queues WHERE org = $1 AND name = $2), \
     (SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM task_counts \
      WHERE org = $1 AND queue = $2 AND status = 'pending'), \
     (SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM task_counts \
      WHERE org = $1 AND queue = $2 AND status = 'running'), \
     (SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM task_counts \
      WHERE org = $1 AND queue = $2 AND status = 'succeeded'), \
     (SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM task_counts \
      WHERE org = $1 AND queue = $2 AND status = 'failed'), \
     (SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM task_counts \
      WHERE org = $1 AND queue = $2 AND status = 'cancelled'), \
     (SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND status = 'pending' \
      AND next_attempt_at > $3 AND attempt_count = 0), \
     (SELECT next_attempt_at FROM tasks WHERE org = $1 AND queue = $2 AND status = 'pending' \
      AND next_attempt_at <= $3 ORDER BY next_attempt_at LIMIT 1), \
     (SELECT count(*) FROM task_dispatches WHERE org = $1 AND queue = $2 \
      AND started_at > $4 AND started_at <= $3)";

fn count(r: &impl Row, i: usize) -> Result<u64> {
    // A count below zero would be a bug in the triggers; never show one.
    Ok(u64::try_from(r.i64(i)?).unwrap_or(0))
}

pub(crate) async fn queue<C: Conn>(c: &C, org: &str, name: &str, now: i64) -> Result<QueueStats> {
    c.query_opt(
        SQL_QUEUE_STATS,
        &args![org, name, now, now - MINUTE_US],
        |r| stats(r),
    )
    .await?
    .flatten()
    .ok_or_else(|| not_found("queue", name))
}

/// Reads [`SQL_QUEUE_STATS`]'s row; `None` when the queue does not exist.
fn stats(r: &impl Row) -> Result<Option<QueueStats>> {
    if r.i64(0)? == 0 {
        return Ok(None);
    }
    let pending = count(r, 1)?;
    // Both figures come from one snapshot; the bound only guards against a
    // count gone wrong.
    let scheduled = count(r, 6)?.min(pending);
    Ok(Some(QueueStats {
        scheduled,
        queued: pending - scheduled,
        running: count(r, 2)?,
        succeeded: count(r, 3)?,
        failed: count(r, 4)?,
        cancelled: count(r, 5)?,
        oldest_due_time: r.opt_i64(7)?.map(from_micros),
        dispatched_last_minute: count(r, 8)?,
    }))
}
