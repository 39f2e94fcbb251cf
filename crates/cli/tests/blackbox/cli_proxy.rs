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

/// Where a proxy of the lease tests keeps its claims, and whatever must
/// outlive the proxy.
enum LeaseStore {
    Memory,
    Sqlite(tempfile::TempDir),
    Postgres(idem_testkit::TestDatabase),
    Redis,
}

impl LeaseStore {
    fn url(&self) -> String {
        match self {
            LeaseStore::Memory => "memory".into(),
            LeaseStore::Sqlite(dir) => {
                format!("sqlite://{}", dir.path().join("guard.db").display())
            }
            LeaseStore::Postgres(db) => db.url.clone(),
            // Under the proxy's fixed prefix; the job name is unique per run.
            LeaseStore::Redis => idem_testkit::redis_url(),
        }
    }
}

/// Issue #30: with `--lease 2s` and an upstream that takes 3 s, one Cloud
/// Scheduler run sent twice 2.3 s apart must still reach the upstream once.
/// The proxy renews the claim while the upstream works, so the second
/// delivery finds the run in flight (409), and one sent after the upstream
/// answered is a duplicate. The upstream is not cut at the lease either:
/// the first delivery gets the upstream's own answer.
async fn a_run_slower_than_the_lease_reaches_the_upstream_once(store: LeaseStore) {
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
    a_run_slower_than_the_lease_reaches_the_upstream_once(LeaseStore::Memory).await;
}

#[tokio::test]
async fn a_run_slower_than_the_lease_runs_once_with_a_sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    a_run_slower_than_the_lease_reaches_the_upstream_once(LeaseStore::Sqlite(dir)).await;
}

#[tokio::test]
async fn a_run_slower_than_the_lease_runs_once_with_a_postgres_store() {
    let db = idem_testkit::TestDatabase::create().await;
    a_run_slower_than_the_lease_reaches_the_upstream_once(LeaseStore::Postgres(db)).await;
}

#[tokio::test]
async fn a_run_slower_than_the_lease_runs_once_with_a_redis_store() {
    a_run_slower_than_the_lease_reaches_the_upstream_once(LeaseStore::Redis).await;
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
