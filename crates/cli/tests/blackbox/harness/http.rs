//! Talking to a server over HTTP: requests with its credentials, answers
//! read whole, and assertions on the shapes every answer shares.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::{install_tls_provider, unique};

/// An HTTP client bound to one server and (optionally) one API key.
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    pub base: String,
    key: Option<String>,
}

impl Api {
    pub fn new(base: &str, key: Option<&str>) -> Api {
        install_tls_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("http client");
        Api {
            http,
            base: base.to_string(),
            key: key.map(str::to_string),
        }
    }

    /// A request with this client's credentials; finish with [`Api::send`].
    pub fn request(&self, method: Method, path: &str) -> Req {
        let mut builder = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(key) = &self.key {
            builder = builder.bearer_auth(key);
        }
        Req {
            builder,
            what: format!("{method} {path}"),
            path: path.split('?').next().unwrap_or(path).to_string(),
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.request(Method::GET, path).send().await
    }

    pub async fn delete(&self, path: &str) -> Resp {
        self.request(Method::DELETE, path).send().await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.request(Method::POST, path).json(&body).send().await
    }

    /// POST without a body (pause, resume, purge, run, rotate, keys).
    pub async fn post_empty(&self, path: &str) -> Resp {
        self.request(Method::POST, path).send().await
    }

    pub async fn patch(&self, path: &str, body: Value) -> Resp {
        self.request(Method::PATCH, path).json(&body).send().await
    }

    // Domain shortcuts: each asserts success and returns the resource.

    pub async fn create_queue(&self, name: &str) -> Value {
        self.create_queue_with(json!({ "name": name })).await
    }

    pub async fn create_queue_with(&self, body: Value) -> Value {
        self.post("/v1/queues", body).await.ok(201).json.clone()
    }

    /// Creates a queue and pauses it, so that its tasks keep the state they
    /// were given: a paused queue accepts tasks and dispatches none.
    pub async fn create_paused_queue(&self, name: &str) -> Value {
        self.create_paused_queue_with(json!({ "name": name })).await
    }

    pub async fn create_paused_queue_with(&self, body: Value) -> Value {
        let name = body["name"].as_str().expect("queue name").to_string();
        self.create_queue_with(body).await;
        self.post_empty(&format!("/v1/queues/{name}/pause"))
            .await
            .ok(200)
            .json
            .clone()
    }

    pub async fn get_queue(&self, name: &str) -> Value {
        self.get(&format!("/v1/queues/{name}"))
            .await
            .ok(200)
            .json
            .clone()
    }

    pub async fn create_task(&self, queue: &str, body: Value) -> Value {
        self.post(&format!("/v1/queues/{queue}/tasks"), body)
            .await
            .ok(201)
            .json
            .clone()
    }

    pub async fn get_task(&self, queue: &str, id: &str) -> Value {
        self.get(&format!("/v1/queues/{queue}/tasks/{id}"))
            .await
            .ok(200)
            .json
            .clone()
    }

    /// Every task of a queue, following page tokens.
    pub async fn all_tasks(&self, queue: &str, query: &str) -> Vec<Value> {
        let base = format!("/v1/queues/{queue}/tasks?{query}");
        self.collect_pages(&base).await
    }

    /// Follows `next_page_token` from `path_with_query` to the end.
    pub async fn collect_pages(&self, path_with_query: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..1000 {
            let sep = if path_with_query.contains('?') {
                "&"
            } else {
                "?"
            };
            let path = match &token {
                Some(t) => format!("{path_with_query}{sep}page_token={}", encode_query(t)),
                None => path_with_query.to_string(),
            };
            let resp = self.get(&path).await;
            let page = resp.ok(200);
            items.extend(
                page.json["items"]
                    .as_array()
                    .expect("items array")
                    .iter()
                    .cloned(),
            );
            match &page.json["next_page_token"] {
                Value::Null => return items,
                Value::String(t) => token = Some(t.clone()),
                other => panic!("{}: next_page_token is {other}", page.what),
            }
        }
        panic!("pagination of {path_with_query} does not end");
    }

    /// Creates a principal with `role` and one key for it; returns the key.
    pub async fn key_with_role(&self, role: &str) -> String {
        let name = unique(role);
        self.post(
            "/v1/principals",
            json!({ "name": name, "kind": "service", "role": role }),
        )
        .await
        .ok(201);
        self.post_empty(&format!("/v1/principals/{name}/keys"))
            .await
            .ok(201)
            .json["key"]
            .as_str()
            .expect("key string")
            .to_string()
    }
}

/// A request being built.
pub struct Req {
    builder: reqwest::RequestBuilder,
    what: String,
    path: String,
}

impl Req {
    pub fn header(mut self, name: &str, value: &str) -> Req {
        self.builder = self.builder.header(name, value);
        self
    }

    pub fn json(mut self, body: &Value) -> Req {
        self.builder = self.builder.json(body);
        self
    }

    /// A body sent as-is with the given content type.
    pub fn raw(mut self, content_type: &str, body: impl Into<reqwest::Body>) -> Req {
        self.builder = self.builder.header("content-type", content_type).body(body);
        self
    }

    pub fn multipart(mut self, form: reqwest::multipart::Form) -> Req {
        self.builder = self.builder.multipart(form);
        self
    }

    pub async fn send(self) -> Resp {
        self.try_send().await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Like [`Req::send`], with transport errors returned instead of raised.
    pub async fn try_send(self) -> Result<Resp, String> {
        let what = self.what;
        let response = self
            .builder
            .send()
            .await
            .map_err(|e| format!("{what}: request failed: {e:?}"))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response
            .text()
            .await
            .map_err(|e| format!("{what}: reading the body failed: {e:?}"))?;
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Resp {
            what,
            path: self.path,
            status,
            headers,
            text,
            json,
        })
    }
}

/// A received response, fully read.
#[derive(Debug)]
pub struct Resp {
    /// `METHOD /path?query`, for failure messages.
    pub what: String,
    /// The request path without its query.
    pub path: String,
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub json: Value,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status and that the answer carries a request ID.
    pub fn ok(&self, status: u16) -> &Resp {
        assert_eq!(
            self.status, status,
            "{}: expected {status}, got {} with body {}",
            self.what, self.status, self.text
        );
        self.request_id();
        self
    }

    /// The `Idem-Request-Id` header, which every response must carry.
    pub fn request_id(&self) -> &str {
        let id = self
            .header("idem-request-id")
            .unwrap_or_else(|| panic!("{}: no Idem-Request-Id header", self.what));
        assert!(!id.is_empty(), "{}: empty Idem-Request-Id", self.what);
        id
    }

    /// Asserts an RFC 9457 problem document with this status and type and
    /// returns it.
    pub fn problem(&self, status: u16, code: &str) -> &Value {
        assert_eq!(
            (self.status, self.json["type"].as_str()),
            (status, Some(code)),
            "{}: expected {status} {code}, got {} with body {}",
            self.what,
            self.status,
            self.text
        );
        let content_type = self.header("content-type").unwrap_or("");
        assert!(
            content_type.starts_with("application/problem+json"),
            "{}: problem served as {content_type:?}",
            self.what
        );
        let doc = &self.json;
        assert_eq!(
            doc["status"],
            json!(status),
            "{}: status field: {doc}",
            self.what
        );
        for field in ["title", "detail"] {
            assert!(
                doc[field].as_str().is_some_and(|s| !s.is_empty()),
                "{}: problem without a {field}: {doc}",
                self.what
            );
        }
        assert_eq!(
            doc["request_id"].as_str(),
            Some(self.request_id()),
            "{}: request_id differs from the Idem-Request-Id header: {doc}",
            self.what
        );
        assert_eq!(
            doc["instance"].as_str(),
            Some(self.path.as_str()),
            "{}: instance is not the request path: {doc}",
            self.what
        );
        doc
    }

    /// Asserts 400 `INVALID_ARGUMENT` with `extensions.errors`; returns the
    /// problem and its errors.
    fn field_errors(&self) -> (&Value, &Vec<Value>) {
        let doc = self.problem(400, "INVALID_ARGUMENT");
        let errors = doc["extensions"]["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no extensions.errors in {doc}", self.what));
        (doc, errors)
    }

    /// Asserts 400 `INVALID_ARGUMENT` whose `extensions.errors` names `field`.
    pub fn invalid(&self, field: &str) -> &Value {
        let (doc, errors) = self.field_errors();
        assert!(
            errors
                .iter()
                .all(|e| e["field"].is_string() && e["message"].is_string()),
            "{}: errors must be {{field, message}}: {doc}",
            self.what
        );
        assert!(
            errors.iter().any(|e| e["field"] == json!(field)),
            "{}: expected an error on field {field:?}, got {doc}",
            self.what
        );
        doc
    }

    /// Asserts 400 `INVALID_ARGUMENT` with at least one field error whose
    /// field starts with `prefix`.
    pub fn invalid_under(&self, prefix: &str) -> &Value {
        let (doc, errors) = self.field_errors();
        assert!(
            errors
                .iter()
                .any(|e| e["field"].as_str().is_some_and(|f| f.starts_with(prefix))),
            "{}: expected an error on a field under {prefix:?}, got {doc}",
            self.what
        );
        doc
    }
}

/// Percent-encodes a query parameter value.
pub fn encode_query(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A multipart create: the task's JSON as part `task`, `bytes` as part
/// `body` with `content_type`.
pub fn upload_form(
    task_json: Value,
    bytes: Vec<u8>,
    content_type: &str,
) -> reqwest::multipart::Form {
    reqwest::multipart::Form::new()
        .part(
            "task",
            reqwest::multipart::Part::text(task_json.to_string())
                .mime_str("application/json")
                .expect("mime"),
        )
        .part(
            "body",
            reqwest::multipart::Part::bytes(bytes)
                .file_name("payload.bin")
                .mime_str(content_type)
                .expect("mime"),
        )
}
