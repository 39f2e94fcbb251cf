//! The changes to `task_counts` that SQLite's writer makes once per queue,
//! status and commit, instead of by row triggers: tasks inserted, and
//! tasks moved from one status to another.
//!
//! An `AFTER INSERT` trigger ran a sub-program for every task, a quarter
//! of a lone create's work in the writer; the `AFTER UPDATE OF status`
//! trigger ran two statements for every status change, two per delivery
//! (claimed, then ended), the larger part of what a delivery costs the
//! writer beyond its own two updates. The statements that insert tasks or
//! change their status report it ([`Conn::count_inserted`] and
//! [`Conn::count_moved`](crate::driver::Conn)) and the sums wait here.
//! They reach the table at the latest before the commit, and before any
//! write that runs in a savepoint of its own: such a write may read or
//! change the counters (a queue's delete removes its rows), and one rolled
//! back must not take the others' counts with it. Inside that write, its
//! own counts are written before its savepoint is released, and dropped
//! with it when it rolls back. So the counters hold exactly what the rows
//! hold at every savepoint boundary and at every commit; deletes are still
//! counted by their trigger (none is on the path of a create or a
//! delivery).
//!
//! [`Conn::count_inserted`]: crate::driver::Conn::count_inserted

use crate::records::Status;
use rusqlite::Connection;
use std::cell::RefCell;

/// Changes of tasks and bytes in each (organization, queue, status), not
/// yet in `task_counts`. A commit touches a few queues, so a list serves.
#[derive(Default)]
pub(crate) struct Counted {
    pending: RefCell<Vec<Change>>,
}

struct Change {
    org: String,
    queue: String,
    status: Status,
    tasks: i64,
    bytes: i64,
}

/// Adds each change to its counter row, creating the row if needed, as
/// the triggers' upsert did.
const SQL_ADD: &str = "INSERT INTO task_counts (org, queue, status, shard, n, bytes) \
     VALUES (?1, ?2, ?3, 0, ?4, ?5) ON CONFLICT (org, queue, status, shard) \
     DO UPDATE SET n = n + excluded.n, bytes = bytes + excluded.bytes";

/// A count as the table holds it; a commit holds at most a few thousand
/// tasks, so the clamp never applies.
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Counted {
    /// `tasks` new tasks holding `bytes` went into `queue`, pending.
    pub(crate) fn inserted(&self, org: &str, queue: &str, tasks: u64, bytes: u64) {
        self.add(org, queue, Status::Pending, signed(tasks), signed(bytes));
    }

    /// `tasks` tasks of `queue` holding `bytes` went from `from` to `to`.
    pub(crate) fn moved(
        &self,
        org: &str,
        queue: &str,
        (from, to): (Status, Status),
        tasks: u64,
        bytes: u64,
    ) {
        if from == to {
            return;
        }
        let (tasks, bytes) = (signed(tasks), signed(bytes));
        self.add(org, queue, from, -tasks, -bytes);
        self.add(org, queue, to, tasks, bytes);
    }

    fn add(&self, org: &str, queue: &str, status: Status, tasks: i64, bytes: i64) {
        if tasks == 0 {
            return;
        }
        let mut pending = self.pending.borrow_mut();
        match pending
            .iter_mut()
            .find(|p| p.status == status && p.org == org && p.queue == queue)
        {
            Some(p) => {
                p.tasks += tasks;
                p.bytes += bytes;
            }
            None => pending.push(Change {
                org: org.to_string(),
                queue: queue.to_string(),
                status,
                tasks,
                bytes,
            }),
        }
    }

    /// Writes the pending changes to `task_counts` and forgets them; on an
    /// error they are forgotten too, and the caller rolls back what they
    /// counted. A change that came to nothing (tasks claimed and ended in
    /// one commit leave `running` as it was) writes nothing.
    pub(crate) fn flush(&self, conn: &Connection) -> rusqlite::Result<()> {
        let mut pending = self.pending.borrow_mut();
        if pending.is_empty() {
            return Ok(());
        }
        let add = conn.prepare_cached(SQL_ADD);
        // Drained even when a statement fails: what is left was rolled back.
        let drained = pending.drain(..);
        let mut add = add?;
        for p in drained.filter(|p| p.tasks != 0 || p.bytes != 0) {
            add.execute(rusqlite::params![
                p.org,
                p.queue,
                p.status.as_str(),
                p.tasks,
                p.bytes
            ])?;
        }
        Ok(())
    }

    /// Forgets the pending changes, whose rows were rolled back.
    pub(crate) fn discard(&self) {
        self.pending.borrow_mut().clear();
    }
}
