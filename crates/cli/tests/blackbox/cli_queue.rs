//! `idem queue …` against a real `idem serve`: tables, `--json`, problem
//! lines and exit codes.

use crate::harness::{Backend, Out, Server, command, unique};

#[tokio::test]
async fn queue_subcommands() {
    let s = Server::start(Backend::Sqlite).await;
    let name = unique("q");
    let created = s
        .idem(&[
            "queue",
            "create",
            &name,
            "--max-attempts",
            "7",
            "--min-backoff",
            "250ms",
            "--dispatch-deadline",
            "2m",
            "--dedup-window",
            "1h",
            "--max-dispatches-per-second",
            "20",
            "--json",
        ])
        .await
        .json();
    assert_eq!(created["name"], name.as_str());
    assert_eq!(created["retry_config"]["max_attempts"], 7);
    assert_eq!(created["retry_config"]["min_backoff_ms"], 250);
    assert_eq!(created["dispatch_deadline_s"], 120);
    assert_eq!(created["dedup_window_s"], 3600);
    assert_eq!(created["rate_limits"]["max_dispatches_per_second"], 20.0);

    let table = s.idem(&["queue", "ls"]).await.ok();
    let header = table.stdout.lines().next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("STATE"),
        "{header}"
    );
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with(&name))
        .unwrap_or_else(|| panic!("{name} not listed:\n{}", table.stdout));
    assert_eq!(row.split_whitespace().nth(1), Some("running"));
    let listed = s
        .idem(&["queue", "ls", "--json", "--limit", "1000"])
        .await
        .json();
    assert!(
        listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["name"] == name.as_str())
    );
    assert!(listed.get("next_page_token").is_some());

    let shown = s.idem(&["queue", "get", &name]).await.ok();
    assert_eq!(shown.field("name"), name);
    assert_eq!(shown.field("dispatch deadline"), "120s");
    assert_eq!(
        s.idem(&["queue", "pause", &name, "--json"]).await.json()["state"],
        "paused"
    );
    assert_eq!(
        s.idem(&["queue", "get", &name]).await.ok().field("state"),
        "paused"
    );
    assert_eq!(
        s.idem(&["queue", "resume", &name, "--json"]).await.json()["state"],
        "running"
    );

    for id in ["a", "b", "c"] {
        s.idem(&[
            "task",
            "create",
            &name,
            "--url",
            "http://127.0.0.1:9/hook",
            "--task-id",
            id,
            "--schedule-time",
            "+1h",
        ])
        .await
        .ok();
    }
    assert_eq!(
        s.idem(&["queue", "purge", &name, "--json"]).await.json()["cancelled"],
        3
    );
    let purged = s.idem(&["queue", "purge", &name]).await.ok();
    assert_eq!(
        purged.stdout.trim(),
        format!("cancelled 0 task(s) in queue {name}")
    );

    let removed = s.idem(&["queue", "rm", &name]).await.ok();
    assert_eq!(removed.stdout.trim(), format!("deleted queue {name}"));
    s.idem(&["queue", "get", &name])
        .await
        .fails(4, "NOT_FOUND (404): ");
}

#[tokio::test]
async fn problems_are_one_line_with_the_request_id_and_a_documented_exit_code() {
    let s = Server::start(Backend::Sqlite).await;
    let name = unique("q");
    s.idem(&["queue", "create", &name]).await.ok();
    let dup = s
        .idem(&["queue", "create", &name])
        .await
        .fails(5, "QUEUE_ALREADY_EXISTS (409): ");
    let line = dup.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.contains(&format!("queue '{name}' already exists")),
        "{line}"
    );
    assert!(
        line.ends_with(']') && line.contains(" [request "),
        "no request id: {line}"
    );
    assert!(dup.stdout.is_empty(), "nothing on stdout: {}", dup.stdout);

    s.idem(&["queue", "create", "bad name!"])
        .await
        .fails(3, "INVALID_ARGUMENT (400): ");
    s.idem(&["queue", "get", "missing"])
        .await
        .fails(4, "NOT_FOUND (404): ");
    s.idem_as("idem_wrong", &["queue", "ls"])
        .await
        .fails(6, "UNAUTHENTICATED (401): ");
    let reader = s
        .idem(&[
            "principal",
            "create",
            &unique("r"),
            "--role",
            "reader",
            "--json",
        ])
        .await
        .json();
    let key = s
        .idem(&["key", "create", reader["name"].as_str().unwrap(), "--json"])
        .await
        .json();
    s.idem_as(
        key["key"].as_str().unwrap(),
        &["queue", "create", &unique("q")],
    )
    .await
    .fails(6, "PERMISSION_DENIED (403): ");

    // Usage errors: clap's, and ours found after parsing.
    s.idem(&["queue", "create"]).await.fails(2, "");
    s.idem(&[
        "queue",
        "create",
        &unique("q"),
        "--dispatch-deadline",
        "1500ms",
    ])
    .await
    .fails(2, "--dispatch-deadline must be whole seconds");
}

#[tokio::test]
async fn url_and_key_come_from_flags_or_the_environment() {
    let s = Server::start(Backend::Sqlite).await;
    let name = unique("q");
    let mut cmd = command();
    cmd.args([
        "queue",
        "--url",
        s.base(),
        "create",
        &name,
        "--api-key",
        &s.admin_key,
    ]);
    Out::of(cmd).await.ok();
    // In `task create`, --url is the target; the server's comes first.
    let mut cmd = command();
    cmd.args([
        "task",
        "--url",
        s.base(),
        "--api-key",
        &s.admin_key,
        "create",
        &name,
    ])
    .args(["--url", "http://127.0.0.1:9/hook", "--json"]);
    let task: serde_json::Value = serde_json::from_str(&Out::of(cmd).await.ok().stdout).unwrap();
    assert_eq!(task["target"]["url"], "http://127.0.0.1:9/hook");
    // No server behind the default URL's port would be luck; use one that
    // surely has none.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = command();
    cmd.env("IDEM_URL", format!("http://127.0.0.1:{port}"))
        .env("IDEM_API_KEY", &s.admin_key)
        .args(["queue", "get", &name]);
    let out = Out::of(cmd).await.fails(7, "no answer after ");
    assert!(out.stderr.contains("attempt"), "{}", out.stderr);

    let mut cmd = command();
    cmd.env("IDEM_URL", "ftp://idem.example")
        .args(["queue", "ls"]);
    Out::of(cmd).await.fails(2, "invalid base URL");
}

#[tokio::test]
async fn help_documents_the_exit_codes() {
    let mut cmd = command();
    cmd.args(["queue", "--help"]);
    let out = Out::of(cmd).await.ok();
    for line in [
        "Exit codes:",
        "4  not found",
        "5  conflict",
        "7  unavailable",
    ] {
        assert!(
            out.stdout.contains(line),
            "{line:?} missing from\n{}",
            out.stdout
        );
    }
}
