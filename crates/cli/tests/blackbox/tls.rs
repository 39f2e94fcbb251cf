//! TLS on every connection Idem makes or answers through a peer: `idem
//! serve` on a PostgreSQL that requires verified TLS, the CLI and
//! idem-client over https, and `idem proxy` on Redis over TLS. Each server
//! is the test's own, with a certificate signed by a CA the test made.

use std::time::Duration;

use crate::harness::{
    Backend, Out, PROXY_LISTENING_PREFIX, Process, Server, command, fresh_key,
    install_tls_provider, unique,
};
use idem_testkit::tls::{TestCa, TlsPostgres, TlsRedis, TlsTerminator};
use serde_json::json;

/// `idem serve` on a PostgreSQL reached with `sslmode=verify-full` and the
/// test CA as `sslrootcert`: it starts, serves, and every connection it
/// holds is encrypted; without the CA it refuses to start and says why.
#[tokio::test]
async fn serve_runs_on_postgres_over_verified_tls() {
    let ca = TestCa::new();
    let pg = TlsPostgres::start(&ca);
    let url = pg.url(&format!(
        "sslmode=verify-full&sslrootcert={}&application_name=idem-tls",
        ca.ca_file.display()
    ));
    let key = fresh_key();
    let args: Vec<String> = [
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        &url,
        "--bootstrap-key",
        &key,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let server = Process::spawn(&args, &[]).await;
    let name = unique("q");
    let mut cmd = command();
    cmd.env("IDEM_URL", &server.base)
        .env("IDEM_API_KEY", &key)
        .args(["queue", "create", &name, "--json"]);
    let created = Out::of(cmd).await.json();
    assert_eq!(created["name"], name.as_str());

    let (encrypted, all) = pg.encrypted_connections("idem-tls").await;
    let client = pg.client().await;
    assert!(all > 0, "idem serve holds no connection");
    assert_eq!(encrypted, all, "every connection of idem serve is TLS");
    let stored: i64 = client
        .query_one("SELECT count(*) FROM queues WHERE name = $1", &[&name])
        .await
        .unwrap()
        .get(0);
    assert_eq!(stored, 1);
    server.kill().await;

    // The system's trust store does not hold the test CA.
    let mut cmd = command();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg(pg.url("sslmode=verify-full"));
    let out = tokio::time::timeout(Duration::from_secs(60), Out::of(cmd))
        .await
        .expect("idem serve gives up on a refused certificate");
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("invalid peer certificate"),
        "{}",
        out.stderr
    );

    let mut cmd = command();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg(pg.url("sslmode=verify-all"));
    let out = Out::of(cmd).await;
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("sslmode \"verify-all\""),
        "{}",
        out.stderr
    );
}

/// The CLI and idem-client reach a server behind https with the CA file,
/// and without it fail at once (a certificate does not get better with
/// retries), saying why.
async fn cli_and_client_speak_https_with_a_ca_file(s: Server) {
    let ca = TestCa::new();
    let front = TlsTerminator::start(&ca, s.addr().parse().unwrap()).await;
    let ca_file = ca.ca_file.display().to_string();

    let name = unique("q");
    let mut cmd = command();
    cmd.env("IDEM_API_KEY", &s.admin_key).args([
        "queue",
        "--url",
        &front.url(),
        "create",
        &name,
        "--ca-file",
        &ca_file,
        "--json",
    ]);
    let created = Out::of(cmd).await.json();
    assert_eq!(created["name"], name.as_str());
    let mut cmd = command();
    cmd.env("IDEM_URL", front.url())
        .env("IDEM_API_KEY", &s.admin_key)
        .env("IDEM_CA_FILE", &ca_file)
        .args(["queue", "get", &name, "--json"]);
    assert_eq!(Out::of(cmd).await.json()["name"], name.as_str());

    let mut cmd = command();
    cmd.env("IDEM_URL", front.url())
        .env("IDEM_API_KEY", &s.admin_key)
        .args(["queue", "get", &name]);
    let out = Out::of(cmd).await.fails(7, "no answer after 1 attempt(s)");
    assert!(
        out.stderr.contains("invalid peer certificate"),
        "{}",
        out.stderr
    );

    let mut cmd = command();
    cmd.env("IDEM_URL", front.url())
        .env("IDEM_API_KEY", &s.admin_key)
        .env("IDEM_CA_FILE", "/no/such/ca.pem")
        .args(["queue", "get", &name]);
    Out::of(cmd).await.fails(1, "CA file \"/no/such/ca.pem\"");

    install_tls_provider();
    let client = idem_client::Client::builder(front.url())
        .api_key(&s.admin_key)
        .ca_file(&ca.ca_file)
        .build()
        .unwrap();
    let other = unique("q");
    let made = client
        .create_queue(&idem_client::NewQueue::new(&other))
        .await
        .unwrap();
    assert_eq!(made.status, 201);
    assert_eq!(client.get_queue(&other).await.unwrap().value.name, other);

    let untrusting = idem_client::Client::new(front.url(), &s.admin_key).unwrap();
    let err = untrusting.get_queue(&other).await.unwrap_err();
    match &err {
        idem_client::Error::Transport { attempts, .. } => assert_eq!(*attempts, 1, "{err}"),
        other => panic!("expected a transport error, got {other}"),
    }
    assert!(
        err.to_string().contains("invalid peer certificate"),
        "{err}"
    );
}

idem_testkit::store_tests!(Server::start; cli_and_client_speak_https_with_a_ca_file);

/// `idem proxy --store rediss://… --redis-ca-file` keeps its claims in a
/// Redis that speaks TLS only; without the CA file it refuses to start.
#[tokio::test]
async fn proxy_keeps_claims_in_redis_over_tls() {
    let ca = TestCa::new();
    let redis = TlsRedis::start(&ca);
    let upstream = Server::start(Backend::Sqlite).await;
    let ca_file = ca.ca_file.display().to_string();
    // The proxy calls Idem's API with a key of its own.
    let credential = format!("Authorization: Bearer {}", upstream.admin_key);
    let flags = |extra: &[&str]| {
        let mut cmd = command();
        cmd.args(["proxy", "--listen", "127.0.0.1:0", "--upstream"])
            .arg(upstream.base())
            .args(["--store", &redis.url(), "--insecure-no-auth"])
            .args(["--upstream-header", &credential])
            .args(extra);
        cmd
    };
    let p = Process::run(
        flags(&["--redis-ca-file", &ca_file]),
        PROXY_LISTENING_PREFIX,
    )
    .await;
    let http = reqwest::Client::new();
    let name = unique("q");
    let send = || {
        http.post(format!("{}/v1/queues", p.base))
            .header("Idempotency-Key", "tls-run-1")
            .json(&json!({ "name": name }))
            .send()
    };
    assert_eq!(send().await.unwrap().status(), 201, "{}", p.stderr());
    let again = send().await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    p.kill().await;

    let out = tokio::time::timeout(Duration::from_secs(60), Out::of(flags(&[])))
        .await
        .expect("idem proxy gives up on a refused certificate");
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("certificate"), "{}", out.stderr);
}
