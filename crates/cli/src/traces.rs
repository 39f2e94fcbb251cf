//! Span export over OTLP/HTTP (protobuf) for `idem serve` and `idem proxy`:
//! configured by `--otlp-endpoint` or OpenTelemetry's own environment, and
//! off (nothing recorded) without an endpoint.

use anyhow::Context as _;
use clap::Args;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::Registry;

#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// Base URL of an OpenTelemetry collector (`http://collector:4318`):
    /// spans are sent to `<URL>/v1/traces` as OTLP/HTTP protobuf. Without
    /// it no span is recorded. `OTEL_SERVICE_NAME` overrides the service
    /// name `idem`.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_name = "URL", value_parser = parse_endpoint)]
    pub otlp_endpoint: Option<reqwest::Url>,
}

/// The span exporter, flushed by [`Exporter::shutdown`].
pub struct Exporter {
    provider: SdkTracerProvider,
}

/// What feeds the exporter from the `tracing` spans.
pub type TraceLayer = OpenTelemetryLayer<Registry, Tracer>;

impl TraceArgs {
    /// The exporter and its layer, when an endpoint is configured.
    pub fn exporter(&self) -> anyhow::Result<Option<(Exporter, TraceLayer)>> {
        let Some(base) = &self.otlp_endpoint else {
            return Ok(None);
        };
        let endpoint = format!("{}/v1/traces", base.as_str().trim_end_matches('/'));
        // The blocking client runs on the batch processor's own thread; it
        // must not be built (or dropped) on the async runtime's.
        let build = std::thread::spawn(move || {
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(endpoint)
                .build()
        });
        let exporter = build
            .join()
            .map_err(|_| anyhow::anyhow!("building the OTLP exporter panicked"))?
            .context("building the OTLP exporter")?;
        // The SDK's resource reads OTEL_SERVICE_NAME and
        // OTEL_RESOURCE_ATTRIBUTES; the name is ours unless they say one.
        let mut resource = opentelemetry_sdk::Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none_or(|n| n.is_empty()) {
            resource = resource.with_service_name("idem");
        }
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("idem"));
        idem_server::traces::set_exporting(true);
        Ok(Some((Exporter { provider }, layer)))
    }
}

impl Exporter {
    /// Sends what is still buffered; called once the node has stopped.
    pub fn shutdown(self) {
        // The flush blocks on the exporter's thread.
        let provider = self.provider;
        let flushed = std::thread::spawn(move || provider.shutdown()).join();
        if let Ok(Err(e)) = flushed {
            tracing::warn!(error = %e, "flushing spans to the collector");
        }
    }
}

/// The proxy's trace context, by way of the server's conversions.
#[derive(Debug)]
pub struct ProxyTracing;

impl idem_guard::ProxyTracing for ProxyTracing {
    fn continue_from(&self, span: &tracing::Span, headers: &reqwest::header::HeaderMap) {
        idem_server::traces::continue_trace(
            span,
            idem_server::traces::from_headers(headers).as_ref(),
        );
    }

    fn inject(&self, span: &tracing::Span, headers: &mut reqwest::header::HeaderMap) {
        idem_server::traces::inject(span, headers);
    }
}

fn parse_endpoint(s: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(s).map_err(|e| format!("{s:?} is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(format!("{s:?} must be an http:// or https:// URL"));
    }
    Ok(url)
}
