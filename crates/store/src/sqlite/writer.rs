//! Group commit: one thread owns the write connection and commits the
//! writes that queued up while the previous commit was being made durable,
//! all in one transaction.
//!
//! With `synchronous=FULL` every commit waits for an fsync. One commit per
//! request would cap creates at the disk's fsync rate; sharing a commit lets
//! throughput grow with concurrency while every caller still hears back only
//! after its own write is durable. Each write runs inside its own savepoint,
//! so one failing request rolls back alone and the others still commit.

use crate::{Error, Result};
use rusqlite::Connection;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use tokio::sync::oneshot;

/// One queued write. `run` executes it inside the open transaction;
/// `complete` answers its caller once the commit outcome is known (`run` may
/// never have been called, when the transaction could not even begin).
trait Job: Send {
    fn run(&mut self, conn: &Connection) -> bool;
    fn complete(self: Box<Self>, commit: std::result::Result<(), String>);
}

struct Write<T, F> {
    f: Option<F>,
    result: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> Job for Write<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Connection) -> Result<T> + Send + 'static,
{
    fn run(&mut self, conn: &Connection) -> bool {
        let f = self.f.take().expect("a write runs once");
        let result = catch_unwind(AssertUnwindSafe(|| f(conn)))
            .unwrap_or_else(|_| Err(Error::Internal("write panicked".into())));
        let ok = result.is_ok();
        self.result = Some(result);
        ok
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
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job = Box::new(Write {
            f: Some(f),
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
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
            tracing::error!(error = %e, "sqlite writer could not begin a transaction");
            for job in batch {
                job.complete(Err(e.to_string()));
            }
            continue;
        }
        for job in batch.iter_mut() {
            let ok = conn.execute_batch("SAVEPOINT w").is_ok() && job.run(&conn);
            let closed = if ok {
                conn.execute_batch("RELEASE w")
            } else {
                conn.execute_batch("ROLLBACK TO w; RELEASE w")
            };
            if let Err(e) = closed {
                tracing::error!(error = %e, "sqlite savepoint");
            }
        }
        let committed = conn.execute_batch("COMMIT").map_err(|e| e.to_string());
        if committed.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        for job in batch {
            job.complete(committed.clone());
        }
    }
}
