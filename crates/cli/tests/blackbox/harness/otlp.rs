//! A real OTLP/HTTP receiver: accepts `POST /v1/traces` with protobuf
//! bodies, as a collector does, and decodes every span it is sent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One span as the receiver decoded it; IDs in lowercase hex, the empty
/// string for a root's parent.
#[derive(Debug, Clone)]
pub struct SpanSeen {
    pub service: String,
    pub name: String,
    pub trace_id: String,
    pub span_id: String,
    pub parent_id: String,
    pub attributes: BTreeMap<String, String>,
}

impl SpanSeen {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

pub struct Collector {
    /// The base URL to give `--otlp-endpoint`.
    pub endpoint: String,
    spans: Arc<Mutex<Vec<SpanSeen>>>,
    requests: Arc<Mutex<Vec<String>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.server.abort();
    }
}

#[derive(Clone)]
struct Shared {
    spans: Arc<Mutex<Vec<SpanSeen>>>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Collector {
    pub async fn start() -> Collector {
        let shared = Shared {
            spans: Arc::default(),
            requests: Arc::default(),
        };
        let app = axum::Router::new()
            .fallback(receive)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Collector {
            endpoint,
            spans: shared.spans,
            requests: shared.requests,
            server,
        }
    }

    pub fn spans(&self) -> Vec<SpanSeen> {
        self.spans.lock().unwrap().clone()
    }

    /// `METHOD path content-type` of every request received.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits until `wanted` holds of the spans received.
    pub async fn wait_for(
        &self,
        what: &str,
        within: Duration,
        wanted: impl Fn(&[SpanSeen]) -> bool,
    ) -> Vec<SpanSeen> {
        let deadline = Instant::now() + within;
        loop {
            let spans = self.spans();
            if wanted(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "the collector did not receive {what}; it has {spans:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn receive(
    State(shared): State<Shared>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> StatusCode {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    shared
        .requests
        .lock()
        .unwrap()
        .push(format!("{method} {} {content_type}", uri.path()));
    if uri.path() != "/v1/traces" || content_type != "application/x-protobuf" {
        return StatusCode::NOT_FOUND;
    }
    let Ok(export) = ExportTraceServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut seen = Vec::new();
    for resource in export.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|a| a.key == "service.name")
            .map(|a| text(a.value.as_ref()))
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                seen.push(SpanSeen {
                    service: service.clone(),
                    name: span.name,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_id: hex(&span.parent_span_id),
                    attributes: attributes(&span.attributes),
                });
            }
        }
    }
    shared.spans.lock().unwrap().extend(seen);
    StatusCode::OK
}

fn attributes(list: &[KeyValue]) -> BTreeMap<String, String> {
    list.iter()
        .map(|a| (a.key.clone(), text(a.value.as_ref())))
        .collect()
}

fn text(value: Option<&AnyValue>) -> String {
    match value.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
