//! `idem task …` against a real `idem serve`.

use crate::harness::{Backend, Server, unique};

const HOOK: &str = "http://127.0.0.1:9/hook";

async fn with_queue() -> (Server, String) {
    let s = Server::start(Backend::Sqlite).await;
    let q = unique("q");
    s.idem(&["queue", "create", &q]).await.ok();
    (s, q)
}

#[tokio::test]
async fn create_sends_each_body_form() {
    let (s, q) = with_queue().await;
    let text = s
        .idem(&[
            "task",
            "create",
            &q,
            "--url",
            HOOK,
            "--method",
            "PUT",
            "--header",
            "X-Trace: t-1",
            "-H",
            "X-Other:2",
            "--body",
            "hello",
            "--task-id",
            "text-1",
            "--schedule-time",
            "2099-01-01T00:00:00Z",
            "--dispatch-deadline",
            "45s",
            "--max-attempts",
            "3",
            "--json",
        ])
        .await
        .json();
    assert_eq!(text["task_id"], "text-1");
    assert_eq!(text["state"], "scheduled");
    assert_eq!(text["schedule_time"], "2099-01-01T00:00:00Z");
    assert_eq!(text["dispatch_deadline_s"], 45);
    assert_eq!(text["retry_config"]["max_attempts"], 3);
    assert_eq!(text["target"]["method"], "PUT");
    assert_eq!(text["target"]["body"], "hello");
    assert_eq!(text["target"]["headers"]["X-Trace"], "t-1");
    assert_eq!(text["target"]["headers"]["X-Other"], "2");

    // The JSON body is printed as the API sent it, numbers as spelled.
    let json = s
        .idem(&[
            "task",
            "create",
            &q,
            "--url",
            HOOK,
            "--body-json",
            r#"{"amount": 1.50}"#,
            "--task-id",
            "json-1",
            "--schedule-time",
            "+1h",
            "--json",
        ])
        .await
        .ok();
    assert!(
        json.stdout.contains(r#""json":{"amount": 1.50}"#),
        "{}",
        json.stdout
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("doc.bin");
    std::fs::write(&file, [0u8, 1, 2, 255, 254, 0]).unwrap();
    let upload = s
        .idem(&[
            "task",
            "create",
            &q,
            "--url",
            HOOK,
            "--body-file",
            file.to_str().unwrap(),
            "--header",
            "Content-Type: application/pdf",
            "--task-id",
            "file-1",
            "--schedule-time",
            "+1h",
            "--json",
        ])
        .await
        .json();
    assert_eq!(upload["target"]["body_base64"], "AAEC//4A");
    assert_eq!(
        upload["target"]["headers"]["Content-Type"],
        "application/pdf"
    );

    s.idem(&[
        "task",
        "create",
        &q,
        "--url",
        HOOK,
        "--body",
        "a",
        "--body-json",
        "1",
    ])
    .await
    .fails(2, "");
    s.idem(&["task", "create", &q, "--url", HOOK, "--body-json", "{nope"])
        .await
        .fails(2, "--body-json");
    s.idem(&["task", "create", &q, "--url", HOOK, "--header", "no colon"])
        .await
        .fails(2, "");
    s.idem(&["task", "create", &q, "--url", "ftp://x/"])
        .await
        .fails(3, "INVALID_ARGUMENT (400): ");
}

#[tokio::test]
async fn a_taken_task_id_is_a_conflict_and_a_repeated_key_never_makes_a_second_task() {
    let (s, q) = with_queue().await;
    let args = [
        "task",
        "create",
        &q,
        "--url",
        HOOK,
        "--task-id",
        "once",
        "--schedule-time",
        "+1h",
    ];
    let first = s.idem(&args).await.ok();
    assert_eq!(first.field("task"), "once");
    assert_eq!(first.field("state"), "scheduled");
    let dup = s.idem(&args).await.fails(5, "TASK_ALREADY_EXISTS (409): ");
    assert!(dup.stderr.contains("task 'once' exists"), "{}", dup.stderr);

    // Same key twice: the second run replays the first (exit 0, noted on
    // stderr) instead of being refused for the taken ID. The schedule time
    // is absolute: a relative one would make the two requests differ.
    let keyed = [
        "task",
        "create",
        &q,
        "--url",
        HOOK,
        "--task-id",
        "keyed",
        "--schedule-time",
        "2099-01-01T00:00:00Z",
        "--idempotency-key",
        "cli-key-1",
        "--json",
    ];
    let original = s.idem(&keyed).await.json();
    let again = s.idem(&keyed).await.ok();
    assert!(again.stderr.contains("note: replayed"), "{}", again.stderr);
    let replayed: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(replayed["task_id"], "keyed");
    assert_eq!(replayed["created_at"], original["created_at"]);
    // The same key for a different request is refused, not replayed.
    let mut changed = keyed;
    changed[8] = "2099-01-02T00:00:00Z";
    s.idem(&changed)
        .await
        .fails(3, "IDEMPOTENCY_KEY_MISMATCH (422): ");
    let all = s.idem(&["task", "ls", &q, "--json"]).await.json();
    let ids: Vec<&str> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.iter().filter(|id| **id == "keyed").count(),
        1,
        "{ids:?}"
    );
}

#[tokio::test]
async fn ls_get_attempts_run_and_rm() {
    let (s, q) = with_queue().await;
    for id in ["later-1", "later-2"] {
        s.idem(&[
            "task",
            "create",
            &q,
            "--url",
            HOOK,
            "--task-id",
            id,
            "--schedule-time",
            "+1h",
        ])
        .await
        .ok();
    }
    let table = s.idem(&["task", "ls", &q]).await.ok();
    let mut lines = table.stdout.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("TASK ID") && header.contains("STATE"),
        "{header}"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2, "{}", table.stdout);
    assert!(
        rows.iter()
            .all(|r| r.split_whitespace().nth(1) == Some("scheduled"))
    );

    let page = s
        .idem(&["task", "ls", &q, "--limit", "1", "--json"])
        .await
        .json();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    let token = page["next_page_token"].as_str().expect("a second page");
    let next = s
        .idem(&[
            "task",
            "ls",
            &q,
            "--limit",
            "1",
            "--page-token",
            token,
            "--json",
        ])
        .await
        .json();
    assert_ne!(next["items"][0]["task_id"], page["items"][0]["task_id"]);
    let more = s.idem(&["task", "ls", &q, "--limit", "1"]).await.ok();
    assert!(
        more.stderr.contains("more: pass --page-token "),
        "{}",
        more.stderr
    );

    let state = s
        .idem(&["task", "ls", &q, "--state", "queued", "--json"])
        .await
        .json();
    assert!(state["items"].as_array().unwrap().is_empty());
    s.idem(&["task", "ls", &q, "--state", "lost"])
        .await
        .fails(2, "");

    let got = s.idem(&["task", "get", &q, "later-1"]).await.ok();
    assert_eq!(got.field("queue"), q);
    assert_eq!(got.field("target"), format!("POST {HOOK}"));
    assert_eq!(got.field("attempts"), "0");
    assert_eq!(
        s.idem(&["task", "get", &q, "later-1", "--json"])
            .await
            .json()["task_id"],
        "later-1"
    );

    let attempts = s.idem(&["task", "attempts", &q, "later-1"]).await.ok();
    assert!(
        attempts.stdout.starts_with("ATTEMPT"),
        "{}",
        attempts.stdout
    );
    assert_eq!(attempts.stdout.lines().count(), 1);
    let attempts = s
        .idem(&["task", "attempts", &q, "later-1", "--json"])
        .await
        .json();
    assert_eq!(attempts["items"], serde_json::json!([]));

    let ran = s
        .idem(&["task", "run", &q, "later-1", "--json"])
        .await
        .json();
    assert_ne!(ran["state"], "scheduled");

    let removed = s.idem(&["task", "rm", &q, "later-2"]).await.ok();
    assert_eq!(
        removed.stdout.trim(),
        format!("cancelled task later-2 in queue {q} (cancelled)")
    );
    assert_eq!(
        s.idem(&["task", "get", &q, "later-2", "--json"])
            .await
            .json()["state"],
        "cancelled"
    );
    s.idem(&["task", "get", &q, "nope"])
        .await
        .fails(4, "NOT_FOUND (404): ");
    s.idem(&["task", "attempts", &q, "nope"])
        .await
        .fails(4, "NOT_FOUND (404): ");
}
