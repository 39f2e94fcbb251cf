//! `idem backup` and `idem restore`: a backup taken while a node serves a
//! load of creates holds every task acknowledged before it began, and a
//! node started on the restored store serves them and takes new ones; what
//! either command refuses (an existing file without --force, a file that
//! is not an Idem store, a store a node has open, a PostgreSQL store) and
//! that a refusal changes nothing. A PostgreSQL store goes through
//! `pg_dump -Fc` and `pg_restore`, as the refusal says.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;

use crate::harness::{Backend, Backing, Out, Server, command, task};

async fn backup(data_dir: &Path, out: &Path, extra: &[&str]) -> Out {
    let mut cmd = command();
    cmd.arg("backup")
        .arg("--data-dir")
        .arg(data_dir)
        .args(extra)
        .arg("--to")
        .arg(out);
    Out::of(cmd).await
}

async fn restore(data_dir: &Path, file: &Path, extra: &[&str]) -> Out {
    let mut cmd = command();
    cmd.arg("restore")
        .arg("--data-dir")
        .arg(data_dir)
        .args(extra)
        .arg("--from")
        .arg(file);
    Out::of(cmd).await
}

fn data_dir(backing: &Backing) -> PathBuf {
    match backing {
        Backing::Sqlite(dir) => dir.path().to_path_buf(),
        Backing::Postgres(_) => unreachable!("a SQLite store"),
    }
}

fn ids(tasks: &[serde_json::Value]) -> HashSet<String> {
    tasks
        .iter()
        .map(|t| t["task_id"].as_str().expect("task_id").to_string())
        .collect()
}

/// Files in `dir` other than those named: what a command left behind.
fn others(dir: &Path, expected: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !expected.contains(&n.as_str()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_under_load_restores_every_task_acknowledged_before_it_began() {
    let s = Server::start(Backend::Sqlite).await;
    s.create_paused_queue("load").await;

    // Clients creating tasks with IDs of their own, each recording the
    // IDs the server acknowledged and when.
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let mut clients = Vec::new();
    for client in 0..6 {
        let api = s.fresh_admin();
        let (stop, acked) = (stop.clone(), acked.clone());
        clients.push(tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let id = format!("c{client}-{n}");
                n += 1;
                let sent = api
                    .request(Method::POST, "/v1/queues/load/tasks")
                    .json(&task(&id))
                    .try_send()
                    .await;
                if let Ok(resp) = sent
                    && (200..300).contains(&resp.status)
                {
                    acked.lock().unwrap().push((id, Instant::now()));
                }
            }
        }));
    }
    let acked_count = || acked.lock().unwrap().len();
    let warm = Instant::now();
    while acked_count() < 300 && warm.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("idem.backup");
    let dir = data_dir(s.backing());
    let began = Instant::now();
    let made = backup(&dir, &out, &[]).await.ok();
    let ended = Instant::now();
    // The load goes on after the backup, so that it ran all through it.
    let after = acked_count();
    while acked_count() < after + 50 && ended.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let before: Vec<&String> = acked
        .iter()
        .filter(|(_, at)| *at < began)
        .map(|(id, _)| id)
        .collect();
    let during = acked
        .iter()
        .filter(|(_, at)| *at >= began && *at <= ended)
        .count();
    assert!(before.len() >= 300, "{} acknowledged before", before.len());
    assert!(
        acked.iter().any(|(_, at)| *at > ended),
        "the load stopped before the backup ended"
    );
    println!(
        "{} tasks acknowledged before the backup, {during} while it ran, {} after",
        before.len(),
        acked.len() - before.len() - during
    );

    assert_eq!(made.field("backup"), out.display().to_string());
    let bytes: u64 = made.field("bytes").parse().unwrap();
    assert_eq!(bytes, std::fs::metadata(&out).unwrap().len());
    assert!(bytes > 0);
    made.field("schema_version").parse::<i64>().unwrap();
    assert_eq!(
        others(out_dir.path(), &["idem.backup"]),
        Vec::<String>::new()
    );

    let (_old, key, status, _) = s.terminate().await;
    assert!(status.success(), "{status}");

    let fresh = tempfile::tempdir().unwrap();
    let put = restore(fresh.path(), &out, &[]).await.ok();
    assert_eq!(
        put.field("restored"),
        fresh.path().join("idem.db").display().to_string()
    );
    assert_eq!(others(fresh.path(), &["idem.db"]), Vec::<String>::new());

    let r = Server::start_on(Backing::Sqlite(fresh), key, &[]).await;
    let restored = ids(&r.all_tasks("load", "limit=1000").await);
    let missing: Vec<&&String> = before
        .iter()
        .filter(|id| !restored.contains(**id))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} tasks acknowledged before the backup began are not in it: {:?}",
        missing.len(),
        before.len(),
        &missing[..missing.len().min(10)]
    );
    // At most one create per client was in flight unanswered.
    assert!(
        restored.len() <= acked.len() + 6,
        "{} restored, {} acknowledged",
        restored.len(),
        acked.len()
    );
    let first = before[0];
    assert_eq!(r.get_task("load", first).await["task_id"], first.as_str());

    // The restored store takes new writes, and refuses a duplicate of a
    // restored task as the original would have.
    r.create_task("load", task("after-restore")).await;
    r.get_task("load", "after-restore").await;
    let dup = r.post("/v1/queues/load/tasks", task(first)).await;
    assert_eq!(dup.status, 409, "{}", dup.text);
}

#[tokio::test]
async fn backup_refuses_to_replace_a_file_unless_forced() {
    let s = Server::start(Backend::Sqlite).await;
    s.create_queue("kept").await;
    let dir = data_dir(s.backing());
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("taken.db");
    std::fs::write(&out, b"an earlier file").unwrap();

    let refused = backup(&dir, &out, &[]).await.fails(1, "");
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert!(
        refused.stderr.contains(&out.display().to_string()),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"an earlier file");
    assert_eq!(others(out_dir.path(), &["taken.db"]), Vec::<String>::new());

    backup(&dir, &out, &["--force"]).await.ok();
    let written = std::fs::read(&out).unwrap();
    assert!(written.starts_with(b"SQLite format 3\0"));
    assert_eq!(others(out_dir.path(), &["taken.db"]), Vec::<String>::new());

    // A store that is not there is named.
    let empty = tempfile::tempdir().unwrap();
    let none = backup(empty.path(), &out_dir.path().join("none.db"), &[])
        .await
        .fails(1, "no store at");
    assert!(none.stderr.contains("idem.db"), "{}", none.stderr);
    assert!(!out_dir.path().join("none.db").exists());
}

#[tokio::test]
async fn restore_refuses_a_file_that_is_not_an_idem_store_and_leaves_the_store_as_it_was() {
    let s = Server::start(Backend::Sqlite).await;
    s.create_queue("kept").await;
    let (backing, key, _, _) = s.terminate().await;
    let dir = data_dir(&backing);
    let store = dir.join("idem.db");
    let before = std::fs::read(&store).unwrap();
    let files = tempfile::tempdir().unwrap();

    let garbage = files.path().join("garbage.db");
    std::fs::write(&garbage, vec![0x5a; 8192]).unwrap();
    let foreign = files.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi');")
        .unwrap();
    let truncated = files.path().join("truncated.db");
    {
        let out = files.path().join("whole.db");
        backup(&dir, &out, &[]).await.ok();
        let whole = std::fs::read(&out).unwrap();
        std::fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();
    }

    for bad in [&garbage, &foreign, &truncated] {
        let refused = restore(&dir, bad, &["--force"]).await.fails(1, "");
        assert!(
            refused.stderr.contains(&bad.display().to_string()),
            "{}",
            refused.stderr
        );
        assert!(refused.stderr.contains("unchanged"), "{}", refused.stderr);
        assert_eq!(std::fs::read(&store).unwrap(), before, "{}", bad.display());
        assert_eq!(
            others(&dir, &["idem.db", "idem.db-wal", "idem.db-shm"]),
            Vec::<String>::new()
        );
    }
    let foreign_refusal = restore(&dir, &foreign, &["--force"]).await;
    assert!(
        foreign_refusal.stderr.contains("not an Idem store"),
        "{}",
        foreign_refusal.stderr
    );
    let absent = files.path().join("absent.db");
    restore(&dir, &absent, &["--force"])
        .await
        .fails(1, &absent.display().to_string());

    let s = Server::start_on(backing, key, &[]).await;
    s.get_queue("kept").await;
}

#[tokio::test]
async fn restore_refuses_while_a_node_serves_the_store_and_without_force() {
    let s = Server::start(Backend::Sqlite).await;
    s.create_paused_queue("q").await;
    s.create_task("q", task("in-backup")).await;
    let dir = data_dir(s.backing());
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join("idem.backup");
    backup(&dir, &file, &[]).await.ok();
    s.create_task("q", task("after-backup")).await;

    // The node is idle between requests and still holds the store open.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = restore(&dir, &file, &["--force"]).await.fails(1, "");
    assert!(refused.stderr.contains("in use"), "{}", refused.stderr);
    s.get_task("q", "after-backup").await;
    s.create_task("q", task("still-serving")).await;

    let (backing, key, _, _) = s.terminate().await;
    let kept = restore(&dir, &file, &[]).await.fails(1, "");
    assert!(kept.stderr.contains("--force"), "{}", kept.stderr);
    assert!(kept.stderr.contains("not empty"), "{}", kept.stderr);
    let s = Server::start_on(backing, key, &[]).await;
    s.get_task("q", "still-serving").await;
    let (backing, key, _, _) = s.terminate().await;

    restore(&dir, &file, &["--force"]).await.ok();
    let s = Server::start_on(backing, key, &[]).await;
    s.get_task("q", "in-backup").await;
    s.get("/v1/queues/q/tasks/after-backup").await.ok(404);
    s.get("/v1/queues/q/tasks/still-serving").await.ok(404);
}

#[tokio::test]
async fn a_postgresql_store_is_refused_with_pg_dump_and_pg_restore_named() {
    let files = tempfile::tempdir().unwrap();
    let out = files.path().join("idem.backup");
    let url = "postgres://idem@127.0.0.1:9/idem";
    let mut cmd = command();
    cmd.args(["backup", "--database-url", url, "--to"])
        .arg(&out);
    let refused = Out::of(cmd).await.fails(1, "");
    assert!(refused.stderr.contains("pg_dump -Fc"), "{}", refused.stderr);
    assert!(!out.exists());

    let mut cmd = command();
    cmd.env("IDEM_DATABASE_URL", url)
        .args(["backup", "--to"])
        .arg(&out);
    let refused = Out::of(cmd).await.fails(1, "");
    assert!(refused.stderr.contains("pg_dump -Fc"), "{}", refused.stderr);
    assert!(!out.exists());

    std::fs::write(&out, b"a dump").unwrap();
    let mut cmd = command();
    cmd.args(["restore", "--database-url", url, "--from"])
        .arg(&out);
    let refused = Out::of(cmd).await.fails(1, "");
    assert!(refused.stderr.contains("pg_restore"), "{}", refused.stderr);
}

#[tokio::test]
async fn help_says_what_backup_and_restore_do() {
    for (sub, words) in [
        (
            "backup",
            &["--to", "--force", "--data-dir", "integrity", "pg_dump -Fc"][..],
        ),
        (
            "restore",
            &[
                "--from",
                "empty",
                "--force",
                "--data-dir",
                "Stop every node",
                "pg_restore",
            ][..],
        ),
    ] {
        let mut cmd = command();
        cmd.args([sub, "--help"]);
        let help = Out::of(cmd).await.ok();
        for word in words {
            assert!(help.stdout.contains(word), "{sub}: {word}\n{}", help.stdout);
        }
    }
    let mut cmd = command();
    cmd.arg("man");
    let man = Out::of(cmd).await.ok();
    for section in ["IDEM BACKUP", "IDEM RESTORE"] {
        assert!(man.stdout.contains(section), "the man page lacks {section}");
    }
}

/// `pg_dump` or `pg_restore` of the server's major version (an older
/// `pg_dump` refuses a newer server): the one installed for that version,
/// else the one on PATH, checked.
async fn pg_tool(name: &str, url: &str) -> PathBuf {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let version: String = client
        .query_one("SHOW server_version_num", &[])
        .await
        .unwrap()
        .get(0);
    let major: u32 = version.parse::<u32>().unwrap() / 10_000;
    let installed = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin/{name}"));
    let tool = if installed.exists() {
        installed
    } else {
        PathBuf::from(name)
    };
    let out = std::process::Command::new(&tool)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!("{name} is needed (apt install postgresql-client-{major}): {e}")
        });
    let said = String::from_utf8_lossy(&out.stdout);
    let tool_major: u32 = said
        .split_whitespace()
        .find_map(|w| w.split('.').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{name} --version: {said}"));
    assert!(
        tool_major >= major,
        "{} is version {tool_major}, older than the server's {major}",
        tool.display()
    );
    tool
}

fn run(tool: &Path, args: &[&str]) {
    let out = std::process::Command::new(tool)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n{}",
        tool.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_postgresql_store_restored_from_pg_dump_serves_its_tasks() {
    let s = Server::start(Backend::Postgres).await;
    s.create_paused_queue("kept").await;
    let created: Vec<String> = (0..25).map(|i| format!("pg-{i}")).collect();
    for id in &created {
        s.create_task("kept", task(id)).await;
    }
    let Backing::Postgres(db) = s.backing() else {
        unreachable!("a PostgreSQL store")
    };
    let files = tempfile::tempdir().unwrap();
    let dump = files.path().join("idem.dump");
    let dump_arg = dump.to_str().unwrap();
    // Taken while the node serves, as the refusal's advice would be.
    run(
        &pg_tool("pg_dump", &db.url).await,
        &["-Fc", "-f", dump_arg, &db.url],
    );
    let (_old, key, _, _) = s.terminate().await;

    let fresh = idem_testkit::TestDatabase::create().await;
    run(
        &pg_tool("pg_restore", &fresh.url).await,
        &["--no-owner", "--exit-on-error", "-d", &fresh.url, dump_arg],
    );
    let r = Server::start_on(Backing::Postgres(fresh), key, &[]).await;
    let restored = ids(&r.all_tasks("kept", "limit=1000").await);
    assert_eq!(restored, created.iter().cloned().collect::<HashSet<_>>());
    r.get_task("kept", "pg-0").await;
    r.create_task("kept", task("after-restore")).await;
}
