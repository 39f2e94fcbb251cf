//! An organization cannot lock itself out, `idem serve` starts on any store
//! it can be left in, and one job that cannot fire does not stop cron for
//! everyone else.

use crate::harness::jobs::{create_job, wait_runs_of};
use crate::harness::target::Target;
use crate::harness::{
    self, Api, Backend, Backing, Out, Process, Server, command, fresh_key, install_tls_provider,
};
use serde_json::{Value, json};
use std::time::Duration;

idem_testkit::store_tests!(
    Server::start;
    the_last_admin_with_a_key_cannot_be_demoted_or_lose_its_key,
    another_organization_keeps_its_admin_key_too,
    deleting_the_only_signing_secret_is_a_failed_precondition,
);

/// The tests that start (and restart) servers themselves.
mod starts {
    use super::*;

    idem_testkit::store_tests!(
        serve_restarts_after_revoking_the_last_admin_key_was_refused,
        serve_restores_an_admin_key_to_a_default_organization_without_one,
        a_short_bootstrap_key_is_refused_before_the_store_is_touched,
        a_job_whose_stored_schedule_no_longer_parses_is_paused_while_others_fire,
    );
}

/// The IDs of a principal's keys.
async fn key_ids(api: &Api, principal: &str) -> Vec<String> {
    api.collect_pages(&format!("/v1/principals/{principal}/keys?limit=50"))
        .await
        .iter()
        .map(|k| match &k["id"] {
            Value::String(id) => id.clone(),
            other => other.to_string(),
        })
        .collect()
}

async fn role_of(api: &Api, principal: &str) -> Value {
    let all = api.collect_pages("/v1/principals?limit=50").await;
    all.into_iter()
        .find(|p| p["name"] == principal)
        .unwrap_or_else(|| panic!("principal {principal} not listed"))["role"]
        .clone()
}

async fn new_key_of(api: &Api, principal: &str) -> String {
    api.post_empty(&format!("/v1/principals/{principal}/keys"))
        .await
        .ok(201)
        .json["key"]
        .as_str()
        .expect("key")
        .to_string()
}

async fn the_last_admin_with_a_key_cannot_be_demoted_or_lose_its_key(s: Server) {
    let ids = key_ids(&s, "admin").await;
    assert_eq!(ids.len(), 1, "the bootstrap admin has one key: {ids:?}");
    let only = &ids[0];
    let refused = s
        .delete(&format!("/v1/principals/admin/keys/{only}"))
        .await
        .problem(409, "FAILED_PRECONDITION")
        .clone();
    assert!(
        refused["detail"].as_str().unwrap().contains("admin"),
        "{refused}"
    );
    s.patch("/v1/principals/admin", json!({"role": "writer"}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    // Nothing changed: the key still works, as an admin's.
    let s2 = s.fresh_admin();
    assert_eq!(key_ids(&s2, "admin").await, ids);
    assert_eq!(role_of(&s2, "admin").await, "admin");

    // Another admin without a key does not count: nobody could use it.
    s.post(
        "/v1/principals",
        json!({"name": "bob", "kind": "person", "role": "admin"}),
    )
    .await
    .ok(201);
    s.patch("/v1/principals/admin", json!({"role": "reader"}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    s.delete(&format!("/v1/principals/admin/keys/{only}"))
        .await
        .problem(409, "FAILED_PRECONDITION");

    // With a key, bob takes over and the first admin may step down.
    let bob = s.with_key(&new_key_of(&s, "bob").await);
    s.patch("/v1/principals/admin", json!({"role": "writer"}))
        .await
        .ok(200);
    bob.delete(&format!("/v1/principals/admin/keys/{only}"))
        .await
        .ok(204);
    // Now bob is the last one.
    let bob_ids = key_ids(&bob, "bob").await;
    bob.delete(&format!("/v1/principals/bob/keys/{}", bob_ids[0]))
        .await
        .problem(409, "FAILED_PRECONDITION");
    bob.patch("/v1/principals/bob", json!({"role": "writer"}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    // Promoting someone else is always allowed; demoting the last admin
    // with a key, never, whoever asks.
    bob.patch("/v1/principals/admin", json!({"role": "admin"}))
        .await
        .ok(200);
    assert_eq!(role_of(&bob, "bob").await, "admin");
    bob.get("/v1/principals").await.ok(200);
}

async fn another_organization_keeps_its_admin_key_too(s: Server) {
    let org = harness::unique("org");
    let resp = s.post("/v1/organizations", json!({ "name": org })).await;
    let admin = s.with_key(resp.ok(201).json["admin_key"].as_str().expect("admin_key"));
    let ids = key_ids(&admin, "admin").await;
    assert_eq!(ids.len(), 1);
    admin
        .delete(&format!("/v1/principals/admin/keys/{}", ids[0]))
        .await
        .problem(409, "FAILED_PRECONDITION");
    admin
        .patch("/v1/principals/admin", json!({"role": "reader"}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    admin.get("/v1/principals").await.ok(200);
    // A second key of the same admin may go: one is left.
    let second = new_key_of(&admin, "admin").await;
    admin
        .delete(&format!("/v1/principals/admin/keys/{}", ids[0]))
        .await
        .ok(204);
    s.with_key(&second).get("/v1/principals").await.ok(200);
}

async fn deleting_the_only_signing_secret_is_a_failed_precondition(s: Server) {
    let listed = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    let secrets = listed["secrets"].as_array().expect("secrets");
    assert_eq!(secrets.len(), 1, "{listed}");
    let id = secrets[0]["id"].as_str().expect("id");
    s.delete(&format!("/v1/signing-secrets/{id}"))
        .await
        .problem(409, "FAILED_PRECONDITION");
    let after = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    assert_eq!(after, listed);
}

async fn serve_restarts_after_revoking_the_last_admin_key_was_refused(kind: Backend) {
    let s = Server::start_on(Backing::new(kind).await, fresh_key(), &[]).await;
    let ids = key_ids(&s, "admin").await;
    s.delete(&format!("/v1/principals/admin/keys/{}", ids[0]))
        .await
        .problem(409, "FAILED_PRECONDITION");
    s.create_queue("kept").await;
    let (backing, key) = s.kill().await;

    // Twice: each start finds the same store and changes nothing.
    let mut backing = backing;
    for _ in 0..2 {
        let other = fresh_key();
        let s = Server::start_on(backing, other.clone(), &[]).await;
        s.with_key(&other)
            .get("/v1/queues")
            .await
            .problem(401, "UNAUTHENTICATED");
        let admin = s.with_key(&key);
        admin.get_queue("kept").await;
        assert_eq!(key_ids(&admin, "admin").await, ids);
        backing = s.kill().await.0;
    }
}

/// Runs statements on the store of a stopped server, as an older version
/// or an operator's hand could have left it.
async fn edit_store(backing: &Backing, sql: &str) {
    match backing {
        Backing::Sqlite(dir) => {
            let conn = rusqlite::Connection::open(dir.path().join("idem.db")).expect("open store");
            conn.execute_batch(sql).expect("edit the SQLite store");
        }
        Backing::Postgres(db) => {
            let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .expect("connect to the test database");
            tokio::spawn(conn);
            client
                .batch_execute(sql)
                .await
                .expect("edit the PostgreSQL store");
        }
    }
}

fn listen_args(backing: &Backing) -> Vec<String> {
    let mut args = vec!["--listen".to_string(), "127.0.0.1:0".to_string()];
    args.extend(backing.flags());
    args
}

async fn serve_restores_an_admin_key_to_a_default_organization_without_one(kind: Backend) {
    let s = Server::start_on(Backing::new(kind).await, fresh_key(), &[]).await;
    s.create_queue("kept").await;
    let (backing, old) = s.kill().await;
    // What a version that let the last key go could have left behind.
    edit_store(&backing, "DELETE FROM api_keys WHERE org = 'default'").await;

    // Without a bootstrap key, a new one is printed.
    let p = Process::spawn(&listen_args(&backing), &[]).await;
    let printed = p
        .printed_key()
        .unwrap_or_else(|| panic!("no key printed: {:?}\n{}", p.preamble, p.stderr()));
    p.api(Some(&old))
        .get("/v1/queues")
        .await
        .problem(401, "UNAUTHENTICATED");
    let admin = p.api(Some(&printed));
    admin.get_queue("kept").await;
    admin
        .post("/v1/organizations", json!({"name": harness::unique("org")}))
        .await
        .ok(201);
    assert!(
        p.stderr()
            .contains("no admin of organization 'default' held an API key"),
        "{}",
        p.stderr()
    );
    p.kill().await;

    // With one, and the admin principal demoted by hand, that key is the
    // admin's and the principal an admin again.
    edit_store(
        &backing,
        "DELETE FROM api_keys WHERE org = 'default'; \
         UPDATE principals SET role = 'reader' WHERE org = 'default' AND name = 'admin'",
    )
    .await;
    let given = fresh_key();
    let s = Server::start_on(backing, given.clone(), &[]).await;
    assert_eq!(role_of(&s, "admin").await, "admin");
    s.get_queue("kept").await;
    s.with_key(&printed)
        .get("/v1/queues")
        .await
        .problem(401, "UNAUTHENTICATED");
    let (backing, _) = s.kill().await;

    // Once an admin holds a key again, a start changes nothing.
    let p = Process::spawn(&listen_args(&backing), &[]).await;
    assert_eq!(p.printed_key(), None, "{:?}", p.preamble);
    p.api(Some(&given)).get_queue("kept").await;
}

async fn a_short_bootstrap_key_is_refused_before_the_store_is_touched(kind: Backend) {
    let backing = Backing::new(kind).await;
    let short = "k".repeat(31);
    let by_flag = {
        let mut cmd = command();
        cmd.arg("serve")
            .args(listen_args(&backing))
            .args(["--bootstrap-key", &short]);
        Out::of(cmd).await
    };
    let by_env = {
        let mut cmd = command();
        cmd.arg("serve")
            .args(listen_args(&backing))
            .env("IDEM_BOOTSTRAP_KEY", &short);
        Out::of(cmd).await
    };
    for out in [by_flag, by_env] {
        assert_ne!(out.code, 0, "{out:?}");
        assert!(
            out.stderr.contains("at least 32 characters"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains(&short), "the key was echoed: {out:?}");
        assert!(!out.stdout.contains("idem listening"), "{out:?}");
    }
    // Nothing was written: the store was not even created.
    match &backing {
        Backing::Sqlite(dir) => {
            let entries: Vec<_> = std::fs::read_dir(dir.path()).expect("data dir").collect();
            assert!(entries.is_empty(), "{entries:?}");
        }
        Backing::Postgres(db) => {
            let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .expect("connect");
            tokio::spawn(conn);
            let tables: i64 = client
                .query_one(
                    "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
                    &[],
                )
                .await
                .expect("count tables")
                .get(0);
            assert_eq!(tables, 0);
        }
    }
    // 32 characters is enough.
    let key = "k".repeat(32);
    let s = Server::start_on(backing, key.clone(), &[]).await;
    s.with_key(&key).get("/v1/queues").await.ok(200);
}

async fn a_job_whose_stored_schedule_no_longer_parses_is_paused_while_others_fire(kind: Backend) {
    install_tls_provider();
    let target = Target::start().await;
    let s = Server::start_on(Backing::new(kind).await, fresh_key(), &[]).await;
    for name in ["broken", "healthy"] {
        create_job(
            &s,
            json!({"name": name, "schedule": "* * * * * *",
                   "target": {"url": target.url("/ok")}}),
        )
        .await;
    }
    // Another organization's job keeps firing too.
    let org = harness::unique("org");
    let resp = s.post("/v1/organizations", json!({ "name": org })).await;
    let other = s.with_key(resp.ok(201).json["admin_key"].as_str().expect("admin_key"));
    create_job(
        &other,
        json!({"name": "elsewhere", "schedule": "* * * * * *",
               "target": {"url": target.url("/ok")}}),
    )
    .await;
    let (backing, key) = s.kill().await;
    edit_store(
        &backing,
        "UPDATE jobs SET schedule = 'every full moon' WHERE org = 'default' AND name = 'broken'",
    )
    .await;

    let mut args = backing.serve_args(&key);
    args.extend(["--log-format".to_string(), "json".to_string()]);
    let count = |job: &str| {
        target
            .received()
            .iter()
            .filter(|r| r.header("idem-job") == Some(job))
            .count()
    };
    let (healthy, elsewhere) = (count("healthy"), count("elsewhere"));
    let p = Process::spawn(&args, &[]).await;
    let api = p.api(Some(&key));
    wait_runs_of(&target, "healthy", healthy + 3, Duration::from_secs(15)).await;
    wait_runs_of(&target, "elsewhere", elsewhere + 3, Duration::from_secs(15)).await;

    let job = api.get("/v1/jobs/broken").await.ok(200).json.clone();
    assert_eq!(job["state"], "paused", "{job}");
    assert_eq!(job["next_run_time"], Value::Null, "{job}");
    let reason = job["paused_reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{job}"));
    assert!(reason.contains("every full moon"), "{reason}");
    assert!(reason.contains("no longer parses"), "{reason}");
    assert_eq!(
        api.get("/v1/jobs/healthy").await.ok(200).json["paused_reason"],
        Value::Null
    );
    let warned = p.stderr().lines().any(|l| {
        let line: Value = serde_json::from_str(l).unwrap_or_default();
        line["level"] == "WARN"
            && line["job"] == "broken"
            && line["message"]
                .as_str()
                .is_some_and(|m| m.contains("job paused"))
    });
    assert!(warned, "no warning logged:\n{}", p.stderr());

    // It cannot be resumed as it is; with a new schedule it fires again.
    api.post_empty("/v1/jobs/broken/resume")
        .await
        .problem(409, "FAILED_PRECONDITION");
    api.patch("/v1/jobs/broken", json!({"schedule": "* * * * * *"}))
        .await
        .ok(200);
    let resumed = api
        .post_empty("/v1/jobs/broken/resume")
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(resumed["state"], "enabled");
    assert_eq!(resumed["paused_reason"], Value::Null);
    let fired = count("broken");
    wait_runs_of(&target, "broken", fired + 2, Duration::from_secs(15)).await;
}
