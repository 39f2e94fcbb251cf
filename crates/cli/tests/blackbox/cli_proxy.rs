//! `idem proxy` in front of a real upstream (an `idem serve`): it starts,
//! forwards, and answers a repeated delivery without calling the upstream.

use crate::harness::{Backend, Out, PROXY_LISTENING_PREFIX, Process, Server, command, unique};
use serde_json::{Value, json};

async fn proxy(args: &[&str], envs: &[(&str, &str)]) -> Process {
    let mut cmd = command();
    cmd.arg("proxy").args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    Process::run(cmd, PROXY_LISTENING_PREFIX).await
}

#[tokio::test]
async fn proxy_forwards_once_and_answers_duplicates_itself() {
    let upstream = Server::start(Backend::Sqlite).await;
    let p = proxy(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            upstream.base(),
            "--store",
            "memory",
            "--lease",
            "30s",
            "--retention",
            "1h",
            "--scope-header",
            "X-Tenant",
            "--insecure-no-auth",
        ],
        &[],
    )
    .await;
    let http = reqwest::Client::new();
    let name = unique("q");
    let send = |key: &str, tenant: &str| {
        http.post(format!("{}/v1/queues", p.base))
            .bearer_auth(&upstream.admin_key)
            .header("Idempotency-Key", key)
            .header("X-Tenant", tenant)
            .json(&json!({ "name": name }))
            .send()
    };
    let first = send("run-1", "a").await.unwrap();
    assert_eq!(first.status(), 201, "forwarded: {}", p.stderr());
    // Logged before the first request is served.
    assert!(
        p.stderr().contains("INSECURE"),
        "running without authentication is said loudly: {}",
        p.stderr()
    );
    let created: Value = first.json().await.unwrap();
    assert_eq!(created["name"], name.as_str());

    let again = send("run-1", "a").await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(
        again
            .headers()
            .get("idempotent-replayed")
            .and_then(|v| v.to_str().ok()),
        Some("true")
    );
    let body: Value = again.json().await.unwrap();
    assert_eq!(body["status"], "duplicate");

    // Another scope is another run: forwarded, and the upstream refuses
    // the second queue of that name itself.
    let other = send("run-1", "b").await.unwrap();
    assert_eq!(other.status(), 409);

    let unkeyed = http
        .get(format!("{}/v1/queues", p.base))
        .bearer_auth(&upstream.admin_key)
        .send()
        .await
        .unwrap();
    assert_eq!(unkeyed.status(), 400, "no run key, no forwarding");

    let queues = upstream
        .idem(&["queue", "ls", "--json", "--limit", "1000"])
        .await
        .json();
    let named = queues["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["name"] == name.as_str())
        .count();
    assert_eq!(named, 1);
}

#[tokio::test]
async fn proxy_takes_its_flags_from_the_environment_and_enforces_signatures() {
    let upstream = Server::start(Backend::Sqlite).await;
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("guard.db").display());
    let p = proxy(
        &[],
        &[
            ("IDEM_LISTEN", "127.0.0.1:0"),
            ("IDEM_UPSTREAM", upstream.base()),
            ("IDEM_STORE", &store),
            (
                "IDEM_SIGNING_SECRET",
                "whsec_c2VjcmV0LW9uZQ==,whsec_c2VjcmV0LXR3bw==",
            ),
            ("IDEM_LEASE", "10s"),
        ],
    )
    .await;
    let unsigned = reqwest::Client::new()
        .post(format!("{}/v1/queues", p.base))
        .header("Idempotency-Key", "run-1")
        .json(&json!({ "name": "x" }))
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    assert!(
        dir.path().join("guard.db").exists(),
        "the SQLite store is used"
    );
}

#[tokio::test]
async fn proxy_refuses_bad_flags() {
    for (args, why) in [
        (vec!["--upstream", "ftp://x/", "--store", "memory"], "http"),
        (
            vec![
                "--upstream",
                "http://127.0.0.1:9",
                "--store",
                "memory",
                "--signing-secret",
                "nope",
            ],
            "whsec_",
        ),
        (
            vec![
                "--upstream",
                "http://127.0.0.1:9",
                "--store",
                "memory",
                "--lease",
                "soon",
            ],
            "duration",
        ),
        (vec!["--upstream", "http://127.0.0.1:9"], "--store"),
    ] {
        let mut cmd = command();
        cmd.arg("proxy").args(&args);
        let out = Out::of(cmd).await;
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(why), "{args:?}: {}", out.stderr);
    }
    let out = refused(&["--store", "gopher://x", "--insecure-no-auth"]).await;
    assert!(out.stderr.contains("guard store"), "{}", out.stderr);
}

/// Runs `idem proxy` in front of a closed port with `extra` flags, expecting
/// it to refuse to start (exit 1) without ever listening.
async fn refused(extra: &[&str]) -> Out {
    let mut cmd = command();
    cmd.args([
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "http://127.0.0.1:9",
    ])
    .args(extra);
    let out = Out::of(cmd).await;
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!out.stdout.contains("listening"), "{}", out.stdout);
    out
}

/// Without a signing secret the proxy refuses to start and names the flag
/// that would let it: an unauthenticated proxy lets anyone pick new keys.
#[tokio::test]
async fn proxy_without_authentication_refuses_to_start() {
    let out = refused(&["--store", "memory"]).await;
    assert!(out.stderr.contains("--insecure-no-auth"), "{}", out.stderr);
    assert!(out.stderr.contains("--signing-secret"), "{}", out.stderr);

    // Unsigned parts cannot join the key of a signed message.
    let out = refused(&[
        "--store",
        "memory",
        "--signing-secret",
        "whsec_c2VjcmV0",
        "--scope-header",
        "X-Tenant",
    ])
    .await;
    assert!(out.stderr.contains("webhook-id"), "{}", out.stderr);
}

/// An OIDC issuer alone would let every sender it signs for through (every
/// organization of a shared Idem, every Google service account): the proxy
/// refuses to start until the senders are named or any subject is asked for.
#[tokio::test]
async fn proxy_with_an_issuer_but_no_subject_refuses_to_start() {
    let mut cmd = command();
    cmd.args([
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "http://127.0.0.1:9",
        "--store",
        "memory",
        "--oidc-issuer",
        "http://127.0.0.1:9",
        "--oidc-audience",
        "https://proxy.example",
    ])
    .kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(20), Out::of(cmd))
        .await
        .expect("the proxy started instead of refusing");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!out.stdout.contains("listening"), "{}", out.stdout);
    for flag in ["--oidc-subject", "--oidc-email", "--oidc-any-subject"] {
        assert!(out.stderr.contains(flag), "{flag}: {}", out.stderr);
    }
}

/// The binary's key flags reach the proxy: a named identity header, a
/// query-parameter scope, and the run key written into the JSON body.
#[tokio::test]
async fn proxy_flags_choose_identity_scope_and_body_field() {
    let target = crate::harness::target::Target::start().await;
    let p = proxy(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &target.base,
            "--store",
            "memory",
            "--insecure-no-auth",
            "--identity-header",
            "X-Idempotency-Key",
            "--scope-query",
            "region",
            "--run-key-json-field",
            "run_key",
        ],
        &[],
    )
    .await;
    let http = reqwest::Client::new();
    let send = |region: &str| {
        http.post(format!("{}/ok?region={region}", p.base))
            .header("X-Idempotency-Key", "delivery-1")
            .json(&json!({"amount": 100}))
            .send()
    };
    assert_eq!(send("eu").await.unwrap().status(), 200);
    let again = send("eu").await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(
        again
            .headers()
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true")
    );
    assert_eq!(
        send("us").await.unwrap().status(),
        200,
        "another scope, another run"
    );
    let received = target.received();
    assert_eq!(received.len(), 2, "{received:?}");
    let body: Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(body["amount"], 100);
    assert_eq!(
        body["run_key"].as_str(),
        received[0].header("idempotency-key"),
        "the run key is in the body and the header"
    );
    let no_identity = http
        .post(format!("{}/ok?region=eu", p.base))
        .header("Idempotency-Key", "")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_identity.status(), 400);
}
