//! Queue statistics, read without scanning the queue's tasks.
//!
//! - Tasks per stored status come from `task_counts`, kept in the
//!   transaction of every change of a task's status (migration 009): a
//!   handful of rows per queue, summed over their shards. Triggers count
//!   deletes, and on PostgreSQL status changes; there the statements that
//!   insert tasks count their own rows ([`count_inserted!`], migration
//!   014), since a statement trigger's transition table and function call
//!   were a fifth of a create's server time. SQLite's writer counts what
//!   its statements insert and move between states once per commit
//!   (`sqlite/counts.rs`, migrations 023 and 024).
//! - `scheduled` and `queued` split the pending count by time: a pending
//!   task never attempted whose next attempt is in the future is
//!   scheduled. Only the scheduled part is counted, from an index range
//!   (`tasks_due_by_queue`, which carries the attempt count), and `queued`
//!   is the rest, so the cost grows with the tasks scheduled ahead, never
//!   with those waiting or finished.
//! - The oldest due time is one index seek; the attempts started in the last
//!   minute a sum over a range of `task_dispatches`, one entry per claim of
//!   the last minute (on PostgreSQL; the SQLite store counts them in memory
//!   and replaces the figure, see `sqlite/dispatched.rs`).
//!
//! Everything is one statement, so that all figures come from one snapshot.

/// The bytes a task row counts in its organization's stored bytes (the
/// task-bytes quota): its target and payload as created, which no later
/// statement changes, so that a status change moves them between counter
/// rows without reading them again. Migration 016 uses the same expression.
macro_rules! task_bytes {
    () => {
        "octet_length(target) + COALESCE(octet_length(body), 0)"
    };
}
pub(crate) use task_bytes;

/// Common table expressions adding the rows of `ins` (the `org` and
/// `queue` of tasks just inserted, all pending) to this connection's own
/// `task_counts` rows, as migration 009's statement triggers count the
/// other changes: one shard per connection, so no two transactions write
/// one counter row. A shard row that exists is updated in place, which
/// writes one WAL record; `INSERT … ON CONFLICT DO UPDATE` would first lock
/// the row it meets, a second record on every create. Only the sweeper's
/// fold touches another connection's shard rows (skipping those a
/// transaction holds), so the update waits at most for the fold's own short
/// transaction; a row the fold moved away meanwhile is updated nowhere and
/// inserted again by the last expression, whose conflict clause takes what
/// a concurrent insert left.
macro_rules! counted_inserts {
    () => {
        "ins_counts AS (SELECT org, queue, count(*) AS n, sum(size) AS bytes FROM ins \
         GROUP BY org, queue), \
         bumped AS (UPDATE task_counts c SET n = c.n + k.n, bytes = c.bytes + k.bytes \
         FROM ins_counts k \
         WHERE c.org = k.org AND c.queue = k.queue AND c.status = 'pending' \
         AND c.shard = pg_backend_pid() RETURNING c.org, c.queue), \
         counted AS (INSERT INTO task_counts AS c (org, queue, status, shard, n, bytes) \
         SELECT org, queue, 'pending', pg_backend_pid(), n, bytes FROM ins_counts k \
         WHERE NOT EXISTS (SELECT 1 FROM bumped b WHERE b.org = k.org AND b.queue = k.queue) \
         ORDER BY org, queue \
         ON CONFLICT (org, queue, status, shard) \
         DO UPDATE SET n = c.n + EXCLUDED.n, bytes = c.bytes + EXCLUDED.bytes)"
    };
}
pub(crate) use counted_inserts;

/// [`counted_inserts!`] for a statement inserting at most one row, of the
/// organization `$1` and queue `$2`: no aggregate over `ins`, and the
/// count row found by its key alone, which costs the one-row create (every
/// create of a client that waits for each answer) less PostgreSQL time.
macro_rules! counted_insert {
    () => {
        "bumped AS (UPDATE task_counts c SET n = c.n + 1, bytes = c.bytes + i.size FROM ins i \
         WHERE c.org = $1 AND c.queue = $2 AND c.status = 'pending' \
         AND c.shard = pg_backend_pid() RETURNING 1), \
         counted AS (INSERT INTO task_counts AS c (org, queue, status, shard, n, bytes) \
         SELECT org, queue, 'pending', pg_backend_pid(), 1, size FROM ins \
         WHERE NOT EXISTS (SELECT 1 FROM bumped) \
         ON CONFLICT (org, queue, status, shard) \
         DO UPDATE SET n = c.n + EXCLUDED.n, bytes = c.bytes + EXCLUDED.bytes)"
    };
}
pub(crate) use counted_insert;

/// `$insert`, an `INSERT INTO tasks` of pending rows without its
/// `RETURNING`, counting the rows it inserts ([`counted_inserts!`]) in the
/// same statement, which answers `$select` over `ins` (the inserted rows'
/// `org`, `queue` and the columns `$returning` adds). PostgreSQL's text: a
/// data-modifying CTE always runs to its end, whatever the final `SELECT`
/// reads of it.
/// `count_inserted!(one: …)` is the same for an insert of at most one row
/// of the organization `$1` and queue `$2` ([`counted_insert!`]).
macro_rules! count_inserted {
    ($insert:expr, $returning:expr, $select:expr) => {
        $crate::tables::stats::count_inserted!(@ counted_inserts, $insert, $returning, $select)
    };
    (one: $insert:expr, $returning:expr, $select:expr) => {
        $crate::tables::stats::count_inserted!(@ counted_insert, $insert, $returning, $select)
    };
    (@ $counted:ident, $insert:expr, $returning:expr, $select:expr) => {
        concat!(
            "WITH ins AS (",
            $insert,
            " RETURNING org, queue, ",
            $crate::tables::stats::task_bytes!(),
            " AS size",
            $returning,
            "), ",
            $crate::tables::stats::$counted!(),
            " ",
            $select
        )
    };
}
pub(crate) use count_inserted;

/// Runs `sql`, an `UPDATE` of tasks that moves each row it changes from
/// status `moved.0` to `moved.1`, and reports what it moved
/// ([`Conn::count_moved`](crate::driver::Conn::count_moved)): on SQLite
/// the statement answers each row's queue and stored bytes. For the status
/// changes off the paths of a create and a delivery (a cancel, a redrive,
/// a purge, a release), which may change many rows of one organization.
/// The number of tasks moved.
pub(crate) async fn update_moving<C: Conn>(
    c: &C,
    sql: &str,
    params: &[Value<'_>],
    org: &str,
    moved: (Status, Status),
) -> Result<u64> {
    match C::DIALECT {
        Dialect::Postgres => c.execute(sql, params).await,
        Dialect::Sqlite => {
            let returning = format!("{sql} RETURNING queue, {}", task_bytes!());
            let rows = c
                .query(&returning, params, |r| Ok((r.text(0)?, r.i64(1)?)))
                .await?;
            for (queue, bytes) in &rows {
                c.count_moved(org, queue, moved, 1, u64::try_from(*bytes).unwrap_or(0));
            }
            Ok(rows.len() as u64)
        }
    }
}

use super::due::group_keys;
use super::{after, limit, not_found};
use crate::Result;
use crate::driver::{Conn, Dialect, Value, args};
use crate::records::{GroupStats, Page, PageRequest, QueueOldestDue, QueueStats, Status};
use crate::sql::Row;
use idem_core::clock::from_micros;

/// How far back `dispatched_last_minute` looks, in µs.
const MINUTE_US: i64 = 60_000_000;

/// Parameters: org, queue, now, now minus a minute. The scheduled tasks
/// and the oldest due one are read from the tasks with no group nor
/// priority (one range of `tasks_due_by_queue` each); an ordered queue's
/// others are read by [`SQL_ORDERED_STATS`].
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
      AND group_key = '' AND priority = 0 AND next_attempt_at > $3 AND attempt_count = 0), \
     (SELECT next_attempt_at FROM tasks WHERE org = $1 AND queue = $2 AND status = 'pending' \
      AND group_key = '' AND priority = 0 AND next_attempt_at <= $3 \
      ORDER BY next_attempt_at LIMIT 1), \
     (SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM task_dispatches \
      WHERE org = $1 AND queue = $2 \
      AND started_at > $4 AND started_at <= $3), \
     (SELECT ordered FROM queues WHERE org = $1 AND name = $2)";

/// An ordered queue's statistics of its tasks with a group or priority:
/// their scheduled count and oldest due time, and its groups with a task
/// due. They take a look through each group: this runs only for queues
/// that use groups. Whether a group has a due task is one probe of its
/// entries, in the due index's order so that a read planned without sorts
/// takes that index (as `EXISTS`, PostgreSQL may join the walk to every
/// due task of the queue). Parameters: org, queue, now.
const SQL_ORDERED_STATS: &str = concat!(
    "SELECT \
     (SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND status = 'pending' \
      AND (group_key <> '' OR priority <> 0) AND next_attempt_at > $3 AND attempt_count = 0), \
     (SELECT min(next_attempt_at) FROM tasks WHERE org = $1 AND queue = $2 \
      AND status = 'pending' AND (group_key <> '' OR priority <> 0) AND next_attempt_at <= $3), \
     (",
    "WITH RECURSIVE ",
    group_keys!("g", "pending", "group_key > ''", ""),
    " SELECT count(*) FROM g WHERE g.k IS NOT NULL AND (SELECT true FROM tasks \
      WHERE org = $1 AND queue = $2 AND group_key = g.k AND status = 'pending' \
      AND next_attempt_at <= $3 ORDER BY priority DESC, next_attempt_at LIMIT 1))"
);

fn count(r: &impl Row, i: usize) -> Result<u64> {
    // A count below zero would be a bug in the triggers; never show one.
    Ok(u64::try_from(r.i64(i)?).unwrap_or(0))
}

pub(crate) async fn queue<C: Conn>(c: &C, org: &str, name: &str, now: i64) -> Result<QueueStats> {
    let (mut stats, ordered) = c
        .query_opt(
            SQL_QUEUE_STATS,
            &args![org, name, now, now - MINUTE_US],
            |r| stats(r),
        )
        .await?
        .flatten()
        .ok_or_else(|| not_found("queue", name))?;
    if ordered {
        let (scheduled, oldest, groups) = c
            .query_opt(SQL_ORDERED_STATS, &args![org, name, now], |r| {
                Ok((count(r, 0)?, r.opt_i64(1)?, count(r, 2)?))
            })
            .await?
            .unwrap_or_default();
        let scheduled = scheduled.min(stats.queued);
        stats.scheduled += scheduled;
        stats.queued -= scheduled;
        let oldest = oldest.map(from_micros);
        stats.oldest_due_time = match (stats.oldest_due_time, oldest) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        stats.groups_with_due = groups;
    }
    Ok(stats)
}

/// A page of a queue's groups with live tasks (pending or running), in
/// name order. Each source of group names (pending tasks, running ones) is
/// read in key order up to the page's size, so the first of both are among
/// them. Parameters: org, queue, the page token (groups after it), the
/// prefix (groups at or after it) and the end of the groups that start
/// with it, the page's size, now.
const SQL_GROUPS: &str = concat!(
    "WITH RECURSIVE ",
    group_keys!(
        "p",
        "pending",
        "group_key > $3 AND group_key >= $4",
        " AND p.k < $5"
    ),
    ", ",
    group_keys!(
        "r",
        "running",
        "group_key > $3 AND group_key >= $4",
        " AND r.k < $5"
    ),
    ", \
     page(k) AS (SELECT k FROM (SELECT k FROM p WHERE k IS NOT NULL AND k < $5 LIMIT $6) a \
       UNION SELECT k FROM (SELECT k FROM r WHERE k IS NOT NULL AND k < $5 LIMIT $6) b \
       ORDER BY k LIMIT $6) \
     SELECT k, \
       (SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND group_key = page.k \
        AND status = 'running'), \
       (SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND group_key = page.k \
        AND status = 'pending' AND next_attempt_at <= $7), \
       (SELECT count(*) FROM tasks WHERE org = $1 AND queue = $2 AND group_key = page.k \
        AND status = 'pending' AND next_attempt_at > $7) \
     FROM page ORDER BY k"
);

/// A page of a queue's groups with live tasks, those that start with
/// `prefix`.
pub(crate) async fn groups<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    prefix: &str,
    page: &PageRequest,
    now: i64,
) -> Result<Page<GroupStats>> {
    super::queues::get(c, org, queue, "").await?;
    // '~' sorts after every character a group may hold.
    let end = format!("{prefix}~");
    let rows = c
        .query(
            SQL_GROUPS,
            &args![
                org,
                queue,
                after(page),
                prefix,
                end.as_str(),
                limit(page),
                now
            ],
            |r| {
                Ok(GroupStats {
                    group: r.text(0)?,
                    running: count(r, 1)?,
                    due: count(r, 2)?,
                    scheduled: count(r, 3)?,
                })
            },
        )
        .await?;
    Ok(Page::from_rows(rows, page.limit, |g| g.group.clone()))
}

/// Every running queue's oldest due time, as [`SQL_QUEUE_STATS`] reads one
/// queue's: one index seek per queue whose tasks use no group nor
/// priority. Parameter: now.
const SQL_OLDEST_DUE: &str = "SELECT q.org, q.name, CASE WHEN q.ordered <> 0 THEN \
     (SELECT min(t.next_attempt_at) FROM tasks t WHERE t.org = q.org AND t.queue = q.name \
      AND t.status = 'pending' AND t.next_attempt_at <= $1) \
     ELSE (SELECT t.next_attempt_at FROM tasks t \
     WHERE t.org = q.org AND t.queue = q.name AND t.status = 'pending' \
     AND t.group_key = '' AND t.priority = 0 \
     AND t.next_attempt_at <= $1 ORDER BY t.next_attempt_at LIMIT 1) END \
     FROM queues q WHERE q.state = 'running'";

pub(crate) async fn oldest_due<C: Conn>(c: &C, now: i64) -> Result<Vec<QueueOldestDue>> {
    let rows = c
        .query(SQL_OLDEST_DUE, &args![now], |r| {
            Ok(r.opt_i64(2)?.map(|at| (r.text(0), r.text(1), at)))
        })
        .await?;
    rows.into_iter()
        .flatten()
        .map(|(org, queue, at)| {
            Ok(QueueOldestDue {
                org: org?,
                queue: queue?,
                oldest_due: from_micros(at),
            })
        })
        .collect()
}

/// Reads [`SQL_QUEUE_STATS`]'s row; `None` when the queue does not exist.
fn stats(r: &impl Row) -> Result<Option<(QueueStats, bool)>> {
    if r.i64(0)? == 0 {
        return Ok(None);
    }
    let pending = count(r, 1)?;
    // Both figures come from one snapshot; the bound only guards against a
    // count gone wrong.
    let scheduled = count(r, 6)?.min(pending);
    let stats = QueueStats {
        scheduled,
        queued: pending - scheduled,
        running: count(r, 2)?,
        succeeded: count(r, 3)?,
        failed: count(r, 4)?,
        cancelled: count(r, 5)?,
        oldest_due_time: r.opt_i64(7)?.map(from_micros),
        dispatched_last_minute: count(r, 8)?,
        groups_with_due: 0,
    };
    Ok(Some((stats, r.opt_i64(9)?.unwrap_or(0) != 0)))
}
