//! Helpers for the CLI and client tests: a real `idem serve` on SQLite, a
//! runner for the `idem` binary, and a fault-injecting TCP proxy.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const BIN: &str = env!("CARGO_BIN_EXE_idem");

/// Installs the process-wide TLS crypto provider that reqwest needs in this
/// build (it is compiled with rustls but without a provider, and panics
/// when a client is built without one); the `idem` binary does the same.
pub fn tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A name unique within a test run.
pub fn unique(prefix: &str) -> String {
    let id = uuid::Uuid::now_v7().simple().to_string();
    format!("{prefix}-{}", &id[id.len() - 12..])
}

/// `idem` with no inherited `IDEM_*` variable: one in the developer's
/// environment would silently change what is tested.
pub fn command() -> Command {
    let mut cmd = Command::new(BIN);
    for (name, _) in std::env::vars() {
        if name.starts_with("IDEM_") {
            cmd.env_remove(name);
        }
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A child process that is killed when dropped, with the stdout line it
/// printed when ready and everything it wrote to stderr.
pub struct Running {
    child: Child,
    /// `http://host:port` from the ready line.
    pub base: String,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    /// Spawns `cmd` and waits (30 s at most) for a stdout line starting
    /// with `ready_prefix`, followed by the base URL.
    pub fn spawn(mut cmd: Command, ready_prefix: &str) -> Running {
        let mut child = cmd.spawn().expect("spawn idem");
        let stderr = Arc::new(Mutex::new(String::new()));
        let err_pipe = child.stderr.take().expect("stderr");
        let sink = stderr.clone();
        // Both pipes are drained for the life of the process so that it
        // never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(err_pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let out_pipe = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let prefix = ready_prefix.to_string();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(out_pipe).lines();
            for line in lines.by_ref().map_while(Result::ok) {
                if let Some(url) = line.trim().strip_prefix(&prefix) {
                    let _ = tx.send(url.trim_end_matches('/').to_string());
                    break;
                }
            }
            for _ in lines.map_while(Result::ok) {}
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(base) => Running {
                child,
                base,
                stderr,
            },
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "{cmd:?} never printed {ready_prefix:?}; stderr:\n{}",
                    stderr.lock().unwrap()
                );
            }
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A real `idem serve` on a fresh SQLite data directory, with a known
/// bootstrap admin key.
pub struct Server {
    // Declared first: the process goes before its data directory.
    pub process: Running,
    pub key: String,
    _dir: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        tls();
        let dir = tempfile::tempdir().expect("temporary data dir");
        let key = format!("idem_cli_{}", uuid::Uuid::now_v7().simple());
        let mut cmd = command();
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .args(["--bootstrap-key", &key]);
        Server {
            process: Running::spawn(cmd, "idem listening on "),
            key,
            _dir: dir,
        }
    }

    pub fn base(&self) -> &str {
        &self.process.base
    }

    /// `host:port` of the server.
    pub fn addr(&self) -> String {
        self.base().trim_start_matches("http://").to_string()
    }

    /// Runs `idem <args>` against this server as its admin.
    pub fn idem(&self, args: &[&str]) -> Out {
        self.idem_as(&self.key, args)
    }

    /// Runs `idem <args>` against this server with another key.
    pub fn idem_as(&self, key: &str, args: &[&str]) -> Out {
        let mut cmd = command();
        cmd.env("IDEM_URL", self.base())
            .env("IDEM_API_KEY", key)
            .args(args);
        Out::of(cmd)
    }

    /// A client of this server as its admin.
    pub fn client(&self) -> idem_client::Client {
        idem_client::Client::new(self.base(), &self.key).expect("client")
    }
}

/// What a finished `idem` run printed and returned.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    what: String,
}

impl Out {
    pub fn of(mut cmd: Command) -> Out {
        let what = format!("{:?}", cmd.get_args().collect::<Vec<_>>());
        let out = cmd.output().expect("run idem");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            what,
        }
    }

    /// Asserts exit code 0.
    pub fn ok(self) -> Out {
        assert_eq!(
            self.code, 0,
            "idem {} failed\nstdout:\n{}\nstderr:\n{}",
            self.what, self.stdout, self.stderr
        );
        self
    }

    /// Asserts success and parses stdout as JSON.
    pub fn json(self) -> Value {
        let out = self.ok();
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "idem {}: stdout is not JSON ({e}):\n{}",
                out.what, out.stdout
            )
        })
    }

    /// Asserts the exit code and that stderr holds exactly one line starting
    /// with `error: <code>` (a problem type, or any text for local errors).
    pub fn fails(self, code: i32, error_start: &str) -> Out {
        assert_eq!(
            self.code, code,
            "idem {}: expected exit code {code}\nstdout:\n{}\nstderr:\n{}",
            self.what, self.stdout, self.stderr
        );
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("idem {}: no error line in {:?}", self.what, self.stderr));
        assert!(
            line.starts_with(&format!("error: {error_start}")),
            "idem {}: error line {line:?} does not start with {error_start:?}",
            self.what
        );
        self
    }

    /// The value of a `name:` line of a table-mode resource display.
    pub fn field(&self, name: &str) -> String {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("idem {}: no {name:?} line in\n{}", self.what, self.stdout))
            .trim()
            .to_string()
    }
}

/// What the fault proxy does with one request.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Forward it and pass the answer back.
    Forward,
    /// Forward it, wait for the whole answer (so the server has committed),
    /// then close the client's connection without answering: a lost answer.
    ForwardThenDrop,
    /// Answer it without forwarding: status, extra header lines, body.
    Answer(u16, &'static str, &'static str),
    /// Read it and never answer, holding the connection open: a timeout.
    Silence,
}

/// One request as the proxy saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub idempotency_key: Option<String>,
}

/// A TCP proxy in front of a server that applies one [`Fault`] per request,
/// in order (then [`Fault::Forward`]), and records every request.
pub struct FaultProxy {
    pub base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultProxy {
    pub async fn start(upstream: String, faults: Vec<Fault>) -> FaultProxy {
        tls();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let plan = Arc::new(Mutex::new(faults.into_iter()));
        let log = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let (upstream, plan, log) = (upstream.clone(), plan.clone(), log.clone());
                tokio::spawn(async move {
                    let _ = serve_connection(conn, &upstream, &plan, &log).await;
                });
            }
        });
        FaultProxy { base, seen, task }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

type Plan = Mutex<std::vec::IntoIter<Fault>>;

async fn serve_connection(
    mut conn: TcpStream,
    upstream: &str,
    plan: &Plan,
    log: &Mutex<Vec<Seen>>,
) -> std::io::Result<()> {
    let mut buffered = Vec::new();
    loop {
        let Some(request) = read_message(&mut conn, &mut buffered).await? else {
            return Ok(());
        };
        let head = String::from_utf8_lossy(&request.head).into_owned();
        let mut first = head.lines().next().unwrap_or("").split(' ');
        log.lock().unwrap().push(Seen {
            method: first.next().unwrap_or("").to_string(),
            path: first.next().unwrap_or("").to_string(),
            idempotency_key: header(&head, "idempotency-key"),
        });
        let fault = plan.lock().unwrap().next().unwrap_or(Fault::Forward);
        match fault {
            Fault::Answer(status, headers, body) => {
                let answer = format!(
                    "HTTP/1.1 {status} Injected\r\ncontent-length: {}\r\n{headers}\r\n{body}",
                    body.len()
                );
                conn.write_all(answer.as_bytes()).await?;
            }
            Fault::Silence => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return Ok(());
            }
            Fault::Forward | Fault::ForwardThenDrop => {
                let mut up = TcpStream::connect(upstream).await?;
                up.write_all(&request.head).await?;
                up.write_all(&request.body).await?;
                let mut rest = Vec::new();
                let answer = read_message(&mut up, &mut rest)
                    .await?
                    .expect("the server answered");
                if matches!(fault, Fault::ForwardThenDrop) {
                    return Ok(());
                }
                conn.write_all(&answer.head).await?;
                conn.write_all(&answer.body).await?;
            }
        }
    }
}

struct Message {
    /// Start line and headers, with the blank line.
    head: Vec<u8>,
    body: Vec<u8>,
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}

/// Reads one HTTP/1.1 message framed by Content-Length (all the API and
/// its clients send); `None` at a clean end of the connection.
async fn read_message(conn: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<Option<Message>> {
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head: Vec<u8> = buf.drain(..head_end).collect();
    let text = String::from_utf8_lossy(&head).into_owned();
    assert!(
        header(&text, "transfer-encoding").is_none(),
        "the fault proxy only handles Content-Length framing:\n{text}"
    );
    let len: usize = header(&text, "content-length")
        .map(|v| v.parse().expect("numeric content-length"))
        .unwrap_or(0);
    while buf.len() < len {
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf.drain(..len).collect();
    Ok(Some(Message { head, body }))
}
