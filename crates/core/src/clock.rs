//! Time as an injected dependency.
//!
//! Dedup windows, leases, backoff and retention all depend on "now"; taking
//! it from a [`Clock`] lets tests move time instead of sleeping.

use jiff::{SignedDuration, Timestamp};
use std::sync::{Arc, Mutex};

/// A source of the current instant.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    fn now(&self) -> Timestamp;
}

/// The operating system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to; clones share one instant.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<Timestamp>>);

impl ManualClock {
    pub fn new(start: Timestamp) -> Self {
        Self(Arc::new(Mutex::new(start)))
    }

    pub fn set(&self, to: Timestamp) {
        *self.0.lock().expect("clock poisoned") = to;
    }

    pub fn advance(&self, by: SignedDuration) {
        let mut now = self.0.lock().expect("clock poisoned");
        *now = now.checked_add(by).expect("clock overflow");
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().expect("clock poisoned")
    }
}

/// Microseconds since the Unix epoch: the stores' integer time column.
pub fn to_micros(t: Timestamp) -> i64 {
    t.as_microsecond()
}

/// Inverse of [`to_micros`]; values out of range clamp to the nearest bound
/// rather than fail, since they can only come from a corrupted row.
pub fn from_micros(us: i64) -> Timestamp {
    Timestamp::from_microsecond(us).unwrap_or(if us < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start: Timestamp = "2026-10-16T12:00:00Z".parse().unwrap();
        let clock = ManualClock::new(start);
        let shared = clock.clone();
        assert_eq!(clock.now(), start);
        shared.advance(SignedDuration::from_secs(90));
        assert_eq!(clock.now().to_string(), "2026-10-16T12:01:30Z");
    }

    #[test]
    fn micros_round_trip() {
        let t: Timestamp = "2026-10-16T12:00:00.123456Z".parse().unwrap();
        assert_eq!(from_micros(to_micros(t)), t);
    }
}
