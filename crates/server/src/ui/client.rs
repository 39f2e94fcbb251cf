//! The console's way to the API: each call is a request handed to the `/v1`
//! router in this process, with the session's key as bearer, so roles,
//! validation, Idempotency-Key and problems are exactly the API's.

use axum::Router;
use axum::body::Body;
use http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

/// Largest answer the console reads; pages ask for at most 100 items.
const MAX_ANSWER_BYTES: usize = 16 << 20;

#[derive(Clone)]
pub struct ApiClient {
    api: Router,
}

/// An API answer: its status and JSON body (`Null` when it had none).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
}

impl Answer {
    pub fn ok(&self) -> bool {
        self.status.is_success()
    }

    /// A problem document's code and detail, as one line.
    pub fn problem_text(&self) -> String {
        let code = self.body["type"].as_str().unwrap_or("ERROR");
        let detail = self.body["detail"]
            .as_str()
            .or_else(|| self.body["title"].as_str())
            .unwrap_or("");
        let mut text = format!("{} {code}: {detail}", self.status.as_u16());
        // The detail names the fields already, as a rule: each error is
        // told once.
        if let Some(errors) = self.body["extensions"]["errors"].as_array() {
            for e in errors {
                let error = format!(
                    "{}: {}",
                    e["field"].as_str().unwrap_or("?"),
                    e["message"].as_str().unwrap_or("")
                );
                if !detail.contains(&error) {
                    text.push_str(&format!("; {error}"));
                }
            }
        }
        text
    }
}

/// `/v1/<segments…>?<query>`, each part percent-encoded.
pub fn path(segments: &[&str], query: &[(&str, &str)]) -> String {
    let mut p = crate::api::location(segments);
    let query: Vec<_> = query.iter().filter(|(_, v)| !v.is_empty()).collect();
    if !query.is_empty() {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in query {
            q.append_pair(k, v);
        }
        p.push('?');
        p.push_str(&q.finish());
    }
    p
}

impl ApiClient {
    pub fn new(api: Router) -> ApiClient {
        ApiClient { api }
    }

    pub async fn get(&self, key: &str, path: impl AsRef<str>) -> Answer {
        self.call(key, Method::GET, path, None, None).await
    }

    /// Sends one request. `idempotency_key` is the form's own, so that a
    /// form submitted twice acts once (where the operation honours keys).
    pub async fn call(
        &self,
        key: &str,
        method: Method,
        path: impl AsRef<str>,
        body: Option<Value>,
        idempotency_key: Option<&str>,
    ) -> Answer {
        let mut req = Request::builder()
            .method(method)
            .uri(path.as_ref())
            .header(header::AUTHORIZATION, format!("Bearer {key}"));
        if let Some(k) = idempotency_key {
            req = req.header("idempotency-key", k);
        }
        let req = match body {
            Some(b) => req
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        };
        let req = match req {
            Ok(r) => r,
            Err(e) => return internal(format!("building the request: {e}")),
        };
        let resp = match self.api.clone().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = resp.status();
        let bytes = match http_body_util::Limited::new(resp.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
        {
            Ok(b) => b.to_bytes(),
            Err(e) => return internal(format!("reading the answer: {e}")),
        };
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        };
        Answer { status, body }
    }
}

fn internal(detail: String) -> Answer {
    Answer {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        body: serde_json::json!({"type": "INTERNAL", "detail": detail}),
    }
}
