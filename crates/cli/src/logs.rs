//! The log lines of `idem serve` and `idem proxy`, on stderr.
//!
//! Text for a person; JSON for a collector, one object per line, with what
//! a search filters by at the top level: `timestamp`, `level`, `message`,
//! `target`, and the fields of every span the line was logged in (the
//! request's `request_id` and `org`, an attempt's `org`, `queue`, `task_id`
//! and `attempt`, a trace's `trace_id` and `span_id`), inner spans winning
//! over outer ones and the line's own fields over both. tracing-subscriber's
//! own JSON nests span fields under `spans`, where a query has to search an
//! array.

use clap::{Args, ValueEnum};
use serde_json::{Map, Value};
use std::fmt;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, Registry};

#[derive(Args, Debug, Clone)]
pub struct LogArgs {
    /// Log line format: `text` (no colour codes unless stderr is a
    /// terminal) or `json` (one object per line). `IDEM_LOG` sets the
    /// level filter (`info` by default; `idem_server=debug`, …).
    #[arg(long, env = "IDEM_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl LogArgs {
    /// Installs the global subscriber: the log lines, and `traces` (the
    /// span exporter, when one is configured) beside them.
    pub fn init<L>(&self, traces: Option<L>)
    where
        L: Layer<Registry> + Send + Sync,
    {
        let filter = || {
            tracing_subscriber::EnvFilter::try_from_env("IDEM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
        };
        match traces {
            // Spans go to the exporter at `info` whatever the log filter:
            // quieter logs must not cut holes in traces.
            Some(traces) => tracing_subscriber::registry()
                .with(traces.with_filter(LevelFilter::INFO))
                .with(self.lines().with_filter(filter()))
                .init(),
            // One filter for the whole subscriber, so that a disabled
            // `debug!` costs one comparison.
            None => tracing_subscriber::registry()
                .with(filter())
                .with(self.lines())
                .init(),
        }
    }

    fn lines<S>(&self) -> Box<dyn Layer<S> + Send + Sync>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        match self.log_format {
            // Colour codes only for a person at a terminal: in a file or a
            // journal they are noise in every line.
            LogFormat::Text => tracing_subscriber::fmt::layer()
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_writer(std::io::stderr)
                .boxed(),
            LogFormat::Json => tracing_subscriber::fmt::layer()
                .fmt_fields(JsonFields::new())
                .event_format(FlatJson)
                .with_writer(std::io::stderr)
                .boxed(),
        }
    }
}

/// One JSON object per event, span fields flattened to the top level.
struct FlatJson;

impl<S, N> FormatEvent<S, N> for FlatJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'w> FormatFields<'w> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut line = Map::new();
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                // JsonFields keeps a span's fields as one JSON object.
                let Some(fields) = extensions.get::<FormattedFields<N>>() else {
                    continue;
                };
                if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&fields.fields) {
                    line.extend(fields);
                }
            }
        }
        event.record(&mut Fields(&mut line));
        let meta = event.metadata();
        line.insert("target".into(), meta.target().into());
        line.insert("level".into(), meta.level().as_str().into());
        line.insert(
            "timestamp".into(),
            format!("{:.6}", jiff::Timestamp::now()).into(),
        );
        writeln!(writer, "{}", Value::Object(line))
    }
}

/// An event's fields as JSON values.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(field.name().into(), value.to_string().into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
}
