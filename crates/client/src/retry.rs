//! When and how long to retry.
//!
//! Retrying a write is only safe because every POST and PATCH carries one
//! `Idempotency-Key` for the whole logical call: the server runs the first
//! attempt that reaches it and replays its result to the others (API.md §2).
//! What is retried is therefore everything that says "the answer was lost
//! or the server could not take the request now": timeouts, connection
//! errors, 429 (but not `RESOURCE_EXHAUSTED`: a quota stays reached), 5xx,
//! and 409 `IDEMPOTENCY_KEY_IN_PROGRESS` (the first attempt is still
//! running). Every other 4xx is the caller's mistake or a
//! real conflict, and sending it again would only repeat it.

use idem_api::ProblemCode;
use rand::Rng;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use std::time::Duration;

/// How a [`Client`](crate::Client) retries a call.
///
/// Attempt `n + 1` waits a random time between half and all of
/// `initial_backoff · 2^(n-1)` (capped at `max_backoff`), or the server's
/// `Retry-After` if that is longer. The call gives up after `max_attempts`
/// attempts, or before a wait that would end later than `max_elapsed` after
/// the call began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// Upper bound on the time from the first attempt to the start of the
    /// last one.
    pub max_elapsed: Duration,
    /// Wait before the first retry (before jitter).
    pub initial_backoff: Duration,
    /// Longest wait computed from the backoff (a longer `Retry-After` is
    /// still honoured, within `max_elapsed`).
    pub max_backoff: Duration,
    /// How long one attempt may take, answer body included.
    pub attempt_timeout: Duration,
}

impl Default for RetryPolicy {
    /// 5 attempts within 30 s, backoff from 200 ms to 5 s, 30 s per attempt.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            max_elapsed: Duration::from_secs(30),
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            attempt_timeout: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retries (the timeout stays the default's).
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The backoff before retry number `retry` (1 for the first), before
    /// jitter.
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let doublings = retry.saturating_sub(1).min(31);
        self.initial_backoff
            .saturating_mul(1u32 << doublings)
            .min(self.max_backoff)
    }

    /// The wait before retry number `retry`: the backoff jittered into
    /// `[backoff/2, backoff]`, so that clients that failed together do not
    /// retry together, and never shorter than the server asked.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self.backoff(retry);
        let half = backoff / 2;
        let spread = (backoff - half).as_micros() as u64;
        let jittered = half + Duration::from_micros(rand::rng().random_range(0..=spread));
        jittered.max(retry_after.unwrap_or_default())
    }
}

/// Whether a transport error may be retried: the request may not have
/// reached the server, or its answer was lost on the way back. A TLS
/// failure (a certificate no trusted CA signed, say) will not pass on
/// another attempt.
pub(crate) fn transient_transport(e: &reqwest::Error) -> bool {
    let tls = crate::error::causes(e).any(|c| c.is::<rustls::Error>());
    !tls && (e.is_timeout() || e.is_connect() || e.is_request() || e.is_body())
}

/// Whether an answer with this status (and problem code, if any) may be
/// retried.
pub(crate) fn transient_status(status: StatusCode, code: Option<ProblemCode>) -> bool {
    // A quota stays reached until someone deletes or raises something.
    (status == StatusCode::TOO_MANY_REQUESTS && code != Some(ProblemCode::ResourceExhausted))
        || status.is_server_error()
        || (status == StatusCode::CONFLICT && code == Some(ProblemCode::IdempotencyKeyInProgress))
}

/// `Retry-After` as delay-seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    // HTTP dates (IMF-fixdate) are RFC 2822 dates with the zone `GMT`.
    let at = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
    let wait = at.duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RetryPolicy {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
            ..RetryPolicy::default()
        };
        let got: Vec<u128> = (1..=5).map(|n| p.backoff(n).as_millis()).collect();
        assert_eq!(got, [100, 200, 400, 500, 500]);
        assert_eq!(p.backoff(u32::MAX), Duration::from_millis(500));
    }

    #[test]
    fn delay_is_jittered_within_half_to_full_backoff_and_honours_retry_after() {
        let p = RetryPolicy {
            initial_backoff: Duration::from_millis(400),
            ..RetryPolicy::default()
        };
        for _ in 0..200 {
            let d = p.delay(1, None);
            assert!(
                d >= Duration::from_millis(200) && d <= Duration::from_millis(400),
                "{d:?}"
            );
        }
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        for s in [429, 500, 502, 503, 504] {
            assert!(
                transient_status(StatusCode::from_u16(s).unwrap(), None),
                "{s}"
            );
        }
        assert!(transient_status(
            StatusCode::CONFLICT,
            Some(ProblemCode::IdempotencyKeyInProgress)
        ));
        for (s, code) in [
            (409, Some(ProblemCode::QueueAlreadyExists)),
            (409, None),
            (400, Some(ProblemCode::InvalidArgument)),
            (401, Some(ProblemCode::Unauthenticated)),
            (404, Some(ProblemCode::NotFound)),
            (410, Some(ProblemCode::IdempotentResourceGone)),
            (422, Some(ProblemCode::IdempotencyKeyMismatch)),
            (429, Some(ProblemCode::ResourceExhausted)),
        ] {
            assert!(
                !transient_status(StatusCode::from_u16(s).unwrap(), code),
                "{s} {code:?}"
            );
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(120);
        let date = jiff::fmt::rfc2822::to_string(&soon.to_zoned(jiff::tz::TimeZone::UTC)).unwrap();
        h.insert("retry-after", HeaderValue::from_str(&date).unwrap());
        let wait = retry_after(&h).unwrap();
        assert!(
            wait > Duration::from_secs(100) && wait <= Duration::from_secs(120),
            "{wait:?}"
        );
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }
}
