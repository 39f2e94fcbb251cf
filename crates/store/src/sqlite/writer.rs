//! Group commit: one thread owns the write connection and commits the
//! writes that queued up while the previous commit was being made durable,
//! all in one transaction.
//!
//! With `synchronous=FULL` every commit waits for an fsync. One commit per
//! request would cap creates at the disk's fsync rate; sharing a commit lets
//! throughput grow with concurrency while every caller still hears back only
//! after its own write is durable. Each write runs inside its own savepoint,
//! so one failing request rolls back alone and the others still commit;
//! a write that changes rows only after it can no longer fail but for a
//! fault of the database (a keyless create) runs without one, see
//! [`Writer::write_unguarded`]. The tasks writes insert, and the status
//! changes they make, are counted once per commit ([`Counted`]).

use super::counts::Counted;
use crate::{Error, Result};
use rusqlite::Connection;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use tokio::sync::oneshot;

/// One queued write. `run` executes it inside the open transaction;
/// `complete` answers its caller once the commit outcome is known (`run` may
/// never have been called, when the transaction could not even begin).
trait Job: Send {
    fn run(&mut self, conn: &Connection, counted: &Counted) -> bool;
    /// Whether the job runs in a savepoint of its own.
    fn guarded(&self) -> bool;
    fn complete(self: Box<Self>, commit: std::result::Result<(), String>);
}

struct Write<T, F> {
    f: Option<F>,
    guarded: bool,
    result: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> Job for Write<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Connection, &Counted) -> Result<T> + Send + 'static,
{
    fn run(&mut self, conn: &Connection, counted: &Counted) -> bool {
        let f = self.f.take().expect("a write runs once");
        let result = catch_unwind(AssertUnwindSafe(|| f(conn, counted)))
            .unwrap_or_else(|_| Err(Error::Internal("write panicked".into())));
        let ok = result.is_ok();
        self.result = Some(result);
        ok
    }

    fn guarded(&self) -> bool {
        self.guarded
    }

    fn complete(self: Box<Self>, commit: std::result::Result<(), String>) {
        let answer = match (self.result, commit) {
            // The record that held the key may be one this very batch
            // wrote, and is gone with it.
            (Some(Err(Error::KeyHeld(_))), Err(e)) => {
                Err(Error::Unavailable(format!("commit failed: {e}")))
            }
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(v)), Ok(())) => Ok(v),
            (_, Err(e)) => Err(Error::Unavailable(format!("commit failed: {e}"))),
            (None, Ok(())) => Err(Error::Internal("write was not run".into())),
        };
        let _ = self.reply.send(answer);
    }
}

/// Most writes per commit: bounds the latency the first one waits for.
const MAX_BATCH: usize = 512;

#[derive(Clone)]
pub(crate) struct Writer {
    jobs: mpsc::Sender<Box<dyn Job>>,
}

impl Writer {
    pub(crate) fn start(conn: Connection) -> Writer {
        super::stable_plans(&conn, "writer");
        let (tx, rx) = mpsc::channel::<Box<dyn Job>>();
        std::thread::Builder::new()
            .name("idem-sqlite-writer".into())
            .spawn(move || run(conn, rx))
            .expect("spawn writer thread");
        Writer { jobs: tx }
    }

    /// Runs `f` in the next group commit and returns its result once that
    /// commit is durable. `f` must not block on anything but the database.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Counted) -> Result<T> + Send + 'static,
    {
        self.send(true, f).await
    }

    /// [`Writer::write`] without a savepoint, for a write that fails only
    /// before it changes a row, or at its last statement, which SQLite
    /// undoes alone (a keyless create: a refusal, a queue not found, or an
    /// insert that met a taken ID and changed nothing). A savepoint cost a
    /// create two statements and a copy of every page it touched, more
    /// than a tenth of the writer's time. Should such a write still fail
    /// after changing rows (a fault of the database), nothing could undo
    /// it alone, so its whole group commit is rolled back and every write
    /// in it answered unavailable, as a failed commit is.
    pub(crate) async fn write_unguarded<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Counted) -> Result<T> + Send + 'static,
    {
        self.send(false, f).await
    }

    async fn send<T, F>(&self, guarded: bool, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Counted) -> Result<T> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job = Box::new(Write {
            f: Some(f),
            guarded,
            result: None,
            reply,
        });
        self.jobs
            .send(job)
            .map_err(|_| Error::Unavailable("sqlite writer stopped".into()))?;
        rx.await
            .map_err(|_| Error::Unavailable("sqlite writer stopped".into()))?
    }
}

fn run(conn: Connection, jobs: mpsc::Receiver<Box<dyn Job>>) {
    let counted = Counted::default();
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let committed = commit(&conn, &counted, &mut batch);
        for job in batch {
            job.complete(committed.clone());
        }
    }
}

/// Runs `batch` in one transaction and commits it; the error, if any, is
/// what every write of the batch is answered with.
fn commit(
    conn: &Connection,
    counted: &Counted,
    batch: &mut [Box<dyn Job>],
) -> std::result::Result<(), String> {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "sqlite writer could not begin a transaction");
        return Err(e.to_string());
    }
    let mut stranded = None;
    for job in batch.iter_mut() {
        if !job.guarded() {
            let before = conn.total_changes();
            if !job.run(conn, counted) && conn.total_changes() != before {
                stranded = Some("a write failed after changing rows".to_string());
            }
        } else if let Err(e) = flush(conn, counted) {
            stranded = Some(e);
        } else {
            let ok = conn.execute_batch("SAVEPOINT w").is_ok() && job.run(conn, counted);
            // The write's own counts, kept or undone with it. Failing,
            // they leave its rows uncounted: its commit is rolled back.
            if ok && let Err(e) = flush(conn, counted) {
                stranded = Some(e);
            }
            let closed = if ok {
                conn.execute_batch("RELEASE w")
            } else {
                counted.discard();
                conn.execute_batch("ROLLBACK TO w; RELEASE w")
            };
            if let Err(e) = closed {
                tracing::error!(error = %e, "sqlite savepoint");
            }
        }
        // SQLite rolls a transaction back itself on some errors (a full
        // disk, an I/O error). The writes after would each commit on
        // their own, unseen by the answer of the failed commit: none
        // runs, and all are answered unavailable.
        if conn.is_autocommit() {
            stranded = Some("the database rolled the transaction back".to_string());
        }
        if stranded.is_some() {
            break;
        }
    }
    if stranded.is_none() {
        stranded = flush(conn, counted).err();
    }
    let committed = match stranded {
        Some(e) => {
            tracing::error!(error = %e, "sqlite writer rolls back its group commit");
            Err(e)
        }
        None => conn.execute_batch("COMMIT").map_err(|e| e.to_string()),
    };
    if committed.is_err() {
        counted.discard();
        let _ = conn.execute_batch("ROLLBACK");
    }
    committed
}

/// [`Counted::flush`], failing as a write that strands its commit does.
fn flush(conn: &Connection, counted: &Counted) -> std::result::Result<(), String> {
    counted
        .flush(conn)
        .map_err(|e| format!("counting tasks: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer on a fresh file holding one table, `t`.
    fn writer() -> (tempfile::TempDir, Writer) {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("w.db")).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); \
             CREATE TABLE task_counts (org TEXT NOT NULL, queue TEXT NOT NULL, \
             status TEXT NOT NULL, shard INTEGER NOT NULL, n INTEGER NOT NULL, \
             bytes INTEGER NOT NULL, PRIMARY KEY (org, queue, status, shard))",
        )
        .unwrap();
        (dir, Writer::start(conn))
    }

    fn insert(conn: &Connection, x: i64) -> Result<()> {
        conn.execute("INSERT INTO t (x) VALUES (?1)", [x])?;
        Ok(())
    }

    /// Runs `unguarded` and `guarded` in one group commit: the writer is
    /// held in an earlier commit until both are queued.
    async fn together<A, B>(w: &Writer, unguarded: A, guarded: B) -> (Result<()>, Result<()>)
    where
        A: FnOnce(&Connection, &Counted) -> Result<()> + Send + 'static,
        B: FnOnce(&Connection, &Counted) -> Result<()> + Send + 'static,
    {
        let (started, running) = oneshot::channel();
        let (go, held) = mpsc::channel::<()>();
        let hold = tokio::spawn({
            let w = w.clone();
            async move {
                w.write(move |_, _| {
                    started.send(()).unwrap();
                    held.recv().unwrap();
                    Ok(())
                })
                .await
            }
        });
        running.await.unwrap();
        // Each write is queued at its first poll, before the release.
        let (a, b, ()) = tokio::join!(w.write_unguarded(unguarded), w.write(guarded), async {
            go.send(()).unwrap()
        });
        hold.await.unwrap().unwrap();
        (a, b)
    }

    async fn rows(w: &Writer) -> Vec<i64> {
        w.write(|conn, _| {
            let mut stmt = conn.prepare("SELECT x FROM t ORDER BY x")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
        .await
        .unwrap()
    }

    /// A write after SQLite rolled the transaction back itself would
    /// commit on its own, unseen by the failed commit's answer: it does
    /// not run, and every write of the commit is answered unavailable.
    #[tokio::test]
    async fn no_write_runs_once_the_transaction_is_gone() {
        let (_dir, w) = writer();
        let (a, b) = together(
            &w,
            |conn, _| {
                insert(conn, 1)?;
                conn.execute_batch("ROLLBACK")?;
                Ok(())
            },
            |conn, _| insert(conn, 2),
        )
        .await;
        assert!(matches!(a, Err(Error::Unavailable(_))), "{a:?}");
        assert!(matches!(b, Err(Error::Unavailable(_))), "{b:?}");
        assert!(rows(&w).await.is_empty());
    }

    /// An unguarded write refused before it changed anything fails alone.
    #[tokio::test]
    async fn an_unguarded_write_refused_before_writing_fails_alone() {
        let (_dir, w) = writer();
        let (a, b) = together(
            &w,
            |_, _| Err(Error::Invalid(Default::default())),
            |conn, _| insert(conn, 2),
        )
        .await;
        assert!(matches!(a, Err(Error::Invalid(_))), "{a:?}");
        b.unwrap();
        assert_eq!(rows(&w).await, [2]);
    }

    /// An unguarded write that fails after changing rows has no savepoint
    /// to undo it alone: its group commit is rolled back whole, the other
    /// writes answered unavailable, and the writer goes on.
    #[tokio::test]
    async fn an_unguarded_write_failing_after_changes_rolls_back_its_commit() {
        let (_dir, w) = writer();
        let (a, b) = together(
            &w,
            |conn, _| {
                insert(conn, 1)?;
                Err(Error::Internal("failed after writing".into()))
            },
            |conn, _| insert(conn, 2),
        )
        .await;
        assert!(matches!(a, Err(Error::Internal(_))), "{a:?}");
        assert!(matches!(b, Err(Error::Unavailable(_))), "{b:?}");
        assert!(rows(&w).await.is_empty());

        // Guarded, the same write rolls back alone.
        let (a, b) = together(
            &w,
            |conn, _| insert(conn, 3),
            |conn, _| {
                insert(conn, 4)?;
                Err(Error::Internal("failed after writing".into()))
            },
        )
        .await;
        a.unwrap();
        assert!(matches!(b, Err(Error::Internal(_))), "{b:?}");
        assert_eq!(rows(&w).await, [3]);
    }

    /// A task's insert counted in memory: one row in `t`, and one task of
    /// `bytes` bytes in queue `q`.
    fn insert_counted(conn: &Connection, counted: &Counted, x: i64) -> Result<()> {
        insert(conn, x)?;
        counted.inserted("o", "q", 1, 10);
        Ok(())
    }

    /// The pending count of queue `q`, tasks and bytes, as committed.
    async fn counted(w: &Writer) -> Option<(i64, i64)> {
        w.write(|conn, _| {
            Ok(conn
                .query_row(
                    "SELECT n, bytes FROM task_counts WHERE queue = 'q'",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .ok())
        })
        .await
        .unwrap()
    }

    /// Inserts counted by unguarded writes reach `task_counts` with their
    /// commit, summed into one row.
    #[tokio::test]
    async fn unguarded_inserts_are_counted_at_their_commit() {
        let (_dir, w) = writer();
        let (a, b) = together(
            &w,
            |conn, counted| insert_counted(conn, counted, 1),
            |conn, _| insert(conn, 2),
        )
        .await;
        a.unwrap();
        b.unwrap();
        w.write_unguarded(|conn, counted| insert_counted(conn, counted, 3))
            .await
            .unwrap();
        assert_eq!(counted(&w).await, Some((2, 20)));
    }

    /// A guarded write sees the counts of the unguarded writes before it,
    /// and its own are undone with its savepoint.
    #[tokio::test]
    async fn a_guarded_write_sees_counts_before_it_and_rolls_back_its_own() {
        let (_dir, w) = writer();
        let (a, b) = together(
            &w,
            |conn, counted| insert_counted(conn, counted, 1),
            |conn, counted| {
                let n: i64 = conn.query_row("SELECT n FROM task_counts", [], |r| r.get(0))?;
                insert_counted(conn, counted, 2)?;
                Err(Error::Internal(format!("saw {n}")))
            },
        )
        .await;
        a.unwrap();
        // The count pending before it, which it read, then failed.
        assert!(
            matches!(&b, Err(Error::Internal(m)) if m == "saw 1"),
            "{b:?}"
        );
        assert_eq!(rows(&w).await, [1]);
        assert_eq!(counted(&w).await, Some((1, 10)));
    }

    /// Counts pending in a commit that is rolled back are forgotten with
    /// its rows, not carried into the next commit.
    #[tokio::test]
    async fn counts_of_a_rolled_back_commit_are_forgotten() {
        let (_dir, w) = writer();
        let (a, b) = together(
            &w,
            |conn, counted| {
                insert_counted(conn, counted, 1)?;
                Err(Error::Internal("failed after writing".into()))
            },
            |conn, _| insert(conn, 2),
        )
        .await;
        assert!(matches!(a, Err(Error::Internal(_))), "{a:?}");
        assert!(matches!(b, Err(Error::Unavailable(_))), "{b:?}");
        w.write_unguarded(|conn, _| insert(conn, 3)).await.unwrap();
        assert_eq!(rows(&w).await, [3]);
        assert_eq!(counted(&w).await, None);
    }
}
