//! A fault-injecting TCP proxy between a client and a server: lost
//! answers, timeouts and injected answers, one per request, in order.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::install_tls_provider;

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
    // Read only through `Debug`, in failure messages.
    #[allow(dead_code)]
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
        install_tls_provider();
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
