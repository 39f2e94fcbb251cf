//! The identity of a scheduled run (API.md §5).

use jiff::Timestamp;
use jiff::tz::Offset;
use sha2::{Digest, Sha256};

/// Renders a schedule time the one way run IDs hash it and the
/// `Idem-Schedule-Time` header carries it: RFC 3339 in UTC, ending in `Z`,
/// `YYYY-MM-DDTHH:MM:SS`, then a fraction only when it is not zero, with
/// trailing zeros dropped (`2026-10-16T12:00:00Z`, `2026-10-16T12:00:00.25Z`).
///
/// Scheduled instants are whole seconds, so they never carry a fraction; a
/// manual run's request instant may. Years are expected within 0001–9999,
/// where RFC 3339 can express them.
pub fn format_schedule_time(t: Timestamp) -> String {
    let dt = Offset::UTC.to_datetime(t);
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    let nanos = dt.subsec_nanosecond();
    if nanos != 0 {
        let fraction = format!("{nanos:09}");
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// The run ID of a job's run at `schedule_time`, also its `Idempotency-Key`:
/// lowercase hex SHA-256 of `"<org>/<job>/<schedule time>"`, the time
/// rendered by [`format_schedule_time`].
///
/// Every node derives the same ID for the same instant, which is what lets
/// any number of schedulers insert the run and still fire it once.
pub fn run_id(org: &str, job: &str, schedule_time: Timestamp) -> String {
    let input = format!("{org}/{job}/{}", format_schedule_time(schedule_time));
    hex::encode(Sha256::digest(input.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn known_vector() {
        // printf '%s' 'acme/nightly/2026-10-16T12:00:00Z' | sha256sum
        assert_eq!(
            run_id("acme", "nightly", ts("2026-10-16T12:00:00Z")),
            "b1e702b8004ae95029139a0452c537a87d5dcbdff36508d2605077894638b965"
        );
    }

    #[test]
    fn known_vector_with_a_fraction() {
        // printf '%s' 'acme/nightly/2026-10-16T12:00:00.5Z' | sha256sum
        assert_eq!(
            run_id("acme", "nightly", ts("2026-10-16T12:00:00.500Z")),
            "d367a89819dfcefb5495b9df79d5c016143725f60dd4df194400b812c50a94e0"
        );
    }

    #[test]
    fn rendering_is_utc_whole_seconds_and_trimmed_fractions() {
        assert_eq!(
            format_schedule_time(ts("2026-10-16T14:00:00+02:00")),
            "2026-10-16T12:00:00Z"
        );
        assert_eq!(
            format_schedule_time(ts("2026-01-02T03:04:05.120Z")),
            "2026-01-02T03:04:05.12Z"
        );
        assert_eq!(
            format_schedule_time(ts("2026-01-02T03:04:05.000000001Z")),
            "2026-01-02T03:04:05.000000001Z"
        );
        assert_eq!(
            format_schedule_time(ts("0999-12-31T23:59:59Z")),
            "0999-12-31T23:59:59Z"
        );
    }

    #[test]
    fn instant_org_and_job_all_change_the_id() {
        let t = ts("2026-10-16T12:00:00Z");
        let base = run_id("acme", "nightly", t);
        assert_eq!(base, run_id("acme", "nightly", t));
        assert_ne!(base, run_id("acme", "nightly", ts("2026-10-16T12:00:01Z")));
        assert_ne!(base, run_id("acme2", "nightly", t));
        assert_ne!(base, run_id("acme", "nightly2", t));
        assert_eq!(base.len(), 64);
        assert!(base.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    }
}
