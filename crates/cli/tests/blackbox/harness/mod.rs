//! The black-box harness: runs the `idem` binary as a child process against
//! a fresh store (a SQLite data directory or a PostgreSQL database of its
//! own) and talks to it the way any client would: over HTTP ([`Api`]),
//! through its CLI subcommands ([`Server::idem`]) and through idem-client
//! ([`Server::client`]).
//!
//! A test body written once runs on both stores through
//! `idem_testkit::store_tests!(Server::start; …)` (the body receives a
//! started [`Server`]) or `idem_testkit::store_tests!(…)` (the body receives
//! a [`Backend`] and starts servers itself).

mod cli;
pub mod fault;
mod http;
pub mod jobs;
pub mod otlp;
pub mod target;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub use cli::{Out, command};
pub use http::{Api, Resp, encode_query, upload_form};
pub use idem_testkit::Backend;

const READY_TIMEOUT: Duration = Duration::from_secs(30);
const LISTENING_PREFIX: &str = "idem listening on ";
/// What `idem proxy` prints once it accepts connections.
pub const PROXY_LISTENING_PREFIX: &str = "idem proxy listening on ";
const KEY_PREFIX: &str = "admin API key (shown once): ";

/// Installs the process-wide TLS crypto provider: the workspace builds
/// reqwest with rustls and no default provider (the server picks ring), and
/// a client built before one is installed panics.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The storage a server runs on; outlives server processes so that a test
/// can restart a server on the same data.
pub enum Backing {
    Sqlite(tempfile::TempDir),
    Postgres(idem_testkit::TestDatabase),
}

impl Backing {
    pub async fn new(backend: Backend) -> Backing {
        match backend {
            Backend::Sqlite => Backing::Sqlite(tempfile::tempdir().expect("temporary data dir")),
            Backend::Postgres => Backing::Postgres(idem_testkit::TestDatabase::create().await),
        }
    }

    /// The command-line flags selecting this store.
    pub fn flags(&self) -> Vec<String> {
        match self {
            Backing::Sqlite(dir) => vec!["--data-dir".into(), dir.path().display().to_string()],
            Backing::Postgres(db) => vec!["--database-url".into(), db.url.clone()],
        }
    }

    /// The `idem serve` arguments of a server on this store, on any free
    /// loopback port, with bootstrap admin key `key`.
    pub fn serve_args(&self, key: &str) -> Vec<String> {
        let mut args = vec!["--listen".to_string(), "127.0.0.1:0".to_string()];
        args.extend(self.flags());
        args.push("--bootstrap-key".into());
        args.push(key.into());
        args
    }

    /// The environment variable selecting this store (the flags' twin).
    pub fn env(&self) -> (String, String) {
        match self {
            Backing::Sqlite(dir) => ("IDEM_DATA_DIR".into(), dir.path().display().to_string()),
            Backing::Postgres(db) => ("IDEM_DATABASE_URL".into(), db.url.clone()),
        }
    }
}

/// A running `idem` child process that serves HTTP (`idem serve`, `idem
/// proxy`), killed when dropped.
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
        let mut cmd = command();
        cmd.arg("serve")
            .args(args)
            .envs(envs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        Process::run(cmd, LISTENING_PREFIX).await
    }

    /// Runs `cmd` (made by [`command`]) and waits for the stdout line
    /// starting with `ready_prefix` and followed by the base URL.
    pub async fn run(mut cmd: Command, ready_prefix: &str) -> Process {
        let what = format!("idem {:?}", cmd.as_std().get_args().collect::<Vec<_>>());
        cmd.stdout(Stdio::piped())
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
                if let Some(url) = line.trim().strip_prefix(ready_prefix) {
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
                    "{what} {why}.\nstdout:\n{}\nstderr:\n{}",
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

    /// The process's ID.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("a running server has a pid")
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
    pub async fn start(backend: Backend) -> Server {
        Server::start_with(backend, &[]).await
    }

    /// Starts on a fresh store with extra flags.
    pub async fn start_with(backend: Backend, extra: &[&str]) -> Server {
        let backing = Backing::new(backend).await;
        Server::start_on(backing, fresh_key(), extra).await
    }

    /// Starts on existing storage with `--bootstrap-key key` and extra flags.
    pub async fn start_on(backing: Backing, key: String, extra: &[&str]) -> Server {
        let mut args = backing.serve_args(&key);
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

    pub fn backing(&self) -> &Backing {
        &self.backing
    }

    /// What the server has logged so far.
    pub fn stderr(&self) -> String {
        self.process.stderr()
    }

    pub fn base(&self) -> &str {
        &self.process.base
    }

    /// The server process's ID.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// `host:port` of the server.
    pub fn addr(&self) -> String {
        self.base().trim_start_matches("http://").to_string()
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

    /// An idem-client client of this server as its admin.
    pub fn client(&self) -> idem_client::Client {
        install_tls_provider();
        idem_client::Client::new(self.base(), &self.admin_key).expect("client")
    }

    /// Runs `idem <args>` against this server as its admin.
    pub async fn idem(&self, args: &[&str]) -> Out {
        self.idem_as(&self.admin_key, args).await
    }

    /// Runs `idem <args>` against this server with another key.
    pub async fn idem_as(&self, key: &str, args: &[&str]) -> Out {
        let mut cmd = command();
        cmd.env("IDEM_URL", self.base())
            .env("IDEM_API_KEY", key)
            .args(args);
        Out::of(cmd).await
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

/// Two `idem serve` nodes on one fresh PostgreSQL database, as a cluster
/// runs them.
pub struct TwoNodes {
    // Declared first: the processes go before their database.
    _nodes: [Process; 2],
    /// An admin client of each node.
    pub apis: [Api; 2],
    _backing: Backing,
}

impl TwoNodes {
    pub async fn start() -> TwoNodes {
        TwoNodes::start_with(&[]).await
    }

    /// Both nodes started with `extra` flags as well.
    pub async fn start_with(extra: &[&str]) -> TwoNodes {
        let backing = Backing::new(Backend::Postgres).await;
        let key = fresh_key();
        let mut args = backing.serve_args(&key);
        args.extend(extra.iter().map(|a| a.to_string()));
        let nodes = [
            Process::spawn(&args, &[]).await,
            Process::spawn(&args, &[]).await,
        ];
        let apis = [nodes[0].api(Some(&key)), nodes[1].api(Some(&key))];
        TwoNodes {
            _nodes: nodes,
            apis,
            _backing: backing,
        }
    }

    /// The URL of the nodes' database.
    pub fn database_url(&self) -> &str {
        match &self._backing {
            Backing::Postgres(db) => &db.url,
            Backing::Sqlite(_) => unreachable!("two nodes run on PostgreSQL"),
        }
    }
}

/// Quick client retries, so that tests do not wait out real backoffs.
pub fn quick_retries() -> idem_client::RetryPolicy {
    idem_client::RetryPolicy {
        max_attempts: 4,
        max_elapsed: Duration::from_secs(20),
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        attempt_timeout: Duration::from_secs(10),
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

/// Nanoseconds since the Unix epoch of a time as the API writes it (RFC
/// 3339 in UTC with `Z`, `2026-10-16T12:00:00Z`, optional fraction);
/// panics on anything else.
pub fn parse_time(value: &Value) -> i128 {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("expected an RFC 3339 string, got {value}"));
    parse_time_str(s).unwrap_or_else(|| panic!("not an RFC 3339 UTC time with Z: {s:?}"))
}

pub fn parse_time_str(s: &str) -> Option<i128> {
    // jiff also reads offsets, a space for the `T` and times without
    // seconds; the API promises none of those, so they fail here.
    let whole = s.len() >= 20 && s.as_bytes()[10] == b'T' && s.ends_with('Z');
    whole
        .then(|| s.parse::<Timestamp>().ok())
        .flatten()
        .map(|t| t.as_nanosecond())
}

pub fn unix_now() -> i64 {
    Timestamp::now().as_second()
}

/// RFC 3339 UTC time `offset_s` whole seconds from now.
pub fn time_from_now(offset_s: i64) -> String {
    Timestamp::from_second(unix_now() + offset_s)
        .expect("a time within jiff's range")
        .to_string()
}

/// Checks the time helpers above (called from one test).
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
}
