//! A relay between a client and PostgreSQL that counts the statements the
//! client has the server execute, by their text.
//!
//! A store's cost is measured at the only place every statement passes,
//! whichever pool, batcher or background task sends it: the wire. The relay
//! reads the frontend protocol (and passes both directions through
//! unchanged): a simple `Query` is one statement; an extended-protocol
//! `Execute` runs the portal the last `Bind` made from a statement a `Parse`
//! named. TLS would hide the messages, so the client must connect with
//! `sslmode=disable` ([`WireCounter::url`] says so).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The protocol codes of the untyped messages a connection may open with.
const SSL_REQUEST: i32 = 80_877_103;
const GSSENC_REQUEST: i32 = 80_877_104;

/// Counts of the statements executed through the relay, by text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Statements(pub BTreeMap<String, u64>);

impl Statements {
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// What was executed since `earlier`, a snapshot of the same counter.
    pub fn since(&self, earlier: &Statements) -> Statements {
        let mut out = BTreeMap::new();
        for (text, n) in &self.0 {
            let d = n - earlier.0.get(text).copied().unwrap_or(0);
            if d > 0 {
                out.insert(text.clone(), d);
            }
        }
        Statements(out)
    }

    /// Without the statements whose text contains `needle`.
    pub fn without(mut self, needle: &str) -> Statements {
        self.0.retain(|text, _| !text.contains(needle));
        self
    }
}

/// A running relay to one PostgreSQL server.
pub struct WireCounter {
    url: String,
    counts: Arc<Mutex<Statements>>,
    task: tokio::task::JoinHandle<()>,
}

impl WireCounter {
    /// Listens on a free loopback port and relays every connection to the
    /// server of `url` (a `postgres://user@host:port/db` URL).
    pub async fn start(url: &str) -> WireCounter {
        let (upstream, relayed) = relay_url(url);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let counts = Arc::new(Mutex::new(Statements::default()));
        let shared = counts.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let counts = shared.clone();
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(&upstream).await {
                        relay(client, server, counts).await;
                    }
                });
            }
        });
        WireCounter {
            url: relayed.replace("{port}", &port.to_string()),
            counts,
            task,
        }
    }

    /// The URL that reaches the server through the relay.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The statements counted so far.
    pub fn snapshot(&self) -> Statements {
        self.counts.lock().expect("counts").clone()
    }
}

impl Drop for WireCounter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The server's `host:port`, and `url` pointed at the relay's port
/// (`{port}`) without TLS.
fn relay_url(url: &str) -> (String, String) {
    let (scheme, rest) = url.split_once("://").expect("a postgres:// URL");
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (user, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5432")
    };
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, format!("{q}&sslmode=disable")),
        None => (path, "sslmode=disable".to_string()),
    };
    let user = user.map(|u| format!("{u}@")).unwrap_or_default();
    (
        host,
        format!("{scheme}://{user}127.0.0.1:{{port}}/{path}?{query}"),
    )
}

async fn relay(client: TcpStream, server: TcpStream, counts: Arc<Mutex<Statements>>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let back = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    });
    let mut parser = Frontend::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match client_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for text in parser.feed(&buf[..n]) {
            *counts.lock().expect("counts").0.entry(text).or_default() += 1;
        }
        if server_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = server_write.shutdown().await;
    let _ = back.await;
}

/// The frontend side of one connection: splits its bytes into messages and
/// answers the text of each statement they execute.
#[derive(Default)]
struct Frontend {
    pending: Vec<u8>,
    started: bool,
    statements: HashMap<String, String>,
    portals: HashMap<String, String>,
}

impl Frontend {
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut executed = Vec::new();
        loop {
            let header = if self.started { 5 } else { 4 };
            if self.pending.len() < header {
                break;
            }
            let at = header - 4;
            let len = i32::from_be_bytes(self.pending[at..at + 4].try_into().unwrap()) as usize;
            let total = at + len;
            if self.pending.len() < total {
                break;
            }
            let message: Vec<u8> = self.pending.drain(..total).collect();
            if !self.started {
                let code = i32::from_be_bytes(message[4..8].try_into().unwrap());
                // An encryption request is answered with one byte, and the
                // startup message follows untyped as well.
                self.started = code != SSL_REQUEST && code != GSSENC_REQUEST;
                continue;
            }
            let body = &message[5..];
            match message[0] {
                b'Q' => executed.push(cstr(body).0),
                b'P' => {
                    let (name, rest) = cstr(body);
                    let (text, _) = cstr(rest);
                    self.statements.insert(name, text);
                }
                b'B' => {
                    let (portal, rest) = cstr(body);
                    let (statement, _) = cstr(rest);
                    let text = self.statements.get(&statement).cloned().unwrap_or_default();
                    self.portals.insert(portal, text);
                }
                b'E' => {
                    let (portal, _) = cstr(body);
                    executed.push(self.portals.get(&portal).cloned().unwrap_or_default());
                }
                _ => {}
            }
        }
        executed
    }
}

/// A NUL-terminated string and what follows it.
fn cstr(bytes: &[u8]) -> (String, &[u8]) {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let rest = bytes.get(end + 1..).unwrap_or_default();
    (String::from_utf8_lossy(&bytes[..end]).into_owned(), rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_url_keeps_user_database_and_options() {
        let (host, url) = relay_url("postgres://postgres@127.0.0.1:5432/test?application_name=x");
        assert_eq!(host, "127.0.0.1:5432");
        assert_eq!(
            url,
            "postgres://postgres@127.0.0.1:{port}/test?application_name=x&sslmode=disable"
        );
        let (host, url) = relay_url("postgresql://db.local/idem");
        assert_eq!(host, "db.local:5432");
        assert_eq!(url, "postgresql://127.0.0.1:{port}/idem?sslmode=disable");
    }

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![kind];
        m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn executes_are_counted_by_the_text_their_portal_was_bound_from() {
        let mut f = Frontend::default();
        let mut startup = 8i32.to_be_bytes().to_vec();
        startup.extend_from_slice(&SSL_REQUEST.to_be_bytes());
        let mut bytes = startup;
        let mut real = 8i32.to_be_bytes().to_vec();
        real.extend_from_slice(&196_608i32.to_be_bytes());
        bytes.extend_from_slice(&real);
        bytes.extend(message(b'P', b"s1\0SELECT 1\0\0\0"));
        bytes.extend(message(b'B', b"\0s1\0\0\0\0\0\0\0"));
        bytes.extend(message(b'E', b"\0\0\0\0\0"));
        bytes.extend(message(b'S', b""));
        bytes.extend(message(b'Q', b"BEGIN\0"));
        // Split anywhere: messages may straddle reads.
        let (a, b) = bytes.split_at(13);
        let mut executed = f.feed(a);
        executed.extend(f.feed(b));
        assert_eq!(executed, vec!["SELECT 1".to_string(), "BEGIN".to_string()]);
    }
}
