//! Servers that speak TLS with a certificate made by the test: a private
//! PostgreSQL ([`TlsPostgres`]), a private Redis ([`TlsRedis`]) and a TLS
//! terminator in front of any TCP server ([`TlsTerminator`]), all trusting
//! one [`TestCa`]. Each lives in its own temporary directory on its own
//! free port, so tests run in parallel, and stops when dropped.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A certificate authority of the test's own and one server certificate it
/// signed, valid for `localhost` and `127.0.0.1`, as PEM files in a
/// temporary directory.
pub struct TestCa {
    dir: tempfile::TempDir,
    /// The CA certificate: what a client trusts.
    pub ca_file: PathBuf,
    /// The server's certificate.
    pub cert_file: PathBuf,
    /// The server's private key.
    pub key_file: PathBuf,
    cert_pem: String,
    key_pem: String,
}

impl TestCa {
    pub fn new() -> TestCa {
        let ca_key = rcgen::KeyPair::generate().expect("CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "idem test CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("CA certificate");

        let key = rcgen::KeyPair::generate().expect("server key");
        let mut params =
            rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .expect("server");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "localhost");
        let cert = params.signed_by(&key, &ca).expect("server certificate");

        let dir = tempfile::Builder::new()
            .prefix("idem-test-ca-")
            .tempdir()
            .expect("temporary directory");
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write a PEM file");
            path
        };
        let cert_pem = cert.pem();
        let key_pem = key.serialize_pem();
        TestCa {
            ca_file: write("ca.pem", &ca.pem()),
            cert_file: write("server.pem", &cert_pem),
            key_file: write("server.key", &key_pem),
            cert_pem,
            key_pem,
            dir,
        }
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A rustls server configuration presenting the server certificate.
    pub fn server_config(&self) -> rustls::ServerConfig {
        use rustls::pki_types::pem::PemObject;
        let chain = rustls::pki_types::CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("server certificate PEM");
        let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes())
            .expect("server key PEM");
        rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("server certificate and key")
    }
}

impl Default for TestCa {
    fn default() -> Self {
        TestCa::new()
    }
}

/// A free loopback port; another process may take it before it is used,
/// which the servers below would report as a failure to start.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn wait_for_port(port: u16, child: &mut Child, what: &str, log: &Path) {
    let started = Instant::now();
    loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        let exited = child.try_wait().ok().flatten();
        if exited.is_some() || started.elapsed() > START_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not start ({}); its log:\n{}",
                exited.map_or("timed out".into(), |s| s.to_string()),
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// PostgreSQL refuses to run as root: when the tests are root, its commands
/// run as the `postgres` user, which must own its files.
fn as_postgres_user(program: &Path) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// The directory of `initdb` and `postgres`: `IDEM_TEST_PG_BIN`, else the
/// newest under `/usr/lib/postgresql` (Debian's layout), else `PATH`.
fn postgres_bin_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("IDEM_TEST_PG_BIN") {
        return dir.into();
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("postgres").exists())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).unwrap_or_default()
}

/// A PostgreSQL server of the test's own with `ssl=on` and the
/// [`TestCa`]'s server certificate, listening on a free port of
/// `localhost`; superuser `postgres`, trust authentication.
pub struct TlsPostgres {
    dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
}

impl TlsPostgres {
    pub fn start(ca: &TestCa) -> TlsPostgres {
        let bin = postgres_bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("idem-test-pg-")
            .tempdir()
            .expect("temporary directory");
        let data = dir.path().join("data");
        let cert = dir.path().join("server.pem");
        let key = dir.path().join("server.key");
        std::fs::copy(&ca.cert_file, &cert).expect("copy the certificate");
        std::fs::copy(&ca.key_file, &key).expect("copy the key");
        let log = dir.path().join("postgres.log");
        std::fs::write(&log, "").expect("log file");
        if is_root() {
            let owned = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path())
                .status()
                .expect("run chown");
            assert!(owned.success(), "chown to postgres failed");
        }
        // PostgreSQL refuses a key that others may read.
        set_mode(&key, 0o600);
        set_mode(dir.path(), 0o700);

        let out = as_postgres_user(&bin.join("initdb"))
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data)
            .output()
            .unwrap_or_else(|e| panic!("cannot run initdb from {}: {e}", bin.display()));
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        let port = free_port();
        let logged = std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .expect("log file");
        let mut child = as_postgres_user(&bin.join("postgres"))
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(dir.path())
            .args(["-c", "listen_addresses=localhost", "-c", "ssl=on"])
            .args(["-c", "fsync=off", "-c", "max_connections=50"])
            .arg("-c")
            .arg(format!("ssl_cert_file={}", cert.display()))
            .arg("-c")
            .arg(format!("ssl_key_file={}", key.display()))
            .stdin(Stdio::null())
            .stdout(logged.try_clone().expect("log file"))
            .stderr(logged)
            .spawn()
            .expect("start postgres");
        wait_for_port(port, &mut child, "PostgreSQL", &log);
        // The port opens before recovery ends; the pid file says "ready" after.
        let pid_file = data.join("postmaster.pid");
        let started = Instant::now();
        while !std::fs::read_to_string(&pid_file).is_ok_and(|s| s.contains("ready")) {
            assert!(
                started.elapsed() < START_TIMEOUT,
                "PostgreSQL did not become ready; its log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        TlsPostgres { dir, child, port }
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`, then `query` (such
    /// as `sslmode=require`) if not empty.
    /// A plain (unencrypted) connection, to look at the server from the side.
    pub async fn client(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.url(""), tokio_postgres::NoTls)
            .await
            .expect("connect to the test PostgreSQL");
        tokio::spawn(connection);
        client
    }

    /// How many of the connections of `application` (their
    /// `application_name`) are encrypted, and how many there are.
    pub async fn encrypted_connections(&self, application: &str) -> (i64, i64) {
        let row = self
            .client()
            .await
            .query_one(
                "SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_activity a \
                 JOIN pg_stat_ssl s USING (pid) WHERE a.application_name = $1",
                &[&application],
            )
            .await
            .expect("read pg_stat_ssl");
        (row.get(0), row.get(1))
    }

    pub fn url(&self, query: &str) -> String {
        let mut url = format!("postgres://postgres@127.0.0.1:{}/postgres", self.port);
        if !query.is_empty() {
            url.push('?');
            url.push_str(query);
        }
        url
    }
}

impl Drop for TlsPostgres {
    fn drop(&mut self) {
        // The child may be `runuser`, which does not pass signals on: stop
        // the postmaster itself, by the pid it wrote (immediate shutdown).
        let pid = std::fs::read_to_string(self.dir.path().join("data/postmaster.pid"))
            .ok()
            .and_then(|s| s.lines().next().map(str::to_string));
        if let Some(pid) = pid {
            let _ = Command::new("kill").args(["-QUIT", &pid]).status();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A Redis server of the test's own that accepts TLS only, with the
/// [`TestCa`]'s server certificate, on a free port of 127.0.0.1.
pub struct TlsRedis {
    _dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
}

impl TlsRedis {
    pub fn start(ca: &TestCa) -> TlsRedis {
        let dir = tempfile::Builder::new()
            .prefix("idem-test-redis-")
            .tempdir()
            .expect("temporary directory");
        let log = dir.path().join("redis.log");
        std::fs::write(&log, "").expect("log file");
        let port = free_port();
        let mut child = Command::new("redis-server")
            .args(["--port", "0", "--tls-port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(&log)
            .arg("--tls-cert-file")
            .arg(&ca.cert_file)
            .arg("--tls-key-file")
            .arg(&ca.key_file)
            .arg("--tls-ca-cert-file")
            .arg(&ca.ca_file)
            .args(["--tls-auth-clients", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        wait_for_port(port, &mut child, "redis-server", &log);
        TlsRedis {
            _dir: dir,
            child,
            port,
        }
    }

    /// `rediss://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.port)
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Accepts TLS on a free port of 127.0.0.1 with the [`TestCa`]'s server
/// certificate and passes each connection's bytes to and from `upstream`:
/// an `https://` front for a server that speaks plain HTTP. Runs on the
/// current tokio runtime until dropped.
pub struct TlsTerminator {
    task: tokio::task::JoinHandle<()>,
    pub addr: SocketAddr,
}

impl TlsTerminator {
    pub async fn start(ca: &TestCa, upstream: SocketAddr) -> TlsTerminator {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(ca.server_config()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that refuses the certificate ends here.
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    if let Ok(mut plain) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    }
                });
            }
        });
        TlsTerminator { task, addr }
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }
}

impl Drop for TlsTerminator {
    fn drop(&mut self) {
        self.task.abort();
    }
}
