//! The claim of a queue's due tasks, written once: which due tasks a claim
//! takes ([`due!`], or [`ordered_due!`] in a queue whose tasks use groups
//! or priorities) and the statement that leases them, in each store's
//! dialect ([`Dialect::pick`](crate::driver::Dialect::pick)). The dispatcher's claim of a push queue
//! ([`push`], for `dispatch::claim`) and a worker's claim of a pull queue
//! ([`pull`], for `work::claim`) are the same statement and differ only in
//! the lease they set: a push task's runs for its dispatch deadline and the
//! node's grace, a pull task's for the worker's lease, under a token of its
//! own. Whatever decides which tasks a claim takes (per-group limits and
//! turns among groups) belongs here, where both claims and both dialects
//! take it from.
//!
//! Parameters, in order of first use (as SQLite numbers them) in both
//! dialects: `$1` organization, `$2` queue, `$3` now, `$4` a tag the tasks
//! must carry (`''`: any), `$5` most tasks; an ordered claim's `$6` most
//! running tasks of one group and `$7` the group its turn starts after;
//! then the lease's own.
//!
//! PostgreSQL takes the rows in a CTE `FOR UPDATE SKIP LOCKED`, so that
//! concurrent claims (nodes, workers) never wait on each other nor take a
//! task twice; SQLite's one writer runs one claim at a time and locks
//! nothing. An ordered claim counts each group's running tasks, so it runs
//! under its queue's row lock on PostgreSQL (the caller's), which makes the
//! counts it reads those every other claim of the queue left.

use crate::Result;
use crate::dispatch::ClaimedTask;
use crate::driver::{Conn, Dialect, Value, args};
use crate::records::{Status, Task};
use crate::sql::Row as _;
use crate::task_row::{self, task_columns};
use idem_core::clock::from_micros;
use idem_core::queue::GroupOrder;
use std::sync::atomic::{AtomicU64, Ordering};

/// The due tasks of a queue whose tasks carry no group nor priority, in
/// the order claims take them (next attempt, then uid, which
/// `tasks_due_by_queue` holds in that order under the group `''` and
/// priority 0), up to `$5`. `due!(guarded)` takes none from a queue that
/// has become ordered, for a claim that has not read the queue.
macro_rules! due {
    () => {
        due!(@ "")
    };
    (guarded) => {
        due!(@ " AND NOT EXISTS (SELECT 1 FROM queues WHERE org = $1 AND name = $2 AND ordered <> 0)")
    };
    (@ $guard:expr) => {
        concat!(
            "SELECT uid FROM tasks WHERE org = $1 AND queue = $2 AND status = 'pending' \
             AND group_key = '' AND priority = 0 \
             AND next_attempt_at <= $3 AND ($4 = '' OR tag = $4)",
            $guard,
            " ORDER BY next_attempt_at, uid LIMIT $5"
        )
    };
}

/// A recursive CTE `$name(k)` of the group keys of a queue's tasks in
/// `$status`, in key order: the first key meeting `$from`, then each next
/// key while the last one meets `$more` (SQL after `k IS NOT NULL`). Each
/// step is one probe of the index that leads with the group (the due
/// index for pending tasks, `tasks_running` for running ones): a walk reads
/// as many keys as it goes through groups, not the queue. `$1` org, `$2`
/// queue.
macro_rules! group_keys {
    ($name:literal, $status:literal, $from:literal, $more:literal) => {
        concat!(
            $name,
            "(k) AS (SELECT (SELECT group_key FROM tasks WHERE org = $1 AND queue = $2 \
             AND status = '",
            $status,
            "' AND ",
            $from,
            " ORDER BY group_key LIMIT 1) UNION ALL SELECT (SELECT group_key FROM tasks \
             WHERE org = $1 AND queue = $2 AND status = '",
            $status,
            "' AND group_key > ",
            $name,
            ".k ORDER BY group_key LIMIT 1) FROM ",
            $name,
            " WHERE ",
            $name,
            ".k IS NOT NULL",
            $more,
            ")"
        )
    };
}
pub(crate) use group_keys;

/// The groups of an ordered queue with pending tasks, in the order this
/// claim visits them: those after `$7` in key order, then from the first
/// (the ungrouped `''`) up to `$7`, so that successive claims go round.
/// Each walk stops when the claim has visited enough groups. SQLite
/// materializes a recursive CTE that a statement's `UPDATE` reads through
/// another one, walking every group of the queue on every claim (two
/// thirds of a claim's time among 1,000 groups), unless told not to.
/// SQLite's walk ([`group_heads!`]) brings each group's first due-index
/// entry with its key.
macro_rules! turn_groups {
    (Postgres) => {
        concat!(
            group_keys!("after_cursor", "pending", "group_key > $7", ""),
            ", ",
            group_keys!("from_start", "pending", "TRUE", " AND from_start.k < $7"),
            ", turn(k) AS (SELECT k FROM after_cursor WHERE k IS NOT NULL \
             UNION ALL SELECT k FROM from_start WHERE k IS NOT NULL AND k <= $7)"
        )
    };
    (Sqlite) => {
        concat!(
            group_heads!("after_cursor", "group_key > $7", ""),
            ", ",
            group_heads!("from_start", "TRUE", " AND a.k < $7"),
            ", turn(k, r, at, tag) AS NOT MATERIALIZED (SELECT k, r, at, tag FROM after_cursor \
             UNION ALL SELECT k, r, at, tag FROM from_start WHERE k <= $7)"
        )
    };
}

/// SQLite's walk through an ordered queue's groups, as [`group_keys!`]'s
/// over pending tasks, as a recursive CTE `$name(k, r, at, tag)`: each
/// step's probe of the due index lands on the next group's first entry in
/// the claim's order (priority, then due time), and answers its `rowid`,
/// whose row brings the key for the next step and, in `at` and `tag`, what
/// says whether that entry is the group's next task to start. So a group
/// whose first task is due costs a claim one probe of the index and one of
/// the table, instead of a second probe of the index for its head and one
/// of the uid index to reach its row.
macro_rules! group_heads {
    ($name:literal, $from:literal, $more:literal) => {
        concat!(
            $name,
            "(k, r, at, tag) AS NOT MATERIALIZED (SELECT t.group_key, t.rowid, \
             t.next_attempt_at, t.tag FROM tasks t WHERE t.rowid = (",
            group_heads!(@first $from),
            ") UNION ALL SELECT t.group_key, t.rowid, t.next_attempt_at, t.tag FROM ",
            $name,
            " a JOIN tasks t ON t.rowid = (",
            group_heads!(@first "group_key > a.k"),
            ") WHERE TRUE",
            $more,
            ")"
        )
    };
    (@first $from:literal) => {
        concat!(
            "SELECT rowid FROM tasks WHERE org = $1 AND queue = $2 AND status = 'pending' AND ",
            $from,
            " ORDER BY group_key, priority DESC, next_attempt_at, uid LIMIT 1"
        )
    };
}

/// Whether group `$g` may start a task now, given `running`, its running
/// tasks: the ungrouped tasks have no limit; a group holds fewer than `$6`
/// and has a due task, or, in FIFO order, runs nothing and the first of
/// its pending tasks in (schedule time, creation) order is due. Each test
/// is a scalar subquery, one probe of the group's due entries for each
/// group visited: as `EXISTS` in the `WHERE`, PostgreSQL's generic plan
/// made it a semi-join against every due task of the queue, hashed anew
/// for each claim (20,000 rows read through `tasks_due`, with every other
/// queue's due tasks dropped on the way, 14 ms of a 34 ms claim of 500).
macro_rules! may_start {
    ($g:literal, none) => {
        concat!(
            "(", $g, " = '' OR running < $6) AND (SELECT true FROM tasks \
             WHERE org = $1 AND queue = $2 AND group_key = ", $g, " AND status = 'pending' \
             AND next_attempt_at <= $3 AND ($4 = '' OR tag = $4) LIMIT 1)"
        )
    };
    ($g:literal, fifo) => {
        concat!(
            "CASE WHEN ", $g, " = '' THEN EXISTS (SELECT 1 FROM tasks \
             WHERE org = $1 AND queue = $2 AND group_key = '' AND status = 'pending' \
             AND next_attempt_at <= $3 AND ($4 = '' OR tag = $4)) \
             ELSE running = 0 AND COALESCE((SELECT next_attempt_at <= $3 AND ($4 = '' OR tag = $4) \
             FROM tasks WHERE org = $1 AND queue = $2 AND group_key = ", $g, " \
             AND status = 'pending' ORDER BY schedule_time, uid LIMIT 1), false) END"
        )
    };
}

/// The tasks an ordered claim takes (`picked`, at most `$5`): of the first
/// `$5` groups in [`turn_groups!`] order that may start one
/// ([`may_start!`]), each group's next tasks (by priority, then due time;
/// the head alone in FIFO order) within its room, taken in turns: a
/// group's n-th task goes at its running count plus n, so a group holding
/// fewer slots goes first and the groups alternate.
macro_rules! ordered_due {
    (Postgres, $order:ident) => {
        concat!(
            turn_groups!(Postgres),
            ", visit AS (SELECT t.k, r.running FROM turn t CROSS JOIN LATERAL \
               (SELECT count(*) AS running FROM tasks WHERE org = $1 AND queue = $2 \
               AND group_key = t.k AND status = 'running') r WHERE ",
            may_start!("t.k", $order),
            " LIMIT $5), kth(r) AS MATERIALIZED (SELECT running FROM visit ORDER BY running \
               LIMIT 1 OFFSET $5 - 1), \
             picked AS (SELECT d.uid FROM visit w CROSS JOIN LATERAL (",
            ordered_due!(@next Postgres, $order),
            ") d ORDER BY w.running + d.rn, d.priority DESC, d.next_attempt_at, d.uid LIMIT $5)"
        )
    };
    // SQLite has no LATERAL and no correlated LIMIT, and reads a
    // correlated `IN` list through a table built anew for each group, which
    // cost more than the rest of the claim. So each visited group brings
    // its head (`head`, the `rowid` of its row: mostly the one its walk
    // step landed on), and `picked` takes the heads in
    // turn order from a queue ordered as the claim's answer: each task it
    // takes adds the next of its group, found after it in the due index,
    // while the group has room; the `LIMIT` stops it at `$5` tasks.
    // Subqueries with `LIMIT -1` are not flattened, which would evaluate
    // `running` and `head` once for each use. A group's next task is
    // looked for only while it could be taken: once `$5` groups are
    // visited, their heads are `$5` tasks of turn at most `kth` + 1 (the
    // `$5`-th smallest running count), so a task of turn above that goes
    // after all of them; without the test, a claim in as many groups as
    // tasks looked up one more task per group, none of them taken. `kth`
    // is materialized: a CTE read once may otherwise be put in place of
    // its use, and SQLite did so for the selection alone, sorting `visit`
    // again for every task of `picked` (998 sorts and 4.2 million
    // instructions instead of 2 and 171,000 for 500 tasks in 500 groups;
    // the claim's `UPDATE` happened to read it once either way). Tasks are
    // reached by `rowid` throughout, each a probe of the table alone, not
    // of the uid index first: a `rowid` holds for the statement (only a
    // `VACUUM` renumbers rows).
    (Sqlite, $order:ident) => {
        concat!(
            turn_groups!(Sqlite),
            ", visit AS (SELECT k, running, head FROM (SELECT k, running, ",
            ordered_due!(@head Sqlite, $order),
            " AS head FROM (SELECT k, r, at, tag, (SELECT count(*) FROM tasks WHERE org = $1 \
               AND queue = $2 AND group_key = turn.k AND status = 'running') AS running \
               FROM turn LIMIT -1) g LIMIT -1) WHERE head IS NOT NULL LIMIT $5), \
             kth(r) AS MATERIALIZED (SELECT running FROM visit ORDER BY running LIMIT 1 OFFSET $5 - 1), \
             picked(k, running, rn, turn, r, uid, priority, next_attempt_at) AS (\
               SELECT w.k, w.running, 1, w.running + 1, t.rowid, t.uid, t.priority, \
               t.next_attempt_at FROM visit w JOIN tasks t ON t.rowid = w.head \
               UNION ALL SELECT p.k, p.running, p.rn + 1, p.turn + 1, t.rowid, t.uid, t.priority, \
               t.next_attempt_at FROM picked p JOIN tasks t ON t.rowid = COALESCE(\
               (SELECT x.rowid FROM tasks x WHERE x.org = $1 AND x.queue = $2 \
               AND x.group_key = p.k AND x.status = 'pending' AND x.priority = p.priority \
               AND (x.next_attempt_at, x.uid) > (p.next_attempt_at, p.uid) \
               AND x.next_attempt_at <= $3 AND ($4 = '' OR x.tag = $4) \
               ORDER BY x.next_attempt_at, x.uid LIMIT 1), \
               (SELECT x.rowid FROM tasks x WHERE x.org = $1 AND x.queue = $2 \
               AND x.group_key = p.k AND x.status = 'pending' AND x.priority < p.priority \
               AND x.next_attempt_at <= $3 AND ($4 = '' OR x.tag = $4) \
               ORDER BY x.priority DESC, x.next_attempt_at, x.uid LIMIT 1)) \
               WHERE p.rn < CASE WHEN p.k = '' THEN $5 ELSE ",
            ordered_due!(@room Sqlite, $order),
            " END AND NOT EXISTS (SELECT 1 FROM kth WHERE p.turn > kth.r) \
               ORDER BY 4, 7 DESC, 8, 6 LIMIT $5)"
        )
    };
    (@next Postgres, none) => {
        concat!(
        "SELECT uid, priority, next_attempt_at, \
         row_number() OVER (ORDER BY priority DESC, next_attempt_at, uid) AS rn \
         FROM tasks WHERE org = $1 AND queue = $2 AND group_key = w.k AND status = 'pending' \
         AND next_attempt_at <= $3 AND ($4 = '' OR tag = $4) \
         ORDER BY priority DESC, next_attempt_at, uid \
         LIMIT LEAST(CASE WHEN w.k = '' THEN $5 ELSE $6 - w.running END, ",
        ordered_due!(@within_turn Postgres),
        ")"
        )
    };
    (@next Postgres, fifo) => {
        concat!(
        "(SELECT uid, priority, next_attempt_at, \
         row_number() OVER (ORDER BY priority DESC, next_attempt_at, uid) AS rn \
         FROM tasks WHERE w.k = '' AND org = $1 AND queue = $2 AND group_key = '' \
         AND status = 'pending' AND next_attempt_at <= $3 AND ($4 = '' OR tag = $4) \
         ORDER BY priority DESC, next_attempt_at, uid LIMIT ",
        ordered_due!(@within_turn Postgres),
        ") UNION ALL (SELECT uid, priority, next_attempt_at, 1 FROM tasks \
         WHERE w.k <> '' AND $6::bigint > 0 AND org = $1 AND queue = $2 AND group_key = w.k \
         AND status = 'pending' ORDER BY schedule_time, uid LIMIT 1)"
        )
    };
    // Most tasks group `w` may bring to the claim: those of a turn it could
    // still take, as SQLite's claim looks for (the `$5` visited groups'
    // heads are `$5` tasks of turn at most `kth` + 1; a group with no limit
    // or a limit far off, the ungrouped one above all, would otherwise
    // bring up to `$5` tasks each, read and numbered, for none to be taken).
    (@within_turn Postgres) => {
        "COALESCE((SELECT GREATEST(kth.r + 1 - w.running, 0) FROM kth), $5)"
    };
    // The row of the first task a group may start now, as [`may_start!`]
    // says: in FIFO order, the first by schedule time; otherwise the one
    // the walk landed on if it is due (and tagged as asked), else the next.
    (@head Sqlite, none) => {
        concat!(
            "CASE WHEN k = '' OR running < $6 THEN ",
            ordered_due!(@first Sqlite),
            " END"
        )
    };
    (@head Sqlite, fifo) => {
        concat!(
            "CASE WHEN k = '' THEN ",
            ordered_due!(@first Sqlite),
            " WHEN running = 0 THEN (SELECT h.rowid FROM tasks h WHERE h.rowid = \
             (SELECT x.rowid FROM tasks x WHERE x.org = $1 AND x.queue = $2 \
             AND x.group_key = g.k AND x.status = 'pending' ORDER BY x.schedule_time, x.uid \
             LIMIT 1) AND h.next_attempt_at <= $3 AND ($4 = '' OR h.tag = $4)) END"
        )
    };
    (@first Sqlite) => {
        "CASE WHEN g.at <= $3 AND ($4 = '' OR g.tag = $4) THEN g.r ELSE (SELECT x.rowid \
         FROM tasks x WHERE x.org = $1 AND x.queue = $2 AND x.group_key = g.k \
         AND x.status = 'pending' AND x.next_attempt_at <= $3 AND ($4 = '' OR x.tag = $4) \
         ORDER BY x.priority DESC, x.next_attempt_at, x.uid LIMIT 1) END"
    };
    (@room Sqlite, none) => {
        "$6 - p.running"
    };
    (@room Sqlite, fifo) => {
        "1"
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
/// the `$due` tasks ([`due!`]) and answering their rows
/// ([`task_row::COLUMNS`]).
macro_rules! claim_due {
    (Sqlite, $due:expr, $lease:expr) => {
        concat!(
            "WITH due AS (",
            $due,
            ") UPDATE tasks SET ",
            claimed!("$3"),
            ", ",
            $lease,
            " WHERE uid IN (SELECT uid FROM due) RETURNING ",
            task_columns!()
        )
    };
    (Postgres, $due:expr, $lease:expr) => {
        concat!(
            "WITH due AS (",
            $due,
            " FOR UPDATE SKIP LOCKED) UPDATE tasks SET ",
            claimed!("$3"),
            ", ",
            $lease,
            " FROM due WHERE tasks.uid = due.uid RETURNING ",
            task_columns!(tasks)
        )
    };
}

/// The claim statement of an ordered queue ([`ordered_due!`]), as
/// [`claim_due!`]. SQLite's text names `$1`–`$7` first, in an unused CTE,
/// so that it numbers them as PostgreSQL does whatever order the rest uses
/// them in. PostgreSQL's runs on a generic plan ([`SQL_GENERIC_PLAN`]), so
/// it locks and updates the picked tasks through their key, one probe
/// each, whatever it estimates of their number: with joins to `tasks`
/// there instead, the generic plan ran some benchmark runs at 490 tasks/s
/// instead of 7,000, as a scan of the table on every claim would.
macro_rules! claim_ordered {
    (Sqlite, $order:ident, $lease:expr) => {
        concat!(
            "WITH RECURSIVE numbered AS (SELECT $1, $2, $3, $4, $5, $6, $7), ",
            ordered_due!(Sqlite, $order),
            " UPDATE tasks SET ",
            claimed!("$3"),
            ", ",
            $lease,
            " WHERE rowid IN (SELECT r FROM picked) RETURNING ",
            task_columns!()
        )
    };
    (Postgres, $order:ident, $lease:expr) => {
        concat!(
            "WITH RECURSIVE ",
            ordered_due!(Postgres, $order),
            ", due AS (SELECT t.uid FROM picked p CROSS JOIN LATERAL (SELECT uid FROM tasks \
             WHERE uid = p.uid FOR UPDATE SKIP LOCKED) t) UPDATE tasks SET ",
            claimed!("$3"),
            ", ",
            $lease,
            " WHERE tasks.uid = ANY (ARRAY(SELECT uid FROM due)) RETURNING ",
            task_columns!(tasks)
        )
    };
}

/// A push task's lease: its dispatch deadline and the node's grace
/// (`$grace`, µs) from now.
macro_rules! push_lease {
    ($grace:literal) => {
        concat!(
            "lease_expires_at = $3 + dispatch_deadline_s * 1000000 + ",
            $grace
        )
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
    claim_due!(Sqlite, due!(), push_lease!("$6")),
    claim_due!(Postgres, due!(), push_lease!("$6")),
];

/// A worker's claim reads nothing of its queue first: it takes no task of
/// a queue that has become ordered, and its caller then claims in turns.
const SQL_CLAIM_PULL: [&str; 2] = [
    claim_due!(
        Sqlite,
        due!(guarded),
        pull_lease!(Sqlite, "$3", "$6", "$7", "$8")
    ),
    claim_due!(
        Postgres,
        due!(guarded),
        pull_lease!(Postgres, "$3", "$6", "$7", "$8")
    ),
];

/// The ordered claims, by [`GroupOrder`] (none, FIFO), then dialect.
pub(crate) const SQL_CLAIM_PUSH_ORDERED: [[&str; 2]; 2] = [
    [
        claim_ordered!(Sqlite, none, push_lease!("$8")),
        claim_ordered!(Postgres, none, push_lease!("$8")),
    ],
    [
        claim_ordered!(Sqlite, fifo, push_lease!("$8")),
        claim_ordered!(Postgres, fifo, push_lease!("$8")),
    ],
];

const SQL_CLAIM_PULL_ORDERED: [[&str; 2]; 2] = [
    [
        claim_ordered!(Sqlite, none, pull_lease!(Sqlite, "$3", "$8", "$9", "$10")),
        claim_ordered!(
            Postgres,
            none,
            pull_lease!(Postgres, "$3", "$8", "$9", "$10")
        ),
    ],
    [
        claim_ordered!(Sqlite, fifo, pull_lease!(Sqlite, "$3", "$8", "$9", "$10")),
        claim_ordered!(
            Postgres,
            fifo,
            pull_lease!(Postgres, "$3", "$8", "$9", "$10")
        ),
    ],
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
/// given, at most `max`, in turns among groups if the queue is ordered.
#[derive(Clone, Copy)]
pub(crate) struct Due<'a> {
    pub org: &'a str,
    pub queue: &'a str,
    pub tag: Option<&'a str>,
    pub max: u32,
    pub groups: Option<Turns<'a>>,
}

/// How an ordered queue's claim takes turns among groups: its limits, and
/// the group the previous claim ended its turn on.
#[derive(Clone, Copy)]
pub(crate) struct Turns<'a> {
    pub limit: Option<u32>,
    pub order: GroupOrder,
    pub cursor: &'a str,
}

impl Turns<'_> {
    /// The limit as the statement takes it: none is more than any count.
    fn limit_arg(&self) -> i64 {
        self.limit.map_or(i64::MAX / 2, i64::from)
    }

    fn order_index(&self) -> usize {
        match self.order {
            GroupOrder::None => 0,
            GroupOrder::Fifo => 1,
        }
    }

    /// Where the next claim starts its turn, after one that took `taken`
    /// (their groups, `''` for none): the last group this one reached in
    /// its order, which goes from after the cursor round to it, so a group
    /// at or before the cursor was reached last. `None` when it took
    /// nothing, and the cursor stays.
    pub(crate) fn next_cursor<'t>(
        &self,
        taken: impl Iterator<Item = &'t str> + Clone,
    ) -> Option<String> {
        let went_round = taken.clone().filter(|g| *g <= self.cursor).max();
        went_round.or_else(|| taken.max()).map(str::to_string)
    }
}

/// Plans an ordered claim once per connection on PostgreSQL: its custom
/// plan, made anew for every claim, took 5.5 ms of a warm claim's 8 among
/// 100 groups. A generic plan knows neither the claim's size nor the
/// queue's, so [`claim_ordered!`] leaves it no choice that could read the
/// table: each picked task is locked by a probe of its key, and the update
/// finds them by key. Scoped to the claim, since a dispatcher's claim goes
/// on to other queues' statements in the same transaction.
const SQL_GENERIC_PLAN: &str = "SET LOCAL plan_cache_mode = force_generic_plan";
const SQL_PLAN_AS_BEFORE: &str = "RESET plan_cache_mode";

/// Runs a claim statement whose lease takes `lease` after the claim's own
/// parameters; answers the tasks it took, with their lease's end, in
/// schedule order (`RETURNING` gives none).
async fn claim<C: Conn>(
    c: &C,
    sql: &str,
    now: i64,
    due: &Due<'_>,
    lease: &[Value<'_>],
) -> Result<Vec<(Task, i64)>> {
    let mut params = Vec::with_capacity(7 + lease.len());
    params.extend(args![
        due.org,
        due.queue,
        now,
        due.tag.unwrap_or(""),
        i64::from(due.max),
    ]);
    if let Some(turns) = &due.groups {
        params.extend(args![turns.limit_arg(), turns.cursor]);
    }
    params.extend_from_slice(lease);
    let generic = due.groups.is_some() && C::DIALECT == Dialect::Postgres;
    // Sent one after the other: a statement awaited together with another
    // may reach the server after it, the first time it is prepared.
    if generic {
        c.execute(SQL_GENERIC_PLAN, &[]).await?;
    }
    // What the claim moved from pending to running, for SQLite's writer,
    // which counts it (`Conn::count_moved`); PostgreSQL's trigger does.
    let bytes = AtomicU64::new(0);
    let mut claimed = c
        .query(sql, &params, |r| {
            if C::DIALECT == Dialect::Sqlite {
                bytes.fetch_add(task_row::read_bytes(r)?, Ordering::Relaxed);
            }
            Ok((task_row::read(r)?, r.i64(task_row::col::lease_expires_at)?))
        })
        .await?;
    if generic {
        c.execute(SQL_PLAN_AS_BEFORE, &[]).await?;
    }
    c.count_moved(
        due.org,
        due.queue,
        (Status::Pending, Status::Running),
        claimed.len() as u64,
        bytes.into_inner(),
    );
    if due.groups.is_some() {
        in_turns(&mut claimed);
    } else {
        claimed.sort_by(|(a, _), (b, _)| {
            (a.next_attempt_at, &a.uid).cmp(&(b.next_attempt_at, &b.uid))
        });
    }
    Ok(claimed)
}

/// Orders an ordered claim's tasks as it took them, for a dispatcher that
/// starts them in order: each group's tasks ranked as the claim ranks them
/// (priority, then due time), then the first of every group, the second of
/// every group, and so on, so that one group's many do not go ahead of
/// another's few.
fn in_turns(claimed: &mut Vec<(Task, i64)>) {
    let within = |a: &Task, b: &Task| {
        (a.group.as_deref(), -a.priority, a.next_attempt_at, &a.uid).cmp(&(
            b.group.as_deref(),
            -b.priority,
            b.next_attempt_at,
            &b.uid,
        ))
    };
    claimed.sort_by(|(a, _), (b, _)| within(a, b));
    let mut ranked: Vec<(usize, (Task, i64))> = Vec::with_capacity(claimed.len());
    for item in claimed.drain(..) {
        let rank = match ranked.last() {
            Some((r, (prev, _))) if prev.group == item.0.group => r + 1,
            _ => 0,
        };
        ranked.push((rank, item));
    }
    ranked.sort_by(|(ra, (a, _)), (rb, (b, _))| {
        (ra, -a.priority, a.next_attempt_at, &a.uid).cmp(&(
            rb,
            -b.priority,
            b.next_attempt_at,
            &b.uid,
        ))
    });
    claimed.extend(ranked.into_iter().map(|(_, item)| item));
}

/// The dispatcher's claim of a push queue's due tasks, each leased for its
/// dispatch deadline and `grace` (µs).
pub(crate) async fn push<C: Conn>(
    c: &C,
    now: i64,
    due: &Due<'_>,
    grace: i64,
) -> Result<Vec<ClaimedTask>> {
    let sql = match &due.groups {
        None => pick::<C>(&SQL_CLAIM_PUSH),
        Some(turns) => pick::<C>(&SQL_CLAIM_PUSH_ORDERED[turns.order_index()]),
    };
    let claimed = claim(c, sql, now, due, &args![grace]).await?;
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
    let sql = match &due.groups {
        None => pick::<C>(&SQL_CLAIM_PULL),
        Some(turns) => pick::<C>(&SQL_CLAIM_PULL_ORDERED[turns.order_index()]),
    };
    let claimed = claim(c, sql, now, due, &lease).await?;
    Ok(claimed.into_iter().map(|(task, _)| task).collect())
}

/// Leases the pending task `uid` as [`pull`] would, whatever its schedule
/// time; `None` if it is no longer pending.
pub(crate) async fn lease_one<C: Conn>(
    c: &C,
    now: i64,
    org: &str,
    uid: &str,
    lease: &PullLease<'_>,
) -> Result<Option<Task>> {
    let leased = c
        .query_opt(
            pick::<C>(&SQL_LEASE_ONE),
            &args![now, lease.length, lease.nonce, lease.claimant, uid],
            |r| {
                // Only SQLite's writer counts the move (`Conn::count_moved`).
                let bytes = match C::DIALECT {
                    Dialect::Sqlite => task_row::read_bytes(r)?,
                    Dialect::Postgres => 0,
                };
                Ok((task_row::read(r)?, bytes))
            },
        )
        .await?;
    Ok(leased.map(|(task, bytes)| {
        c.count_moved(
            org,
            &task.queue,
            (Status::Pending, Status::Running),
            1,
            bytes,
        );
        task
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite numbers `$n` in order of first use: each text must use them
    /// in ascending order.
    #[test]
    fn parameters_are_first_used_in_order() {
        // PostgreSQL numbers them as written: its ordered texts need not.
        let sqlite_ordered = SQL_CLAIM_PUSH_ORDERED
            .iter()
            .chain(&SQL_CLAIM_PULL_ORDERED)
            .map(|texts| &texts[0]);
        for sql in SQL_CLAIM_PUSH
            .iter()
            .chain(&SQL_CLAIM_PULL)
            .chain(sqlite_ordered)
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
        for sql in SQL_CLAIM_PUSH {
            assert!(sql.contains(due!()), "{sql}");
        }
        for sql in SQL_CLAIM_PULL {
            assert!(sql.contains(due!(guarded)), "{sql}");
        }
        for (push, pull) in SQL_CLAIM_PUSH_ORDERED
            .iter()
            .flatten()
            .zip(SQL_CLAIM_PULL_ORDERED.iter().flatten())
        {
            let (push_due, _) = push.split_once(" UPDATE tasks SET ").unwrap();
            let (pull_due, _) = pull.split_once(" UPDATE tasks SET ").unwrap();
            assert_eq!(push_due, pull_due);
        }
    }

    #[test]
    fn an_ordered_claims_tasks_alternate_between_groups() {
        let task = |id: &str, group: Option<&str>, priority: i32, at: i64| Task {
            queue: "q".into(),
            task_id: id.into(),
            uid: id.into(),
            status: crate::records::Status::Running,
            target: idem_core::task::Target::payload(None),
            callbacks: Default::default(),
            schedule_time: from_micros(at),
            next_attempt_at: from_micros(at),
            dispatch_deadline_s: 30,
            retry_config: Default::default(),
            attempt_count: 1,
            cancel_requested: false,
            created_at: from_micros(at),
            finished_at: None,
            last_attempt: None,
            dedup_expires_at: None,
            run: None,
            header_style: Default::default(),
            tag: None,
            lease: None,
            ended_claim: None,
            result: None,
            group: group.map(str::to_string),
            priority,
        };
        let mut claimed: Vec<(Task, i64)> = [
            task("a1", Some("a"), 0, 1),
            task("a2", Some("a"), 0, 2),
            task("a3", Some("a"), 0, 3),
            task("b1", Some("b"), 0, 10),
            task("b2", Some("b"), 5, 11),
            task("u1", None, 0, 5),
        ]
        .into_iter()
        .map(|t| (t, 0))
        .collect();
        in_turns(&mut claimed);
        let order: Vec<&str> = claimed.iter().map(|(t, _)| t.task_id.as_str()).collect();
        assert_eq!(order, ["b2", "a1", "u1", "a2", "b1", "a3"]);
    }

    #[test]
    fn a_turn_ends_on_the_last_group_reached() {
        let turns = |cursor| Turns {
            limit: None,
            order: GroupOrder::None,
            cursor,
        };
        let t = turns("b");
        assert_eq!(t.next_cursor(["c", "d"].into_iter()), Some("d".into()));
        assert_eq!(t.next_cursor(["a", "c", "d"].into_iter()), Some("a".into()));
        assert_eq!(
            t.next_cursor(["a", "", "b", "c"].into_iter()),
            Some("b".into())
        );
        assert_eq!(t.next_cursor([].into_iter()), None);
        assert_eq!(
            turns("").next_cursor(["", "a"].into_iter()),
            Some("".into())
        );
        assert_eq!(
            turns("").next_cursor(["a", "b"].into_iter()),
            Some("b".into())
        );
    }
}
