//! W3C trace context (`traceparent`, `tracestate`): what a task keeps of
//! the request that created it, so that its attempts join that trace.

use serde::{Deserialize, Serialize};

/// Longest `tracestate` kept; the W3C limit is 32 members of at most 256
/// bytes each, but a receiver may drop it past 512, and so do we.
pub const MAX_TRACESTATE: usize = 512;

/// A valid `traceparent` and the `tracestate` that came with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceContext {
    pub traceparent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// The context of a request's headers, or `None` when `traceparent` is
    /// absent or not valid (W3C says to start a new trace then, not to
    /// refuse the request). A `tracestate` too long or not printable ASCII
    /// is dropped, the `traceparent` kept.
    pub fn from_headers(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<Self> {
        let (trace, parent, flags) = parse_traceparent(traceparent?.trim())?;
        let tracestate = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE)
            .filter(|s| s.bytes().all(|b| (0x20..0x7f).contains(&b)))
            .map(str::to_string);
        Some(TraceContext {
            // A later version is passed on as the 00 it was read as.
            traceparent: format!("00-{trace}-{parent}-{flags}").to_ascii_lowercase(),
            tracestate,
        })
    }

    /// The trace's ID, 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The parent span's ID, 16 lowercase hex digits.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }
}

/// `(trace ID, parent ID, flags)` of a `traceparent` of version 00, or of a
/// later version read as 00 (its first four fields), as W3C asks.
fn parse_traceparent(s: &str) -> Option<(&str, &str, &str)> {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let zero = |p: &str| p.bytes().all(|b| b == b'0');
    let mut parts = s.split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let rest = parts.next();
    let known = version == "00";
    if !hex(version, 2)
        || version.eq_ignore_ascii_case("ff")
        || (known && (rest.is_some() || s.len() != 55))
        || !hex(trace, 32)
        || zero(trace)
        || !hex(parent, 16)
        || zero(parent)
        || !hex(flags, 2)
    {
        return None;
    }
    Some((trace, parent, flags))
}

#[cfg(test)]
mod tests {
    use super::TraceContext;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_is_kept_with_its_state() {
        let cx = TraceContext::from_headers(Some(VALID), Some("congo=t61rcWkgMzE")).unwrap();
        assert_eq!(cx.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(cx.parent_id(), "00f067aa0ba902b7");
        assert_eq!(cx.tracestate.as_deref(), Some("congo=t61rcWkgMzE"));
    }

    #[test]
    fn an_invalid_traceparent_starts_no_context() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(TraceContext::from_headers(Some(bad), None), None, "{bad}");
        }
        assert_eq!(TraceContext::from_headers(None, Some("a=b")), None);
    }

    #[test]
    fn a_later_version_is_read_as_00_and_an_unusable_state_dropped() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more";
        let cx = TraceContext::from_headers(Some(later), None).unwrap();
        assert_eq!(cx.traceparent, VALID);
        let long = "a=".to_string() + &"b".repeat(600);
        let cx = TraceContext::from_headers(Some(VALID), Some(&long)).unwrap();
        assert_eq!(cx.tracestate, None);
    }
}
