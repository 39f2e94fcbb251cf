//! The attempts this node has in flight, by task and lease token, so that a
//! cancel can abort one: the store has already ended the task `cancelled`
//! and fenced the attempt, and dropping the attempt's future closes its
//! connection to the target.
//!
//! Registering is one map insert under an uncontended lock per attempt,
//! and nothing else on the dispatch path looks at this map.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Most aborts remembered for attempts not registered (yet): a cancel may
/// commit between a claim's commit and the registration of its attempts,
/// and every node of a cluster hears of every cancel.
const EARLY_ABORTS: usize = 1024;

/// An attempt: the task's uid and the lease token (attempt number).
type Key = (String, u32);

#[derive(Default)]
pub(super) struct InFlight(Mutex<Inner>);

#[derive(Default)]
struct Inner {
    running: HashMap<Key, oneshot::Sender<()>>,
    early: HashSet<Key>,
    early_order: VecDeque<Key>,
}

impl InFlight {
    /// Registers an attempt about to start; the receiver fires if a cancel
    /// aborts it, and the registration ends when the guard drops.
    pub(super) fn register(self: &Arc<Self>, uid: &str, attempt: u32) -> Registration {
        let key = (uid.to_string(), attempt);
        let (tx, rx) = oneshot::channel();
        let mut inner = self.0.lock().expect("in-flight attempts");
        if !inner.early.is_empty() && inner.early.remove(&key) {
            let _ = tx.send(());
        } else {
            inner.running.insert(key.clone(), tx);
        }
        Registration {
            in_flight: self.clone(),
            key,
            aborted: Some(rx),
        }
    }

    /// The attempts registered now.
    pub(super) fn snapshot(&self) -> Vec<Key> {
        let inner = self.0.lock().expect("in-flight attempts");
        inner.running.keys().cloned().collect()
    }

    /// Aborts the attempt if this node runs it; remembers the abort for a
    /// while otherwise, in case its registration is still to come.
    pub(super) fn abort(&self, uid: &str, attempt: u32) -> bool {
        let key = (uid.to_string(), attempt);
        let mut inner = self.0.lock().expect("in-flight attempts");
        if let Some(tx) = inner.running.remove(&key) {
            return tx.send(()).is_ok();
        }
        if inner.early.insert(key.clone()) {
            inner.early_order.push_back(key);
            if inner.early_order.len() > EARLY_ABORTS
                && let Some(oldest) = inner.early_order.pop_front()
            {
                inner.early.remove(&oldest);
            }
        }
        false
    }
}

/// One registered attempt; unregisters when dropped.
pub(super) struct Registration {
    in_flight: Arc<InFlight>,
    key: Key,
    aborted: Option<oneshot::Receiver<()>>,
}

impl Registration {
    /// Resolves when a cancel aborts the attempt; never otherwise.
    pub(super) async fn aborted(&mut self) {
        if let Some(rx) = &mut self.aborted {
            let fired = rx.await.is_ok();
            // A resolved receiver must not be polled again.
            self.aborted = None;
            if fired {
                return;
            }
        }
        std::future::pending().await
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.in_flight
            .0
            .lock()
            .expect("in-flight attempts")
            .running
            .remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn fires(r: &mut Registration) -> bool {
        tokio::time::timeout(Duration::from_millis(20), r.aborted())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn an_abort_reaches_only_the_attempt_it_names() {
        let in_flight = Arc::new(InFlight::default());
        let mut first = in_flight.register("u", 1);
        let mut other = in_flight.register("v", 1);
        assert!(!in_flight.abort("u", 2), "another lease token");
        assert!(in_flight.abort("u", 1));
        assert!(fires(&mut first).await);
        assert!(!fires(&mut other).await);
    }

    #[tokio::test]
    async fn an_abort_before_the_registration_still_aborts() {
        let in_flight = Arc::new(InFlight::default());
        assert!(!in_flight.abort("u", 1));
        let mut late = in_flight.register("u", 1);
        assert!(fires(&mut late).await);
        // Used once: the next attempt of the task is not aborted.
        let mut next = in_flight.register("u", 1);
        assert!(!fires(&mut next).await);
    }

    #[tokio::test]
    async fn early_aborts_are_bounded_and_registrations_end_on_drop() {
        let in_flight = Arc::new(InFlight::default());
        for i in 0..(EARLY_ABORTS as u32 + 10) {
            in_flight.abort("old", i);
        }
        let inner = in_flight.0.lock().unwrap();
        assert_eq!(inner.early.len(), EARLY_ABORTS);
        assert_eq!(inner.early_order.len(), EARLY_ABORTS);
        drop(inner);
        drop(in_flight.register("u", 1));
        assert!(in_flight.0.lock().unwrap().running.is_empty());
        assert!(!in_flight.abort("u", 1), "gone with its guard");
    }
}
