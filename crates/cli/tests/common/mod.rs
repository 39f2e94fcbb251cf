//! Black-box harness: runs the `idem` binary as a child process against a
//! fresh store (a SQLite data directory or a PostgreSQL database of its own)
//! and talks to it over HTTP, the way any client would.
//!
//! Every test body is written once and run against both stores through
//! [`server_tests!`] (the body receives a started [`Server`]) or
//! [`store_tests!`] (the body receives a [`Kind`] and starts servers itself).

#![allow(dead_code)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Generates, for each named `async fn name(s: Server)`, one test per store.
#[macro_export]
macro_rules! server_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::common::Server::start($crate::common::Kind::Sqlite).await).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::common::Server::start($crate::common::Kind::Postgres).await).await
                }
            )*
        }
    };
}

/// Generates, for each named `async fn name(kind: Kind)`, one test per store.
#[macro_export]
macro_rules! store_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::common::Kind::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::common::Kind::Postgres).await
                }
            )*
        }
    };
}

const READY_TIMEOUT: Duration = Duration::from_secs(30);
const LISTENING_PREFIX: &str = "idem listening on ";
const KEY_PREFIX: &str = "admin API key (shown once): ";

/// Which store a server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// The storage a server runs on; outlives server processes so that a test
/// can restart a server on the same data.
pub enum Backing {
    Sqlite(tempfile::TempDir),
    Postgres(idem_testkit::TestDatabase),
}

impl Backing {
    pub async fn new(kind: Kind) -> Backing {
        match kind {
            Kind::Sqlite => Backing::Sqlite(tempfile::tempdir().expect("temporary data dir")),
            Kind::Postgres => Backing::Postgres(idem_testkit::TestDatabase::create().await),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Backing::Sqlite(_) => Kind::Sqlite,
            Backing::Postgres(_) => Kind::Postgres,
        }
    }

    /// The command-line flags selecting this store.
    pub fn flags(&self) -> Vec<String> {
        match self {
            Backing::Sqlite(dir) => vec!["--data-dir".into(), dir.path().display().to_string()],
            Backing::Postgres(db) => vec!["--database-url".into(), db.url.clone()],
        }
    }

    /// The environment variable selecting this store (the flags' twin).
    pub fn env(&self) -> (String, String) {
        match self {
            Backing::Sqlite(dir) => ("IDEM_DATA_DIR".into(), dir.path().display().to_string()),
            Backing::Postgres(db) => ("IDEM_DATABASE_URL".into(), db.url.clone()),
        }
    }
}

/// A running `idem serve` child process.
pub struct Process {
    child: Child,
    /// `http://host:port`, from the listening line.
    pub base: String,
    /// Stdout lines printed before the listening line.
    pub preamble: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

impl Process {
    /// Runs `idem serve <args>` with `envs` added to a cleaned environment
    /// and waits for the listening line.
    pub async fn spawn(args: &[String], envs: &[(String, String)]) -> Process {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_idem"));
        cmd.arg("serve").args(args);
        // Inherited IDEM_* variables would silently change what is tested.
        for (name, _) in std::env::vars() {
            if name.starts_with("IDEM_") {
                cmd.env_remove(name);
            }
        }
        cmd.envs(envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn the idem binary");

        // Both pipes are drained for the whole life of the process so that a
        // chatty server never blocks on a full pipe.
        let stderr = Arc::new(Mutex::new(String::new()));
        let err_pipe = child.stderr.take().expect("stderr");
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(err_pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });

        let out_pipe = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(out_pipe).lines();
        let mut preamble = Vec::new();
        let waited = tokio::time::timeout(READY_TIMEOUT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.trim().strip_prefix(LISTENING_PREFIX) {
                    return Some(url.trim_end_matches('/').to_string());
                }
                preamble.push(line);
            }
            None
        })
        .await;
        let base = match waited {
            Ok(Some(base)) => base,
            outcome => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
                let why = if outcome.is_err() {
                    "did not print its listening line within 30 s"
                } else {
                    "closed stdout without printing its listening line"
                };
                panic!(
                    "idem serve {args:?} {why}.\nstdout:\n{}\nstderr:\n{}",
                    preamble.join("\n"),
                    stderr.lock().unwrap()
                );
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Process {
            child,
            base,
            preamble,
            stderr,
        }
    }

    /// The admin key printed on first start, if any.
    pub fn printed_key(&self) -> Option<String> {
        self.preamble.iter().find_map(|l| {
            l.trim()
                .strip_prefix(KEY_PREFIX)
                .map(|k| k.trim().to_string())
        })
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// SIGKILL, then reap.
    pub async fn kill(mut self) {
        self.child.start_kill().expect("kill the server");
        self.child.wait().await.expect("reap the server");
    }

    /// SIGTERM, then reap; returns how long the process took to exit.
    pub async fn terminate(mut self) -> (std::process::ExitStatus, Duration) {
        let pid = self.child.id().expect("a running server has a pid");
        let started = std::time::Instant::now();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let status = self.child.wait().await.expect("reap the server");
        (status, started.elapsed())
    }

    pub fn api(&self, key: Option<&str>) -> Api {
        Api::new(&self.base, key)
    }
}

/// A new key string no server has seen.
pub fn fresh_key() -> String {
    format!("idem_test_{}", uuid::Uuid::now_v7().simple())
}

/// A name unique within a test run, for principals and organizations.
pub fn unique(prefix: &str) -> String {
    let id = uuid::Uuid::now_v7().simple().to_string();
    format!("{prefix}-{}", &id[id.len() - 12..])
}

/// A server started with a known bootstrap admin key.
pub struct Server {
    // Declared first: the process goes before its store.
    process: Process,
    backing: Backing,
    /// The bootstrap admin key of organization `default`.
    pub admin_key: String,
    /// A client authenticated as that admin.
    pub admin: Api,
}

impl std::ops::Deref for Server {
    type Target = Api;
    fn deref(&self) -> &Api {
        &self.admin
    }
}

impl Server {
    pub async fn start(kind: Kind) -> Server {
        Server::start_with(kind, &[]).await
    }

    /// Starts on a fresh store with extra flags.
    pub async fn start_with(kind: Kind, extra: &[&str]) -> Server {
        let backing = Backing::new(kind).await;
        Server::start_on(backing, fresh_key(), extra).await
    }

    /// Starts on existing storage with `--bootstrap-key key` and extra flags.
    pub async fn start_on(backing: Backing, key: String, extra: &[&str]) -> Server {
        let mut args = vec!["--listen".to_string(), "127.0.0.1:0".to_string()];
        args.extend(backing.flags());
        args.push("--bootstrap-key".into());
        args.push(key.clone());
        args.extend(extra.iter().map(|s| s.to_string()));
        let process = Process::spawn(&args, &[]).await;
        let admin = process.api(Some(&key));
        Server {
            process,
            backing,
            admin_key: key,
            admin,
        }
    }

    pub fn kind(&self) -> Kind {
        self.backing.kind()
    }

    pub fn backing(&self) -> &Backing {
        &self.backing
    }

    pub fn base(&self) -> &str {
        &self.process.base
    }

    pub fn stderr(&self) -> String {
        self.process.stderr()
    }

    /// A client with another key.
    pub fn with_key(&self, key: &str) -> Api {
        self.process.api(Some(key))
    }

    /// An admin client with a connection pool of its own, for checks after
    /// a request whose connection the server may have closed.
    pub fn fresh_admin(&self) -> Api {
        self.process.api(Some(&self.admin_key))
    }

    /// A client sending no `Authorization` header.
    pub fn anonymous(&self) -> Api {
        self.process.api(None)
    }

    /// Stops the server with SIGTERM and hands back its storage, how it
    /// exited and how long it took.
    pub async fn terminate(self) -> (Backing, String, std::process::ExitStatus, Duration) {
        let Server {
            process,
            backing,
            admin_key,
            ..
        } = self;
        let (status, took) = process.terminate().await;
        (backing, admin_key, status, took)
    }

    /// SIGKILLs the server and hands back its storage.
    pub async fn kill(self) -> (Backing, String) {
        let Server {
            process,
            backing,
            admin_key,
            ..
        } = self;
        process.kill().await;
        (backing, admin_key)
    }
}

/// An HTTP client bound to one server and (optionally) one API key.
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    pub base: String,
    key: Option<String>,
}

impl Api {
    pub fn new(base: &str, key: Option<&str>) -> Api {
        // The workspace builds reqwest with rustls and no default crypto
        // provider (the server picks ring); a client must install one.
        let _ = rustls::crypto::ring::default_provider().install_default();
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

    /// Asserts 400 `INVALID_ARGUMENT` whose `extensions.errors` names `field`.
    pub fn invalid(&self, field: &str) -> &Value {
        let doc = self.problem(400, "INVALID_ARGUMENT");
        let errors = doc["extensions"]["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no extensions.errors in {doc}", self.what));
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
        let doc = self.problem(400, "INVALID_ARGUMENT");
        let errors = doc["extensions"]["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no extensions.errors in {doc}", self.what));
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

/// A minimal valid task body.
pub fn task(id: &str) -> Value {
    json!({ "task_id": id, "target": { "url": "http://127.0.0.1:9/hook" } })
}

/// A task body without an ID.
pub fn anonymous_task() -> Value {
    json!({ "target": { "url": "http://127.0.0.1:9/hook" } })
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

/// Finds a header in a JSON object of headers, ignoring the name's case.
pub fn header_in<'a>(headers: &'a Value, name: &str) -> Option<&'a Value> {
    headers
        .as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

pub fn is_uuid_v7(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok_and(|u| u.get_version_num() == 7)
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); `None` when malformed.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

/// Nanoseconds since the Unix epoch of an RFC 3339 UTC time written with
/// `Z` (`2026-10-16T12:00:00Z`, optional fraction); panics on anything else.
pub fn parse_time(value: &Value) -> i128 {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("expected an RFC 3339 string, got {value}"));
    parse_time_str(s).unwrap_or_else(|| panic!("not an RFC 3339 UTC time with Z: {s:?}"))
}

pub fn parse_time_str(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    if b.len() < 20 || *b.last()? != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut nanos: i128 = 0;
    let rest = &s[19..s.len() - 1];
    if !rest.is_empty() {
        let frac = rest.strip_prefix('.')?;
        if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        nanos = format!("{frac:0<9}").parse().ok()?;
    }
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + se;
    Some(i128::from(secs) * 1_000_000_000 + nanos)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

/// RFC 3339 UTC time `offset_s` seconds from now.
pub fn time_from_now(offset_s: i64) -> String {
    let t = unix_now() + offset_s;
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// Checks the helpers above (called from one test file).
pub fn self_check() {
    let now = time_from_now(0);
    let parsed = parse_time_str(&now).expect("own format parses");
    assert_eq!(
        parsed / 1_000_000_000,
        i128::from(unix_now()).max(parsed / 1_000_000_000)
    );
    assert_eq!(
        parse_time_str("2026-10-16T12:00:00Z"),
        Some(1_792_152_000i128 * 1_000_000_000)
    );
    assert_eq!(
        parse_time_str("2026-10-16T12:00:00.5Z"),
        Some(1_792_152_000i128 * 1_000_000_000 + 500_000_000)
    );
    assert_eq!(parse_time_str("2026-10-16T12:00:00+00:00"), None);
    assert_eq!(base64(b"hello!?"), "aGVsbG8hPw==");
    assert_eq!(
        base64_decode("aGVsbG8hPw==").as_deref(),
        Some(&b"hello!?"[..])
    );
}
