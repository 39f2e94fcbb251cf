//! W3C trace context through Idem: a request's `traceparent` becomes the
//! parent of its span, a task keeps the context of the request that
//! created it, each attempt is a span in that trace (a job's run starts a
//! trace of its own), and the delivery carries the attempt's `traceparent`.
//!
//! Spans reach a collector only when the binary installed an exporter
//! ([`set_exporting`]); until then nothing is recorded, and a task still
//! keeps a valid incoming `traceparent` and passes it on unchanged to its
//! target, so that the target's own spans join the caller's trace. The
//! conversions are written against the OpenTelemetry API alone: the SDK and
//! its exporter are the binary's choice.

use axum::extract::FromRequestParts;
use http::HeaderMap;
use http::request::Parts;
use idem_core::trace::TraceContext;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Says that spans are exported: the binary installed the OpenTelemetry
/// layer in the global subscriber.
pub fn set_exporting(on: bool) {
    EXPORTING.store(on, Ordering::Relaxed);
}

fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// The context a request's headers carry, when valid.
pub fn from_headers(headers: &HeaderMap) -> Option<TraceContext> {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    TraceContext::from_headers(header("traceparent"), header("tracestate"))
}

/// Makes `span` continue the trace `parent` names, or start a trace of its
/// own without one, and names the trace in the span's fields (`trace_id`,
/// `span_id`, which the span must declare) so that its log lines do too.
/// Without an exporter only the parent's `trace_id` is known.
pub fn continue_trace(span: &Span, parent: Option<&TraceContext>) {
    if !exporting() {
        if let Some(parent) = parent {
            span.record("trace_id", parent.trace_id());
        }
        return;
    }
    let parent = match parent {
        Some(parent) => opentelemetry::Context::new().with_remote_span_context(remote(parent)),
        // A root span, whatever span happens to be current.
        None => opentelemetry::Context::new(),
    };
    // Only fails for a span already started, which a new one is not.
    let _ = span.set_parent(parent);
    if let Some(own) = context_of(span) {
        span.record("trace_id", own.trace_id());
        // A context names its span as the parent its receivers see.
        span.record("span_id", own.parent_id());
    }
}

/// The context a task created by the current request keeps: the request's
/// span when spans are exported, else the request's own `traceparent`.
pub fn for_task(headers: Option<TraceContext>) -> Option<TraceContext> {
    current().or(headers)
}

/// The context a delivery sends: the current span's (the attempt's) when
/// spans are exported, else the one the task kept.
pub fn for_delivery(kept: Option<&TraceContext>) -> Option<TraceContext> {
    current().or_else(|| kept.cloned())
}

/// The current span's context, when spans are exported.
fn current() -> Option<TraceContext> {
    context_of(&Span::current())
}

/// `span`'s own context, when spans are exported.
fn context_of(span: &Span) -> Option<TraceContext> {
    if !exporting() {
        return None;
    }
    let cx = span.context();
    let otel = cx.span();
    let own = otel.span_context();
    own.is_valid().then(|| of(own))
}

/// Sets `headers`' `traceparent` and `tracestate` to `span`'s, when spans
/// are exported (the proxy's upstream call).
pub fn inject(span: &Span, headers: &mut HeaderMap) {
    if let Some(own) = context_of(span) {
        insert(headers, &own);
    }
}

/// Sets `headers`' `traceparent` and `tracestate` to `trace`'s, replacing
/// any there: the sender of these headers is the receiver's parent.
pub fn insert(headers: &mut HeaderMap, trace: &TraceContext) {
    use http::HeaderValue;
    if let Ok(value) = HeaderValue::from_str(&trace.traceparent) {
        headers.insert("traceparent", value);
    }
    headers.remove("tracestate");
    if let Some(state) = trace.tracestate.as_deref()
        && let Ok(value) = HeaderValue::from_str(state)
    {
        headers.insert("tracestate", value);
    }
}

/// A create handler's argument: the trace context of the request, as
/// [`for_task`] decides it. Reading two headers is all it costs when no
/// exporter is installed.
pub struct Traced(pub Option<TraceContext>);

impl<S: Send + Sync> FromRequestParts<S> for Traced {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Traced(for_task(from_headers(&parts.headers))))
    }
}

fn remote(cx: &TraceContext) -> SpanContext {
    let flags = u8::from_str_radix(&cx.traceparent[53..55], 16).unwrap_or(0);
    SpanContext::new(
        TraceId::from_hex(cx.trace_id()).unwrap_or(TraceId::INVALID),
        SpanId::from_hex(cx.parent_id()).unwrap_or(SpanId::INVALID),
        TraceFlags::new(flags),
        true,
        cx.tracestate
            .as_deref()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default(),
    )
}

fn of(span: &SpanContext) -> TraceContext {
    let state = span.trace_state().header();
    TraceContext {
        traceparent: format!(
            "00-{}-{}-{:02x}",
            span.trace_id(),
            span.span_id(),
            span.trace_flags().to_u8()
        ),
        tracestate: (!state.is_empty()).then_some(state),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_survives_the_round_trip_through_opentelemetry() {
        let cx = TraceContext::from_headers(
            Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"),
        )
        .unwrap();
        assert_eq!(of(&remote(&cx)), cx);
    }
}
