//! `idem job …` against a real `idem serve` on each store: tables, `--json`,
//! problem lines and exit codes.

use crate::harness;
use crate::harness::Server;
use serde_json::{Value, json};

idem_testkit::store_tests!(
    Server::start;
    create_takes_every_setting,
    create_conflicts_and_replays,
    ls_get_and_rm,
    pause_resume_run_and_runs,
    preview_prints_the_instants,
    mistakes_get_their_exit_codes,
);

/// Runs nowhere: port 9 (discard) refuses connections on the loopback.
const HOOK: &str = "http://127.0.0.1:9/hook";
/// Fires once a year: nothing scheduled fires during a test.
const YEARLY: &str = "0 0 1 1 *";

/// Creates a yearly job on HOOK and returns its JSON.
async fn yearly_job(s: &Server, name: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "job",
        "create",
        name,
        "--schedule",
        YEARLY,
        "--url",
        HOOK,
        "--json",
    ];
    args.extend_from_slice(extra);
    s.idem(&args).await.json()
}

/// The names of a page of jobs, sorted.
fn names(list: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {list}"))
        .iter()
        .map(|j| j["name"].as_str().expect("a name"))
        .collect();
    names.sort_unstable();
    names
}

async fn create_takes_every_setting(s: Server) {
    let out = s
        .idem(&[
            "job",
            "create",
            "nightly",
            "--schedule",
            "0 3 * * *",
            "--time-zone",
            "Europe/Berlin",
            "--url",
            HOOK,
            "--method",
            "PUT",
            "--header",
            "X-Trace: t-1",
            "-H",
            "X-Other:2",
            "--body-json",
            r#"{"amount": 1.50}"#,
            "--attempt-deadline",
            "45s",
            "--retry-count",
            "2",
            "--min-backoff",
            "250ms",
            "--max-backoff",
            "1m",
            "--max-doublings",
            "3",
            "--max-retry-duration",
            "1h",
            "--catch-up",
            "all",
            "--header-style",
            "cloud_scheduler",
            "--paused",
            "--json",
        ])
        .await
        .ok();
    // The JSON body is printed as the API sent it, numbers as spelled.
    assert!(
        out.stdout.contains(r#""json":{"amount": 1.50}"#),
        "{}",
        out.stdout
    );
    let job: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(job["name"], "nightly");
    assert_eq!(job["schedule"], "0 3 * * *");
    assert_eq!(job["time_zone"], "Europe/Berlin");
    assert_eq!(job["state"], "paused");
    assert_eq!(job["target"]["url"], HOOK);
    assert_eq!(job["target"]["method"], "PUT");
    assert_eq!(job["target"]["headers"]["X-Trace"], "t-1");
    assert_eq!(job["target"]["headers"]["X-Other"], "2");
    assert_eq!(job["attempt_deadline_s"], 45);
    assert_eq!(
        job["retry_config"],
        json!({"retry_count": 2, "max_retry_duration_s": 3600, "min_backoff_ms": 250,
               "max_backoff_ms": 60000, "max_doublings": 3})
    );
    assert_eq!(job["catch_up"], "all");
    assert_eq!(job["header_style"], "cloud_scheduler");

    // Unset settings take the server's defaults; the table shows them.
    let table = s
        .idem(&[
            "job",
            "create",
            "hourly",
            "--schedule",
            "@hourly",
            "--url",
            HOOK,
            "--body",
            "hello",
            "--paused",
        ])
        .await
        .ok();
    assert_eq!(table.field("name"), "hourly");
    assert_eq!(table.field("state"), "paused");
    assert_eq!(table.field("schedule"), "@hourly");
    assert_eq!(table.field("time zone"), "UTC");
    assert_eq!(table.field("target"), format!("POST {HOOK}"));
    assert_eq!(table.field("body"), "5 bytes of text");
    assert_eq!(table.field("attempt deadline"), "180s");
    assert!(
        table.field("retries").starts_with("0 retries, "),
        "{}",
        table.stdout
    );
    assert_eq!(table.field("catch up"), "latest");
    assert_eq!(table.field("header style"), "idem");

    // A body file reaches the job as bytes, its Content-Type as given.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("doc.bin");
    std::fs::write(&file, [0u8, 1, 2, 255, 254, 0]).unwrap();
    let upload = yearly_job(
        &s,
        "upload",
        &[
            "--body-file",
            file.to_str().unwrap(),
            "--header",
            "Content-Type: application/pdf",
            "--paused",
        ],
    )
    .await;
    assert_eq!(upload["target"]["body_base64"], "AAEC//4A");
    assert_eq!(
        upload["target"]["headers"]["Content-Type"],
        "application/pdf"
    );
}

async fn create_conflicts_and_replays(s: Server) {
    yearly_job(&s, "once", &["--paused"]).await;
    let args = [
        "job",
        "create",
        "once",
        "--schedule",
        YEARLY,
        "--url",
        HOOK,
        "--paused",
    ];
    let dup = s.idem(&args).await.fails(5, "JOB_ALREADY_EXISTS (409): ");
    assert_eq!(dup.stderr.lines().count(), 1, "{}", dup.stderr);

    // The same key twice: the second run replays the first (exit 0, noted
    // on stderr) instead of being refused for the taken name.
    let keyed = [
        "job",
        "create",
        "keyed",
        "--schedule",
        YEARLY,
        "--url",
        HOOK,
        "--paused",
        "--idempotency-key",
        "cli-job-key-1",
        "--json",
    ];
    let original = s.idem(&keyed).await.json();
    let again = s.idem(&keyed).await.ok();
    assert!(again.stderr.contains("note: replayed"), "{}", again.stderr);
    let replayed: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(replayed["name"], "keyed");
    assert_eq!(replayed["created_at"], original["created_at"]);
    // The same key for a different request is refused, not replayed.
    let mut changed = keyed;
    changed[4] = "0 0 2 1 *";
    s.idem(&changed)
        .await
        .fails(3, "IDEMPOTENCY_KEY_MISMATCH (422): ");
    let all = s.idem(&["job", "ls", "--json"]).await.json();
    assert_eq!(names(&all), ["keyed", "once"]);
}

async fn ls_get_and_rm(s: Server) {
    yearly_job(&s, "alpha", &[]).await;
    yearly_job(&s, "beta", &["--paused"]).await;

    let table = s.idem(&["job", "ls"]).await.ok();
    let mut lines = table.stdout.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("STATE") && header.contains("NEXT RUN"),
        "{header}"
    );
    let mut rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    rows.sort();
    assert_eq!(rows.len(), 2, "{}", table.stdout);
    assert_eq!(rows[0][..2], ["alpha", "enabled"]);
    assert_eq!(rows[1][..2], ["beta", "paused"]);

    let listed = s.idem(&["job", "ls", "--json"]).await.json();
    assert_eq!(names(&listed), ["alpha", "beta"]);
    assert_eq!(listed["next_page_token"], Value::Null);
    let page = s
        .idem(&["job", "ls", "--limit", "1", "--json"])
        .await
        .json();
    assert_eq!(names(&page).len(), 1);
    let token = page["next_page_token"].as_str().expect("a second page");
    let next = s
        .idem(&["job", "ls", "--limit", "1", "--page-token", token, "--json"])
        .await
        .json();
    let mut both = [names(&page), names(&next)].concat();
    both.sort_unstable();
    assert_eq!(both, ["alpha", "beta"], "pages cover the list once");
    let more = s.idem(&["job", "ls", "--limit", "1"]).await.ok();
    assert!(
        more.stderr.contains("more: pass --page-token "),
        "{}",
        more.stderr
    );

    let got = s.idem(&["job", "get", "alpha"]).await.ok();
    assert_eq!(got.field("name"), "alpha");
    assert_eq!(got.field("state"), "enabled");
    assert_eq!(got.field("schedule"), YEARLY);
    assert_ne!(got.field("next run"), "-", "{}", got.stdout);
    assert_eq!(got.field("last run"), "-");
    let got = s.idem(&["job", "get", "alpha", "--json"]).await.json();
    assert_eq!(got["name"], "alpha");
    assert!(got["next_run_time"].is_string(), "{got}");
    assert_eq!(got["last_run"], Value::Null);

    let removed = s.idem(&["job", "rm", "beta"]).await.ok();
    assert_eq!(removed.stdout.trim(), "deleted job beta");
    let quiet = s.idem(&["job", "rm", "alpha", "--json"]).await.ok();
    assert_eq!(quiet.stdout, "", "--json prints nothing for a 204");
    s.idem(&["job", "get", "beta"])
        .await
        .fails(4, "NOT_FOUND (404): ");
    s.idem(&["job", "rm", "beta"])
        .await
        .fails(4, "NOT_FOUND (404): ");
    let empty = s.idem(&["job", "ls", "--json"]).await.json();
    assert_eq!(empty["items"], json!([]));
}

async fn pause_resume_run_and_runs(s: Server) {
    yearly_job(&s, "report", &[]).await;

    let paused = s.idem(&["job", "pause", "report", "--json"]).await.json();
    assert_eq!(paused["state"], "paused");
    assert_eq!(
        s.idem(&["job", "get", "report"]).await.ok().field("state"),
        "paused"
    );
    let resumed = s.idem(&["job", "resume", "report"]).await.ok();
    assert_eq!(resumed.field("state"), "enabled");
    assert_ne!(resumed.field("next run"), "-", "{}", resumed.stdout);

    // Two manual runs, each with an identity of its own.
    let first = s.idem(&["job", "run", "report", "--json"]).await.json();
    assert_eq!(first["job"], "report");
    assert_eq!(first["kind"], "manual");
    let run_id = first["run_id"].as_str().expect("a run ID");
    assert!(
        run_id.len() == 64
            && run_id
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "run_id is lowercase hex SHA-256: {run_id}"
    );
    assert!(first["schedule_time"].is_string(), "{first}");
    let second = s.idem(&["job", "run", "report"]).await.ok();
    assert_eq!(second.field("kind"), "manual");
    assert_eq!(second.field("job"), "report");
    let second_id = second.field("run");
    assert_ne!(second_id, run_id);

    let runs = s.idem(&["job", "runs", "report", "--json"]).await.json();
    let items = runs["items"].as_array().expect("items");
    let ids: Vec<&str> = items
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [second_id.as_str(), run_id], "newest first: {runs}");
    assert!(items.iter().all(|r| r["kind"] == "manual"), "{runs}");

    let table = s.idem(&["job", "runs", "report"]).await.ok();
    let mut lines = table.stdout.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("RUN ID") && header.contains("KIND") && header.contains("STATE"),
        "{header}"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 2, "{}", table.stdout);
    assert_eq!(rows[0][..2], [second_id.as_str(), "manual"]);
    assert_eq!(rows[1][..2], [run_id, "manual"]);

    let page = s
        .idem(&["job", "runs", "report", "--limit", "1", "--json"])
        .await
        .json();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert!(page["next_page_token"].is_string(), "{page}");

    for action in ["get", "pause", "resume", "run", "runs", "rm"] {
        s.idem(&["job", action, "nope"])
            .await
            .fails(4, "NOT_FOUND (404): ");
    }
}

async fn preview_prints_the_instants(s: Server) {
    // Europe/Berlin moves to summer time on 2026-03-29: noon is 11:00Z
    // before and 10:00Z after.
    let args = [
        "job",
        "preview",
        "--schedule",
        "0 12 * * *",
        "--time-zone",
        "Europe/Berlin",
        "--after",
        "2026-03-27T00:00:00Z",
        "--count",
        "3",
    ];
    let want = [
        "2026-03-27T11:00:00Z",
        "2026-03-28T11:00:00Z",
        "2026-03-29T10:00:00Z",
    ];
    let table = s.idem(&args).await.ok();
    assert_eq!(table.stdout.lines().collect::<Vec<_>>(), want);
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let json = s.idem(&json_args).await.json();
    let times: Vec<i128> = json["times"]
        .as_array()
        .expect("times")
        .iter()
        .map(harness::parse_time)
        .collect();
    let want: Vec<i128> = want
        .iter()
        .map(|t| harness::parse_time(&json!(t)))
        .collect();
    assert_eq!(times, want);

    // Ten instants after now by default.
    let default = s
        .idem(&["job", "preview", "--schedule", "*/5 * * * *"])
        .await
        .ok();
    assert_eq!(default.stdout.lines().count(), 10, "{}", default.stdout);

    // Readers may preview.
    let reader = s.key_with_role("reader").await;
    s.idem_as(&reader, &["job", "preview", "--schedule", "@daily"])
        .await
        .ok();
}

async fn mistakes_get_their_exit_codes(s: Server) {
    let create = |name: &'static str, schedule: &'static str| {
        vec![
            "job",
            "create",
            name,
            "--schedule",
            schedule,
            "--url",
            HOOK,
            "--paused",
        ]
    };
    // Refused by the server: 3.
    let bad = s
        .idem(&create("bad", "61 * * * *"))
        .await
        .fails(3, "INVALID_ARGUMENT (400): ");
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    let mut zone = create("zone", YEARLY);
    zone.extend(["--time-zone", "Mars/Olympus"]);
    s.idem(&zone).await.fails(3, "INVALID_ARGUMENT (400): ");
    let mut deadline = create("deadline", YEARLY);
    deadline.extend(["--attempt-deadline", "31m"]);
    s.idem(&deadline).await.fails(3, "INVALID_ARGUMENT (400): ");
    s.idem(&["job", "preview", "--schedule", "not cron"])
        .await
        .fails(3, "INVALID_ARGUMENT (400): ");
    s.idem(&["job", "preview", "--schedule", "@daily", "--count", "1001"])
        .await
        .fails(3, "INVALID_ARGUMENT (400): ");

    // Caught before sending: 2.
    for extra in [
        ["--catch-up", "sometimes"],
        ["--header-style", "cloud-scheduler"],
        ["--attempt-deadline", "soon"],
    ] {
        let mut args = create("usage", YEARLY);
        args.extend(extra);
        s.idem(&args).await.fails(2, "");
    }
    let mut fraction = create("usage", YEARLY);
    fraction.extend(["--attempt-deadline", "1500ms"]);
    s.idem(&fraction)
        .await
        .fails(2, "--attempt-deadline must be whole seconds");
    let mut two_bodies = create("usage", YEARLY);
    two_bodies.extend(["--body", "a", "--body-json", "1"]);
    s.idem(&two_bodies).await.fails(2, "");
    s.idem(&["job", "create", "usage", "--url", HOOK])
        .await
        .fails(2, "");

    // A reader may look but not create: 6.
    let reader = s.key_with_role("reader").await;
    s.idem_as(&reader, &create("denied", YEARLY))
        .await
        .fails(6, "PERMISSION_DENIED (403): ");
    s.idem_as(&reader, &["job", "ls", "--json"]).await.json();

    let none = s.idem(&["job", "ls", "--json"]).await.json();
    assert_eq!(none["items"], json!([]), "nothing was created");
}
