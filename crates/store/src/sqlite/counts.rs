//! The pending counts of the tasks SQLite's writer inserts, written to
//! `task_counts` once per queue and commit instead of by a row trigger.
//!
//! An `AFTER INSERT` trigger ran a sub-program for every task, a quarter
//! of a lone create's work in the writer. The statements that insert tasks
//! report what went in ([`Conn::count_inserted`](crate::driver::Conn)) and
//! the sums wait here. They reach the table at the latest before the
//! commit, and before any write that runs in a savepoint of its own: such
//! a write may read or change the counters (a queue's delete removes its
//! rows), and one rolled back must not take the others' counts with it.
//! Inside that write, its own counts are written before its savepoint is
//! released, and dropped with it when it rolls back. So the counters hold
//! exactly what the rows hold at every savepoint boundary and at every
//! commit; status changes and deletes are still counted by their triggers.

use rusqlite::Connection;
use std::cell::RefCell;

/// Tasks and bytes inserted into each (organization, queue), not yet in
/// `task_counts`; new tasks are `pending`. A commit touches a few queues,
/// so a list serves.
#[derive(Default)]
pub(crate) struct Inserted {
    pending: RefCell<Vec<Pending>>,
}

struct Pending {
    org: String,
    queue: String,
    tasks: u64,
    bytes: u64,
}

/// Adds each pending sum to its counter row, creating the row if needed,
/// as the trigger's upsert did.
const SQL_ADD: &str = "INSERT INTO task_counts (org, queue, status, shard, n, bytes) \
     VALUES (?1, ?2, 'pending', 0, ?3, ?4) ON CONFLICT (org, queue, status, shard) \
     DO UPDATE SET n = n + excluded.n, bytes = bytes + excluded.bytes";

impl Inserted {
    pub(crate) fn add(&self, org: &str, queue: &str, tasks: u64, bytes: u64) {
        if tasks == 0 {
            return;
        }
        let mut pending = self.pending.borrow_mut();
        match pending
            .iter_mut()
            .find(|p| p.org == org && p.queue == queue)
        {
            Some(p) => {
                p.tasks += tasks;
                p.bytes += bytes;
            }
            None => pending.push(Pending {
                org: org.to_string(),
                queue: queue.to_string(),
                tasks,
                bytes,
            }),
        }
    }

    /// Writes the pending sums to `task_counts` and forgets them; on an
    /// error they are forgotten too, and the caller rolls back what they
    /// counted.
    pub(crate) fn flush(&self, conn: &Connection) -> rusqlite::Result<()> {
        let mut pending = self.pending.borrow_mut();
        if pending.is_empty() {
            return Ok(());
        }
        let add = conn.prepare_cached(SQL_ADD);
        // Drained even when a statement fails: what is left was rolled back.
        let drained = pending.drain(..);
        let mut add = add?;
        for p in drained {
            add.execute(rusqlite::params![
                p.org,
                p.queue,
                i64::try_from(p.tasks).unwrap_or(i64::MAX),
                i64::try_from(p.bytes).unwrap_or(i64::MAX)
            ])?;
        }
        Ok(())
    }

    /// Forgets the pending sums, whose rows were rolled back.
    pub(crate) fn discard(&self) {
        self.pending.borrow_mut().clear();
    }
}
