//! The client, its builder, and the one place where requests are sent and
//! retried.

use crate::error::{Error, Problem};
use crate::retry::{self, RetryPolicy};
use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The header carrying a call's idempotency key.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// The header by which the server marks a replayed answer.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";
/// The header carrying the server's ID of one request.
pub const REQUEST_ID: &str = "idem-request-id";

/// An answer, with what the server said about it.
#[derive(Debug, Clone)]
pub struct Response<T> {
    /// The resource.
    pub value: T,
    /// The HTTP status (201 for creates, 200, 202 or 204 otherwise).
    pub status: u16,
    /// Whether the server replayed the result of an earlier request with the
    /// same idempotency key (`Idempotent-Replayed: true`) instead of
    /// executing this one: the effect happened once, earlier.
    pub replayed: bool,
    /// The `Idem-Request-Id` of the answer, to quote when asking about it.
    pub request_id: Option<String>,
    /// The idempotency key sent with every attempt (POST and PATCH only).
    pub idempotency_key: Option<String>,
    /// Attempts made, the first included.
    pub attempts: u32,
    /// The body exactly as received, for callers that pass it on.
    pub body: Bytes,
}

impl<T> Response<T> {
    /// The resource, dropping the rest.
    pub fn into_value(self) -> T {
        self.value
    }
}

/// A client of one Idem server. Cheap to clone: clones share connections.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    base: Url,
    api_key: Option<HeaderValue>,
    retry: RetryPolicy,
}

/// Configures a [`Client`]. Its `Debug` never shows the API key.
#[derive(Clone)]
pub struct ClientBuilder {
    base: String,
    api_key: Option<String>,
    retry: RetryPolicy,
    connect_timeout: Duration,
    user_agent: String,
    ca_file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base", &self.base)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("retry", &self.retry)
            .field("connect_timeout", &self.connect_timeout)
            .field("user_agent", &self.user_agent)
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

impl ClientBuilder {
    /// The API key sent as `Authorization: Bearer <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// How calls are retried (default: [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// How long connecting may take (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The `User-Agent` header.
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = agent.into();
        self
    }

    /// For an `https://` base URL: a PEM file of CA certificates trusted
    /// beside the system's, such as a private CA that signed the server's
    /// certificate. Read by [`ClientBuilder::build`].
    pub fn ca_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// Builds the client. Fails on a base URL that is not `http://` or
    /// `https://`, and on a CA file that cannot be read: saying so here
    /// beats a connection error on the first call.
    pub fn build(self) -> Result<Client, Error> {
        let invalid = |reason: &str| Error::InvalidUrl {
            url: self.base.clone(),
            reason: reason.to_string(),
        };
        let mut base = Url::parse(&self.base).map_err(|e| invalid(&e.to_string()))?;
        match base.scheme() {
            "http" | "https" => {}
            other => return Err(invalid(&format!("scheme {other:?} is not http or https"))),
        }
        if base.cannot_be_a_base() || base.host_str().is_none_or(str::is_empty) {
            return Err(invalid("must be an absolute URL with a host"));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(invalid("must not have a query or fragment"));
        }
        // Paths are appended to the base's path, so it must end with '/'.
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let api_key = match self.api_key {
            None => None,
            Some(key) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    Error::InvalidRequest("the API key must be visible ASCII".into())
                })?;
                v.set_sensitive(true);
                Some(v)
            }
        };
        let roots = match &self.ca_file {
            None => Vec::new(),
            Some(path) => {
                let failed = |reason: String| Error::CaFile {
                    path: path.clone(),
                    reason,
                };
                let pem = std::fs::read(path).map_err(|e| failed(e.to_string()))?;
                let certs = reqwest::Certificate::from_pem_bundle(&pem)
                    .map_err(|e| failed(e.to_string()))?;
                if certs.is_empty() {
                    return Err(failed("holds no PEM certificate".into()));
                }
                certs
            }
        };
        // reqwest's rustls takes the process-wide provider, and panics
        // without one; ring is the one the rest of Idem uses.
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let http = reqwest::Client::builder()
            .tls_certs_merge(roots)
            .connect_timeout(self.connect_timeout)
            .user_agent(self.user_agent)
            // The API never redirects; following one would re-send a write
            // somewhere else.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(Error::Build)?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                base,
                api_key,
                retry: self.retry,
            }),
        })
    }
}

/// A file sent as the `body` part of a multipart task create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    /// The bytes the target will receive.
    pub bytes: Bytes,
    /// Sent to the target as its `Content-Type`.
    pub content_type: Option<String>,
    /// The part's file name (informational).
    pub file_name: Option<String>,
}

/// A request body, kept in a form that can be sent again on every retry.
pub(crate) enum Payload {
    Empty,
    Json(Bytes),
    /// `multipart/form-data` with a JSON `task` part and a `body` file part.
    Multipart {
        task: Bytes,
        body: Upload,
    },
}

impl Payload {
    pub(crate) fn json<T: Serialize + ?Sized>(value: &T) -> Result<Payload, Error> {
        serde_json::to_vec(value)
            .map(|v| Payload::Json(v.into()))
            .map_err(|e| Error::InvalidRequest(format!("encoding the request body: {e}")))
    }
}

/// One logical API call: retried as a whole, with one idempotency key.
pub(crate) struct Call {
    pub method: Method,
    /// Path segments after `/v1`, unencoded.
    pub segments: Vec<String>,
    /// A custom method after the last segment (`tasks:redrive`), sent as is:
    /// its colon is part of the route, not data to encode.
    pub verb: Option<&'static str>,
    pub query: Vec<(&'static str, String)>,
    pub payload: Payload,
    /// A key chosen by the caller instead of a fresh one.
    pub idempotency_key: Option<String>,
    /// Whether a POST or PATCH carries a key: not on routes the server
    /// never replays (operations on pull work).
    pub keyed: bool,
    /// Added to the attempt timeout: for calls the server holds on purpose
    /// (`wait_ms`).
    pub extra_time: Duration,
}

impl Call {
    pub fn new<S: Into<String>>(method: Method, segments: impl IntoIterator<Item = S>) -> Call {
        Call {
            method,
            segments: segments.into_iter().map(Into::into).collect(),
            verb: None,
            query: Vec::new(),
            payload: Payload::Empty,
            idempotency_key: None,
            keyed: true,
            extra_time: Duration::ZERO,
        }
    }

    /// Sends no Idempotency-Key, on a route that ignores one.
    pub fn unkeyed(mut self) -> Call {
        self.keyed = false;
        self
    }

    pub fn query(mut self, name: &'static str, value: Option<impl ToString>) -> Call {
        if let Some(v) = value {
            self.query.push((name, v.to_string()));
        }
        self
    }

    pub fn verb(mut self, verb: &'static str) -> Call {
        self.verb = Some(verb);
        self
    }

    pub fn payload(mut self, payload: Payload) -> Call {
        self.payload = payload;
        self
    }
}

/// One attempt's answer, read in full.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }

    fn problem(&self) -> Option<Problem> {
        let mut document: idem_api::Problem = serde_json::from_slice(&self.body).ok()?;
        if document.request_id.is_none() {
            document.request_id = self.header(REQUEST_ID);
        }
        Some(Problem {
            document,
            retry_after: retry::retry_after(&self.headers),
        })
    }
}

/// A fresh idempotency key: a random UUID, unique per logical call.
pub fn new_idempotency_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// API.md §2's key syntax, checked before sending so that a bad key is a local
/// error rather than a 400 after a round trip.
fn check_key(key: &str) -> Result<(), Error> {
    let ok = (1..=255).contains(&key.len()) && key.bytes().all(|b| (0x20..=0x7e).contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidRequest(
            "an idempotency key is 1-255 printable ASCII characters".into(),
        ))
    }
}

/// Percent-encodes one path segment (everything but unreserved characters).
fn encode_segment(out: &mut String, segment: &str) {
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

impl Client {
    /// A builder for a client of the server at `base_url`
    /// (`http://127.0.0.1:7070`; a path prefix is kept).
    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            base: base_url.into(),
            api_key: None,
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            user_agent: format!("idem-client/{}", env!("CARGO_PKG_VERSION")),
            ca_file: None,
        }
    }

    /// A client of `base_url` authenticating with `api_key`, with the
    /// default retry policy.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Result<Client, Error> {
        Client::builder(base_url).api_key(api_key).build()
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    /// The retry policy in force.
    pub fn retry_policy(&self) -> RetryPolicy {
        self.inner.retry
    }

    fn url(&self, call: &Call) -> Url {
        let mut path = self.inner.base.path().to_string();
        path.push_str("v1");
        for s in &call.segments {
            path.push('/');
            encode_segment(&mut path, s);
        }
        if let Some(verb) = call.verb {
            path.push(':');
            path.push_str(verb);
        }
        let mut url = self.inner.base.clone();
        url.set_path(&path);
        if !call.query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(call.query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        url
    }

    fn request(&self, call: &Call, url: &Url, key: Option<&str>) -> reqwest::RequestBuilder {
        let mut rb = self
            .inner
            .http
            .request(call.method.clone(), url.clone())
            .timeout(self.inner.retry.attempt_timeout + call.extra_time);
        if let Some(auth) = &self.inner.api_key {
            rb = rb.header(reqwest::header::AUTHORIZATION, auth.clone());
        }
        if let Some(key) = key {
            rb = rb.header(IDEMPOTENCY_KEY, key);
        }
        match &call.payload {
            Payload::Empty => rb,
            Payload::Json(bytes) => rb
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone()),
            Payload::Multipart { task, body } => {
                // A form is consumed by sending, so each attempt builds its
                // own from the kept bytes; the boundary differs, which the
                // server's fingerprint ignores.
                let task_part =
                    reqwest::multipart::Part::stream_with_length(task.clone(), task.len() as u64)
                        .mime_str("application/json")
                        .expect("a valid media type");
                let mut body_part = reqwest::multipart::Part::stream_with_length(
                    body.bytes.clone(),
                    body.bytes.len() as u64,
                );
                if let Some(name) = &body.file_name {
                    body_part = body_part.file_name(name.clone());
                }
                if let Some(ct) = &body.content_type {
                    // Checked when the call was made.
                    body_part = body_part.mime_str(ct).expect("a checked media type");
                }
                let form = reqwest::multipart::Form::new()
                    .part("task", task_part)
                    .part("body", body_part);
                rb.multipart(form)
            }
        }
    }

    async fn attempt(&self, call: &Call, url: &Url, key: Option<&str>) -> reqwest::Result<Answer> {
        let response = self.request(call, url, key).send().await?;
        let status = response.status();
        let headers = response.headers().clone();
        // Read in full inside the attempt: a connection lost mid-body is a
        // lost answer, to be retried like any other.
        let body = response.bytes().await?;
        Ok(Answer {
            status,
            headers,
            body,
        })
    }

    /// Sends `call`, retrying transient failures per the policy, and decodes
    /// a success answer as `T` (`()` for 204).
    pub(crate) async fn execute<T: DeserializeOwned>(
        &self,
        mut call: Call,
    ) -> Result<Response<T>, Error> {
        // One key per logical call, on every POST and PATCH: the server
        // ignores it where it does not apply (API.md §2), and where it does it
        // turns a retry into a replay.
        let key = match call.method {
            Method::POST | Method::PATCH if call.keyed => {
                let key = call
                    .idempotency_key
                    .take()
                    .unwrap_or_else(new_idempotency_key);
                check_key(&key)?;
                Some(key)
            }
            _ => None,
        };
        let url = self.url(&call);
        let policy = self.inner.retry;
        let started = Instant::now();
        let mut attempts = 0u32;
        let answer = loop {
            attempts += 1;
            let outcome = self.attempt(&call, &url, key.as_deref()).await;
            let retry_after = match &outcome {
                Ok(a) => {
                    let code = a.problem().and_then(|p| p.known_code());
                    if !retry::transient_status(a.status, code) {
                        break outcome;
                    }
                    retry::retry_after(&a.headers)
                }
                Err(e) if retry::transient_transport(e) => None,
                Err(_) => break outcome,
            };
            if attempts >= policy.max_attempts.max(1) {
                break outcome;
            }
            let wait = policy.delay(attempts, retry_after);
            if started.elapsed() + wait > policy.max_elapsed {
                break outcome;
            }
            tokio::time::sleep(wait).await;
        };
        let answer = answer.map_err(|source| Error::Transport { source, attempts })?;
        let request_id = answer.header(REQUEST_ID);
        if !answer.status.is_success() {
            return Err(match answer.problem() {
                Some(p) => Error::Problem(Box::new(p)),
                None => Error::UnexpectedStatus {
                    status: answer.status.as_u16(),
                    request_id,
                    body: String::from_utf8_lossy(&answer.body[..answer.body.len().min(200)])
                        .into_owned(),
                },
            });
        }
        // A 204 has no body; `()` and `Option` read it as `null`.
        let text: &[u8] = if answer.body.is_empty() {
            b"null"
        } else {
            &answer.body
        };
        let value = serde_json::from_slice(text).map_err(|source| Error::Decode {
            status: answer.status.as_u16(),
            request_id: request_id.clone(),
            source,
        })?;
        let replayed = answer
            .header(IDEMPOTENT_REPLAYED)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        Ok(Response {
            value,
            status: answer.status.as_u16(),
            replayed,
            request_id,
            idempotency_key: key,
            attempts,
            body: answer.body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_the_api_key() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let secret = "idem_do-not-print-me";
        let builder = Client::builder("http://127.0.0.1:7070").api_key(secret);
        let shown = format!("{builder:?}");
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains("redacted"), "{shown}");
        let client = builder.build().unwrap();
        let shown = format!("{client:?}");
        assert!(!shown.contains(secret), "{shown}");
    }

    #[test]
    fn other_schemes_are_refused_with_a_clear_error() {
        for url in ["ftp://x/", "not a url", "http://", "https://"] {
            let err = Client::builder(url).build().unwrap_err();
            assert!(matches!(err, Error::InvalidUrl { .. }), "{url}: {err}");
        }
        let err = Client::builder("ftp://idem.example").build().unwrap_err();
        assert!(err.to_string().contains("is not http or https"), "{err}");
        assert!(Client::builder("https://idem.example").build().is_ok());
    }

    #[test]
    fn an_unreadable_or_empty_ca_file_is_refused_at_build() {
        let err = Client::builder("https://idem.example")
            .ca_file("/no/such/ca.pem")
            .build()
            .unwrap_err();
        assert!(matches!(err, Error::CaFile { .. }), "{err}");
        assert!(err.to_string().contains("/no/such/ca.pem"), "{err}");
        let path = std::env::temp_dir().join(format!("idem-client-ca-{}.pem", std::process::id()));
        std::fs::write(&path, "no certificate here").unwrap();
        let err = Client::builder("https://idem.example")
            .ca_file(&path)
            .build()
            .unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert!(
            err.to_string().contains("holds no PEM certificate"),
            "{err}"
        );
    }

    #[test]
    fn paths_keep_the_base_prefix_and_encode_segments() {
        // In a workspace build reqwest carries rustls without a default
        // crypto provider; a client needs one installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let c = Client::builder("http://127.0.0.1:7070/idem")
            .build()
            .unwrap();
        let call = Call::new(Method::GET, ["queues", "a b/c", "tasks"])
            .query("state", Some("queued"))
            .query("limit", None::<u32>);
        assert_eq!(
            c.url(&call).as_str(),
            "http://127.0.0.1:7070/idem/v1/queues/a%20b%2Fc/tasks?state=queued"
        );
        let c = Client::builder("http://h:1").build().unwrap();
        assert_eq!(
            c.url(&Call::new(Method::GET, ["queues"])).as_str(),
            "http://h:1/v1/queues"
        );
    }

    #[test]
    fn keys_are_checked_before_sending() {
        assert!(check_key(&new_idempotency_key()).is_ok());
        assert!(check_key("").is_err());
        assert!(check_key(&"k".repeat(256)).is_err());
        assert!(check_key("caf\u{e9}").is_err());
        assert!(check_key("tab\there").is_err());
    }

    #[test]
    fn problems_display_as_one_line() {
        let p = Problem {
            document: idem_api::Problem {
                code: "TASK_ALREADY_EXISTS".into(),
                title: "Conflict".into(),
                status: 409,
                detail: Some("task 'x' exists (queued)".into()),
                request_id: Some("r1".into()),
                instance: None,
                extensions: None,
            },
            retry_after: None,
        };
        assert_eq!(
            p.to_string(),
            "TASK_ALREADY_EXISTS (409): task 'x' exists (queued) [request r1]"
        );
    }
}
