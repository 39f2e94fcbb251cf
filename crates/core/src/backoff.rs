//! When a failed delivery is tried again (API.md §4, "Backoff").
//!
//! Retry `n` (n = 1 after the first failure) waits `min · 2^(n-1)` while
//! `n-1 < max_doublings`; from there the wait grows linearly by
//! `min · 2^max_doublings` per retry; it never exceeds `max_backoff`. With
//! min 10 s, max 300 s and 3 doublings: 10, 20, 40, 80, 160, 240, 300, 300…

use crate::queue::RetryConfig;
use jiff::{SignedDuration, Timestamp};
use std::time::Duration;

/// The wait before retry `n` (1-based), before any `Retry-After`.
pub fn delay(config: &RetryConfig, n: u32) -> Duration {
    let n = u64::from(n.max(1));
    let doublings = u64::from(config.max_doublings);
    let min = config.min_backoff_ms;
    let ms = if n - 1 < doublings {
        min.saturating_mul(1u64.checked_shl((n - 1) as u32).unwrap_or(u64::MAX))
    } else {
        let step = min.saturating_mul(1u64.checked_shl(doublings as u32).unwrap_or(u64::MAX));
        step.saturating_mul(n - doublings)
    };
    Duration::from_millis(ms.min(config.max_backoff_ms))
}

/// The longest `Retry-After` honoured when the queue's `max_backoff` is
/// shorter: a target may ask for a pause, but not park a task for years.
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(3600);

/// The part of a target's `Retry-After` that is honoured: at most the
/// longer of the queue's `max_backoff` and [`RETRY_AFTER_CAP`].
pub fn retry_after_bound(config: &RetryConfig) -> Duration {
    Duration::from_millis(config.max_backoff_ms).max(RETRY_AFTER_CAP)
}

/// What happens after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Try again at this instant.
    RetryAt(Timestamp),
    /// Attempts or retry duration are exhausted: the task has failed.
    GiveUp,
}

/// Decides the retry after `attempts_made` attempts (≥ 1) have failed, the
/// first of them started at `first_attempt_at`, the last ended at `now`.
/// `retry_after` is the target's `Retry-After`, honoured when longer than
/// the backoff, up to [`retry_after_bound`].
pub fn after_failure(
    config: &RetryConfig,
    attempts_made: u32,
    first_attempt_at: Timestamp,
    now: Timestamp,
    retry_after: Option<Duration>,
) -> Next {
    if config.max_attempts != 0 && attempts_made >= config.max_attempts {
        return Next::GiveUp;
    }
    let mut wait = delay(config, attempts_made);
    if let Some(ra) = retry_after {
        wait = wait.max(ra.min(retry_after_bound(config)));
    }
    let wait = SignedDuration::try_from(wait).unwrap_or(SignedDuration::MAX);
    let at = now.checked_add(wait).unwrap_or(Timestamp::MAX);
    if config.max_retry_duration_s > 0 {
        let horizon = SignedDuration::from_secs(config.max_retry_duration_s as i64);
        if at.duration_since(first_attempt_at) > horizon {
            return Next::GiveUp;
        }
    }
    Next::RetryAt(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(min_s: u64, max_s: u64, doublings: u32) -> RetryConfig {
        RetryConfig {
            max_attempts: 0,
            max_retry_duration_s: 0,
            min_backoff_ms: min_s * 1000,
            max_backoff_ms: max_s * 1000,
            max_doublings: doublings,
        }
    }

    /// A queue may set min above max (the API takes it): max caps every
    /// wait, the first included.
    #[test]
    fn a_min_above_the_max_makes_every_wait_the_max() {
        let c = cfg(50, 10, 3);
        let waits: Vec<u64> = (1..=6).map(|n| delay(&c, n).as_secs()).collect();
        assert_eq!(waits, [10; 6]);
    }

    #[test]
    fn spec_example_sequence() {
        let c = cfg(10, 300, 3);
        let waits: Vec<u64> = (1..=9).map(|n| delay(&c, n).as_secs()).collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 240, 300, 300, 300]);
    }

    #[test]
    fn zero_doublings_is_linear_from_the_start() {
        let c = cfg(5, 1000, 0);
        let waits: Vec<u64> = (1..=4).map(|n| delay(&c, n).as_secs()).collect();
        assert_eq!(waits, [5, 10, 15, 20]);
    }

    #[test]
    fn huge_exponents_saturate_at_the_cap() {
        let c = cfg(1, 3600, 62);
        assert_eq!(delay(&c, 1_000_000).as_secs(), 3600);
    }

    #[test]
    fn max_attempts_gives_up() {
        let mut c = cfg(1, 10, 3);
        c.max_attempts = 3;
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        assert!(matches!(
            after_failure(&c, 2, t0, t0, None),
            Next::RetryAt(_)
        ));
        assert_eq!(after_failure(&c, 3, t0, t0, None), Next::GiveUp);
    }

    #[test]
    fn retry_duration_gives_up_when_next_start_is_too_late() {
        let mut c = cfg(10, 300, 3);
        c.max_retry_duration_s = 60;
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let now = t0 + SignedDuration::from_secs(30);
        // Retry 3 waits 40 s: 70 s after the first attempt, past 60 s.
        assert_eq!(after_failure(&c, 3, t0, now, None), Next::GiveUp);
        assert_eq!(
            after_failure(&c, 1, t0, now, None),
            Next::RetryAt(now + SignedDuration::from_secs(10))
        );
    }

    #[test]
    fn retry_after_is_honoured_up_to_a_bound() {
        let c = cfg(10, 300, 3);
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        for asked in [Duration::from_secs(7200), Duration::MAX] {
            assert_eq!(
                after_failure(&c, 1, t0, t0, Some(asked)),
                Next::RetryAt(t0 + SignedDuration::from_secs(3600)),
                "{asked:?}"
            );
        }
        // A queue that backs off for longer than the cap lets the target
        // ask for as long.
        let long = cfg(10, 86_400, 3);
        assert_eq!(
            after_failure(&long, 1, t0, t0, Some(Duration::from_secs(7200))),
            Next::RetryAt(t0 + SignedDuration::from_secs(7200))
        );
        assert_eq!(
            after_failure(&long, 1, t0, t0, Some(Duration::MAX)),
            Next::RetryAt(t0 + SignedDuration::from_secs(86_400))
        );
    }

    #[test]
    fn retry_after_only_lengthens() {
        let c = cfg(10, 300, 3);
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(
            after_failure(&c, 1, t0, t0, Some(Duration::from_secs(2))),
            Next::RetryAt(t0 + SignedDuration::from_secs(10))
        );
        assert_eq!(
            after_failure(&c, 1, t0, t0, Some(Duration::from_secs(45))),
            Next::RetryAt(t0 + SignedDuration::from_secs(45))
        );
    }
}
