//! Time sources for the stores that do not own a clock.
//!
//! PostgreSQL and Redis take "now" from the server so that every node agrees
//! on leases and retention. The in-memory and SQLite stores run inside the
//! process and read an injected [`Clock`], which lets tests move time instead
//! of sleeping.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// A source of the current instant.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to. Clones share the same instant.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<Timestamp>>,
}

impl ManualClock {
    /// A clock frozen at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// A clock frozen at the current wall-clock instant.
    pub fn starting_now() -> Self {
        Self::new(Timestamp::now())
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
        *now = now.saturating_add(by).unwrap_or(Timestamp::MAX);
    }

    /// Sets the clock to `to`, which may be earlier than the current instant.
    pub fn set(&self, to: Timestamp) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Microseconds since the Unix epoch, the unit every store keeps times in.
pub(crate) fn micros(t: Timestamp) -> i64 {
    t.as_microsecond()
}

/// A duration in whole microseconds, saturating rather than overflowing.
pub(crate) fn duration_micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(Timestamp::from_second(1_000).unwrap());
        let shared = clock.clone();
        assert_eq!(clock.now(), Timestamp::from_second(1_000).unwrap());
        shared.advance(Duration::from_millis(1_500));
        assert_eq!(clock.now().as_millisecond(), 1_001_500);
        clock.set(Timestamp::from_second(5).unwrap());
        assert_eq!(shared.now().as_second(), 5);
    }
}
