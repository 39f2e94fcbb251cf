//! Batch creates (API.md §3, "Batch create"), run against every backend:
//! one commit for the batch, results in request order, an ID taken once
//! whether earlier in the batch or before it, all or nothing when atomic,
//! and the Idempotency-Key record in the batch's commit.

mod support;

use idem_core::FieldErrors;
use idem_core::queue::{QueueConfig, QueueState, RetryConfigPatch};
use idem_core::task::Target;
use idem_store::idempotency::{IdempotencyBegin, KeyCompletion, LockOutcome, RecordState};
use idem_store::*;
use jiff::SignedDuration;
use std::collections::BTreeMap;
use std::time::Duration;
use support::{Harness, ORG};

fn create(task_id: &str) -> TaskCreate {
    TaskCreate {
        target: support::hook(Some((idem_core::task::BodyForm::Text, b"hello".to_vec()))),
        ..TaskCreate::example(ORG, "q", task_id)
    }
}

fn batch(tasks: Vec<std::result::Result<TaskCreate, FieldErrors>>, atomic: bool) -> TaskBatch {
    TaskBatch {
        org: ORG.into(),
        queue: "q".into(),
        tasks,
        atomic,
        completion: None,
    }
}

/// An item the store itself refuses: its retry policy, merged with the
/// queue's, is out of range.
fn refused_by_the_store(task_id: &str) -> TaskCreate {
    TaskCreate {
        retry_config: RetryConfigPatch {
            max_attempts: Some(2_000_000),
            ..RetryConfigPatch::default()
        },
        ..create(task_id)
    }
}

fn refused_by_the_caller() -> FieldErrors {
    let mut errors = FieldErrors::new();
    errors.push(
        "tasks[1].target.url",
        "must be an absolute http or https URL",
    );
    errors
}

impl Harness {
    async fn queue(&self, dedup_window_s: u64) {
        let config = QueueConfig {
            dedup_window_s,
            ..QueueConfig::default()
        };
        self.store
            .queue_create(ORG, "q", &config, None)
            .await
            .unwrap();
    }

    async fn ids(&self) -> Vec<String> {
        let page = self
            .store
            .task_list(
                ORG,
                "q",
                TaskFilter::default(),
                &PageRequest {
                    limit: 2000,
                    after: None,
                },
            )
            .await
            .unwrap();
        page.items.into_iter().map(|t| t.task_id).collect()
    }

    /// How many transactions wrote the queue's tasks, on PostgreSQL (each
    /// row's `xmin`); `None` on SQLite, whose writer commits each job whole.
    async fn writing_transactions(&self) -> Option<i64> {
        let url = self.postgres_url()?;
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let row = client
            .query_one(
                "SELECT count(DISTINCT xmin::text) FROM tasks WHERE queue = 'q'",
                &[],
            )
            .await
            .unwrap();
        Some(row.get(0))
    }
}

fn kind(item: &BatchItem) -> &'static str {
    match item {
        BatchItem::Created(_) => "created",
        BatchItem::Exists(_) => "exists",
        BatchItem::Invalid(_) => "invalid",
        BatchItem::Refused(_) => "refused",
    }
}

fn task(item: &BatchItem) -> &Task {
    match item {
        BatchItem::Created(t) | BatchItem::Exists(t) => t,
        BatchItem::Invalid(e) => panic!("no task: {e:?}"),
        BatchItem::Refused(why) => panic!("no task: {why}"),
    }
}

/// Request order, whatever the store does inside: new IDs created, an ID
/// taken before the batch met as that task, an ID taken by an earlier item
/// met as that item's task, the caller's and the store's refusals named
/// under their item; one commit for all that was created.
async fn a_batch_answers_each_item_in_order_with_one_commit(h: Harness) {
    h.queue(600).await;
    let before = h.store.task_create(create("old")).await.unwrap();
    h.clock.advance(SignedDuration::from_secs(1));
    let out = h
        .store
        .task_create_batch(batch(
            vec![
                Ok(create("z")),
                Err(refused_by_the_caller()),
                Ok(create("old")),
                Ok(create("a")),
                Ok(create("z")),
                Ok(refused_by_the_store("m")),
                Ok(create("m")),
            ],
            false,
        ))
        .await
        .unwrap();
    let kinds: Vec<_> = out.items.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "created", "invalid", "exists", "created", "exists", "invalid", "created"
        ]
    );
    assert!(!out.queue_paused);
    assert_eq!(task(&out.items[2]).uid, before.uid, "the task held before");
    assert_eq!(
        task(&out.items[4]).uid,
        task(&out.items[0]).uid,
        "the earlier item of the same ID"
    );
    assert_eq!(out.items[1], BatchItem::Invalid(refused_by_the_caller()));
    match &out.items[5] {
        BatchItem::Invalid(e) => {
            assert_eq!(e.0[0].field, "tasks[5].retry_config.max_attempts")
        }
        other => panic!("{other:?}"),
    }
    // What the answer says is what is stored.
    for i in [0, 3, 6] {
        let created = task(&out.items[i]);
        let stored = h.store.task_get(ORG, "q", &created.task_id).await.unwrap();
        assert_eq!(&stored, created);
        assert_eq!(
            stored.created_at,
            task(&out.items[0]).created_at,
            "one instant"
        );
    }
    let mut ids = h.ids().await;
    ids.sort();
    assert_eq!(ids, ["a", "m", "old", "z"]);
    // "old" was one transaction, the batch another.
    if let Some(n) = h.writing_transactions().await {
        assert_eq!(n, 2);
    }
}

/// All or nothing: the first item that cannot be created is the error,
/// with its index, and none of the others is written.
async fn an_atomic_batch_creates_all_or_nothing(h: Harness) {
    h.queue(600).await;
    h.store.task_create(create("taken")).await.unwrap();
    let err = h
        .store
        .task_create_batch(batch(
            vec![
                Ok(create("a")),
                Ok(create("b")),
                Ok(create("taken")),
                Ok(refused_by_the_store("c")),
            ],
            true,
        ))
        .await
        .unwrap_err();
    match err {
        Error::BatchItem { index: 2, error } => {
            assert!(matches!(*error, Error::TaskExists(_)), "{error:?}")
        }
        other => panic!("{other:?}"),
    }
    let err = h
        .store
        .task_create_batch(batch(
            vec![Ok(create("a")), Ok(create("a")), Ok(create("b"))],
            true,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BatchItem { index: 1, .. }), "{err:?}");
    let err = h
        .store
        .task_create_batch(batch(
            vec![Ok(create("a")), Ok(refused_by_the_store("c"))],
            true,
        ))
        .await
        .unwrap_err();
    match err {
        Error::BatchItem { index: 1, error } => match *error {
            Error::Invalid(e) => assert_eq!(e.0[0].field, "tasks[1].retry_config.max_attempts"),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert_eq!(h.ids().await, ["taken"], "nothing of the failed batches");
    let out = h
        .store
        .task_create_batch(batch(vec![Ok(create("a")), Ok(create("b"))], true))
        .await
        .unwrap();
    assert!(out.items.iter().all(|i| kind(i) == "created"));
    assert_eq!(h.ids().await, ["a", "b", "taken"]);
}

/// A tombstone past its window is replaced by the batch's item; one inside
/// it is met.
async fn a_batch_replaces_expired_tombstones_only(h: Harness) {
    h.queue(60).await;
    for id in ["gone", "recent"] {
        h.store.task_create(create(id)).await.unwrap();
    }
    h.store.task_cancel(ORG, "q", "gone").await.unwrap();
    h.clock.advance(SignedDuration::from_secs(61));
    let old_recent = h.store.task_cancel(ORG, "q", "recent").await.unwrap();
    let out = h
        .store
        .task_create_batch(batch(
            vec![Ok(create("gone")), Ok(create("recent")), Ok(create("gone"))],
            false,
        ))
        .await
        .unwrap();
    let kinds: Vec<_> = out.items.iter().map(kind).collect();
    assert_eq!(kinds, ["created", "exists", "exists"]);
    assert_eq!(task(&out.items[1]).uid, old_recent.uid);
    assert_eq!(task(&out.items[2]).uid, task(&out.items[0]).uid);
    let gone = h.store.task_get(ORG, "q", "gone").await.unwrap();
    assert_eq!(gone.uid, task(&out.items[0]).uid, "the tombstone replaced");
}

/// A batch longer than one insert statement (SQLite inserts up to 64 rows
/// at a time): each row gets its own values, and the items whose IDs are
/// taken before the batch (live, or a tombstone past its window, which is
/// replaced) are answered wherever they fall among the statements.
async fn a_long_batch_answers_each_item_from_its_own_row(h: Harness) {
    h.queue(60).await;
    for id in ["t003", "t070", "t129", "t100"] {
        h.store.task_create(create(id)).await.unwrap();
    }
    h.store.task_cancel(ORG, "q", "t100").await.unwrap();
    h.clock.advance(SignedDuration::from_secs(61));
    let item = |i: i64| {
        let mut c = create(&format!("t{i:03}"));
        c.target.body = Some((
            idem_core::task::BodyForm::Text,
            format!("n={i}").into_bytes(),
        ));
        c.schedule_time = Some(jiff::Timestamp::from_second(2_000_000_000 + i).unwrap());
        c
    };
    let mut tasks: Vec<_> = (0..140).map(|i| Ok(item(i))).collect();
    tasks.push(Ok(item(10)));
    let out = h
        .store
        .task_create_batch(batch(tasks, false))
        .await
        .unwrap();
    assert_eq!(out.items.len(), 141);
    for (i, item) in out.items.iter().enumerate() {
        let expected = if [3, 70, 129].contains(&i) || i == 140 {
            "exists"
        } else {
            "created"
        };
        assert_eq!(kind(item), expected, "item {i}");
        let t = task(item);
        let stored = h.store.task_get(ORG, "q", &t.task_id).await.unwrap();
        assert_eq!(&stored, t, "item {i} is answered as stored");
        if expected == "created" {
            assert_eq!(t.task_id, format!("t{i:03}"));
            assert_eq!(
                t.target.body.as_ref().map(|b| b.1.as_slice()),
                Some(format!("n={i}").as_bytes())
            );
            assert_eq!(t.schedule_time.as_second(), 2_000_000_000 + i as i64);
            assert_eq!(t.next_attempt_at, t.schedule_time);
        }
    }
    assert_eq!(task(&out.items[140]).uid, task(&out.items[10]).uid);
    assert_eq!(h.ids().await.len(), 140);
}

/// A pull queue's batch over several insert statements: each task keeps
/// its own tag and payload (PostgreSQL sets the tags in a statement of
/// their own).
async fn a_long_pull_batch_gives_each_task_its_own_tag(h: Harness) {
    let config = QueueConfig {
        mode: idem_core::queue::QueueMode::Pull,
        ..QueueConfig::default()
    };
    h.store.queue_create(ORG, "q", &config, None).await.unwrap();
    let item = |i: usize| TaskCreate {
        target: Target::payload(Some((
            idem_core::task::BodyForm::Text,
            format!("n={i}").into_bytes(),
        ))),
        pull: true,
        tag: (!i.is_multiple_of(3)).then(|| format!("tag{i}")),
        ..create(&format!("p{i:03}"))
    };
    let out = h
        .store
        .task_create_batch(batch((0..70).map(|i| Ok(item(i))).collect(), false))
        .await
        .unwrap();
    for (i, item) in out.items.iter().enumerate() {
        assert_eq!(kind(item), "created", "item {i}");
        let stored = h
            .store
            .task_get(ORG, "q", &format!("p{i:03}"))
            .await
            .unwrap();
        assert_eq!(&stored, task(item), "item {i} is answered as stored");
        assert_eq!(
            stored.tag,
            (!i.is_multiple_of(3)).then(|| format!("tag{i}")),
            "item {i}"
        );
        assert_eq!(
            stored.target.body.as_ref().map(|b| b.1.as_slice()),
            Some(format!("n={i}").as_bytes()),
            "item {i}"
        );
    }
}

/// A task of the other kind than the queue's mode is refused in its place
/// (409 to the client), the others created; an atomic batch fails whole on
/// it, naming its index.
async fn a_task_of_the_other_kind_is_refused_in_its_place(h: Harness) {
    h.store
        .queue_create(ORG, "q", &QueueConfig::default(), None)
        .await
        .unwrap();
    let pull_item = || TaskCreate {
        target: Target::payload(None),
        pull: true,
        ..create("pulled")
    };
    let out = h
        .store
        .task_create_batch(batch(
            vec![Ok(create("a")), Ok(pull_item()), Ok(create("b"))],
            false,
        ))
        .await
        .unwrap();
    let kinds: Vec<&str> = out.items.iter().map(kind).collect();
    assert_eq!(kinds, ["created", "refused", "created"]);
    assert!(matches!(&out.items[1], BatchItem::Refused(why) if why.contains("push queue")));
    assert!(h.store.task_get(ORG, "q", "pulled").await.is_err());
    let atomic = h
        .store
        .task_create_batch(batch(vec![Ok(create("c")), Ok(pull_item())], true))
        .await;
    assert!(
        matches!(&atomic, Err(Error::BatchItem { index: 1, error }) if matches!(**error, Error::FailedPrecondition(_))),
        "{atomic:?}"
    );
    assert!(
        h.store.task_get(ORG, "q", "c").await.is_err(),
        "nothing of an atomic batch"
    );
}

/// A thousand items, the most a batch holds, and what the batch says of
/// its queue: missing is the whole batch's 404, paused is reported.
async fn a_full_batch_and_its_queue(h: Harness) {
    let err = h
        .store
        .task_create_batch(batch(vec![Ok(create("a"))], false))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::NotFound { kind: "queue", .. }),
        "{err:?}"
    );
    h.queue(600).await;
    let tasks = (0..MAX_BATCH_TASKS)
        .map(|i| Ok(create(&format!("t{i:04}"))))
        .collect();
    let out = h
        .store
        .task_create_batch(batch(tasks, false))
        .await
        .unwrap();
    assert_eq!(out.items.len(), MAX_BATCH_TASKS);
    for (i, item) in out.items.iter().enumerate() {
        assert_eq!(task(item).task_id, format!("t{i:04}"));
        assert_eq!(kind(item), "created");
    }
    assert_eq!(h.ids().await.len(), MAX_BATCH_TASKS);
    if let Some(n) = h.writing_transactions().await {
        assert_eq!(n, 1);
    }
    h.store
        .queue_set_state(ORG, "q", QueueState::Paused, None)
        .await
        .unwrap();
    let out = h
        .store
        .task_create_batch(batch(vec![Ok(create("p"))], false))
        .await
        .unwrap();
    assert!(out.queue_paused);
    assert!(h.store.queue_paused_hint(ORG, "q"));
    h.store
        .queue_set_state(ORG, "q", QueueState::Running, None)
        .await
        .unwrap();
    h.store.task_create(create("r")).await.unwrap();
    assert!(!h.store.queue_paused_hint(ORG, "q"));
}

fn begin(key: &str) -> IdempotencyBegin {
    IdempotencyBegin {
        org: ORG.into(),
        principal: "admin".into(),
        key: key.into(),
        fingerprint: "fp".into(),
        lock_for: Duration::from_secs(60),
        retain_for: Duration::from_secs(3600),
    }
}

async fn started(h: &Harness, key: &str) -> String {
    match h.store.idempotency_begin(&begin(key)).await.unwrap() {
        LockOutcome::Started(token) => token,
        other => panic!("{other:?}"),
    }
}

fn completion(key: &str, token: &str) -> KeyCompletion {
    KeyCompletion {
        org: ORG.into(),
        principal: "admin".into(),
        key: key.into(),
        token: token.into(),
        fingerprint: "fp".into(),
        status: 200,
        resource_kind: "task_batch",
        resource_id: "q".into(),
        body: None,
        retain_for: Duration::from_secs(3600),
        claim: false,
    }
}

/// The record completes in the batch's commit, holding each item's outcome
/// for a replay; a holder whose lock was taken over creates nothing.
async fn a_batch_completes_its_key_in_its_own_commit(h: Harness) {
    h.queue(600).await;
    h.store.task_create(create("taken")).await.unwrap();
    let token = started(&h, "k").await;
    let mut req = batch(
        vec![
            Ok(create("a")),
            Ok(create("taken")),
            Err(refused_by_the_caller()),
        ],
        false,
    );
    req.completion = Some(completion("k", &token));
    let out = h.store.task_create_batch(req).await.unwrap();
    let record = match h.store.idempotency_begin(&begin("k")).await.unwrap() {
        LockOutcome::Existing(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(record.state, RecordState::Completed);
    assert_eq!(record.resource_kind.as_deref(), Some("task_batch"));
    let items: Vec<BatchRecord> = serde_json::from_str(&record.body.unwrap()).unwrap();
    let expected: Vec<BatchRecord> = out.items.iter().map(BatchRecord::of).collect();
    assert_eq!(items, expected);
    assert_eq!(
        items.iter().map(|r| r.status).collect::<Vec<_>>(),
        [201, 409, 400]
    );
    assert_eq!(
        items[0].uid.as_deref(),
        Some(task(&out.items[0]).uid.as_str())
    );
    assert_eq!(items[2].errors, refused_by_the_caller().0);

    let stale = started(&h, "k2").await;
    h.clock.advance(SignedDuration::from_secs(61));
    started(&h, "k2").await;
    let mut late = batch(vec![Ok(create("b")), Ok(create("c"))], false);
    late.completion = Some(completion("k2", &stale));
    let err = h.store.task_create_batch(late).await.unwrap_err();
    assert!(matches!(err, Error::KeyLost(_)), "{err:?}");
    let mut ids = h.ids().await;
    ids.sort();
    assert_eq!(ids, ["a", "taken"]);
}

/// Concurrent batches sharing IDs: each ID has one winner, which every
/// other item of it meets.
async fn concurrent_batches_sharing_ids_have_one_winner_each(h: Harness) {
    h.queue(600).await;
    let runs: Vec<_> = (0..4)
        .map(|n| {
            let store = if n % 2 == 0 {
                h.store.clone()
            } else {
                h.other.clone()
            };
            // Different orders, so that lock order matters on PostgreSQL.
            let mut ids: Vec<String> = (0..50).map(|i| format!("id{i}")).collect();
            if n % 2 == 1 {
                ids.reverse();
            }
            let tasks = ids.iter().map(|id| Ok(create(id))).collect();
            tokio::spawn(async move { store.task_create_batch(batch(tasks, false)).await })
        })
        .collect();
    let mut winners: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut met: Vec<(String, String)> = Vec::new();
    for r in runs {
        for item in r.await.unwrap().unwrap().items {
            let t = task(&item).clone();
            match item {
                BatchItem::Created(_) => {
                    let w = winners
                        .entry(t.task_id.clone())
                        .or_insert((0, t.uid.clone()));
                    w.0 += 1;
                }
                _ => met.push((t.task_id, t.uid)),
            }
        }
    }
    assert_eq!(winners.len(), 50);
    assert!(winners.values().all(|(n, _)| *n == 1));
    for (id, uid) in met {
        assert_eq!(winners[&id].1, uid, "{id}");
    }
}

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await;
    a_batch_answers_each_item_in_order_with_one_commit,
    an_atomic_batch_creates_all_or_nothing,
    a_batch_replaces_expired_tombstones_only,
    a_long_batch_answers_each_item_from_its_own_row,
    a_long_pull_batch_gives_each_task_its_own_tag,
    a_task_of_the_other_kind_is_refused_in_its_place,
    a_full_batch_and_its_queue,
    a_batch_completes_its_key_in_its_own_commit,
    concurrent_batches_sharing_ids_have_one_winner_each,
}
