//! `idem proxy` in front of a real upstream (an `idem serve`): it starts,
//! forwards, and answers a repeated delivery without calling the upstream.

use crate::guard_e2e::ProxyStore;
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
            // The sender's key is for the upstream (Idem's own API) here.
            "--forward-authorization",
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

/// One Cloud Scheduler run, its ScheduleTime written two ways (UTC, and
/// the same instant at -07:00 with fractional zeros), runs the upstream
/// once; a ScheduleTime that names no instant is refused unforwarded.
#[tokio::test]
async fn proxy_runs_one_schedule_instant_once_however_it_is_written() {
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
        ],
        &[],
    )
    .await;
    let http = reqwest::Client::new();
    let send = |at: &str| {
        http.post(format!("{}/ok", p.base))
            .header(
                "X-CloudScheduler-JobName",
                "projects/p/locations/us-central1/jobs/nightly",
            )
            .header("X-CloudScheduler-ScheduleTime", at)
            .json(&json!({}))
            .send()
    };
    assert_eq!(send("2026-10-16T12:00:00Z").await.unwrap().status(), 200);
    let again = send("2026-10-16T05:00:00.000-07:00").await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(
        again
            .headers()
            .get("idempotent-replayed")
            .map(|v| v.to_str().unwrap()),
        Some("true")
    );
    let garbled = send("16/10/2026 12:00").await.unwrap();
    assert_eq!(garbled.status(), 400);
    let problem: Value = garbled.json().await.unwrap();
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("X-CloudScheduler-ScheduleTime"),
        "{problem}"
    );
    assert_eq!(target.received().len(), 1);
}

/// `--run-key-json-field argument.idempotency_key` in front of a Workflows
/// execution request: the key goes inside the JSON string `argument`, whose
/// payload reaches the upstream whole; a body that already has the member
/// is refused unforwarded, as is a path that names no member at start.
#[tokio::test]
async fn proxy_adds_the_run_key_inside_a_json_string_without_loss() {
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
            "--run-key-json-field",
            "argument.idempotency_key",
        ],
        &[],
    )
    .await;
    let http = reqwest::Client::new();
    let send = |key: &str, body: Value| {
        http.post(format!("{}/ok", p.base))
            .header("Idempotency-Key", key)
            .json(&body)
            .send()
    };
    let sent = send("run-1", json!({"argument": "{\"order\":42}"}))
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    let received = target.received();
    assert_eq!(received.len(), 1);
    let body: Value = serde_json::from_slice(&received[0].body).unwrap();
    let argument: Value = serde_json::from_str(body["argument"].as_str().unwrap()).unwrap();
    assert_eq!(argument["order"], 42, "{body}");
    assert_eq!(
        argument["idempotency_key"].as_str(),
        received[0].header("idempotency-key")
    );

    let taken = send(
        "run-2",
        json!({"argument": "{\"order\":7,\"idempotency_key\":\"mine\"}"}),
    )
    .await
    .unwrap();
    assert_eq!(taken.status(), 400);
    let problem: Value = taken.json().await.unwrap();
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("argument.idempotency_key"),
        "{problem}"
    );
    assert_eq!(
        target.received().len(),
        1,
        "refused bodies are not forwarded"
    );

    let bad_path = refused(&[
        "--store",
        "memory",
        "--insecure-no-auth",
        "--run-key-json-field",
        "argument..key",
    ])
    .await;
    assert!(
        bad_path.stderr.contains("--run-key-json-field"),
        "{}",
        bad_path.stderr
    );
}

/// The sender's `Authorization` (here a bearer meant for the proxy) never
/// reaches the upstream; the proxy sends its own headers and a bearer token
/// from a file, re-read when the file is rotated. `--forward-authorization`
/// passes the sender's on.
#[tokio::test]
async fn proxy_calls_the_upstream_as_itself() {
    let target = crate::harness::target::Target::start().await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("upstream-token");
    std::fs::write(&token, "first-token\n").unwrap();
    let p = proxy(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &target.base,
            "--store",
            "memory",
            "--insecure-no-auth",
            "--upstream-header",
            "X-Api-Key: proxy-key",
            "--upstream-bearer-file",
            token.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    let http = reqwest::Client::new();
    let send = |base: String, key: &'static str| {
        http.post(format!("{base}/ok"))
            .header("Idempotency-Key", key)
            .bearer_auth("token-for-the-proxy")
            .header("X-Api-Key", "sender-key")
            .json(&json!({}))
            .send()
    };
    assert_eq!(send(p.base.clone(), "run-1").await.unwrap().status(), 200);
    // Rotated in place, as a secret manager's sidecar writes it.
    std::fs::write(&token, "second-token-after-rotation\n").unwrap();
    assert_eq!(send(p.base.clone(), "run-2").await.unwrap().status(), 200);
    let received = target.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].header("authorization"),
        Some("Bearer first-token")
    );
    assert_eq!(received[0].header("x-api-key"), Some("proxy-key"));
    assert_eq!(
        received[1].header("authorization"),
        Some("Bearer second-token-after-rotation")
    );
    assert!(
        received
            .iter()
            .all(|r| !format!("{:?}", r.headers).contains("token-for-the-proxy")),
        "the sender's credential stays with the proxy"
    );

    let plain = proxy(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &target.base,
            "--store",
            "memory",
            "--insecure-no-auth",
        ],
        &[],
    )
    .await;
    assert_eq!(
        send(plain.base.clone(), "run-3").await.unwrap().status(),
        200
    );
    let forwarding = proxy(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &target.base,
            "--store",
            "memory",
            "--insecure-no-auth",
            "--forward-authorization",
        ],
        &[],
    )
    .await;
    assert_eq!(
        send(forwarding.base.clone(), "run-4")
            .await
            .unwrap()
            .status(),
        200
    );
    let received = target.received();
    assert_eq!(received.len(), 4);
    assert_eq!(received[2].header("authorization"), None);
    assert_eq!(received[2].header("x-api-key"), Some("sender-key"));
    assert_eq!(
        received[3].header("authorization"),
        Some("Bearer token-for-the-proxy")
    );

    let unreadable = refused(&[
        "--store",
        "memory",
        "--insecure-no-auth",
        "--upstream-bearer-file",
        dir.path().join("absent").to_str().unwrap(),
    ])
    .await;
    assert!(
        unreadable.stderr.contains("absent"),
        "{}",
        unreadable.stderr
    );
}

/// Issue #30: with `--lease 2s` and an upstream that takes 3 s, one Cloud
/// Scheduler run sent twice 2.3 s apart must still reach the upstream once.
/// The proxy renews the claim while the upstream works, so the second
/// delivery finds the run in flight (409), and one sent after the upstream
/// answered is a duplicate. The upstream is not cut at the lease either:
/// the first delivery gets the upstream's own answer.
async fn a_run_slower_than_the_lease_reaches_the_upstream_once(store: ProxyStore) {
    let target = crate::harness::target::Target::start().await;
    let store_url = store.url();
    let p = proxy(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &target.base,
            "--store",
            &store_url,
            "--lease",
            "2s",
            "--insecure-no-auth",
        ],
        &[],
    )
    .await;
    let http = reqwest::Client::new();
    let job = unique("projects/p/locations/l/jobs/slow");
    let send = || {
        http.post(format!("{}/hold/3000", p.base))
            .header("X-CloudScheduler-JobName", &job)
            .header("X-CloudScheduler-ScheduleTime", "2026-10-16T12:00:00Z")
            .send()
    };
    let sent_at = tokio::time::Instant::now();
    let first = tokio::spawn(send());
    target
        .wait_total(1, std::time::Duration::from_secs(5))
        .await;
    tokio::time::sleep_until(sent_at + std::time::Duration::from_millis(2300)).await;
    let second = send().await.unwrap();
    assert_eq!(second.status(), 409, "{}", p.stderr());
    let problem: Value = second.json().await.unwrap();
    assert_eq!(problem["type"], "IDEMPOTENCY_KEY_IN_PROGRESS");

    let first = first.await.unwrap().unwrap();
    assert_eq!(first.status(), 200, "{}", p.stderr());
    assert!(
        sent_at.elapsed() >= std::time::Duration::from_millis(3000),
        "answered when the upstream did"
    );
    let third = send().await.unwrap();
    assert_eq!(third.status(), 200);
    assert_eq!(
        third
            .headers()
            .get("idempotent-replayed")
            .and_then(|v| v.to_str().ok()),
        Some("true")
    );
    let body: Value = third.json().await.unwrap();
    assert_eq!(body["status"], "duplicate");
    assert_eq!(target.received().len(), 1, "the upstream ran once");
}

#[tokio::test]
async fn a_run_slower_than_the_lease_runs_once_with_a_memory_store() {
    a_run_slower_than_the_lease_reaches_the_upstream_once(ProxyStore::Memory).await;
}

#[tokio::test]
async fn a_run_slower_than_the_lease_runs_once_with_a_sqlite_store() {
    a_run_slower_than_the_lease_reaches_the_upstream_once(ProxyStore::sqlite().await).await;
}

#[tokio::test]
async fn a_run_slower_than_the_lease_runs_once_with_a_postgres_store() {
    a_run_slower_than_the_lease_reaches_the_upstream_once(ProxyStore::postgres().await).await;
}

#[tokio::test]
async fn a_run_slower_than_the_lease_runs_once_with_a_redis_store() {
    a_run_slower_than_the_lease_reaches_the_upstream_once(ProxyStore::Redis).await;
}

/// `--upstream-timeout` (not the lease) ends an upstream call: past it the
/// proxy answers 504 and releases the run, so a retry runs at once.
#[tokio::test]
async fn upstream_timeout_ends_the_call_and_releases_the_run() {
    let target = crate::harness::target::Target::start().await;
    let p = proxy(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &target.base,
            "--store",
            "memory",
            "--lease",
            "1m",
            "--insecure-no-auth",
        ],
        &[("IDEM_UPSTREAM_TIMEOUT", "500ms")],
    )
    .await;
    let http = reqwest::Client::new();
    let send = |path: &str| {
        http.post(format!("{}{path}", p.base))
            .header("Idempotency-Key", "timeout-1")
            .send()
    };
    let cut = send("/hold/3000").await.unwrap();
    assert_eq!(cut.status(), 504, "{}", p.stderr());
    let problem: Value = cut.json().await.unwrap();
    assert_eq!(problem["type"], "UPSTREAM_UNAVAILABLE");
    let retried = send("/ok").await.unwrap();
    assert_eq!(retried.status(), 200, "released, not held for the lease");
    assert_eq!(target.received().len(), 2);
}
