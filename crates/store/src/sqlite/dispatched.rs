//! The attempts each queue started in the last minute, for its statistics'
//! `dispatched_last_minute`.
//!
//! PostgreSQL keeps them in a table that a trigger fills, since any node
//! may claim. One process owns a SQLite file, so its store counts them in
//! memory instead: a trigger per attempt cost SQLite's single writer about
//! a seventh of its deliveries. The count starts empty when the process
//! does.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// How far back the count looks, in µs.
const MINUTE_US: i64 = 60_000_000;

/// A queue's claims of the last minute: (instant in µs, attempts started),
/// oldest first.
type Claims = VecDeque<(i64, u64)>;

/// Per queue (organization, name), its claims of the last minute.
#[derive(Default)]
pub(super) struct Dispatched(Mutex<HashMap<(String, String), Claims>>);

impl Dispatched {
    /// Records `n` attempts of `org`'s `queue` started at `at`, and forgets
    /// the queue's claims older than a minute before it.
    pub(super) fn record(&self, org: &str, queue: &str, at: i64, n: u64) {
        let mut all = self.0.lock().expect("dispatched");
        let claims = all.entry((org.to_string(), queue.to_string())).or_default();
        while claims.front().is_some_and(|&(t, _)| t <= at - MINUTE_US) {
            claims.pop_front();
        }
        match claims.back_mut() {
            Some((t, count)) if *t == at => *count += n,
            _ => claims.push_back((at, n)),
        }
    }

    /// The attempts started in the minute up to `now`: after `now` minus a
    /// minute, at or before `now`.
    pub(super) fn last_minute(&self, org: &str, queue: &str, now: i64) -> u64 {
        let all = self.0.lock().expect("dispatched");
        all.get(&(org.to_string(), queue.to_string()))
            .map_or(0, |claims| {
                claims
                    .iter()
                    .filter(|&&(t, _)| t > now - MINUTE_US && t <= now)
                    .map(|&(_, n)| n)
                    .sum()
            })
    }

    /// A deleted queue's claims go with it.
    pub(super) fn forget(&self, org: &str, queue: &str) {
        let mut all = self.0.lock().expect("dispatched");
        all.remove(&(org.to_string(), queue.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_minute_up_to_now() {
        let d = Dispatched::default();
        d.record("o", "q", 1_000_000, 2);
        d.record("o", "q", 1_000_000, 1);
        d.record("o", "q", 30_000_000, 4);
        d.record("o", "other", 30_000_000, 9);
        assert_eq!(d.last_minute("o", "q", 30_000_000), 7);
        // Exactly a minute after the first claim, it no longer counts.
        assert_eq!(d.last_minute("o", "q", 61_000_000), 4);
        assert_eq!(d.last_minute("o", "q", 90_000_000), 0);
        // A later claim forgets those older than a minute before it.
        d.record("o", "q", 95_000_000, 1);
        assert_eq!(d.0.lock().unwrap()[&("o".into(), "q".into())].len(), 1);
        d.forget("o", "q");
        assert_eq!(d.last_minute("o", "q", 95_000_000), 0);
        assert_eq!(d.last_minute("o", "other", 30_000_000), 9);
    }
}
