//! The schema as an upgrade meets it: `idem migrate --check` lists what is
//! pending, `idem migrate` applies it, `serve --no-migrate` refuses a store
//! that is behind, a store newer than the binary is refused with both
//! versions named and nothing written, and `/readyz` turns 503 when the
//! schema moves on under a running node.

use crate::harness::{self, Backend, Backing, Out, Process, Server, command};

idem_testkit::store_tests!(
    migrate_check_lists_what_is_pending_and_migrate_applies_it,
    a_newer_schema_is_refused_naming_both_versions_and_nothing_is_written,
    readyz_is_unavailable_while_the_schema_is_not_the_binarys,
);

/// The schema version this binary writes: as many as its migration files.
fn binary_version() -> i64 {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../store/src/sqlite/migrations"
    );
    std::fs::read_dir(dir).expect("migrations").count() as i64 + 1
}

async fn migrate(backing: &Backing, extra: &[&str]) -> Out {
    let mut cmd = command();
    cmd.arg("migrate").args(backing.flags()).args(extra);
    Out::of(cmd).await
}

/// The version the store records, read and written behind the binary's
/// back.
async fn stored_version(backing: &Backing, set: Option<i64>) -> i64 {
    match backing {
        Backing::Sqlite(dir) => {
            let conn = rusqlite::Connection::open(dir.path().join("idem.db")).unwrap();
            if let Some(v) = set {
                conn.execute_batch(&format!("PRAGMA user_version = {v}"))
                    .unwrap();
            }
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap()
        }
        Backing::Postgres(db) => {
            let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            if let Some(v) = set {
                client
                    .execute("UPDATE idem_schema SET version = $1", &[&v])
                    .await
                    .unwrap();
            }
            client
                .query_one("SELECT version FROM idem_schema", &[])
                .await
                .unwrap()
                .get(0)
        }
    }
}

async fn serve_out(backing: &Backing, extra: &[&str]) -> Out {
    let mut cmd = command();
    cmd.arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(backing.flags())
        .args(extra);
    Out::of(cmd).await
}

async fn migrate_check_lists_what_is_pending_and_migrate_applies_it(kind: Backend) {
    let backing = Backing::new(kind).await;
    let latest = binary_version();
    let check = migrate(&backing, &["--check"]).await;
    assert_eq!(check.code, 1, "pending migrations: {check:?}");
    assert!(check.stdout.contains("001_schema"), "{}", check.stdout);
    assert!(check.stdout.contains("015_org_usage"), "{}", check.stdout);

    let refused = serve_out(&backing, &["--no-migrate"]).await;
    assert_ne!(refused.code, 0, "--no-migrate served a store behind it");
    assert!(
        refused.stderr.contains("--no-migrate"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("pending"), "{}", refused.stderr);

    let applied = migrate(&backing, &[]).await;
    assert_eq!(applied.code, 0, "{applied:?}");
    assert!(
        applied
            .stdout
            .contains(&format!("migrated from version 0 to {latest}")),
        "{}",
        applied.stdout
    );
    assert_eq!(stored_version(&backing, None).await, latest);
    let again = migrate(&backing, &["--check"]).await;
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("current"), "{}", again.stdout);
    let twice = migrate(&backing, &[]).await;
    assert_eq!(twice.code, 0, "{twice:?}");
    assert!(
        twice.stdout.contains("nothing to apply"),
        "{}",
        twice.stdout
    );

    // A store migrated ahead of time serves with --no-migrate.
    let key = harness::fresh_key();
    let mut args = backing.serve_args(&key);
    args.push("--no-migrate".into());
    let node = Process::spawn(&args, &[]).await;
    node.api(Some(&key)).get("/readyz").await.ok(200);
}

async fn a_newer_schema_is_refused_naming_both_versions_and_nothing_is_written(kind: Backend) {
    let s = Server::start(kind).await;
    s.create_queue("kept").await;
    let (backing, key, _, _) = s.terminate().await;
    let latest = binary_version();
    let newer = latest + 1;
    stored_version(&backing, Some(newer)).await;

    let refused = serve_out(&backing, &["--bootstrap-key", &harness::fresh_key()]).await;
    assert_ne!(refused.code, 0);
    for version in [format!("version {newer}"), format!("version {latest}")] {
        assert!(refused.stderr.contains(&version), "{}", refused.stderr);
    }
    let migrating = migrate(&backing, &[]).await;
    assert_ne!(migrating.code, 0);
    assert!(
        migrating.stderr.contains(&format!("version {newer}")),
        "{}",
        migrating.stderr
    );
    let check = migrate(&backing, &["--check"]).await;
    assert_ne!(check.code, 0);
    assert_eq!(
        stored_version(&backing, None).await,
        newer,
        "the refusals wrote their own version"
    );

    // Put back, the store serves what it held.
    stored_version(&backing, Some(latest)).await;
    let s = Server::start_on(backing, key, &[]).await;
    s.get_queue("kept").await;
}

async fn readyz_is_unavailable_while_the_schema_is_not_the_binarys(kind: Backend) {
    let s = Server::start(kind).await;
    s.get("/readyz").await.ok(200);
    let latest = binary_version();
    stored_version(s.backing(), Some(latest + 1)).await;
    let resp = s.get("/readyz").await;
    let problem = resp.problem(503, "UNAVAILABLE");
    assert_eq!(
        problem["extensions"]["schema_version"],
        latest + 1,
        "{problem}"
    );
    assert_eq!(
        problem["extensions"]["binary_schema_version"], latest,
        "{problem}"
    );
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("version {}", latest + 1)),
        "{detail}"
    );
    // Liveness is not readiness: the node still answers /healthz.
    s.get("/healthz").await.ok(200);
    stored_version(s.backing(), Some(latest)).await;
    s.get("/readyz").await.ok(200);
}
