//! `idem serve`: first start and the bootstrap key, environment twins of the
//! flags, the body limit flag, durability across a SIGKILL, and background
//! work restarted when it fails.

use crate::harness;
use crate::harness::{Backend, Backing, Process, Server, fresh_key, task};
use serde_json::json;

idem_testkit::store_tests!(
    first_start_prints_the_admin_key_once,
    bootstrap_key_is_ignored_once_the_store_holds_a_key,
    environment_twins_configure_the_server,
    max_body_bytes_flag_sets_the_limit,
    max_body_bytes_environment_twin_sets_the_limit,
    kill_after_201_loses_nothing,
    api_keys_are_stored_hashed,
    a_dispatcher_that_panics_is_restarted_and_not_ready_meanwhile,
    worker_threads_set_the_runtime,
);

fn listen_args(backing: &Backing) -> Vec<String> {
    let mut args = vec!["--listen".to_string(), "127.0.0.1:0".to_string()];
    args.extend(backing.flags());
    args
}

async fn first_start_prints_the_admin_key_once(kind: Backend) {
    let backing = Backing::new(kind).await;
    let first = Process::spawn(&listen_args(&backing), &[]).await;
    let key = first.printed_key().unwrap_or_else(|| {
        panic!(
            "first start printed no `admin API key (shown once): <key>` line; stdout was {:?}",
            first.preamble
        )
    });
    assert!(!key.is_empty());
    let admin = first.api(Some(&key));
    admin.get("/v1/queues").await.ok(200);
    // It is an admin key of organization `default`.
    admin.create_queue("made-by-printed-key").await;
    admin
        .post("/v1/organizations", json!({"name": harness::unique("org")}))
        .await
        .ok(201);
    first.kill().await;

    let second = Process::spawn(&listen_args(&backing), &[]).await;
    assert_eq!(
        second.printed_key(),
        None,
        "second start printed a key again: {:?}",
        second.preamble
    );
    assert!(
        !second.preamble.iter().any(|l| l.contains(&key)),
        "second start printed the old key: {:?}",
        second.preamble
    );
    let admin = second.api(Some(&key));
    admin.get_queue("made-by-printed-key").await;
}

async fn bootstrap_key_is_ignored_once_the_store_holds_a_key(kind: Backend) {
    let backing = Backing::new(kind).await;
    let first_key = fresh_key();
    let first = Server::start_on(backing, first_key.clone(), &[]).await;
    first.create_queue("kept").await;
    let (backing, _) = first.kill().await;

    let other_key = fresh_key();
    let second = Server::start_on(backing, other_key.clone(), &[]).await;
    second
        .with_key(&other_key)
        .get("/v1/queues")
        .await
        .problem(401, "UNAUTHENTICATED");
    second.with_key(&first_key).get_queue("kept").await;
}

async fn environment_twins_configure_the_server(kind: Backend) {
    let backing = Backing::new(kind).await;
    let key = fresh_key();
    let envs = vec![
        ("IDEM_LISTEN".to_string(), "127.0.0.1:0".to_string()),
        backing.env(),
        ("IDEM_BOOTSTRAP_KEY".to_string(), key.clone()),
    ];
    let by_env = Process::spawn(&[], &envs).await;
    assert_eq!(
        by_env.printed_key(),
        None,
        "IDEM_BOOTSTRAP_KEY was given, yet a key was printed"
    );
    let admin = by_env.api(Some(&key));
    admin.create_queue("set-up-by-env").await;
    admin.create_task("set-up-by-env", task("t1")).await;
    by_env.kill().await;

    if let Backing::Sqlite(dir) = &backing {
        let entries = std::fs::read_dir(dir.path()).expect("data dir").count();
        assert!(
            entries > 0,
            "IDEM_DATA_DIR was not used: the directory is empty"
        );
    }
    // The same store, now given by flag, holds what the env-configured
    // server wrote, and the key it was bootstrapped with.
    let by_flag = Process::spawn(&listen_args(&backing), &[]).await;
    let admin = by_flag.api(Some(&key));
    admin.get_queue("set-up-by-env").await;
    admin.get_task("set-up-by-env", "t1").await;
}

/// `--worker-threads` and its twin set the runtime's worker threads (as
/// the runtime counts them), a server of one serves, and none is refused
/// by name before anything starts.
async fn worker_threads_set_the_runtime(kind: Backend) {
    let s = Server::start_with(kind, &["--worker-threads", "3"]).await;
    assert!(
        logged(|| s.stderr(), "worker_threads=3").await,
        "{}",
        s.stderr()
    );

    let backing = Backing::new(kind).await;
    let key = fresh_key();
    let mut args = listen_args(&backing);
    args.extend(["--bootstrap-key".to_string(), key.clone()]);
    let one = Process::spawn(&args, &[("IDEM_WORKER_THREADS".into(), "1".into())]).await;
    assert!(
        logged(|| one.stderr(), "worker_threads=1").await,
        "{}",
        one.stderr()
    );
    let admin = one.api(Some(&key));
    admin.create_queue("q").await;
    admin.create_task("q", task("t1")).await;
    admin.get_task("q", "t1").await;

    let refused = harness::command()
        .args(["serve", "--worker-threads", "0"])
        .output()
        .await
        .expect("run idem");
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("--worker-threads"), "{err}");
}

/// The server turns transparent huge pages off for itself: with them its
/// allocator's memory given back faulted in again as 2 MiB pages, each
/// zeroed by the kernel (docs/BENCHMARKS.md). The kernel says so in the
/// process's status (Linux 5.0 and later). Whatever the store: one run.
#[tokio::test]
async fn the_server_runs_without_transparent_huge_pages() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let s = Server::start(Backend::Sqlite).await;
    s.create_queue("q").await;
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).unwrap();
    let thp = status
        .lines()
        .find_map(|l| l.strip_prefix("THP_enabled:"))
        .map(str::trim);
    assert_eq!(thp, Some("0"), "{status}");
}

/// Whether `stderr` shows `what` within a few seconds: the pipe is read
/// beside the process.
async fn logged(stderr: impl Fn() -> String, what: &str) -> bool {
    for _ in 0..100 {
        if stderr().contains(what) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

async fn max_body_bytes_flag_sets_the_limit(kind: Backend) {
    let s = Server::start_with(kind, &["--max-body-bytes", "2000"]).await;
    check_small_limit(&s).await;
}

async fn max_body_bytes_environment_twin_sets_the_limit(kind: Backend) {
    let backing = Backing::new(kind).await;
    let key = fresh_key();
    let mut args = listen_args(&backing);
    args.extend(["--bootstrap-key".to_string(), key.clone()]);
    let process = Process::spawn(&args, &[("IDEM_MAX_BODY_BYTES".into(), "2000".into())]).await;
    let admin = process.api(Some(&key));
    admin.create_queue("q").await;
    let mut body = task("too-big");
    body["target"]["body"] = json!("x".repeat(3000));
    admin
        .post("/v1/queues/q/tasks", body)
        .await
        .problem(413, "PAYLOAD_TOO_LARGE");
    let admin = process.api(Some(&key));
    admin
        .get("/v1/queues/q/tasks/too-big")
        .await
        .problem(404, "NOT_FOUND");
    let mut body = task("fits");
    body["target"]["body"] = json!("x".repeat(1000));
    admin.create_task("q", body).await;
}

async fn check_small_limit(s: &Server) {
    s.create_queue("q").await;
    let mut body = task("too-big");
    body["target"]["body"] = json!("x".repeat(3000));
    s.post("/v1/queues/q/tasks", body)
        .await
        .problem(413, "PAYLOAD_TOO_LARGE");
    let s = s.fresh_admin();
    s.get("/v1/queues/q/tasks/too-big")
        .await
        .problem(404, "NOT_FOUND");
    let mut body = task("fits");
    body["target"]["body"] = json!("x".repeat(1000));
    s.create_task("q", body).await;
}

/// A 201 means the task is durable: a SIGKILL right after it loses nothing.
async fn kill_after_201_loses_nothing(kind: Backend) {
    let s = Server::start(kind).await;
    s.create_paused_queue("durable").await;
    let mut created = Vec::new();
    for i in 0..25 {
        let mut body = task(&format!("task-{i}"));
        body["target"]["json"] = json!({ "n": i });
        created.push(s.create_task("durable", body).await);
    }
    let (backing, key) = s.kill().await;

    let s = Server::start_on(backing, key, &[]).await;
    for before in &created {
        let id = before["task_id"].as_str().expect("task_id");
        let after = s.get_task("durable", id).await;
        for field in ["task_id", "queue", "state", "target"] {
            assert_eq!(
                after[field], before[field],
                "task {id}: {field} changed across the restart"
            );
        }
        assert_eq!(
            harness::parse_time(&after["created_at"]) / 1000,
            harness::parse_time(&before["created_at"]) / 1000,
            "task {id}: created_at changed across the restart"
        );
    }
    assert_eq!(s.all_tasks("durable", "").await.len(), created.len());
}

/// The PostgreSQL store going away turns API calls and `/readyz` into 503
/// `UNAVAILABLE` with `Retry-After` (API.md §10), while `/healthz` (process up)
/// stays 200; the server recovers by itself when the store comes back.
/// PostgreSQL only: an embedded SQLite file cannot be made unreachable.
#[tokio::test]
async fn postgres_outage_is_unavailable_then_recovers() {
    let s = Server::start(Backend::Postgres).await;
    s.create_queue("q").await;
    s.anonymous().get("/readyz").await.ok(200);
    let Backing::Postgres(db) = s.backing() else {
        unreachable!()
    };
    let name = db
        .url
        .rsplit('/')
        .next()
        .and_then(|tail| tail.split('?').next())
        .expect("database name")
        .to_string();
    let (admin, conn) = tokio_postgres::connect(&idem_testkit::admin_url(), tokio_postgres::NoTls)
        .await
        .expect("admin connection");
    tokio::spawn(conn);
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS false;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}';"
        ))
        .await
        .expect("cut the store off");

    let mut outage = Vec::new();
    for _ in 0..2 {
        outage.push(s.anonymous().get("/readyz").await);
        outage.push(s.get("/v1/queues/q").await);
        outage.push(s.post("/v1/queues/q/tasks", task("during-outage")).await);
    }
    s.anonymous().get("/healthz").await.ok(200);

    admin
        .batch_execute(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"))
        .await
        .expect("restore the store");
    for resp in &outage {
        resp.problem(503, "UNAVAILABLE");
        assert!(
            resp.header("retry-after").is_some(),
            "{}: 503 without Retry-After",
            resp.what
        );
    }

    let mut recovered = false;
    for _ in 0..50 {
        if s.anonymous().get("/readyz").await.status == 200 {
            recovered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(recovered, "/readyz did not recover within 5 s");
    s.get_queue("q").await;
    s.create_task("q", task("after-outage")).await;
}

/// API.md §1: API keys are stored hashed. Neither the bootstrap key nor a
/// created key may appear in plain text anywhere in the store.
async fn api_keys_are_stored_hashed(kind: Backend) {
    let s = Server::start(kind).await;
    s.post(
        "/v1/principals",
        json!({"name": "svc", "kind": "service", "role": "writer"}),
    )
    .await
    .ok(201);
    let created = s
        .post_empty("/v1/principals/svc/keys")
        .await
        .ok(201)
        .json
        .clone();
    let key = created["key"].as_str().expect("key").to_string();
    s.with_key(&key).get("/v1/queues").await.ok(200);
    let org_key = s
        .post("/v1/organizations", json!({"name": harness::unique("org")}))
        .await
        .ok(201)
        .json["admin_key"]
        .as_str()
        .expect("admin_key")
        .to_string();
    let (backing, bootstrap) = s.kill().await;
    let secrets = [key, bootstrap, org_key];

    match &backing {
        Backing::Sqlite(dir) => {
            let mut files = vec![dir.path().to_path_buf()];
            while let Some(path) = files.pop() {
                if path.is_dir() {
                    for entry in std::fs::read_dir(&path).expect("read dir") {
                        files.push(entry.expect("entry").path());
                    }
                    continue;
                }
                let bytes = std::fs::read(&path).expect("read store file");
                for secret in &secrets {
                    assert!(
                        !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                        "an API key is stored in plain text in {}",
                        path.display()
                    );
                }
            }
        }
        Backing::Postgres(db) => {
            let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .expect("connect to the test database");
            tokio::spawn(conn);
            let tables = client
                .query(
                    "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)
                     FROM information_schema.tables
                     WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
                       AND table_type = 'BASE TABLE'",
                    &[],
                )
                .await
                .expect("list tables");
            assert!(!tables.is_empty(), "no tables in the store");
            for row in tables {
                let table: String = row.get(0);
                let rows = client
                    .query(&format!("SELECT t::text FROM {table} t"), &[])
                    .await
                    .expect("read table");
                for r in rows {
                    let text: String = r.get(0);
                    for secret in &secrets {
                        assert!(
                            !text.contains(secret.as_str()),
                            "an API key is stored in plain text in {table}"
                        );
                    }
                }
            }
        }
    }
}

/// A dispatcher that panics (three times, by the test hook) is restarted
/// with backoff: meanwhile `/readyz` answers 503 naming it, the restarts
/// are counted, and once it runs the node is ready and delivers.
async fn a_dispatcher_that_panics_is_restarted_and_not_ready_meanwhile(kind: Backend) {
    use crate::harness::target::Target;
    use std::time::{Duration, Instant};
    let target = Target::start().await;
    let s = Server::start_with(kind, &["--test-dispatcher-panics", "3"]).await;
    // Down from the first panic for 0.5 + 1 + 2 s of backoff.
    let deadline = Instant::now() + Duration::from_secs(3);
    let not_ready = loop {
        let r = s.anonymous().get("/readyz").await;
        if r.status == 503 {
            break r;
        }
        assert!(Instant::now() < deadline, "/readyz never answered 503");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(not_ready.json["type"], "UNAVAILABLE", "{}", not_ready.text);
    assert_eq!(not_ready.json["extensions"]["down"], json!(["dispatcher"]));
    assert!(not_ready.headers.get("retry-after").is_some());
    s.create_queue("q").await;
    s.create_task(
        "q",
        json!({"task_id": "t", "target": {"url": target.url("/ok")}}),
    )
    .await;
    target.wait_for("t", 1, Duration::from_secs(20)).await;
    s.anonymous().get("/readyz").await.ok(200);
    let metrics = s.anonymous().get("/metrics").await;
    assert!(
        metrics
            .text
            .contains("idem_background_restarts_total{task=\"dispatcher\"} 3"),
        "{}",
        metrics.text
    );
    assert!(
        s.stderr().contains("background task panicked"),
        "{}",
        s.stderr()
    );
}

/// Raises a serialization failure on every new queue while `conflicts`
/// is below `times`: the sequence counts every try, rolled back or not.
async fn conflict_on_queue_inserts(db_url: &str, times: i64) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(db_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute(&format!(
            "CREATE SEQUENCE conflicts; \
             CREATE FUNCTION conflict() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
             IF nextval('conflicts') <= {times} THEN \
             RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; \
             END IF; RETURN NEW; END $$; \
             CREATE TRIGGER conflict BEFORE INSERT ON queues \
             FOR EACH ROW EXECUTE FUNCTION conflict();"
        ))
        .await
        .unwrap();
    client
}

/// A transaction PostgreSQL aborts for a conflict runs again in place: a
/// create that meets two serialization failures answers 201 to its first
/// request, having run three times, and creates one queue.
#[tokio::test]
async fn a_transaction_aborted_by_a_conflict_runs_again_in_place() {
    use reqwest::Method;
    let s = Server::start(Backend::Postgres).await;
    let Backing::Postgres(db) = s.backing() else {
        unreachable!()
    };
    let client = conflict_on_queue_inserts(&db.url, 2).await;
    let created = s
        .request(Method::POST, "/v1/queues")
        .header("idempotency-key", "conflicted-create")
        .json(&json!({"name": "contended"}))
        .send()
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let tries: i64 = client
        .query_one("SELECT last_value FROM conflicts", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tries, 3);
    s.get("/v1/queues/contended").await.ok(200);
}

/// A transaction PostgreSQL keeps aborting for a conflict (here a
/// serialization failure a trigger raises on every new queue) answers 503 `UNAVAILABLE`
/// with `Retry-After`, writes nothing, and leaves the Idempotency-Key free:
/// the same request, retried once the conflict is gone, creates the queue.
#[tokio::test]
async fn a_serialization_failure_answers_503_with_retry_after_and_the_retry_succeeds() {
    use reqwest::Method;
    let s = Server::start(Backend::Postgres).await;
    let Backing::Postgres(db) = s.backing() else {
        unreachable!()
    };
    let client = conflict_on_queue_inserts(&db.url, i64::MAX).await;
    let create = || {
        s.request(Method::POST, "/v1/queues")
            .header("idempotency-key", "conflicted-create")
            .json(&json!({"name": "contended"}))
            .send()
    };
    let refused = create().await;
    assert_eq!(refused.status, 503, "{}", refused.text);
    assert_eq!(refused.json["type"], "UNAVAILABLE");
    assert!(refused.json["request_id"].is_string(), "{}", refused.text);
    assert_eq!(refused.header("retry-after"), Some("1"));
    let tries: i64 = client
        .query_one("SELECT last_value FROM conflicts", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tries, 4, "runs in place before answering 503");
    s.get("/v1/queues/contended").await.ok(404);
    client
        .batch_execute("DROP TRIGGER conflict ON queues")
        .await
        .unwrap();
    create().await.ok(201);
    s.get("/v1/queues/contended").await.ok(200);
}

/// The completion scripts and the man page come from the flags' own
/// definitions: every subcommand and a recent flag are in them.
#[tokio::test]
async fn completions_and_the_man_page_cover_every_command() {
    use crate::harness::{Out, command};
    for (shell, marker) in [
        ("bash", "_idem()"),
        ("zsh", "#compdef idem"),
        ("fish", "complete -c idem"),
    ] {
        let mut cmd = command();
        cmd.args(["completions", shell]);
        let out = Out::of(cmd).await;
        assert_eq!(out.code, 0, "{out:?}");
        assert!(
            out.stdout.contains(marker),
            "{shell}: {}",
            &out.stdout[..200]
        );
        for word in ["serve", "migrate", "max-connections-per-ip", "no-migrate"] {
            assert!(out.stdout.contains(word), "{shell} lacks {word}");
        }
    }
    let mut cmd = command();
    cmd.arg("man");
    let man = Out::of(cmd).await;
    assert_eq!(man.code, 0, "{man:?}");
    assert!(
        man.stdout.starts_with(".ie") || man.stdout.contains(".TH idem"),
        "{}",
        &man.stdout[..200]
    );
    for section in ["IDEM SERVE", "IDEM MIGRATE", "IDEM PROXY", "IDEM TASK"] {
        assert!(man.stdout.contains(section), "the man page lacks {section}");
    }
    assert!(man.stdout.contains("IDEM_MAX_CONNECTIONS_PER_IP"));
    let mut cmd = command();
    cmd.args(["completions", "powershell"]);
    assert_eq!(
        Out::of(cmd).await.code,
        2,
        "an unknown shell is a usage error"
    );
}
