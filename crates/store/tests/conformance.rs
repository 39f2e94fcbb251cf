//! The storage contract, run against every backend.
//!
//! Each test is written once against `dyn Store` and instantiated for
//! SQLite and PostgreSQL by the macro at the bottom; a backend that passes
//! this suite is a backend the server can use.

mod support;

use idem_core::job::HeaderStyle;
use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState, RetryConfigPatch};
use idem_core::task::{BodyForm, Target, TaskState};
use idem_core::tenancy::{PrincipalKind, Role, generate_api_key, generate_id, hash_api_key};
use idem_core::{Clock, ManualClock};
use idem_store::idempotency::{self, KeyCompletion};
use idem_store::postgres::PostgresStore;
use idem_store::sqlite::SqliteStore;
use idem_store::*;
use idem_testkit::TestDatabase;
use jiff::{SignedDuration, Timestamp};
use std::collections::BTreeMap;
use std::sync::Arc;
use support::events;

struct Harness {
    store: Arc<dyn Store>,
    clock: ManualClock,
    _db: Option<TestDatabase>,
    _dir: Option<tempfile::TempDir>,
}

fn start() -> Timestamp {
    "2026-10-16T12:00:00Z".parse().unwrap()
}

impl Harness {
    async fn sqlite() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(start());
        let store = SqliteStore::open(
            dir.path().join("idem.db"),
            Arc::new(clock.clone()),
            events(),
        )
        .await
        .unwrap();
        Harness {
            store: Arc::new(store),
            clock,
            _db: None,
            _dir: Some(dir),
        }
    }

    async fn postgres() -> Harness {
        let db = TestDatabase::create().await;
        let clock = ManualClock::new(start());
        let store = PostgresStore::open(&db.url, 8, Arc::new(clock.clone()), events())
            .await
            .unwrap();
        Harness {
            store: Arc::new(store),
            clock,
            _db: Some(db),
            _dir: None,
        }
    }

    fn advance(&self, secs: i64) {
        self.clock.advance(SignedDuration::from_secs(secs));
    }

    async fn org(&self, name: &str) {
        self.store
            .organization_create(name, new_key(), None)
            .await
            .unwrap();
    }

    async fn queue(&self, org: &str, name: &str, dedup_window_s: u64) -> Queue {
        let config = QueueConfig {
            mode: Default::default(),
            person_only: false,
            dedup_window_s,
            ..QueueConfig::default()
        };
        self.store
            .queue_create(org, name, &config, None)
            .await
            .unwrap()
    }

    async fn task(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
        self.store.task_create(create(org, queue, task_id)).await
    }
}

fn new_key() -> NewApiKey {
    NewApiKey {
        id: generate_id("key"),
        key_hash: hash_api_key(&generate_api_key()),
    }
}

fn target() -> Target {
    Target {
        url: "http://127.0.0.1:9/hook".into(),
        method: "POST".into(),
        headers: BTreeMap::from([("X-Trace".into(), "1".into())]),
        body: Some((BodyForm::Base64, vec![0, 159, 146, 150])),
        oidc: Some(idem_core::task::Oidc {
            audience: "https://hook.example".into(),
        }),
        secret_headers: vec!["x-trace".into()],
        trace: Some(idem_core::trace::TraceContext {
            traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into(),
            tracestate: Some("congo=t61rcWkgMzE".into()),
        }),
    }
}

fn create(org: &str, queue: &str, task_id: &str) -> TaskCreate {
    TaskCreate {
        target: target(),
        ..TaskCreate::example(org, queue, task_id)
    }
}

fn page(limit: u32, after: Option<String>) -> PageRequest {
    PageRequest { limit, after }
}

async fn bootstrap_creates_the_default_organization_once(h: Harness) {
    let key = new_key();
    assert_eq!(
        h.store.bootstrap(key.clone()).await.unwrap(),
        Bootstrap::Created
    );
    let ignored = new_key();
    assert_eq!(
        h.store.bootstrap(ignored.clone()).await.unwrap(),
        Bootstrap::Unchanged
    );
    assert_eq!(
        h.store
            .api_key_authenticate(&ignored.key_hash)
            .await
            .unwrap(),
        None
    );
    let caller = h
        .store
        .api_key_authenticate(&key.key_hash)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        caller,
        Caller {
            org: "default".into(),
            principal: "admin".into(),
            kind: PrincipalKind::Person,
            role: Role::Admin,
            key_id: key.id
        }
    );
    assert_eq!(
        h.store.signing_secret_list("default").await.unwrap().len(),
        1
    );
}

async fn concurrent_bootstraps_create_one_organization(h: Harness) {
    let runs: Vec<_> = (0..8)
        .map(|_| {
            let store = h.store.clone();
            tokio::spawn(async move { store.bootstrap(new_key()).await.unwrap() })
        })
        .collect();
    let mut created = 0;
    for r in runs {
        created += u32::from(r.await.unwrap() == Bootstrap::Created);
    }
    assert_eq!(created, 1);
}

async fn organizations_are_unique_and_come_with_admin_and_secret(h: Harness) {
    let key = new_key();
    h.store
        .organization_create("acme", key.clone(), None)
        .await
        .unwrap();
    let err = h
        .store
        .organization_create("acme", new_key(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::AlreadyExists {
                kind: "organization",
                ..
            }
        ),
        "{err:?}"
    );
    let admin = h.store.principal_get("acme", "admin").await.unwrap();
    assert_eq!(
        (admin.role, admin.kind),
        (Role::Admin, PrincipalKind::Person)
    );
    let caller = h
        .store
        .api_key_authenticate(&key.key_hash)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(caller.org, "acme");
    let secrets = h.store.signing_secret_list("acme").await.unwrap();
    assert_eq!(secrets.len(), 1);
    assert!(secrets[0].secret.starts_with("whsec_"));
}

async fn principals_are_created_listed_paged_and_changed(h: Harness) {
    h.org("acme").await;
    for name in ["carol", "bob", "dave"] {
        h.store
            .principal_create("acme", name, PrincipalKind::Person, Role::Reader, None)
            .await
            .unwrap();
    }
    let err = h
        .store
        .principal_create("acme", "bob", PrincipalKind::Service, Role::Admin, None)
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        Error::AlreadyExists {
            kind: "principal",
            ..
        }
    ));
    let first = h
        .store
        .principal_list("acme", &page(2, None))
        .await
        .unwrap();
    let names: Vec<_> = first.items.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["admin", "bob"]);
    let second = h
        .store
        .principal_list("acme", &page(2, first.next))
        .await
        .unwrap();
    let names: Vec<_> = second.items.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["carol", "dave"]);
    assert_eq!(second.next, None);
    let bob = h
        .store
        .principal_set_role("acme", "bob", Role::Writer, None)
        .await
        .unwrap();
    assert_eq!(bob.role, Role::Writer);
    assert!(matches!(
        h.store
            .principal_set_role("acme", "nobody", Role::Writer, None)
            .await,
        Err(Error::NotFound {
            kind: "principal",
            ..
        })
    ));
}

async fn api_keys_authenticate_until_revoked(h: Harness) {
    h.org("acme").await;
    h.store
        .principal_create("acme", "svc", PrincipalKind::Service, Role::Writer, None)
        .await
        .unwrap();
    let key = new_key();
    let created = h
        .store
        .api_key_create("acme", "svc", key.clone(), None)
        .await
        .unwrap();
    assert_eq!(created.principal, "svc");
    let caller = h
        .store
        .api_key_authenticate(&key.key_hash)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (caller.principal.as_str(), caller.role),
        ("svc", Role::Writer)
    );
    h.advance(5);
    h.store.api_key_touch(&key.id).await.unwrap();
    let listed = h
        .store
        .api_key_list("acme", "svc", &page(10, None))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(
        listed.items[0].last_used_at,
        Some(start() + SignedDuration::from_secs(5))
    );
    assert!(matches!(
        h.store
            .api_key_create("acme", "ghost", new_key(), None)
            .await,
        Err(Error::NotFound {
            kind: "principal",
            ..
        })
    ));
    h.store
        .api_key_revoke("acme", "svc", &key.id)
        .await
        .unwrap();
    assert_eq!(
        h.store.api_key_authenticate(&key.key_hash).await.unwrap(),
        None
    );
    assert!(matches!(
        h.store.api_key_revoke("acme", "svc", &key.id).await,
        Err(Error::NotFound {
            kind: "api_key",
            ..
        })
    ));
    // A role change applies to existing keys at once.
    let key2 = new_key();
    h.store
        .api_key_create("acme", "svc", key2.clone(), None)
        .await
        .unwrap();
    h.store
        .principal_set_role("acme", "svc", Role::Reader, None)
        .await
        .unwrap();
    let caller = h
        .store
        .api_key_authenticate(&key2.key_hash)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(caller.role, Role::Reader);
}

fn refused(r: Result<impl std::fmt::Debug>) {
    assert!(matches!(r, Err(Error::FailedPrecondition(_))), "{r:?}");
}

async fn an_organization_keeps_an_admin_holding_a_key(h: Harness) {
    let key = new_key();
    h.store
        .organization_create("acme", key.clone(), None)
        .await
        .unwrap();
    refused(h.store.api_key_revoke("acme", "admin", &key.id).await);
    refused(
        h.store
            .principal_set_role("acme", "admin", Role::Writer, None)
            .await,
    );
    // An admin without a key does not count.
    h.store
        .principal_create("acme", "bob", PrincipalKind::Person, Role::Admin, None)
        .await
        .unwrap();
    refused(
        h.store
            .principal_set_role("acme", "admin", Role::Reader, None)
            .await,
    );
    let caller = h.store.api_key_authenticate(&key.key_hash).await.unwrap();
    assert_eq!(caller.map(|c| c.role), Some(Role::Admin), "nothing changed");
    // Nor does a service admin with a key: it may not change roles, so it
    // could never make another admin.
    h.store
        .principal_create("acme", "bot", PrincipalKind::Service, Role::Admin, None)
        .await
        .unwrap();
    h.store
        .api_key_create("acme", "bot", new_key(), None)
        .await
        .unwrap();
    refused(
        h.store
            .principal_set_role("acme", "admin", Role::Writer, None)
            .await,
    );
    refused(h.store.api_key_revoke("acme", "admin", &key.id).await);
    let bob_key = new_key();
    h.store
        .api_key_create("acme", "bob", bob_key.clone(), None)
        .await
        .unwrap();
    h.store
        .principal_set_role("acme", "admin", Role::Writer, None)
        .await
        .unwrap();
    h.store
        .api_key_revoke("acme", "admin", &key.id)
        .await
        .unwrap();
    refused(h.store.api_key_revoke("acme", "bob", &bob_key.id).await);
    refused(
        h.store
            .principal_set_role("acme", "bob", Role::Writer, None)
            .await,
    );
    // Another organization's admins are no help.
    h.org("other").await;
    refused(h.store.api_key_revoke("acme", "bob", &bob_key.id).await);
}

/// Two admins demoting each other at once: one wins, one admin is left.
async fn concurrent_demotions_leave_an_admin(h: Harness) {
    h.store
        .organization_create("acme", new_key(), None)
        .await
        .unwrap();
    h.store
        .principal_create("acme", "bob", PrincipalKind::Person, Role::Admin, None)
        .await
        .unwrap();
    h.store
        .api_key_create("acme", "bob", new_key(), None)
        .await
        .unwrap();
    let demotions: Vec<_> = ["admin", "bob"]
        .into_iter()
        .map(|name| {
            let store = h.store.clone();
            tokio::spawn(async move {
                store
                    .principal_set_role("acme", name, Role::Writer, None)
                    .await
            })
        })
        .collect();
    let mut done = 0;
    for d in demotions {
        match d.await.unwrap() {
            Ok(_) => done += 1,
            Err(Error::FailedPrecondition(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(done, 1);
    let admins = h
        .store
        .principal_list("acme", &page(10, None))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|p| p.role == Role::Admin)
        .count();
    assert_eq!(admins, 1);
}

async fn signing_secrets_rotate_and_keep_at_least_one(h: Harness) {
    h.org("acme").await;
    let first = h.store.signing_secret_list("acme").await.unwrap().remove(0);
    h.advance(1);
    let second = h.store.signing_secret_rotate("acme", None).await.unwrap();
    let listed = h.store.signing_secret_list("acme").await.unwrap();
    assert_eq!(listed, [second.clone(), first.clone()], "newest first");
    h.store
        .signing_secret_delete("acme", &first.id)
        .await
        .unwrap();
    assert!(matches!(
        h.store.signing_secret_delete("acme", &second.id).await,
        Err(Error::FailedPrecondition(_))
    ));
    assert!(matches!(
        h.store.signing_secret_delete("acme", "ss_nope").await,
        Err(Error::NotFound { .. })
    ));
}

fn oidc_key(kid: &str) -> idem_store::oidc::NewOidcKey {
    idem_store::oidc::NewOidcKey {
        kid: kid.into(),
        algorithm: "ES256".into(),
        private_key: format!("private of {kid}"),
        public_jwk: format!(r#"{{"kid":"{kid}"}}"#),
    }
}

/// One key per organization and rotation period, whoever asks; published
/// until `keep` after its creation, then deleted with the next rotation.
async fn oidc_keys_rotate_and_stay_published_until_their_tokens_expired(h: Harness) {
    use std::time::Duration;
    h.org("acme").await;
    h.org("other").await;
    let (rotation, keep) = (Duration::from_secs(100), Duration::from_secs(250));
    let first = h
        .store
        .oidc_key_current("acme", rotation, keep, oidc_key("k1"))
        .await
        .unwrap();
    assert_eq!(first.kid, "k1");
    assert_eq!(first.private_key, "private of k1");
    assert_eq!(first.created_at, h.clock.now());
    h.advance(50);
    let again = h
        .store
        .oidc_key_current("acme", rotation, keep, oidc_key("unused"))
        .await
        .unwrap();
    assert_eq!(
        again, first,
        "a young key is kept; the candidate is dropped"
    );
    let theirs = h
        .store
        .oidc_key_current("other", rotation, keep, oidc_key("o1"))
        .await
        .unwrap();
    assert_eq!(theirs.kid, "o1", "each organization has its own");

    h.advance(60);
    let second = h
        .store
        .oidc_key_current("acme", rotation, keep, oidc_key("k2"))
        .await
        .unwrap();
    assert_eq!(second.kid, "k2", "past the rotation period, a new key");
    let kids = |keys: Vec<idem_store::oidc::OidcPublicKey>| {
        keys.into_iter().map(|k| k.kid).collect::<Vec<_>>()
    };
    let published = h.store.oidc_key_published(keep).await.unwrap();
    assert_eq!(kids(published.clone()), ["k2", "o1", "k1"], "newest first");
    assert_eq!(published[2].public_jwk, r#"{"kid":"k1"}"#);

    // k1 is 260 s old: past `keep`, it is no longer published, and the
    // next key made for its organization deletes it.
    h.advance(150);
    assert_eq!(
        kids(h.store.oidc_key_published(keep).await.unwrap()),
        ["k2", "o1"]
    );
    let third = h
        .store
        .oidc_key_current("acme", rotation, keep, oidc_key("k3"))
        .await
        .unwrap();
    assert_eq!(third.kid, "k3");
    assert_eq!(
        kids(
            h.store
                .oidc_key_published(Duration::from_secs(10_000))
                .await
                .unwrap()
        ),
        ["k3", "k2", "o1"],
        "k1 was deleted, k2 kept"
    );
}

async fn queues_are_created_listed_updated_and_deleted(h: Harness) {
    h.org("acme").await;
    let q = h.queue("acme", "payments", 86_400).await;
    assert_eq!(q.state, QueueState::Running);
    assert_eq!(q.config, QueueConfig::default());
    assert!(matches!(
        h.store
            .queue_create("acme", "payments", &QueueConfig::default(), None)
            .await,
        Err(Error::AlreadyExists { kind: "queue", .. })
    ));
    h.queue("acme", "emails", 60).await;
    h.queue("acme", "reports", 60).await;
    let p1 = h.store.queue_list("acme", &page(2, None)).await.unwrap();
    let p2 = h
        .store
        .queue_list("acme", &page(2, p1.next.clone()))
        .await
        .unwrap();
    let names: Vec<_> = p1
        .items
        .iter()
        .chain(&p2.items)
        .map(|q| q.name.as_str())
        .collect();
    assert_eq!(names, ["emails", "payments", "reports"]);
    assert_eq!(p2.next, None);

    h.advance(10);
    let patch = QueueConfigPatch {
        retry_config: Some(RetryConfigPatch {
            max_attempts: Some(7),
            ..Default::default()
        }),
        ..Default::default()
    };
    let updated = h
        .store
        .queue_update("acme", "payments", &patch, None)
        .await
        .unwrap();
    assert_eq!(updated.config.retry_config.max_attempts, 7);
    assert_eq!(updated.config.retry_config.min_backoff_ms, 100);
    assert!(updated.updated_at > updated.created_at);
    let invalid = QueueConfigPatch {
        dispatch_deadline_s: Some(0),
        ..Default::default()
    };
    match h
        .store
        .queue_update("acme", "payments", &invalid, None)
        .await
    {
        Err(Error::Invalid(errors)) => assert_eq!(errors.0[0].field, "dispatch_deadline_s"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        h.store
            .queue_get("acme", "payments")
            .await
            .unwrap()
            .config
            .dispatch_deadline_s,
        600,
        "a rejected update writes nothing"
    );
    let paused = h
        .store
        .queue_set_state("acme", "payments", QueueState::Paused, None)
        .await
        .unwrap();
    assert_eq!(paused.state, QueueState::Paused);
    h.task("acme", "payments", "t1").await.unwrap();
    h.store.queue_delete("acme", "payments").await.unwrap();
    assert!(matches!(
        h.store.queue_get("acme", "payments").await,
        Err(Error::NotFound { .. })
    ));
    // A queue re-created under the same name starts empty.
    h.queue("acme", "payments", 60).await;
    h.task("acme", "payments", "t1").await.unwrap();
}

async fn organizations_are_isolated(h: Harness) {
    h.org("acme").await;
    h.org("globex").await;
    h.queue("acme", "payments", 60).await;
    h.task("acme", "payments", "t1").await.unwrap();
    assert!(matches!(
        h.store.queue_get("globex", "payments").await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        h.store.task_get("globex", "payments", "t1").await,
        Err(Error::NotFound { .. })
    ));
    assert!(
        h.store
            .queue_list("globex", &page(10, None))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    // The same names in another organization are unrelated.
    h.queue("globex", "payments", 60).await;
    h.task("globex", "payments", "t1").await.unwrap();
}

async fn a_task_keeps_its_header_style_or_its_queues_at_creation(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "plain", 60).await;
    let config = QueueConfig {
        header_style: HeaderStyle::CloudTasks,
        ..QueueConfig::default()
    };
    h.store
        .queue_create("acme", "ct", &config, None)
        .await
        .unwrap();
    let mut own = create("acme", "plain", "own");
    own.header_style = Some(HeaderStyle::CloudTasks);
    let mut opted_out = create("acme", "ct", "opted-out");
    opted_out.header_style = Some(HeaderStyle::Idem);
    for (req, expected) in [
        (own, HeaderStyle::CloudTasks),
        (opted_out, HeaderStyle::Idem),
        (create("acme", "ct", "inherited"), HeaderStyle::CloudTasks),
        (create("acme", "plain", "default"), HeaderStyle::Idem),
    ] {
        let (queue, id) = (req.queue.clone(), req.task_id.clone());
        let created = h.store.task_create(req).await.unwrap();
        assert_eq!(created.header_style, expected, "{id} as created");
        let got = h.store.task_get("acme", &queue, &id).await.unwrap();
        assert_eq!(got.header_style, expected, "{id} read back");
        assert_eq!(
            got.target,
            target(),
            "{id}: the style is not part of the target"
        );
    }
    // A queue's later change is for tasks created after it.
    let patch = QueueConfigPatch {
        header_style: Some(HeaderStyle::Idem),
        ..Default::default()
    };
    h.store
        .queue_update("acme", "ct", &patch, None)
        .await
        .unwrap();
    let kept = h.store.task_get("acme", "ct", "inherited").await.unwrap();
    assert_eq!(kept.header_style, HeaderStyle::CloudTasks);
}

async fn tasks_read_back_as_created(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let mut req = create("acme", "payments", "payment-1");
    req.schedule_time = Some(start() + SignedDuration::from_secs(30));
    req.dispatch_deadline_s = Some(30);
    req.retry_config.max_attempts = Some(5);
    let created = h.store.task_create(req).await.unwrap();
    assert_eq!(created.target, target());
    assert_eq!(created.retry_config.max_attempts, 5);
    assert_eq!(
        created.retry_config.max_doublings, 16,
        "rest from the queue"
    );
    assert_eq!(created.dispatch_deadline_s, 30);
    assert_eq!(created.created_at, start());
    assert_eq!(created.state(start()), TaskState::Scheduled);
    assert_eq!(
        created.state(start() + SignedDuration::from_secs(30)),
        TaskState::Queued
    );
    let got = h
        .store
        .task_get("acme", "payments", "payment-1")
        .await
        .unwrap();
    assert_eq!(got, created);
    assert!(
        h.store
            .task_attempts("acme", "payments", "payment-1", &all_attempts())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(matches!(
        h.store.task_get("acme", "payments", "nope").await,
        Err(Error::NotFound { kind: "task", .. })
    ));
    assert!(matches!(
        h.store.task_get("acme", "nope", "payment-1").await,
        Err(Error::NotFound { kind: "queue", .. })
    ));
    assert!(matches!(
        h.task("acme", "nope", "x").await,
        Err(Error::NotFound { kind: "queue", .. })
    ));
    let mut bad = create("acme", "payments", "bad");
    bad.retry_config.min_backoff_ms = Some(0);
    assert!(matches!(
        h.store.task_create(bad).await,
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        h.store.task_get("acme", "payments", "bad").await,
        Err(Error::NotFound { .. })
    ));
}

async fn task_id_blocked_until_window_passes(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let first = h.task("acme", "payments", "payment-1").await.unwrap();
    match h.task("acme", "payments", "payment-1").await {
        Err(Error::TaskExists(s)) => {
            assert_eq!(s.state, TaskState::Queued);
            assert_eq!(s.finished_at, None);
        }
        other => panic!("{other:?}"),
    }
    h.advance(10);
    let cancelled = h
        .store
        .task_cancel("acme", "payments", "payment-1")
        .await
        .unwrap();
    assert_eq!(cancelled.state(h.clock.now()), TaskState::Cancelled);
    h.advance(59);
    match h.task("acme", "payments", "payment-1").await {
        Err(Error::TaskExists(s)) => {
            assert_eq!(s.state, TaskState::Cancelled);
            assert_eq!(s.finished_at, Some(start() + SignedDuration::from_secs(10)));
        }
        other => panic!("{other:?}"),
    }
    h.advance(1);
    let second = h.task("acme", "payments", "payment-1").await.unwrap();
    assert_ne!(second.uid, first.uid);
    assert_eq!(second.created_at, start() + SignedDuration::from_secs(70));
    assert_eq!(second.state(h.clock.now()), TaskState::Queued);
}

async fn concurrent_creates_of_one_id_have_one_winner(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let runs: Vec<_> = (0..32)
        .map(|_| {
            let store = h.store.clone();
            tokio::spawn(async move { store.task_create(create("acme", "payments", "same")).await })
        })
        .collect();
    let (mut won, mut lost) = (0, 0);
    for r in runs {
        match r.await.unwrap() {
            Ok(_) => won += 1,
            Err(Error::TaskExists(_)) => lost += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!((won, lost), (1, 31));
}

async fn cancel_and_purge_end_pending_tasks(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    for id in ["a", "b", "c"] {
        h.task("acme", "payments", id).await.unwrap();
    }
    let a = h.store.task_cancel("acme", "payments", "a").await.unwrap();
    assert_eq!(a.finished_at, Some(start()));
    // Cancelling again changes nothing.
    h.advance(5);
    let again = h.store.task_cancel("acme", "payments", "a").await.unwrap();
    assert_eq!(again.finished_at, Some(start()));
    assert_eq!(
        h.store.queue_purge("acme", "payments", None).await.unwrap(),
        2
    );
    for id in ["b", "c"] {
        let t = h.store.task_get("acme", "payments", id).await.unwrap();
        assert_eq!(t.state(h.clock.now()), TaskState::Cancelled);
    }
    assert_eq!(
        h.store.queue_purge("acme", "payments", None).await.unwrap(),
        0
    );
    assert!(matches!(
        h.store.task_run_now("acme", "payments", "a", None).await,
        Err(Error::FailedPrecondition(_))
    ));
}

async fn run_now_makes_a_scheduled_task_due(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let mut req = create("acme", "payments", "later");
    req.schedule_time = Some(start() + SignedDuration::from_hours(1));
    h.store.task_create(req).await.unwrap();
    h.advance(1);
    let t = h
        .store
        .task_run_now("acme", "payments", "later", None)
        .await
        .unwrap();
    assert_eq!(t.state(h.clock.now()), TaskState::Queued);
    assert_eq!(t.next_attempt_at, h.clock.now());
    assert_eq!(
        t.schedule_time,
        start() + SignedDuration::from_hours(1),
        "identity kept"
    );
}

async fn task_list_filters_by_state_and_pages(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    for id in ["t1", "t2", "t3", "t4"] {
        h.task("acme", "payments", id).await.unwrap();
    }
    let mut later = create("acme", "payments", "t0");
    later.schedule_time = Some(start() + SignedDuration::from_hours(1));
    h.store.task_create(later).await.unwrap();
    h.store.task_cancel("acme", "payments", "t2").await.unwrap();

    let ids = |p: &Page<Task>| {
        p.items
            .iter()
            .map(|t| t.task_id.clone())
            .collect::<Vec<_>>()
    };
    let all = TaskFilter::default();
    let p1 = h
        .store
        .task_list("acme", "payments", all.clone(), &page(3, None))
        .await
        .unwrap();
    assert_eq!(ids(&p1), ["t0", "t1", "t2"]);
    let p2 = h
        .store
        .task_list("acme", "payments", all.clone(), &page(3, p1.next))
        .await
        .unwrap();
    assert_eq!(ids(&p2), ["t3", "t4"]);
    assert_eq!(p2.next, None);
    for (state, want) in [
        (TaskState::Scheduled, vec!["t0"]),
        (TaskState::Queued, vec!["t1", "t3", "t4"]),
        (TaskState::Cancelled, vec!["t2"]),
        (TaskState::Running, vec![]),
    ] {
        let filter = TaskFilter {
            state: Some(state),
            ..TaskFilter::default()
        };
        let p = h
            .store
            .task_list("acme", "payments", filter, &page(10, None))
            .await
            .unwrap();
        assert_eq!(ids(&p), want, "{state:?}");
    }
    assert!(matches!(
        h.store
            .task_list("acme", "nope", all, &page(10, None))
            .await,
        Err(Error::NotFound { kind: "queue", .. })
    ));
}

async fn task_lists_filter_by_id_prefix_creation_time_and_state_combined(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    // Created at start: a-1, a-2, b-1; ten seconds later: a-3, b-2, a-0.
    for id in ["a-2", "b-1", "a-1"] {
        h.task("acme", "payments", id).await.unwrap();
    }
    h.advance(10);
    for id in ["a-3", "b-2", "a-0"] {
        h.task("acme", "payments", id).await.unwrap();
    }
    // Neighbours of the prefix in byte order stay out.
    for id in ["a", "a_", "a-", "a--", "b"] {
        h.task("acme", "payments", id).await.unwrap();
    }
    h.store
        .task_cancel("acme", "payments", "a-2")
        .await
        .unwrap();
    let list = |filter: TaskFilter, limit: u32, after: Option<String>| {
        let store = h.store.clone();
        async move {
            store
                .task_list("acme", "payments", filter, &page(limit, after))
                .await
        }
    };
    let ids = |p: &Page<Task>| {
        p.items
            .iter()
            .map(|t| t.task_id.clone())
            .collect::<Vec<_>>()
    };
    let prefix = |p: &str| TaskFilter {
        id_prefix: Some(p.into()),
        ..TaskFilter::default()
    };
    let p = list(prefix("a-"), 10, None).await.unwrap();
    assert_eq!(ids(&p), ["a-", "a--", "a-0", "a-1", "a-2", "a-3"]);
    let p = list(prefix("a-"), 4, None).await.unwrap();
    assert_eq!(ids(&p), ["a-", "a--", "a-0", "a-1"]);
    let p = list(prefix("a-"), 4, p.next).await.unwrap();
    assert_eq!(ids(&p), ["a-2", "a-3"]);
    assert_eq!(p.next, None);

    let ten = start() + SignedDuration::from_secs(10);
    // With a creation bound the list goes by creation time, then ID.
    let before_ten = TaskFilter {
        created_before: Some(ten),
        ..TaskFilter::default()
    };
    let p = list(before_ten.clone(), 10, None).await.unwrap();
    assert_eq!(ids(&p), ["a-1", "a-2", "b-1"]);
    let since_ten = TaskFilter {
        id_prefix: Some("a-".into()),
        created_after: Some(ten),
        ..TaskFilter::default()
    };
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let p = list(since_ten.clone(), 2, after).await.unwrap();
        seen.extend(ids(&p));
        match p.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["a-", "a--", "a-0", "a-3"], "paged by creation time");
    let window = TaskFilter {
        created_after: Some(start()),
        created_before: Some(start() + SignedDuration::from_secs(1)),
        id_prefix: Some("b".into()),
        ..TaskFilter::default()
    };
    assert_eq!(ids(&list(window, 10, None).await.unwrap()), ["b-1"]);

    let cancelled_a = TaskFilter {
        state: Some(TaskState::Cancelled),
        ..prefix("a")
    };
    assert_eq!(ids(&list(cancelled_a, 10, None).await.unwrap()), ["a-2"]);
    let queued_before_ten = TaskFilter {
        state: Some(TaskState::Queued),
        ..before_ten.clone()
    };
    assert_eq!(
        ids(&list(queued_before_ten, 10, None).await.unwrap()),
        ["a-1", "b-1"]
    );
    // Every token names a position: one of the list by ID, without a
    // creation time, starts a list by time at its first task.
    assert_eq!(
        ids(&list(before_ten.clone(), 10, Some("a-1".into()))
            .await
            .unwrap()),
        ids(&list(before_ten, 10, None).await.unwrap())
    );
}

/// A node opens at most its pool and the 14 connections of its own that
/// docs/API.md tells operators to size `max_connections` for, however many
/// creates (a third of them duplicate IDs, read back beside the batches)
/// arrive at once.
#[tokio::test]
async fn postgres_holds_at_most_its_pool_and_fourteen_connections() {
    let db = TestDatabase::create().await;
    let url = db.url.clone();
    let clock = ManualClock::new(start());
    let store = PostgresStore::open(&url, 4, Arc::new(clock.clone()), events())
        .await
        .unwrap();
    let h = Harness {
        store: Arc::new(store),
        clock,
        _db: Some(db),
        _dir: None,
    };
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let runs: Vec<_> = (0..300)
        .map(|i| {
            let (store, req) = (
                h.store.clone(),
                create("acme", "payments", &format!("t{}", i / 3 * 2)),
            );
            tokio::spawn(async move { store.task_create(req).await })
        })
        .collect();
    let (mut created, mut exists) = (0, 0);
    for run in runs {
        match run.await.unwrap() {
            Ok(_) => created += 1,
            Err(Error::TaskExists(_)) => exists += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!((created, exists), (100, 200));
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let held: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(held <= 4 + 14, "{held} connections");
}

/// Under a collation that is not byte order (here ICU's `en-US`, where `a`
/// and `A` sort together), the IDs with a prefix are not one range of the
/// primary key; the list matches them one by one and stays exact.
#[tokio::test]
async fn postgres_lists_by_id_prefix_exactly_under_a_linguistic_collation() {
    let db = TestDatabase::create_linguistic().await;
    let clock = ManualClock::new(start());
    let store = PostgresStore::open(&db.url, 4, Arc::new(clock.clone()), events())
        .await
        .unwrap();
    assert!(!store.ids_bytewise());
    let plain =
        TestDatabase::create_with("TEMPLATE template0 LOCALE_PROVIDER libc LOCALE 'C'").await;
    let bytewise = PostgresStore::open(&plain.url, 1, Arc::new(clock.clone()), events())
        .await
        .unwrap();
    assert!(bytewise.ids_bytewise(), "collation C orders IDs by bytes");
    let h = Harness {
        store: Arc::new(store),
        clock,
        _db: Some(db),
        _dir: None,
    };
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    for id in ["A-1", "a-2", "A_3", "A-", "Ab", "B", "a", "A"] {
        h.task("acme", "payments", id).await.unwrap();
    }
    let list = |prefix: &str, limit: u32, after: Option<String>| {
        let filter = TaskFilter {
            id_prefix: Some(prefix.into()),
            ..TaskFilter::default()
        };
        let store = h.store.clone();
        async move {
            store
                .task_list("acme", "payments", filter, &page(limit, after))
                .await
                .unwrap()
        }
    };
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let p = list("A", 2, after).await;
        seen.extend(p.items.iter().map(|t| t.task_id.clone()));
        match p.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    seen.sort();
    assert_eq!(seen, ["A", "A-", "A-1", "A_3", "Ab"]);
    let p = list("A-", 10, None).await;
    let mut ids: Vec<String> = p.items.iter().map(|t| t.task_id.clone()).collect();
    ids.sort();
    assert_eq!(ids, ["A-", "A-1"]);
}

async fn sweeper_deletes_expired_tombstones_in_batches(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    for i in 0..5 {
        h.task("acme", "payments", &format!("t{i}")).await.unwrap();
        h.store
            .task_cancel("acme", "payments", &format!("t{i}"))
            .await
            .unwrap();
    }
    h.task("acme", "payments", "live").await.unwrap();
    assert_eq!(
        h.store.task_sweep_tombstones(100).await.unwrap(),
        0,
        "inside the window"
    );
    h.advance(60);
    assert_eq!(h.store.task_sweep_tombstones(2).await.unwrap(), 2);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 3);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 0);
    let left = h
        .store
        .task_list("acme", "payments", TaskFilter::default(), &page(10, None))
        .await
        .unwrap();
    assert_eq!(left.items.len(), 1);
    assert_eq!(left.items[0].task_id, "live");
}

async fn ping_answers(h: Harness) {
    h.store.ping().await.unwrap();
}

fn begin(key: &str, fingerprint: &str) -> idempotency::IdempotencyBegin {
    idempotency::IdempotencyBegin {
        org: "acme".into(),
        principal: "admin".into(),
        key: key.into(),
        fingerprint: fingerprint.into(),
        lock_for: std::time::Duration::from_secs(60),
        retain_for: std::time::Duration::from_secs(3600),
    }
}

fn completion(key: &str, token: &str, resource: &str) -> KeyCompletion {
    KeyCompletion {
        org: "acme".into(),
        principal: "admin".into(),
        key: key.into(),
        token: token.into(),
        fingerprint: "fp".into(),
        status: 201,
        resource_kind: "queue",
        resource_id: resource.into(),
        body: None,
        retain_for: std::time::Duration::from_secs(3600),
        claim: false,
    }
}

/// Creates queue `name` of organization `acme`, completing `done` with it.
async fn keyed_queue(h: &Harness, name: &str, done: KeyCompletion) -> Result<Queue> {
    h.store
        .queue_create("acme", name, &QueueConfig::default(), Some(done))
        .await
}

async fn started(h: &Harness, key: &str) -> String {
    match h.store.idempotency_begin(&begin(key, "fp")).await.unwrap() {
        idempotency::LockOutcome::Started(token) => token,
        other => panic!("{other:?}"),
    }
}

async fn idempotency_lock_is_exclusive_until_released(h: Harness) {
    h.org("acme").await;
    let token = started(&h, "k").await;
    match h.store.idempotency_begin(&begin("k", "fp2")).await.unwrap() {
        idempotency::LockOutcome::Existing(r) => {
            assert_eq!(r.state, idempotency::RecordState::InProgress);
            assert_eq!(r.fingerprint, "fp");
        }
        other => panic!("{other:?}"),
    }
    // Another principal's key of the same name is unrelated.
    let mut other = begin("k", "fp");
    other.principal = "someone".into();
    assert!(matches!(
        h.store.idempotency_begin(&other).await.unwrap(),
        idempotency::LockOutcome::Started(_)
    ));
    h.store
        .idempotency_release("acme", "admin", "k", "not-the-token")
        .await
        .unwrap();
    assert!(
        matches!(
            h.store.idempotency_begin(&begin("k", "fp")).await.unwrap(),
            idempotency::LockOutcome::Existing(_)
        ),
        "a stranger's release changes nothing"
    );
    h.store
        .idempotency_release("acme", "admin", "k", &token)
        .await
        .unwrap();
    started(&h, "k").await;
}

async fn completion_commits_with_the_effect(h: Harness) {
    h.org("acme").await;
    let token = started(&h, "k").await;
    // The effect commits later than the lock was taken: the record says
    // when the effect committed, which replays compare with the resource.
    h.advance(5);
    let queue = keyed_queue(&h, "q", completion("k", &token, "q"))
        .await
        .unwrap();
    match h.store.idempotency_begin(&begin("k", "fp")).await.unwrap() {
        idempotency::LockOutcome::Existing(r) => {
            assert_eq!(r.state, idempotency::RecordState::Completed);
            assert_eq!(r.completed_at, Some(queue.created_at));
            assert_eq!(r.status, Some(201));
            assert_eq!(
                (r.resource_kind.as_deref(), r.resource_id.as_deref()),
                (Some("queue"), Some("q"))
            );
        }
        other => panic!("{other:?}"),
    }
    let got = h
        .store
        .idempotency_get("acme", "admin", "k")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        got.expires_at,
        queue.created_at + SignedDuration::from_hours(1)
    );
}

async fn a_failed_effect_leaves_no_completed_record(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "q", 60).await;
    let token = started(&h, "k").await;
    let err = keyed_queue(&h, "q", completion("k", &token, "q"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::AlreadyExists { .. }));
    h.store
        .idempotency_release("acme", "admin", "k", &token)
        .await
        .unwrap();
    assert_eq!(
        h.store.idempotency_get("acme", "admin", "k").await.unwrap(),
        None
    );
}

async fn concurrent_begins_have_one_winner(h: Harness) {
    h.org("acme").await;
    let runs: Vec<_> = (0..32)
        .map(|_| {
            let store = h.store.clone();
            tokio::spawn(
                async move { store.idempotency_begin(&begin("same", "fp")).await.unwrap() },
            )
        })
        .collect();
    let mut winners = 0;
    for r in runs {
        if matches!(r.await.unwrap(), idempotency::LockOutcome::Started(_)) {
            winners += 1;
        }
    }
    assert_eq!(winners, 1);
}

async fn a_stale_holder_cannot_complete_after_a_takeover(h: Harness) {
    h.org("acme").await;
    let stale = started(&h, "k").await;
    h.advance(61);
    let fresh = started(&h, "k").await;
    keyed_queue(&h, "fresh", completion("k", &fresh, "fresh"))
        .await
        .unwrap();
    let err = keyed_queue(&h, "stale", completion("k", &stale, "stale"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::KeyLost(_)), "{err:?}");
    assert!(
        matches!(
            h.store.queue_get("acme", "stale").await,
            Err(Error::NotFound { .. })
        ),
        "the stale effect rolled back with its completion"
    );
}

async fn idempotency_records_expire_and_are_swept(h: Harness) {
    h.org("acme").await;
    let token = started(&h, "k").await;
    keyed_queue(&h, "q", completion("k", &token, "q"))
        .await
        .unwrap();
    assert_eq!(h.store.idempotency_sweep(100).await.unwrap(), 0);
    h.advance(3600);
    assert_eq!(
        h.store.idempotency_get("acme", "admin", "k").await.unwrap(),
        None
    );
    assert_eq!(h.store.idempotency_sweep(100).await.unwrap(), 1);
    started(&h, "k").await;
}

async fn a_task_completes_its_key_in_its_own_commit(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let token = started(&h, "k").await;
    let mut req = create("acme", "payments", "t1");
    req.completion = Some(KeyCompletion {
        resource_kind: "task",
        resource_id: "payments/t1".into(),
        ..completion("k", &token, "")
    });
    h.advance(5);
    let task = h.store.task_create(req).await.unwrap();
    match h.store.idempotency_begin(&begin("k", "fp")).await.unwrap() {
        idempotency::LockOutcome::Existing(r) => {
            assert_eq!(r.state, idempotency::RecordState::Completed);
            assert_eq!(r.resource_id.as_deref(), Some("payments/t1"));
            assert_eq!(r.completed_at, Some(task.created_at), "the effect's commit");
        }
        other => panic!("{other:?}"),
    }
    // A holder whose lock was taken over creates nothing.
    let stale = started(&h, "k2").await;
    h.advance(61);
    started(&h, "k2").await;
    let mut late = create("acme", "payments", "t2");
    late.completion = Some(completion("k2", &stale, "payments/t2"));
    assert!(matches!(
        h.store.task_create(late).await,
        Err(Error::KeyLost(_))
    ));
    assert!(matches!(
        h.store.task_get("acme", "payments", "t2").await,
        Err(Error::NotFound { .. })
    ));
}

/// The queue depth metric's grouped count, and the names the metrics keep
/// series for: a deleted queue leaves both.
async fn task_counts_and_metric_scopes_follow_the_queues(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    h.queue("acme", "emails", 60).await;
    for id in ["a", "b", "c"] {
        h.task("acme", "payments", id).await.unwrap();
    }
    h.store.task_cancel("acme", "payments", "c").await.unwrap();
    let mut counts: Vec<_> = h
        .store
        .task_counts_by_state()
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.org, c.queue, c.status.as_str(), c.count))
        .collect();
    counts.sort();
    assert_eq!(
        counts,
        [
            ("acme".into(), "payments".into(), "cancelled", 1),
            ("acme".into(), "payments".into(), "pending", 2),
        ]
    );
    let scopes = h.store.metric_scopes().await.unwrap();
    assert!(scopes.organizations.contains(&"acme".to_string()));
    let mut queues = scopes.queues.clone();
    queues.sort();
    assert!(queues.contains(&("acme".into(), "emails".into())));
    assert!(queues.contains(&("acme".into(), "payments".into())));

    h.store.queue_delete("acme", "payments").await.unwrap();
    assert!(h.store.task_counts_by_state().await.unwrap().is_empty());
    let scopes = h.store.metric_scopes().await.unwrap();
    assert!(!scopes.queues.contains(&("acme".into(), "payments".into())));
    assert!(scopes.queues.contains(&("acme".into(), "emails".into())));
}

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await;
    ping_answers,
    bootstrap_creates_the_default_organization_once,
    an_organization_keeps_an_admin_holding_a_key,
    concurrent_demotions_leave_an_admin,
    concurrent_bootstraps_create_one_organization,
    organizations_are_unique_and_come_with_admin_and_secret,
    principals_are_created_listed_paged_and_changed,
    api_keys_authenticate_until_revoked,
    signing_secrets_rotate_and_keep_at_least_one,
    oidc_keys_rotate_and_stay_published_until_their_tokens_expired,
    queues_are_created_listed_updated_and_deleted,
    organizations_are_isolated,
    task_counts_and_metric_scopes_follow_the_queues,
    tasks_read_back_as_created,
    a_task_keeps_its_header_style_or_its_queues_at_creation,
    task_id_blocked_until_window_passes,
    concurrent_creates_of_one_id_have_one_winner,
    cancel_and_purge_end_pending_tasks,
    run_now_makes_a_scheduled_task_due,
    task_list_filters_by_state_and_pages,
    task_lists_filter_by_id_prefix_creation_time_and_state_combined,
    sweeper_deletes_expired_tombstones_in_batches,
    idempotency_lock_is_exclusive_until_released,
    completion_commits_with_the_effect,
    a_failed_effect_leaves_no_completed_record,
    concurrent_begins_have_one_winner,
    a_stale_holder_cannot_complete_after_a_takeover,
    idempotency_records_expire_and_are_swept,
    a_task_completes_its_key_in_its_own_commit,
}

/// Many creates at once, as group commit sees them: IDs created several
/// times over, IDs already taken, a queue that does not exist, and a second
/// queue, all interleaved. Each ID has exactly one winner, which is the task
/// stored; every other create of it is 409 naming it; the missing queue is
/// 404 for each of its creates.
async fn concurrent_creates_with_duplicates_and_a_missing_queue(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    h.queue("acme", "mail", 60).await;
    let taken = h.task("acme", "payments", "taken").await.unwrap();
    let mut requests = Vec::new();
    for round in 0..4 {
        for i in 0..40 {
            requests.push(("payments", format!("p{i}")));
            if i % 2 == round % 2 {
                requests.push(("mail", format!("p{i}")));
            }
        }
        requests.push(("payments", "taken".to_string()));
        for i in 0..5 {
            requests.push(("nope", format!("n{i}")));
        }
    }
    let runs: Vec<_> = requests
        .iter()
        .map(|(queue, id)| {
            let (store, req) = (h.store.clone(), create("acme", queue, id));
            tokio::spawn(async move { store.task_create(req).await })
        })
        .collect();
    let mut winners: BTreeMap<(&str, &str), Task> = BTreeMap::new();
    let mut losers: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut missing = 0;
    for ((queue, id), run) in requests.iter().zip(runs) {
        match run.await.unwrap() {
            Ok(t) => {
                assert_eq!(
                    (t.queue.as_str(), t.task_id.as_str()),
                    (*queue, id.as_str())
                );
                assert!(
                    winners.insert((queue, id), t).is_none(),
                    "two winners for {queue}/{id}"
                );
            }
            Err(Error::TaskExists(s)) => {
                assert_eq!(&s.task_id, id);
                assert_eq!(s.state, TaskState::Queued);
                *losers.entry((queue, id)).or_default() += 1;
            }
            Err(Error::NotFound {
                kind: "queue",
                id: q,
            }) => {
                assert_eq!((*queue, q.as_str()), ("nope", "nope"));
                missing += 1;
            }
            Err(e) => panic!("{queue}/{id}: {e:?}"),
        }
    }
    assert_eq!(missing, 20);
    assert_eq!(winners.len(), 40 + 40);
    assert!(!winners.contains_key(&("payments", "taken")));
    assert_eq!(losers.get(&("payments", "taken")), Some(&4));
    for ((queue, id), t) in &winners {
        assert_eq!(
            losers.get(&(*queue, *id)),
            Some(&if *queue == "payments" { 3 } else { 1 })
        );
        assert_eq!(&h.store.task_get("acme", queue, id).await.unwrap(), t);
    }
    assert_eq!(
        h.store.task_get("acme", "payments", "taken").await.unwrap(),
        taken
    );
    let listed = h
        .store
        .task_list("acme", "payments", TaskFilter::default(), &page(100, None))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 41);
}

/// Many different creates at once, as group commit sees them (PostgreSQL
/// inserts them together, one multi-row statement): each task is stored
/// with its own body, schedule time, deadline and retry policy,
/// exactly as its answer says; a create whose retry policy is out of range
/// or whose queue takes pull tasks only fails alone and writes nothing.
async fn concurrent_creates_each_keep_their_own_fields(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    h.store
        .queue_create(
            "acme",
            "jobs",
            &QueueConfig {
                mode: idem_core::queue::QueueMode::Pull,
                ..QueueConfig::default()
            },
            None,
        )
        .await
        .unwrap();
    let runs: Vec<_> = (0..150u32)
        .map(|i| {
            let mut req = create("acme", "payments", &format!("t{i}"));
            req.target.body = Some((BodyForm::Json, format!("{{\"n\":{i}}}").into_bytes()));
            req.schedule_time = Some(start() + SignedDuration::from_secs(i64::from(i)));
            req.dispatch_deadline_s = Some(30 + i);
            req.retry_config.max_attempts = Some(1 + i % 7);
            match i % 25 {
                // Out of range: the create is refused, its neighbours are not.
                3 => req.retry_config.max_attempts = Some(u32::MAX),
                // A push create of a pull queue.
                4 => req.queue = "jobs".into(),
                _ => {}
            }
            let store = h.store.clone();
            tokio::spawn(async move { (i, store.task_create(req).await) })
        })
        .collect();
    let mut created = 0;
    for run in runs {
        let (i, answer) = run.await.unwrap();
        let id = format!("t{i}");
        match (i % 25, answer) {
            (3, Err(Error::Invalid(e))) => {
                assert!(
                    format!("{e:?}").contains("retry_config.max_attempts"),
                    "{e:?}"
                )
            }
            (4, Err(Error::FailedPrecondition(why))) => {
                assert!(why.contains("pull queue"), "{why}")
            }
            (3 | 4, other) => panic!("{id}: {other:?}"),
            (_, Ok(t)) => {
                created += 1;
                assert_eq!(t.task_id, id);
                assert_eq!(
                    t.target.body,
                    Some((BodyForm::Json, format!("{{\"n\":{i}}}").into_bytes()))
                );
                assert_eq!(
                    t.schedule_time,
                    start() + SignedDuration::from_secs(i64::from(i))
                );
                assert_eq!(t.dispatch_deadline_s, 30 + i);
                assert_eq!(t.retry_config.max_attempts, 1 + i % 7);
                assert_eq!(h.store.task_get("acme", "payments", &id).await.unwrap(), t);
            }
            (_, Err(e)) => panic!("{id}: {e:?}"),
        }
    }
    // Six of each refused kind among 150.
    assert_eq!(created, 138);
    let listed = |queue: &'static str| {
        let store = h.store.clone();
        async move {
            let page = page(200, None);
            let tasks = store.task_list("acme", queue, TaskFilter::default(), &page);
            tasks.await.unwrap().items.len()
        }
    };
    assert_eq!((listed("payments").await, listed("jobs").await), (138, 0));
}

/// Concurrent creates of an ID whose tombstone has outlived its window:
/// one of them replaces it, the others see the new task.
async fn concurrent_creates_replace_an_expired_tombstone_once(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let old = h.task("acme", "payments", "t").await.unwrap();
    h.store.task_cancel("acme", "payments", "t").await.unwrap();
    h.advance(61);
    let runs: Vec<_> = (0..24)
        .map(|_| {
            let store = h.store.clone();
            tokio::spawn(async move { store.task_create(create("acme", "payments", "t")).await })
        })
        .collect();
    let mut won = Vec::new();
    let mut lost = 0;
    for r in runs {
        match r.await.unwrap() {
            Ok(t) => won.push(t),
            Err(Error::TaskExists(s)) => {
                assert_eq!(s.state, TaskState::Queued);
                lost += 1;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!((won.len(), lost), (1, 23));
    assert_ne!(won[0].uid, old.uid);
    assert_eq!(
        h.store.task_get("acme", "payments", "t").await.unwrap(),
        won[0]
    );
}

mod group_commit {
    use super::*;

    idem_testkit::backend_tests! {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        sqlite: Harness::sqlite().await,
        postgres: Harness::postgres().await;
        concurrent_creates_with_duplicates_and_a_missing_queue,
        concurrent_creates_each_keep_their_own_fields,
        concurrent_creates_replace_an_expired_tombstone_once,
    }
}

/// A task create of `acme`/`payments`/`task_id` that claims `key` in its own
/// transaction (no lock was taken for it), as the server's creates do.
fn claimed(key: &str, fingerprint: &str, task_id: &str) -> TaskCreate {
    let mut req = create("acme", "payments", task_id);
    req.completion = Some(KeyCompletion {
        org: "acme".into(),
        principal: "admin".into(),
        key: key.into(),
        token: generate_id("tok"),
        fingerprint: fingerprint.into(),
        status: 201,
        resource_kind: "task",
        resource_id: format!("payments/{task_id}"),
        body: None,
        retain_for: std::time::Duration::from_secs(3600),
        claim: true,
    });
    req
}

/// The record a claimed create met.
fn held(r: Result<Task>) -> idempotency::IdempotencyRecord {
    match r {
        Err(Error::KeyHeld(record)) => *record,
        other => panic!("{other:?}"),
    }
}

async fn missing(h: &Harness, task_id: &str) -> bool {
    matches!(
        h.store.task_get("acme", "payments", task_id).await,
        Err(Error::NotFound { .. })
    )
}

async fn a_claimed_create_commits_its_record_with_the_task(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    h.advance(5);
    let task = h.store.task_create(claimed("k", "fp", "t1")).await.unwrap();
    let record = h
        .store
        .idempotency_get("acme", "admin", "k")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.state, idempotency::RecordState::Completed);
    assert_eq!(record.status, Some(201));
    assert_eq!(record.fingerprint, "fp");
    assert_eq!(
        (
            record.resource_kind.as_deref(),
            record.resource_id.as_deref()
        ),
        (Some("task"), Some("payments/t1"))
    );
    assert_eq!(record.completed_at, Some(task.created_at), "its commit");
    assert_eq!(
        record.expires_at,
        task.created_at + SignedDuration::from_hours(1)
    );
    // The key again, for the same request or another: the record answers
    // and nothing is written.
    for fingerprint in ["fp", "fp2"] {
        let again = held(h.store.task_create(claimed("k", fingerprint, "t2")).await);
        assert_eq!(again, record);
    }
    assert!(missing(&h, "t2").await);
    // A lock asked for later finds the record too.
    match h.store.idempotency_begin(&begin("k", "fp")).await.unwrap() {
        idempotency::LockOutcome::Existing(r) => assert_eq!(r, record),
        other => panic!("{other:?}"),
    }
    // Another principal's key of the same name is unrelated.
    let mut theirs = claimed("k", "fp", "t3");
    theirs.completion.as_mut().unwrap().principal = "someone".into();
    h.store.task_create(theirs).await.unwrap();
    // An expired record no longer holds the key.
    h.advance(3600);
    h.store.task_create(claimed("k", "fp", "t4")).await.unwrap();
    let renewed = h
        .store
        .idempotency_get("acme", "admin", "k")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(renewed.resource_id.as_deref(), Some("payments/t4"));
}

async fn a_failed_claimed_create_leaves_its_key_free(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    h.task("acme", "payments", "taken").await.unwrap();
    assert!(matches!(
        h.store.task_create(claimed("k", "fp", "taken")).await,
        Err(Error::TaskExists(_))
    ));
    assert_eq!(
        h.store.idempotency_get("acme", "admin", "k").await.unwrap(),
        None
    );
    let mut nowhere = claimed("k", "fp", "t");
    nowhere.queue = "nope".into();
    assert!(matches!(
        h.store.task_create(nowhere).await,
        Err(Error::NotFound { kind: "queue", .. })
    ));
    assert_eq!(
        h.store.idempotency_get("acme", "admin", "k").await.unwrap(),
        None
    );
    // A tombstone past its window is replaced, the record with it.
    h.store
        .task_cancel("acme", "payments", "taken")
        .await
        .unwrap();
    h.advance(61);
    let task = h
        .store
        .task_create(claimed("k", "fp", "taken"))
        .await
        .unwrap();
    let record = h
        .store
        .idempotency_get("acme", "admin", "k")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.completed_at, Some(task.created_at));
}

/// A lock taken the old way (another node, or another route with the same
/// key) holds the key against a claim until it is released or runs out; a
/// holder whose lock ran out and was taken over by a claim creates nothing.
async fn a_claim_meets_a_lock_taken_before_it(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let token = started(&h, "k").await;
    let busy = held(h.store.task_create(claimed("k", "fp", "t1")).await);
    assert_eq!(busy.state, idempotency::RecordState::InProgress);
    assert_eq!(busy.fingerprint, "fp");
    assert!(missing(&h, "t1").await);
    h.store
        .idempotency_release("acme", "admin", "k", &token)
        .await
        .unwrap();
    h.store.task_create(claimed("k", "fp", "t1")).await.unwrap();

    let stale = started(&h, "k2").await;
    h.advance(61);
    h.store
        .task_create(claimed("k2", "fp", "t2"))
        .await
        .unwrap();
    let mut late = create("acme", "payments", "t3");
    late.completion = Some(KeyCompletion {
        resource_kind: "task",
        resource_id: "payments/t3".into(),
        ..completion("k2", &stale, "")
    });
    assert!(matches!(
        h.store.task_create(late).await,
        Err(Error::KeyLost(_))
    ));
    assert!(missing(&h, "t3").await);
    match h.store.idempotency_begin(&begin("k2", "fp")).await.unwrap() {
        idempotency::LockOutcome::Existing(r) => {
            assert_eq!(r.resource_id.as_deref(), Some("payments/t2"))
        }
        other => panic!("{other:?}"),
    }
}

/// Claims of one key at once, beside creates without keys sharing their
/// commits: one task for the key, whatever the batches.
async fn concurrent_claims_of_one_key_create_once(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let runs: Vec<_> = (0..48)
        .map(|i| {
            let store = h.store.clone();
            let req = if i % 3 == 2 {
                create("acme", "payments", &format!("free{i}"))
            } else {
                claimed("same", "fp", &format!("t{i}"))
            };
            tokio::spawn(async move { store.task_create(req).await })
        })
        .collect();
    let (mut won, mut held_by, mut free) = (Vec::new(), 0, 0);
    for r in runs {
        match r.await.unwrap() {
            Ok(t) if t.task_id.starts_with("free") => free += 1,
            Ok(t) => won.push(t),
            Err(Error::KeyHeld(r)) => {
                assert_eq!(r.state, idempotency::RecordState::Completed);
                held_by += 1;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!((won.len(), held_by, free), (1, 31, 16));
    let record = h
        .store
        .idempotency_get("acme", "admin", "same")
        .await
        .unwrap()
        .unwrap();
    let id = format!("payments/{}", won[0].task_id);
    assert_eq!(record.resource_id.as_deref(), Some(id.as_str()));
    let listed = h
        .store
        .task_list("acme", "payments", TaskFilter::default(), &page(100, None))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 17);
}

/// Claims and locks of one key at once, the locks' holders creating with
/// their tokens as the other routes do: one execution.
async fn concurrent_claims_and_locks_of_one_key_execute_once(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let runs: Vec<_> = (0..32)
        .map(|i| {
            let store = h.store.clone();
            tokio::spawn(async move {
                if i % 2 == 0 {
                    return store
                        .task_create(claimed("same", "fp", &format!("c{i}")))
                        .await;
                }
                let token = match store.idempotency_begin(&begin("same", "fp")).await? {
                    idempotency::LockOutcome::Started(token) => token,
                    idempotency::LockOutcome::Existing(r) => {
                        return Err(Error::KeyHeld(Box::new(r)));
                    }
                };
                let mut req = create("acme", "payments", &format!("l{i}"));
                req.completion = Some(KeyCompletion {
                    resource_kind: "task",
                    resource_id: format!("payments/l{i}"),
                    ..completion("same", &token, "")
                });
                let created = store.task_create(req).await;
                if created.is_err() {
                    store
                        .idempotency_release("acme", "admin", "same", &token)
                        .await?;
                }
                created
            })
        })
        .collect();
    let mut won = 0;
    for r in runs {
        match r.await.unwrap() {
            Ok(_) => won += 1,
            Err(Error::KeyHeld(_) | Error::KeyLost(_)) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(won, 1);
    let listed = h
        .store
        .task_list("acme", "payments", TaskFilter::default(), &page(100, None))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
}

/// Keyed creates of one task ID at once, each under its own key: one
/// winner, whose key alone keeps a record; every other key stays free.
async fn claimed_creates_of_one_id_have_one_winner(h: Harness) {
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let runs: Vec<_> = (0..24)
        .map(|i| {
            let store = h.store.clone();
            let req = claimed(&format!("k{i}"), "fp", "same");
            tokio::spawn(async move { store.task_create(req).await })
        })
        .collect();
    let mut winner = None;
    for (i, r) in runs.into_iter().enumerate() {
        match r.await.unwrap() {
            Ok(_) => assert!(winner.replace(i).is_none(), "two winners"),
            Err(Error::TaskExists(s)) => assert_eq!(s.task_id, "same"),
            Err(e) => panic!("{e:?}"),
        }
    }
    let winner = winner.expect("a winner");
    for i in 0..24 {
        let record = h
            .store
            .idempotency_get("acme", "admin", &format!("k{i}"))
            .await
            .unwrap();
        assert_eq!(record.is_some(), i == winner, "k{i}");
    }
}

/// Two nodes on one database claiming one key at once: one task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgres_nodes_claiming_one_key_create_once() {
    let h = Harness::postgres().await;
    h.org("acme").await;
    h.queue("acme", "payments", 60).await;
    let url = h._db.as_ref().expect("a database").url.clone();
    let other: Arc<dyn Store> = Arc::new(
        PostgresStore::open(&url, 8, Arc::new(h.clock.clone()), events())
            .await
            .unwrap(),
    );
    let runs: Vec<_> = (0..32)
        .map(|i| {
            let store = if i % 2 == 0 {
                h.store.clone()
            } else {
                other.clone()
            };
            tokio::spawn(async move {
                store
                    .task_create(claimed("same", "fp", &format!("t{i}")))
                    .await
            })
        })
        .collect();
    let mut won = 0;
    for r in runs {
        match r.await.unwrap() {
            Ok(_) => won += 1,
            Err(Error::KeyHeld(_)) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(won, 1);
    let listed = other
        .task_list("acme", "payments", TaskFilter::default(), &page(100, None))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
}

mod claimed_keys {
    use super::*;

    idem_testkit::backend_tests! {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        sqlite: Harness::sqlite().await,
        postgres: Harness::postgres().await;
        a_claimed_create_commits_its_record_with_the_task,
        a_failed_claimed_create_leaves_its_key_free,
        a_claim_meets_a_lock_taken_before_it,
        concurrent_claims_of_one_key_create_once,
        concurrent_claims_and_locks_of_one_key_execute_once,
        claimed_creates_of_one_id_have_one_winner,
    }
}

fn all_attempts() -> idem_store::PageRequest {
    idem_store::PageRequest {
        limit: 1000,
        after: None,
    }
}
