//! The node's background work, watched.
//!
//! The dispatcher, the scheduler and the sweeper run for the life of the
//! node. One that exits or panics while the node is not stopping would
//! leave a node that accepts tasks it never delivers (or jobs it never
//! runs) and still looks healthy, so each runs under [`supervise`]: its end
//! is logged, counted in `idem_background_restarts_total{task}`, marks it
//! down in [`Health`] (`/readyz` answers 503 naming it, so a load balancer
//! sends work elsewhere), and it is started again after a backoff that
//! doubles up to [`MAX_BACKOFF`], and starts over once a run has lasted
//! [`STEADY`]. It counts as up again once restarted.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The first pause before a restart.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest pause before a restart.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A run this long resets the backoff: what failed then is a new failure.
const STEADY: Duration = Duration::from_secs(60);

/// Which background tasks are down now.
#[derive(Debug, Default)]
pub struct Health {
    down: Mutex<BTreeSet<&'static str>>,
}

impl Health {
    /// The background tasks not running now, by name.
    pub fn down(&self) -> Vec<&'static str> {
        self.down.lock().expect("health").iter().copied().collect()
    }

    fn set(&self, task: &'static str, down: bool) {
        let mut set = self.down.lock().expect("health");
        if down {
            set.insert(task);
        } else {
            set.remove(task);
        }
    }
}

/// Runs `start()` on a task of its own until `stop` turns true, starting
/// it again whenever it ends before that, as the module says.
pub async fn supervise<F, Fut>(
    health: &Health,
    task: &'static str,
    mut stop: watch::Receiver<bool>,
    mut start: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut backoff = FIRST_BACKOFF;
    loop {
        let started = Instant::now();
        let ended = tokio::spawn(start()).await;
        if *stop.borrow() {
            return;
        }
        match ended {
            Ok(()) => tracing::error!(task, "background task exited while the node runs"),
            Err(e) if e.is_panic() => {
                let message = idem_http::panic_message(&*e.into_panic());
                tracing::error!(task, panic = %message, "background task panicked");
            }
            // Cancelled: only a runtime shutting down cancels it.
            Err(_) => return,
        }
        metrics::counter!("idem_background_restarts_total", "task" => task).increment(1);
        health.set(task, true);
        if started.elapsed() >= STEADY {
            backoff = FIRST_BACKOFF;
        }
        tracing::warn!(task, backoff_ms = backoff.as_millis() as u64, "restarting");
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.changed() => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
        health.set(task, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A task that panics twice is down between its runs, restarted each
    /// time, and up once it runs; stopping ends the watch.
    #[tokio::test(start_paused = true)]
    async fn a_panicking_task_is_down_until_it_runs_again() {
        let health = Arc::new(Health::default());
        let runs = Arc::new(AtomicU32::new(0));
        let (stop_tx, stop_rx) = watch::channel(false);
        let watched = {
            let (health, runs) = (health.clone(), runs.clone());
            tokio::spawn(async move {
                let watched = stop_rx.clone();
                supervise(&health, "dispatcher", stop_rx, move || {
                    let n = runs.fetch_add(1, Ordering::SeqCst);
                    let mut stop = watched.clone();
                    async move {
                        assert!(n >= 2, "an injected failure");
                        let _ = stop.wait_for(|stop| *stop).await;
                    }
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(health.down(), vec!["dispatcher"], "down after the panic");
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        // The first restart after 0.5 s, which panics; the next after 1 s.
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert_eq!(health.down(), vec!["dispatcher"]);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert_eq!(runs.load(Ordering::SeqCst), 3, "restarted again");
        assert!(health.down().is_empty(), "up while it runs");
        stop_tx.send_replace(true);
        tokio::time::timeout(Duration::from_secs(1), watched)
            .await
            .expect("the watch ends when the node stops")
            .unwrap();
    }
}
