//! The edge of `idem serve` and `idem proxy`: connections that hold the
//! server without using it are closed, connections beyond the limit wait,
//! slow requests and a stuck database answer problems instead of hanging,
//! and what reaches the client at the protocol's edges (405, preflights,
//! odd path parameters, faults of the server) is a problem document with
//! the request's ID and no more.

use crate::harness::target::Target;
use crate::harness::{Backend, Backing, PROXY_LISTENING_PREFIX, Process, Server, command};
use reqwest::Method;
use serde_json::json;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

idem_testkit::store_tests!(
    half_sent_request_is_closed_within_the_header_timeout,
    idle_keep_alive_connection_is_closed_after_the_idle_timeout,
    an_idle_connection_is_not_cut_by_the_header_timeout,
    connections_beyond_the_limit_wait_for_one_to_close,
    a_connection_that_sends_nothing_is_closed_within_the_header_timeout,
    one_address_holds_at_most_its_connections,
    request_over_the_request_timeout_is_unavailable,
    wrong_method_is_method_not_allowed,
    cors_preflight_carries_the_request_id,
    nul_or_non_utf8_in_a_path_parameter_is_invalid_argument,
    logs_carry_no_credentials,
);

idem_testkit::backend_tests!(
    postgres_only: Backend::Postgres;
    internal_errors_tell_the_client_only_the_request_id,
    a_stuck_database_answers_unavailable_instead_of_hanging,
);

/// The bytes of a GET request for `path`, complete.
fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: idem\r\n\r\n")
}

/// Whether the peer closes `stream` within `within`, whatever it sends
/// before.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// Reads until `marker` arrived; panics after `within`.
async fn read_until(stream: &mut TcpStream, marker: &str, within: Duration) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        while !String::from_utf8_lossy(&seen).contains(marker) {
            let n = stream.read(&mut buf).await.expect("read");
            assert!(
                n > 0,
                "closed before {marker:?}: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {marker:?} within {within:?}"));
    String::from_utf8_lossy(&seen).into_owned()
}

async fn half_sent_request_is_closed_within_the_header_timeout(backend: Backend) {
    let s = Server::start_with(
        backend,
        &["--header-timeout", "1s", "--idle-timeout", "60s"],
    )
    .await;
    let mut stream = TcpStream::connect(s.addr()).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: idem\r\n")
        .await
        .unwrap();
    assert!(
        closed_within(&mut stream, Duration::from_secs(8)).await,
        "a request whose headers never end keeps its connection"
    );
    // The server still serves whoever sends a whole request.
    s.get("/healthz").await.ok(200);
}

async fn idle_keep_alive_connection_is_closed_after_the_idle_timeout(backend: Backend) {
    let s = Server::start_with(
        backend,
        &["--idle-timeout", "1s", "--header-timeout", "60s"],
    )
    .await;
    let mut stream = TcpStream::connect(s.addr()).await.unwrap();
    stream.write_all(get("/healthz").as_bytes()).await.unwrap();
    let answer = read_until(&mut stream, "\"ok\"", Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        closed_within(&mut stream, Duration::from_secs(8)).await,
        "an idle keep-alive connection outlives the idle timeout"
    );
}

/// The header timeout runs from a request's first byte: a keep-alive
/// connection waiting between requests is bounded by the idle timeout only.
async fn an_idle_connection_is_not_cut_by_the_header_timeout(backend: Backend) {
    let s = Server::start_with(
        backend,
        &["--header-timeout", "1s", "--idle-timeout", "60s"],
    )
    .await;
    let mut stream = TcpStream::connect(s.addr()).await.unwrap();
    stream.write_all(get("/healthz").as_bytes()).await.unwrap();
    read_until(&mut stream, "\"ok\"", Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    stream.write_all(get("/healthz").as_bytes()).await.unwrap();
    let answer = read_until(&mut stream, "\"ok\"", Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// A connection that sends nothing holds its slot for the header timeout,
/// not the idle one.
async fn a_connection_that_sends_nothing_is_closed_within_the_header_timeout(backend: Backend) {
    let s = Server::start_with(
        backend,
        &["--header-timeout", "1s", "--idle-timeout", "60s"],
    )
    .await;
    let mut silent = TcpStream::connect(s.addr()).await.unwrap();
    assert!(
        closed_within(&mut silent, Duration::from_secs(8)).await,
        "a connection that never sent a byte kept its slot"
    );
}

/// One client address holds at most `--max-connections-per-ip`; the
/// connection past it is closed at once, and a slot given back is taken
/// again.
async fn one_address_holds_at_most_its_connections(backend: Backend) {
    let s = Server::start_with(
        backend,
        &["--max-connections-per-ip", "2", "--idle-timeout", "1s"],
    )
    .await;
    // The harness's own pooled connections close idle first.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut first = TcpStream::connect(s.addr()).await.unwrap();
    first.write_all(get("/healthz").as_bytes()).await.unwrap();
    read_until(&mut first, "\"ok\"", Duration::from_secs(5)).await;
    let mut second = TcpStream::connect(s.addr()).await.unwrap();
    second.write_all(get("/healthz").as_bytes()).await.unwrap();
    read_until(&mut second, "\"ok\"", Duration::from_secs(5)).await;
    let mut third = TcpStream::connect(s.addr()).await.unwrap();
    let _ = third.write_all(get("/healthz").as_bytes()).await;
    assert!(
        closed_within(&mut third, Duration::from_secs(3)).await,
        "a third connection from one address was kept"
    );
    drop(first);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let mut again = TcpStream::connect(s.addr()).await.unwrap();
        let _ = again.write_all(get("/healthz").as_bytes()).await;
        let mut buf = [0u8; 12];
        match tokio::time::timeout(Duration::from_secs(2), again.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                assert!(buf.starts_with(b"HTTP/1.1 200"));
                break;
            }
            _ if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => panic!("the slot given back was not served: {other:?}"),
        }
    }
}

async fn connections_beyond_the_limit_wait_for_one_to_close(backend: Backend) {
    let s = Server::start_with(backend, &["--max-connections", "1"]).await;
    let mut first = TcpStream::connect(s.addr()).await.unwrap();
    first.write_all(get("/healthz").as_bytes()).await.unwrap();
    read_until(&mut first, "\"ok\"", Duration::from_secs(5)).await;
    // The first connection stays open (keep-alive): the second is not
    // served while it does.
    let mut second = TcpStream::connect(s.addr()).await.unwrap();
    second.write_all(get("/healthz").as_bytes()).await.unwrap();
    let mut buf = [0u8; 64];
    let early = tokio::time::timeout(Duration::from_millis(1500), second.read(&mut buf)).await;
    assert!(
        early.is_err(),
        "a connection over the limit was served: {early:?}"
    );
    drop(first);
    let answer = read_until(&mut second, "\"ok\"", Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

async fn request_over_the_request_timeout_is_unavailable(backend: Backend) {
    let s = Server::start_with(backend, &["--request-timeout", "1s"]).await;
    s.create_queue("q").await;
    // Nothing listens on port 9: the task keeps failing and never reaches
    // a final state, so the wait outlasts the request timeout.
    let resp = s
        .request(Method::POST, "/v1/queues/q/tasks?wait_ms=5000")
        .json(&json!({"task_id": "slow", "target": {"url": "http://127.0.0.1:9/hook"}}))
        .send()
        .await;
    let doc = resp.problem(503, "UNAVAILABLE");
    assert_eq!(doc["request_id"].as_str(), Some(resp.request_id()));
    assert_eq!(resp.header("retry-after"), Some("1"));
}

async fn wrong_method_is_method_not_allowed(backend: Backend) {
    let s = Server::start(backend).await;
    s.create_queue("q").await;
    let resp = s.request(Method::PUT, "/v1/queues/q").send().await;
    resp.problem(405, "METHOD_NOT_ALLOWED");
    resp.request_id();
}

async fn cors_preflight_carries_the_request_id(backend: Backend) {
    let s = Server::start_with(backend, &["--cors-origin", "https://app.example"]).await;
    let resp = s
        .request(Method::OPTIONS, "/v1/queues")
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "idempotency-key")
        .send()
        .await;
    assert!(resp.status < 300, "{}: {}", resp.status, resp.text);
    assert_eq!(
        resp.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    let id = resp.request_id().to_string();
    assert!(crate::harness::is_uuid_v7(&id), "{id}");
}

async fn nul_or_non_utf8_in_a_path_parameter_is_invalid_argument(backend: Backend) {
    let s = Server::start(backend).await;
    s.create_queue("q").await;
    s.get("/v1/queues/q/tasks/a%00b").await.invalid("task_id");
    s.delete("/v1/queues/q/tasks/a%00b")
        .await
        .invalid("task_id");
    s.post_empty("/v1/queues/q/tasks/a%00b/run")
        .await
        .invalid("task_id");
    s.get("/v1/jobs/x%00").await.invalid("job");
    s.get("/v1/queues/q%00").await.invalid("queue");
    s.get("/v1/principals/admin/keys/%FF").await.invalid("id");
    s.get("/v1/idempotency-keys/k%00").await.invalid("key");
    // Nothing was written, and the store still answers.
    assert!(s.all_tasks("q", "").await.is_empty());
}

async fn logs_carry_no_credentials(backend: Backend) {
    let target = Target::start().await;
    let backing = Backing::new(backend).await;
    let key = crate::harness::fresh_key();
    let server = Process::spawn(
        &backing.serve_args(&key),
        &[("IDEM_LOG".into(), "debug".into())],
    )
    .await;
    let api = server.api(Some(&key));
    let secret = api.post_empty("/v1/signing-secrets/rotate").await;
    secret.ok(201);
    let secret = secret.json["secret"].as_str().unwrap().to_string();
    let new_key = api.post_empty("/v1/principals/admin/keys").await.json["key"]
        .as_str()
        .unwrap()
        .to_string();
    api.create_queue("q").await;
    api.request(Method::POST, "/v1/queues/q/tasks")
        .header("Idempotency-Key", "key-of-a-create")
        .json(&json!({
            "task_id": "t",
            "target": {
                "url": target.url("/hook"),
                "headers": {"Authorization": "Bearer target-credential", "X-Api-Token": "target-token"}
            }
        }))
        .send()
        .await
        .ok(201);
    let got = target.wait_for("t", 1, Duration::from_secs(10)).await;
    assert_eq!(got[0].header("x-api-token"), Some("target-token"));
    // A refused key and a fault are logged too.
    server
        .api(Some("idem_not_a_key"))
        .get("/v1/queues")
        .await
        .problem(401, "UNAUTHENTICATED");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let logs = server.stderr();
    assert!(logs.contains("request"), "debug logs were written: {logs}");
    for credential in [
        key.as_str(),
        new_key.as_str(),
        "idem_not_a_key",
        secret.as_str(),
        secret.trim_start_matches("whsec_"),
        "target-credential",
        "target-token",
    ] {
        assert!(
            !logs.contains(credential),
            "the log holds {credential:?}:\n{logs}"
        );
    }
}

async fn internal_errors_tell_the_client_only_the_request_id(backend: Backend) {
    let s = Server::start(backend).await;
    let Backing::Postgres(db) = s.backing() else {
        unreachable!("a PostgreSQL test")
    };
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    // A table the server expects is gone: the store's error names it.
    client
        .batch_execute("ALTER TABLE jobs RENAME TO jobs_elsewhere")
        .await
        .unwrap();
    let resp = s.get("/v1/jobs").await;
    let doc = resp.problem(500, "INTERNAL");
    let id = resp.request_id().to_string();
    assert_eq!(doc["request_id"].as_str(), Some(id.as_str()));
    let detail = doc["detail"].as_str().unwrap();
    assert!(
        !detail.contains("jobs") && !detail.contains("relation"),
        "the store's error reached the client: {detail}"
    );
    // The log has the cause, under the request's ID.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let logs = s.stderr();
        if logs
            .lines()
            .any(|l| l.contains(&id) && l.contains("does not exist"))
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no log line with the cause and {id}:\n{logs}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn a_stuck_database_answers_unavailable_instead_of_hanging(backend: Backend) {
    let s = Server::start_with(
        backend,
        &[
            "--database-max-connections",
            "1",
            "--database-acquire-timeout",
            "300ms",
            "--database-statement-timeout",
            "1s",
        ],
    )
    .await;
    s.create_queue("q").await;
    let Backing::Postgres(db) = s.backing() else {
        unreachable!("a PostgreSQL test")
    };
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute("BEGIN; LOCK TABLE queues IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    // One connection, held by whichever statement waits on the lock: it is
    // cancelled by the statement timeout, and the requests queued behind it
    // give up at the acquire timeout.
    let answers = futures_join(
        (0..4)
            .map(|_| {
                let api = s.fresh_admin();
                async move { api.get("/v1/queues/q").await }
            })
            .collect(),
    )
    .await;
    for resp in &answers {
        resp.problem(503, "UNAVAILABLE");
        assert_eq!(resp.header("retry-after"), Some("1"));
    }
    // The statement holding the connection may be cancelled after the
    // requests queued behind it gave up; the lock is held until both are
    // seen.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let logs = s.stderr().to_lowercase();
        let cancelled = logs.contains("statement timeout");
        let gave_up = logs.contains("timeout occurred while waiting");
        if cancelled && gave_up {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "statement cancelled: {cancelled}, a wait for a connection given up: {gave_up}\n{logs}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    client.batch_execute("ROLLBACK").await.unwrap();
    s.fresh_admin().get("/v1/queues/q").await.ok(200);
}

/// Runs every future at once and returns their outputs in order.
async fn futures_join<F: std::future::Future + Send + 'static>(futures: Vec<F>) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("a request task"));
    }
    out
}

async fn proxy(extra: &[&str]) -> Process {
    let mut cmd = command();
    cmd.arg("proxy").args([
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "http://127.0.0.1:9",
        "--store",
        "memory",
        "--insecure-no-auth",
    ]);
    cmd.args(extra);
    Process::run(cmd, PROXY_LISTENING_PREFIX).await
}

#[tokio::test]
async fn the_proxy_closes_half_sent_requests() {
    let p = proxy(&["--header-timeout", "1s"]).await;
    let addr = p.base.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(b"POST /run HTTP/1.1\r\nHost: idem\r\nIdempotency-Key: k\r\n")
        .await
        .unwrap();
    assert!(
        closed_within(&mut stream, Duration::from_secs(8)).await,
        "the proxy keeps a connection whose headers never end"
    );
}

#[tokio::test]
async fn the_proxy_answers_a_trickled_body_with_request_timeout() {
    let p = proxy(&["--request-timeout", "1s"]).await;
    let addr = p.base.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(
            b"POST /run HTTP/1.1\r\nHost: idem\r\nIdempotency-Key: k\r\nContent-Length: 10\r\n\r\nab",
        )
        .await
        .unwrap();
    let answer = read_until(&mut stream, "REQUEST_TIMEOUT", Duration::from_secs(8)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}
