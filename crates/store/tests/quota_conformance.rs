//! Per-organization quotas, on both stores. Each is held by a counter that
//! every creation and deletion of its resource keeps in its own
//! transaction, so each test also compares the counters with the rows they
//! stand for, counted as the quotas define them.

mod support;

use idem_core::event::EventType;
use idem_core::job::{CreateJob, JobConfig};
use idem_core::queue::QueueConfig;
use idem_core::tenancy::{ADMIN_PRINCIPAL, DEFAULT_ORGANIZATION, PrincipalKind, Role};
use idem_store::dispatch::{AttemptResult, DispatchClaim};
use idem_store::*;
use std::fmt::Debug;
use std::sync::Arc;
use support::{Harness, ORG, new_key};

const QUOTAS: [Quota; 6] = [
    Quota::Queues,
    Quota::Jobs,
    Quota::Principals,
    Quota::ApiKeys,
    Quota::SigningSecrets,
    Quota::Webhooks,
];

/// Every quota unlimited but `quota`, at `limit`.
fn only(quota: Quota, limit: u32) -> Quotas {
    let mut q = Quotas {
        queues: 0,
        jobs: 0,
        principals: 0,
        api_keys: 0,
        signing_secrets: 0,
        webhooks: 0,
        tasks: 0,
        task_bytes: 0,
    };
    let tasks = |quota| unreachable!("{quota:?} is counted in task_counts, not org_usage");
    *match quota {
        Quota::Queues => &mut q.queues,
        Quota::Jobs => &mut q.jobs,
        Quota::Principals => &mut q.principals,
        Quota::ApiKeys => &mut q.api_keys,
        Quota::SigningSecrets => &mut q.signing_secrets,
        Quota::Webhooks => &mut q.webhooks,
        Quota::Tasks | Quota::TaskBytes => tasks(quota),
    } = limit;
    q
}

fn unlimited() -> Quotas {
    only(Quota::Queues, 0)
}

/// Sets the quotas on both handles of the data.
fn set_quotas(h: &Harness, quotas: Quotas) {
    h.store.set_quotas(quotas);
    h.other.set_quotas(quotas);
}

#[track_caller]
fn refused<T: Debug>(r: Result<T>, quota: Quota, limit: u64) {
    match r {
        Err(Error::ResourceExhausted(e)) => assert_eq!(e, QuotaExceeded { quota, limit }),
        other => panic!("expected {quota:?} refused at {limit}, got {other:?}"),
    }
}

#[track_caller]
fn not_found<T: Debug>(r: Result<T>) {
    assert!(matches!(r, Err(Error::NotFound { .. })), "{r:?}");
}

#[track_caller]
fn exists<T: Debug>(r: Result<T>) {
    assert!(matches!(r, Err(Error::AlreadyExists { .. })), "{r:?}");
}

fn job() -> JobConfig {
    let body = serde_json::json!({
        "name": "placeholder",
        "schedule": "0 0 1 1 *",
        "target": {"url": "http://127.0.0.1:9/hook"},
    });
    serde_json::from_value::<CreateJob>(body)
        .unwrap()
        .resolve()
        .unwrap()
}

fn everything() -> PageRequest {
    PageRequest {
        limit: 1000,
        after: None,
    }
}

/// What each counter stands for: the statements the quotas were checked
/// with before they had counters.
fn real_count(quota: Quota, org: &str) -> String {
    let rows = match quota {
        Quota::Queues => "queues WHERE name NOT IN ('~jobs', '~events') AND",
        Quota::Jobs => "jobs WHERE",
        Quota::Principals => "principals WHERE",
        Quota::ApiKeys => "api_keys WHERE",
        Quota::SigningSecrets => "signing_secrets WHERE",
        Quota::Webhooks => "webhooks WHERE",
        Quota::Tasks | Quota::TaskBytes => unreachable!("see the_task_counters_match_the_rows"),
    };
    format!("SELECT count(*) FROM {rows} org = '{org}'")
}

async fn counter(h: &Harness, quota: Quota, org: &str) -> i64 {
    h.raw_i64(&format!(
        "SELECT CAST(coalesce((SELECT sum(n) FROM org_usage WHERE org = '{org}' AND resource = '{}'), 0) AS BIGINT)",
        quota.resource()
    ))
    .await
}

/// Each of `org`'s counters, which must equal its rows; answered in the
/// order of [`QUOTAS`].
async fn counted(h: &Harness, org: &str) -> [i64; 6] {
    let mut out = [0; 6];
    for (i, quota) in QUOTAS.into_iter().enumerate() {
        let held = counter(h, quota, org).await;
        let real = h.raw_i64(&real_count(quota, org)).await;
        assert_eq!(
            held, real,
            "the counter of {quota:?} in {org} against its rows"
        );
        out[i] = held;
    }
    out
}

async fn the_queue_quota_is_given_back_by_deletes(h: Harness) {
    let s = &h.store;
    let q = QueueConfig::default();
    set_quotas(&h, unlimited());
    // The job queue a first job makes is not one of the queues.
    s.job_create(ORG, "j", &job(), false, None).await.unwrap();
    s.queue_create(ORG, "q1", &q, None).await.unwrap();
    s.queue_create(ORG, "q2", &q, None).await.unwrap();
    assert_eq!(counter(&h, Quota::Queues, ORG).await, 2);

    // Counted while unlimited, so a limit set later holds at once.
    set_quotas(&h, only(Quota::Queues, 2));
    refused(s.queue_create(ORG, "q3", &q, None).await, Quota::Queues, 2);
    not_found(s.queue_get(ORG, "q3").await);

    s.queue_delete(ORG, "q1").await.unwrap();
    // A create that fails otherwise, and a delete of nothing, change no count.
    exists(s.queue_create(ORG, "q2", &q, None).await);
    not_found(s.queue_delete(ORG, "q1").await);
    s.queue_create(ORG, "q3", &q, None).await.unwrap();
    refused(s.queue_create(ORG, "q4", &q, None).await, Quota::Queues, 2);
    let names: Vec<String> = s
        .queue_list(ORG, &everything())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|q| q.name)
        .collect();
    assert_eq!(names, ["q2", "q3"]);
    counted(&h, ORG).await;

    // Another organization has counters of its own.
    s.organization_create("other", new_key(), None)
        .await
        .unwrap();
    s.queue_create("other", "q1", &q, None).await.unwrap();
    s.queue_create("other", "q2", &q, None).await.unwrap();
    refused(
        s.queue_create("other", "q3", &q, None).await,
        Quota::Queues,
        2,
    );
    counted(&h, "other").await;
}

async fn the_job_quota_is_given_back_by_deletes(h: Harness) {
    let s = &h.store;
    set_quotas(&h, unlimited());
    s.job_create(ORG, "j1", &job(), false, None).await.unwrap();
    s.job_create(ORG, "j2", &job(), true, None).await.unwrap();

    set_quotas(&h, only(Quota::Jobs, 2));
    refused(
        s.job_create(ORG, "j3", &job(), false, None).await,
        Quota::Jobs,
        2,
    );
    not_found(s.job_get(ORG, "j3").await);

    s.job_delete(ORG, "j1").await.unwrap();
    exists(s.job_create(ORG, "j2", &job(), false, None).await);
    not_found(s.job_delete(ORG, "j1").await);
    s.job_create(ORG, "j3", &job(), false, None).await.unwrap();
    refused(
        s.job_create(ORG, "j4", &job(), false, None).await,
        Quota::Jobs,
        2,
    );
    assert_eq!(s.job_list(ORG, &everything()).await.unwrap().items.len(), 2);
    // Making and deleting jobs leaves the job queue alone: it is no queue.
    assert_eq!(counted(&h, ORG).await[0], 0);
}

/// Principals are never deleted: the limit is what makes room.
async fn the_principal_quota_counts_every_principal(h: Harness) {
    let s = &h.store;
    let create = |name: &'static str| {
        let s = s.clone();
        async move {
            s.principal_create(ORG, name, PrincipalKind::Service, Role::Writer, None)
                .await
        }
    };
    set_quotas(&h, unlimited());
    create("p1").await.unwrap();

    // `admin` is the first.
    set_quotas(&h, only(Quota::Principals, 2));
    refused(create("p2").await, Quota::Principals, 2);
    not_found(s.principal_get(ORG, "p2").await);

    set_quotas(&h, only(Quota::Principals, 3));
    exists(create("p1").await);
    create("p2").await.unwrap();
    refused(create("p3").await, Quota::Principals, 3);
    // A lowered limit refuses and removes nothing.
    set_quotas(&h, only(Quota::Principals, 1));
    refused(create("p3").await, Quota::Principals, 1);
    let page = s.principal_list(ORG, &everything()).await.unwrap();
    assert_eq!(page.items.len(), 3);
    assert_eq!(counted(&h, ORG).await[2], 3);
}

async fn the_api_key_quota_is_given_back_by_revocations(h: Harness) {
    let s = &h.store;
    set_quotas(&h, unlimited());
    s.principal_create(ORG, "p", PrincipalKind::Service, Role::Writer, None)
        .await
        .unwrap();
    let first = s.api_key_create(ORG, "p", new_key(), None).await.unwrap();
    let second = new_key();
    s.api_key_create(ORG, "p", second.clone(), None)
        .await
        .unwrap();

    // The admin's key is the first of the organization's three.
    set_quotas(&h, only(Quota::ApiKeys, 3));
    refused(
        s.api_key_create(ORG, "p", new_key(), None).await,
        Quota::ApiKeys,
        3,
    );
    refused(
        s.api_key_create(ORG, ADMIN_PRINCIPAL, new_key(), None)
            .await,
        Quota::ApiKeys,
        3,
    );
    let keys = s.api_key_list(ORG, "p", &everything()).await.unwrap();
    assert_eq!(keys.items.len(), 2);

    s.api_key_revoke(ORG, "p", &first.id).await.unwrap();
    not_found(s.api_key_revoke(ORG, "p", &first.id).await);
    not_found(s.api_key_create(ORG, "nobody", new_key(), None).await);
    exists(s.api_key_create(ORG, "p", second, None).await);
    s.api_key_create(ORG, "p", new_key(), None).await.unwrap();
    refused(
        s.api_key_create(ORG, "p", new_key(), None).await,
        Quota::ApiKeys,
        3,
    );
    assert_eq!(counted(&h, ORG).await[3], 3);
}

async fn the_signing_secret_quota_is_given_back_by_deletes(h: Harness) {
    let s = &h.store;
    set_quotas(&h, unlimited());
    s.signing_secret_rotate(ORG, None).await.unwrap();

    // The organization was made with the first.
    set_quotas(&h, only(Quota::SigningSecrets, 2));
    refused(
        s.signing_secret_rotate(ORG, None).await,
        Quota::SigningSecrets,
        2,
    );
    let secrets = s.signing_secret_list(ORG).await.unwrap();
    assert_eq!(secrets.len(), 2);

    s.signing_secret_delete(ORG, &secrets[1].id).await.unwrap();
    not_found(s.signing_secret_delete(ORG, &secrets[1].id).await);
    s.signing_secret_rotate(ORG, None).await.unwrap();
    refused(
        s.signing_secret_rotate(ORG, None).await,
        Quota::SigningSecrets,
        2,
    );
    assert_eq!(counted(&h, ORG).await[4], 2);

    // Refusing to delete the last one gives nothing back.
    for secret in &s.signing_secret_list(ORG).await.unwrap()[1..] {
        s.signing_secret_delete(ORG, &secret.id).await.unwrap();
    }
    let last = s.signing_secret_list(ORG).await.unwrap().remove(0);
    assert!(matches!(
        s.signing_secret_delete(ORG, &last.id).await,
        Err(Error::FailedPrecondition(_))
    ));
    assert_eq!(counted(&h, ORG).await[4], 1);
}

async fn the_webhook_quota_is_given_back_by_deletes(h: Harness) {
    let s = &h.store;
    let create = || async {
        s.webhook_create(
            ORG,
            "http://127.0.0.1:9/hook",
            &[EventType::TaskFailed],
            None,
        )
        .await
    };
    set_quotas(&h, unlimited());
    let first = create().await.unwrap();
    create().await.unwrap();

    set_quotas(&h, only(Quota::Webhooks, 2));
    refused(create().await, Quota::Webhooks, 2);
    assert_eq!(
        s.webhook_list(ORG, &everything())
            .await
            .unwrap()
            .items
            .len(),
        2
    );

    s.webhook_delete(ORG, &first.id).await.unwrap();
    not_found(s.webhook_delete(ORG, &first.id).await);
    create().await.unwrap();
    refused(create().await, Quota::Webhooks, 2);
    assert_eq!(counted(&h, ORG).await[5], 2);
}

/// What an organization is made with counts, however it is made.
async fn an_organization_counts_what_it_was_made_with(h: Harness) {
    let s = &h.store;
    assert_eq!(counted(&h, ORG).await, [0, 0, 1, 1, 1, 0]);

    assert_eq!(s.bootstrap(new_key()).await.unwrap(), Bootstrap::Created);
    assert_eq!(counted(&h, DEFAULT_ORGANIZATION).await, [0, 0, 1, 1, 1, 0]);
    // Its admin's key deleted by hand (and given back), a bootstrap gives
    // the admin a key again; then the admin itself.
    for restore in [
        "DELETE FROM api_keys WHERE org = 'default'; \
         UPDATE org_usage SET n = n - 1 WHERE org = 'default' AND resource = 'api_keys' \
         AND slot = 0",
        "DELETE FROM api_keys WHERE org = 'default'; \
         DELETE FROM principals WHERE org = 'default'; \
         UPDATE org_usage SET n = n - 1 WHERE org = 'default' \
         AND resource IN ('api_keys', 'principals') AND slot = 0",
    ] {
        h.raw(restore).await;
        assert_eq!(s.bootstrap(new_key()).await.unwrap(), Bootstrap::Restored);
        assert_eq!(counted(&h, DEFAULT_ORGANIZATION).await, [0, 0, 1, 1, 1, 0]);
    }
    assert_eq!(s.bootstrap(new_key()).await.unwrap(), Bootstrap::Unchanged);
    assert_eq!(counted(&h, DEFAULT_ORGANIZATION).await, [0, 0, 1, 1, 1, 0]);
}

/// Creates the `i`-th resource of `quota` in [`ORG`].
async fn create(s: &dyn Store, quota: Quota, i: usize) -> Result<()> {
    let name = format!("r{i}");
    match quota {
        Quota::Queues => s
            .queue_create(ORG, &name, &QueueConfig::default(), None)
            .await
            .map(drop),
        Quota::Jobs => s
            .job_create(ORG, &name, &job(), false, None)
            .await
            .map(drop),
        Quota::Principals => s
            .principal_create(ORG, &name, PrincipalKind::Service, Role::Writer, None)
            .await
            .map(drop),
        Quota::ApiKeys => s
            .api_key_create(ORG, ADMIN_PRINCIPAL, new_key(), None)
            .await
            .map(drop),
        Quota::SigningSecrets => s.signing_secret_rotate(ORG, None).await.map(drop),
        Quota::Webhooks => s
            .webhook_create(
                ORG,
                "http://127.0.0.1:9/hook",
                &[EventType::TaskFailed],
                None,
            )
            .await
            .map(drop),
        Quota::Tasks | Quota::TaskBytes => unreachable!("not an org_usage quota"),
    }
}

/// How many of the creations `tries` made; each other one must have been
/// refused at `quota`'s `limit`.
async fn made(tries: Vec<tokio::task::JoinHandle<Result<()>>>, quota: Quota, limit: u32) -> usize {
    let mut made = 0;
    for t in tries {
        match t.await.unwrap() {
            Ok(()) => made += 1,
            refusal => refused(refusal, quota, limit.into()),
        }
    }
    made
}

/// Forty creations at once, from two nodes on PostgreSQL, with room for
/// ten: ten are made, whichever commit first.
async fn concurrent_creations_stop_at_the_limit(h: Harness) {
    const ROOM: usize = 10;
    const TRIES: usize = 40;
    for (q, quota) in QUOTAS.into_iter().enumerate() {
        let before = counted(&h, ORG).await[q];
        let limit = before as u32 + ROOM as u32;
        set_quotas(&h, only(quota, limit));
        let mut tries = Vec::new();
        for i in 0..TRIES {
            let s: Arc<dyn Store> = if i % 2 == 0 {
                h.store.clone()
            } else {
                h.other.clone()
            };
            tries.push(tokio::spawn(async move { create(&*s, quota, i).await }));
        }
        assert_eq!(made(tries, quota, limit).await, ROOM, "{quota:?}");
        assert_eq!(counted(&h, ORG).await[q], before + ROOM as i64, "{quota:?}");
    }
}

/// A hundred and twenty creations at once, on a node of 40 connections
/// and the harness's two, with room for sixty: sixty are made. On
/// PostgreSQL most of the first ones pass the committed count's margin
/// together, more than the count's slots, and take their counts in their
/// connections' slots without waiting for each other's commits; each then
/// checks the sum, and those near the limit count exactly. The count is
/// the rows either way.
async fn a_crowd_of_creations_stops_at_the_limit(h: Harness) {
    const ROOM: usize = 60;
    const TRIES: usize = 120;
    let wide = h.node_with(40).await;
    for quota in [Quota::Jobs, Quota::Queues] {
        let q = QUOTAS.iter().position(|&x| x == quota).unwrap();
        set_quotas(&h, unlimited());
        wide.set_quotas(unlimited());
        // The organization's first one makes its count's rows.
        create(&*h.store, quota, 999).await.unwrap();
        let before = counted(&h, ORG).await[q];
        let limit = before as u32 + ROOM as u32;
        set_quotas(&h, only(quota, limit));
        wide.set_quotas(only(quota, limit));
        let mut tries = Vec::new();
        for i in 0..TRIES {
            let s = [&wide, &wide, &h.store, &h.other][i % 4].clone();
            tries.push(tokio::spawn(
                async move { create(&*s, quota, 1000 + i).await },
            ));
        }
        assert_eq!(made(tries, quota, limit).await, ROOM, "{quota:?}");
        assert_eq!(counted(&h, ORG).await[q], before + ROOM as i64, "{quota:?}");
        if h.postgres_url().is_some() {
            let slots = h
                .raw_i64(&format!(
                    "SELECT count(*) FROM org_usage WHERE org = '{ORG}' AND resource = '{}' \
                     AND slot <> 0 AND n > 0",
                    quota.resource()
                ))
                .await;
            assert!(
                slots > 1,
                "{quota:?}: counted in {slots} connections' slots"
            );
        }
    }
}

/// A deletion and a creation of one name, at once, again and again: each
/// ends as one of them run first would, never in a deadlock, and the
/// count follows.
async fn deletions_racing_creations_of_one_name_keep_the_count(h: Harness) {
    set_quotas(&h, unlimited());
    for quota in [Quota::Queues, Quota::Jobs] {
        for round in 0..30 {
            let (s, other) = (h.store.clone(), h.other.clone());
            create(&*s, quota, round).await.unwrap();
            let name = format!("r{round}");
            let delete = tokio::spawn(async move {
                match quota {
                    Quota::Queues => s.queue_delete(ORG, &name).await,
                    _ => s.job_delete(ORG, &name).await,
                }
            });
            let again = tokio::spawn(async move { create(&*other, quota, round).await });
            delete.await.unwrap().unwrap();
            match again.await.unwrap() {
                Ok(()) | Err(Error::AlreadyExists { .. }) => {}
                other => panic!("{quota:?} round {round}: {other:?}"),
            }
        }
        counted(&h, ORG).await;
    }
}

/// A database an earlier build left, without counters, holding resources
/// of every kind: the migration that adds the counters counts them, and
/// the quotas hold from the first creation.
async fn the_counters_migration_counts_what_the_database_holds(h: Harness) {
    let s = &h.store;
    let q = QueueConfig::default();
    set_quotas(&h, unlimited());
    s.organization_create("other", new_key(), None)
        .await
        .unwrap();
    for org in [ORG, "other"] {
        s.queue_create(org, "q1", &q, None).await.unwrap();
        s.job_create(org, "j1", &job(), false, None).await.unwrap();
    }
    s.queue_create(ORG, "q2", &q, None).await.unwrap();
    s.job_create(ORG, "j2", &job(), false, None).await.unwrap();
    s.principal_create(ORG, "p", PrincipalKind::Service, Role::Writer, None)
        .await
        .unwrap();
    s.api_key_create(ORG, "p", new_key(), None).await.unwrap();
    s.signing_secret_rotate(ORG, None).await.unwrap();
    s.webhook_create(
        ORG,
        "http://127.0.0.1:9/hook",
        &[EventType::TaskFailed],
        None,
    )
    .await
    .unwrap();
    // The event queue an event makes is Idem's, not one of the queues.
    h.raw(
        "INSERT INTO queues (org, name, state, config, created_at, updated_at) \
         VALUES ('acme', '~events', 'running', '{}', 0, 0)",
    )
    .await;

    // Tasks, whose bytes migration 016 counts.
    for i in 0..3 {
        s.task_create(task("q1", &format!("t{i}"), 10 * i))
            .await
            .unwrap();
    }
    let before = task_usage(&h).await;

    // Migrations 017 (groups), 018, 019 and 022 undone too, so that they
    // run again.
    let version_14 = if h.postgres_url().is_some() {
        "UPDATE idem_schema SET version = 14; ALTER TABLE task_counts DROP COLUMN bytes; \
         ALTER TABLE task_dispatches DROP COLUMN n; \
         ALTER TABLE attempts DROP COLUMN response; \
         ALTER TABLE tasks DROP COLUMN group_key, DROP COLUMN priority; \
         ALTER TABLE queues DROP COLUMN ordered, DROP COLUMN group_cursor; \
         CREATE INDEX tasks_due_by_queue ON tasks (org, queue, next_attempt_at, uid, \
         attempt_count) WHERE status = 'pending'; \
         CREATE INDEX tasks_running ON tasks (org, queue) WHERE status = 'running'"
    } else {
        "PRAGMA user_version = 14; DROP TRIGGER IF EXISTS task_counts_insert; \
         DROP TRIGGER IF EXISTS task_counts_update; DROP TRIGGER task_counts_delete; \
         ALTER TABLE task_counts DROP COLUMN bytes; ALTER TABLE attempts DROP COLUMN response; \
         ALTER TABLE task_dispatches DROP COLUMN n; DROP INDEX tasks_due_by_queue; DROP INDEX tasks_running; \
         ALTER TABLE tasks DROP COLUMN group_key; ALTER TABLE tasks DROP COLUMN priority; \
         ALTER TABLE queues DROP COLUMN ordered; ALTER TABLE queues DROP COLUMN group_cursor; \
         CREATE INDEX tasks_due_by_queue ON tasks (org, queue, next_attempt_at, uid, \
         attempt_count) WHERE status = 'pending'; \
         CREATE INDEX tasks_running ON tasks (org, queue) WHERE status = 'running'"
    };
    h.raw(&format!("DROP TABLE org_usage; {version_14}")).await;
    let reopened = h.reopen().await;
    assert_eq!(task_usage(&h).await, before, "the bytes counted again");

    assert_eq!(counted(&h, ORG).await, [2, 2, 2, 2, 2, 1]);
    assert_eq!(counted(&h, "other").await, [1, 1, 1, 1, 1, 0]);
    reopened.set_quotas(only(Quota::Queues, 2));
    refused(
        reopened.queue_create(ORG, "q3", &q, None).await,
        Quota::Queues,
        2,
    );
    reopened.queue_delete(ORG, "q1").await.unwrap();
    reopened.queue_create(ORG, "q3", &q, None).await.unwrap();
    counted(&h, ORG).await;
}

/// A task of `body_len` payload bytes.
fn task(queue: &str, task_id: &str, body_len: usize) -> TaskCreate {
    let mut target = idem_core::task::Target::payload(Some((
        idem_core::task::BodyForm::Text,
        vec![b'x'; body_len],
    )));
    target.url = "http://127.0.0.1:9/hook".into();
    target.method = "POST".into();
    TaskCreate {
        target,
        ..TaskCreate::example(ORG, queue, task_id)
    }
}

/// [`ORG`]'s live tasks and stored bytes as `task_counts` holds them,
/// checked against its rows.
async fn task_usage(h: &Harness) -> (i64, i64) {
    let live = "status IN ('pending', 'running')";
    let held_live = h
        .raw_i64(&format!(
            "SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM task_counts \
             WHERE org = '{ORG}' AND {live}"
        ))
        .await;
    let real_live = h
        .raw_i64(&format!(
            "SELECT count(*) FROM tasks WHERE org = '{ORG}' AND {live}"
        ))
        .await;
    assert_eq!(held_live, real_live, "live tasks against the rows");
    let held_bytes = h
        .raw_i64(&format!(
            "SELECT CAST(coalesce(sum(bytes), 0) AS BIGINT) FROM task_counts \
             WHERE org = '{ORG}'"
        ))
        .await;
    let real_bytes = h
        .raw_i64(&format!(
            "SELECT CAST(coalesce(sum(octet_length(target) + coalesce(octet_length(body), 0)), 0) \
             AS BIGINT) FROM tasks WHERE org = '{ORG}'"
        ))
        .await;
    assert_eq!(held_bytes, real_bytes, "stored bytes against the rows");
    (held_live, held_bytes)
}

/// A claimed task's attempt answered 200.
fn succeeded(c: &idem_store::dispatch::ClaimedTask) -> AttemptResult {
    AttemptResult {
        task_uid: c.task.uid.clone(),
        attempt: c.attempt,
        status_code: Some(200),
        error: None,
        duration: std::time::Duration::from_millis(1),
        retry_after: None,
        give_up: false,
        response: None,
    }
}

/// The task quotas' counters follow every way a task comes, changes state
/// and goes: creates alone and batched, claims, completions, a cancel, a
/// queue's deletion; and the quotas refuse what would pass them.
async fn the_task_counters_match_the_rows(h: Harness) {
    let s = &h.store;
    set_quotas(&h, unlimited());
    let q = QueueConfig::default();
    s.queue_create(ORG, "a", &q, None).await.unwrap();
    s.queue_create(ORG, "b", &q, None).await.unwrap();
    for i in 0..5 {
        s.task_create(task("a", &format!("t{i}"), i * 100))
            .await
            .unwrap();
    }
    s.task_create_batch(TaskBatch {
        org: ORG.into(),
        queue: "b".into(),
        tasks: (0..4)
            .map(|i| Ok(task("b", &format!("b{i}"), 50)))
            .collect(),
        atomic: false,
        completion: None,
    })
    .await
    .unwrap();
    let (live, bytes) = task_usage(&h).await;
    assert_eq!(live, 9);
    assert!(bytes > 1000 + 200, "{bytes}");

    let claimed = s
        .dispatch_claim(DispatchClaim {
            max_tasks: 3,
            lease_grace: std::time::Duration::from_secs(30),
            attempts_kept: 10,
            fair_share: None,
        })
        .await
        .unwrap();
    assert_eq!(claimed.tasks.len(), 3);
    assert_eq!(task_usage(&h).await, (9, bytes), "running tasks are live");
    let results = claimed.tasks[..2].iter().map(succeeded).collect();
    s.dispatch_complete(results).await.unwrap();
    assert_eq!(task_usage(&h).await, (7, bytes), "finished, kept");
    s.task_cancel(ORG, "a", "t4").await.unwrap();
    assert_eq!(task_usage(&h).await.0, 6);
    s.queue_delete(ORG, "b").await.unwrap();
    let (live, left) = task_usage(&h).await;
    assert!(
        left < bytes,
        "a deleted queue's tasks give their bytes back"
    );

    set_quotas(
        &h,
        Quotas {
            tasks: u64::try_from(live).unwrap(),
            ..unlimited()
        },
    );
    refused(
        s.task_create(task("a", "over", 0)).await,
        Quota::Tasks,
        live as u64,
    );
    not_found(s.task_get(ORG, "a", "over").await);
    set_quotas(
        &h,
        Quotas {
            task_bytes: u64::try_from(left).unwrap() + 100,
            ..unlimited()
        },
    );
    refused(
        s.task_create(task("a", "big", 1000)).await,
        Quota::TaskBytes,
        left as u64 + 100,
    );
    s.task_create(task("a", "small", 0)).await.unwrap();
    task_usage(&h).await;
}

/// The counters of each queue and status against its rows, after writes
/// that raced each other: on SQLite they shared group commits, so a commit
/// held creates, duplicates, atomic batches rolled back after inserting,
/// cancels and a queue's delete between creates into it, and counted them
/// all at its end.
async fn racing_writes_keep_every_counter_exact(h: Harness) {
    set_quotas(&h, unlimited());
    let q = QueueConfig::default();
    for name in ["a", "b"] {
        h.store.queue_create(ORG, name, &q, None).await.unwrap();
    }
    h.store.task_create(task("a", "taken", 1)).await.unwrap();
    let mut writes = Vec::new();
    for round in 0..6 {
        for i in 0..24 {
            let s = h.store.clone();
            let queue = if i % 3 == 0 { "b" } else { "a" };
            // One create in four takes an ID another create of the round
            // took: a duplicate, counted nothing.
            let id = format!("r{round}-{}", if i % 4 == 3 { i - 1 } else { i });
            writes.push(tokio::spawn(async move {
                let _ = s.task_create(task(queue, &id, i * 7)).await;
            }));
        }
        let s = h.store.clone();
        writes.push(tokio::spawn(async move {
            // Its first two items are inserted, the third is taken: the
            // batch fails whole and its two inserts are undone.
            let failed = s
                .task_create_batch(TaskBatch {
                    org: ORG.into(),
                    queue: "a".into(),
                    tasks: [format!("x1-{round}"), format!("x2-{round}"), "taken".into()]
                        .iter()
                        .map(|id| Ok(task("a", id, 40)))
                        .collect(),
                    atomic: true,
                    completion: None,
                })
                .await;
            assert!(
                matches!(failed, Err(Error::BatchItem { index: 2, .. })),
                "{failed:?}"
            );
        }));
        let s = h.store.clone();
        writes.push(tokio::spawn(async move {
            let _ = s.task_cancel(ORG, "a", &format!("r{round}-1")).await;
        }));
        if round == 3 {
            let s = h.store.clone();
            writes.push(tokio::spawn(async move {
                s.queue_delete(ORG, "b").await.unwrap();
                s.queue_create(ORG, "b", &QueueConfig::default(), None)
                    .await
                    .unwrap();
            }));
        }
    }
    for w in writes {
        w.await.unwrap();
    }
    let claimed = h
        .store
        .dispatch_claim(DispatchClaim {
            max_tasks: 10,
            lease_grace: std::time::Duration::from_secs(30),
            attempts_kept: 10,
            fair_share: None,
        })
        .await
        .unwrap();
    assert!(!claimed.tasks.is_empty());
    let finished = claimed.tasks.iter().step_by(2).map(succeeded).collect();
    h.store.dispatch_complete(finished).await.unwrap();

    h.assert_counters_match_rows(ORG).await;
    let live = h
        .raw_i64(&format!(
            "SELECT CAST(count(*) AS BIGINT) FROM tasks WHERE org = '{ORG}' \
             AND status IN ('pending', 'running')"
        ))
        .await;
    assert!(live > 50, "{live} live tasks");
    assert_eq!(task_usage(&h).await.0, live);
}

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await;
    the_queue_quota_is_given_back_by_deletes,
    the_job_quota_is_given_back_by_deletes,
    the_principal_quota_counts_every_principal,
    the_api_key_quota_is_given_back_by_revocations,
    the_signing_secret_quota_is_given_back_by_deletes,
    the_webhook_quota_is_given_back_by_deletes,
    an_organization_counts_what_it_was_made_with,
    concurrent_creations_stop_at_the_limit,
    a_crowd_of_creations_stops_at_the_limit,
    deletions_racing_creations_of_one_name_keep_the_count,
    the_counters_migration_counts_what_the_database_holds,
    the_task_counters_match_the_rows,
    racing_writes_keep_every_counter_exact,
}
