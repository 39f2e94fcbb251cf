//! Groups, ordering and priority inside a queue (API.md §13), run against
//! every backend: claims take groups in turns, a group's limit holds
//! across claims and nodes, a FIFO group runs one task at a time in order
//! through retries, priority orders a group's tasks, and the statistics
//! and the list of groups count what is there.

mod support;

use idem_core::Clock;
use idem_core::queue::{GroupOrder, QueueConfig, QueueMode, RetryConfig};
use idem_core::task::{BodyForm, Target};
use idem_store::dispatch::{AttemptResult, DispatchClaim};
use idem_store::idempotency::{IdempotencyBegin, KeyCompletion, LockOutcome};
use idem_store::*;
use jiff::SignedDuration;
use std::collections::HashMap;
use std::time::Duration;
use support::{Harness, ORG};

fn task(queue: &str, task_id: &str, group: Option<&str>, priority: i32, pull: bool) -> TaskCreate {
    TaskCreate {
        target: if pull {
            Target::payload(Some((BodyForm::Json, b"{}".to_vec())))
        } else {
            support::hook(None)
        },
        pull,
        group: group.map(str::to_string),
        priority,
        ..TaskCreate::example(ORG, queue, task_id)
    }
}

fn claim_of(max_tasks: u32) -> WorkClaim {
    WorkClaim {
        org: ORG.into(),
        queue: "w".into(),
        claimant: "alice".into(),
        max_tasks,
        lease_s: 60,
        tag: None,
        attempts_kept: 100,
    }
}

fn groups_of(tasks: &[Task]) -> HashMap<String, usize> {
    let mut n = HashMap::new();
    for t in tasks {
        *n.entry(t.group.clone().unwrap_or_default()).or_default() += 1;
    }
    n
}

fn ids(tasks: &[Task]) -> Vec<&str> {
    tasks.iter().map(|t| t.task_id.as_str()).collect()
}

fn attempt_id(task: &Task) -> String {
    task.lease.as_ref().expect("a lease").attempt_id.clone()
}

impl Harness {
    async fn pull_queue(&self, config: QueueConfig) {
        let config = QueueConfig {
            mode: QueueMode::Pull,
            ..config
        };
        self.store
            .queue_create(ORG, "w", &config, None)
            .await
            .unwrap();
    }

    async fn add(&self, t: TaskCreate) -> Task {
        self.store.task_create(t).await.unwrap()
    }

    async fn claim(&self, max_tasks: u32) -> Vec<Task> {
        self.store.work_claim(claim_of(max_tasks)).await.unwrap()
    }

    async fn complete(&self, t: &Task) {
        self.store
            .work_act(
                ORG,
                "w",
                &t.task_id,
                WorkAction::Complete {
                    attempt_id: attempt_id(t),
                    result: None,
                    person: false,
                    holder: None,
                },
            )
            .await
            .unwrap();
    }

    async fn fail(&self, t: &Task) {
        self.store
            .work_act(
                ORG,
                "w",
                &t.task_id,
                WorkAction::Fail {
                    attempt_id: attempt_id(t),
                    error: "no".into(),
                    person: false,
                    holder: None,
                },
            )
            .await
            .unwrap();
    }

    async fn push_claim(&self, max_tasks: u32) -> Vec<Task> {
        self.store
            .dispatch_claim(DispatchClaim {
                attempts_kept: 100,
                max_tasks,
                lease_grace: Duration::ZERO,
                fair_share: None,
            })
            .await
            .unwrap()
            .tasks
            .into_iter()
            .map(|c| c.task)
            .collect()
    }
}

/// One group's backlog created first does not hold back another's few:
/// the claims alternate between the groups, the ungrouped tasks being one.
async fn claims_take_turns_among_groups(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    for i in 0..60 {
        h.add(task("w", &format!("a{i}"), Some("acct:A"), 0, true))
            .await;
    }
    for i in 0..5 {
        h.add(task("w", &format!("b{i}"), Some("acct:B"), 0, true))
            .await;
    }
    for i in 0..3 {
        h.add(task("w", &format!("u{i}"), None, 0, true)).await;
    }
    // Turns: a0 b0 u0, a1 b1 u1, a2 b2 u2, a3 b3, a4 b4 (the earlier due
    // first among a turn's).
    let first = h.claim(13).await;
    let n = groups_of(&first);
    assert_eq!(n.get("acct:B"), Some(&5), "{:?}", ids(&first));
    assert_eq!(n.get(""), Some(&3), "{:?}", ids(&first));
    assert_eq!(n.get("acct:A"), Some(&5), "{:?}", ids(&first));
    // Within a group, in due order.
    let a: Vec<&str> = first
        .iter()
        .filter(|t| t.group.as_deref() == Some("acct:A"))
        .map(|t| t.task_id.as_str())
        .collect();
    assert_eq!(a, ["a0", "a1", "a2", "a3", "a4"]);

    // Claims of one task go round the groups with due tasks.
    h.add(task("w", "b5", Some("acct:B"), 0, true)).await;
    h.add(task("w", "c0", Some("acct:C"), 0, true)).await;
    let mut seen = Vec::new();
    for _ in 0..3 {
        let one = h.claim(1).await;
        assert_eq!(one.len(), 1);
        seen.push(one[0].group.clone().unwrap_or_default());
    }
    seen.sort();
    assert_eq!(seen, ["acct:A", "acct:B", "acct:C"]);
}

/// A claim that visits as many groups as it takes tasks still fills its
/// turns from the group running fewest: with A running two and B none, a
/// claim of two takes B's first two (turns 1 and 2), not A's next (turn 3).
async fn a_group_running_fewer_takes_more_of_a_claim(h: Harness) {
    h.pull_queue(QueueConfig {
        group_concurrency: Some(4),
        ..QueueConfig::default()
    })
    .await;
    for i in 0..5 {
        h.add(task("w", &format!("a{i}"), Some("A"), 0, true)).await;
    }
    assert_eq!(ids(&h.claim(2).await), ["a0", "a1"]);
    for i in 0..3 {
        h.add(task("w", &format!("b{i}"), Some("B"), 0, true)).await;
    }
    assert_eq!(ids(&h.claim(2).await), ["b0", "b1"]);
    // Now A holds two and B two: the turns alternate again.
    let next = h.claim(2).await;
    assert_eq!(
        groups_of(&next),
        HashMap::from([("A".to_string(), 1), ("B".to_string(), 1)]),
        "{:?}",
        ids(&next)
    );
}

/// Higher priority first within a group, then due order.
async fn priority_orders_a_groups_tasks(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    h.add(task("w", "low", Some("g"), -5, true)).await;
    h.add(task("w", "normal", Some("g"), 0, true)).await;
    h.add(task("w", "urgent", Some("g"), 100, true)).await;
    h.add(task("w", "plain", None, 0, true)).await;
    h.add(task("w", "plain-urgent", None, 10, true)).await;
    let mut order = Vec::new();
    for _ in 0..5 {
        let one = h.claim(1).await;
        order.push(one[0].task_id.clone());
    }
    let in_g: Vec<&str> = order
        .iter()
        .map(String::as_str)
        .filter(|id| ["low", "normal", "urgent"].contains(id))
        .collect();
    assert_eq!(in_g, ["urgent", "normal", "low"], "{order:?}");
    let plain: Vec<&str> = order
        .iter()
        .map(String::as_str)
        .filter(|id| id.starts_with("plain"))
        .collect();
    assert_eq!(plain, ["plain-urgent", "plain"], "{order:?}");
}

/// At most `group_concurrency` of a group run at once, whoever claims;
/// the ungrouped tasks have no limit; a changed limit applies to the next
/// claim.
async fn a_groups_limit_holds_across_claims_and_nodes(h: Harness) {
    h.pull_queue(QueueConfig {
        group_concurrency: Some(2),
        ..QueueConfig::default()
    })
    .await;
    for i in 0..6 {
        h.add(task("w", &format!("a{i}"), Some("a"), 0, true)).await;
        h.add(task("w", &format!("b{i}"), Some("b"), 0, true)).await;
    }
    for i in 0..4 {
        h.add(task("w", &format!("u{i}"), None, 0, true)).await;
    }
    let (one, two) = tokio::join!(
        h.store.work_claim(claim_of(20)),
        h.other.work_claim(claim_of(20))
    );
    let mut all = one.unwrap();
    all.extend(two.unwrap());
    let n = groups_of(&all);
    assert_eq!(n.get("a"), Some(&2), "{:?}", ids(&all));
    assert_eq!(n.get("b"), Some(&2), "{:?}", ids(&all));
    assert_eq!(n.get(""), Some(&4), "{:?}", ids(&all));
    assert!(h.claim(20).await.is_empty(), "every group holds its limit");

    let a = all
        .iter()
        .find(|t| t.group.as_deref() == Some("a"))
        .unwrap();
    h.complete(a).await;
    let next = h.claim(20).await;
    assert_eq!(groups_of(&next), HashMap::from([("a".to_string(), 1)]));

    h.store
        .queue_update(
            ORG,
            "w",
            &idem_core::queue::QueueConfigPatch {
                group_concurrency: Some(Some(3)),
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    let raised = h.claim(20).await;
    assert_eq!(
        groups_of(&raised),
        HashMap::from([("a".to_string(), 1), ("b".to_string(), 1)])
    );
    h.store
        .queue_update(
            ORG,
            "w",
            &idem_core::queue::QueueConfigPatch {
                group_concurrency: Some(None),
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    let unlimited = h.claim(20).await;
    assert_eq!(unlimited.len(), 12 - 3 - 3 - 1, "{:?}", ids(&unlimited));
}

/// A FIFO group runs one task at a time, in (schedule time, creation)
/// order; the next waits while the one before waits for its retry.
async fn a_fifo_group_runs_in_order_through_retries(h: Harness) {
    h.pull_queue(QueueConfig {
        group_order: GroupOrder::Fifo,
        retry_config: RetryConfig {
            max_attempts: 3,
            min_backoff_ms: 10_000,
            max_backoff_ms: 10_000,
            ..RetryConfig::default()
        },
        ..QueueConfig::default()
    })
    .await;
    let earlier = h.clock.now() - SignedDuration::from_secs(5);
    h.add(task("w", "second", Some("ledger"), 0, true)).await;
    h.add(TaskCreate {
        schedule_time: Some(earlier),
        ..task("w", "first", Some("ledger"), 0, true)
    })
    .await;
    h.add(task("w", "third", Some("ledger"), 50, true)).await;
    h.add(task("w", "other", Some("other"), 0, true)).await;

    let claimed = h.claim(10).await;
    let mut got = ids(&claimed);
    got.sort();
    assert_eq!(got, ["first", "other"]);
    let first = claimed.iter().find(|t| t.task_id == "first").unwrap();
    h.fail(first).await;
    assert!(
        h.claim(10).await.is_empty(),
        "the group waits for the retry"
    );
    h.clock.advance(SignedDuration::from_secs(11));
    let retried = h.claim(10).await;
    assert_eq!(ids(&retried), ["first"]);
    h.complete(&retried[0]).await;
    let next = h.claim(10).await;
    assert_eq!(ids(&next), ["second"]);
    h.complete(&next[0]).await;
    assert_eq!(ids(&h.claim(10).await), ["third"]);

    // The queue made again under its name, plain: claims take its tasks
    // as any plain queue's, whatever a store remembers of the old one.
    h.store.queue_delete(ORG, "w").await.unwrap();
    h.pull_queue(QueueConfig::default()).await;
    h.add(task("w", "plain", None, 0, true)).await;
    assert_eq!(ids(&h.claim(10).await), ["plain"]);
}

/// A queue's group order changes at any time and applies to the next
/// claim: made FIFO, a group runs one task at a time in order; back to
/// none, its tasks run beside each other again.
async fn a_changed_group_order_applies_to_the_next_claim(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    for id in ["a1", "a2", "a3"] {
        h.add(task("w", id, Some("a"), 0, true)).await;
        h.clock.advance(SignedDuration::from_secs(1));
    }
    let order = |o: GroupOrder| idem_core::queue::QueueConfigPatch {
        group_order: Some(o),
        ..Default::default()
    };
    h.store
        .queue_update(ORG, "w", &order(GroupOrder::Fifo), None)
        .await
        .unwrap();
    let first = h.claim(10).await;
    assert_eq!(ids(&first), ["a1"]);
    h.complete(&first[0]).await;
    let second = h.claim(10).await;
    assert_eq!(ids(&second), ["a2"]);
    h.store
        .queue_update(ORG, "w", &order(GroupOrder::None), None)
        .await
        .unwrap();
    assert_eq!(ids(&h.claim(10).await), ["a3"], "beside a2, still running");
}

/// The dispatcher's claim of a push queue takes the same turns and holds
/// the same limits.
async fn push_claims_take_turns_within_limits(h: Harness) {
    h.store
        .queue_create(
            ORG,
            "p",
            &QueueConfig {
                group_concurrency: Some(3),
                ..QueueConfig::default()
            },
            None,
        )
        .await
        .unwrap();
    for i in 0..40 {
        h.add(task("p", &format!("a{i}"), Some("a"), 0, false))
            .await;
    }
    for i in 0..2 {
        h.add(task("p", &format!("b{i}"), Some("b"), 0, false))
            .await;
    }
    let claimed = h.push_claim(100).await;
    assert_eq!(
        groups_of(&claimed),
        HashMap::from([("a".to_string(), 3), ("b".to_string(), 2)])
    );
    let outcomes = h
        .store
        .dispatch_complete(
            claimed
                .iter()
                .map(|t| AttemptResult {
                    task_uid: t.uid.clone(),
                    attempt: t.attempt_count,
                    status_code: Some(200),
                    error: None,
                    duration: Duration::from_millis(1),
                    retry_after: None,
                    give_up: false,
                    response: None,
                })
                .collect(),
        )
        .await
        .unwrap();
    assert_eq!(outcomes.len(), 5);
    assert_eq!(groups_of(&h.push_claim(100).await).get("a"), Some(&3));
}

/// Queue statistics count the groups with a due task; the list of groups
/// shows each group with live tasks, by name, paged and by prefix.
async fn statistics_and_the_list_count_groups(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    let later = h.clock.now() + SignedDuration::from_secs(60);
    for g in ["eu:1", "eu:2", "us:1"] {
        h.add(task("w", &format!("{g}-now"), Some(g), 0, true))
            .await;
    }
    h.add(TaskCreate {
        schedule_time: Some(later),
        ..task("w", "eu:3-later", Some("eu:3"), 0, true)
    })
    .await;
    // The ungrouped task comes due after the grouped ones: the oldest due
    // time must come from the groups, which the plain range does not hold.
    let grouped_due = h.clock.now();
    h.clock.advance(SignedDuration::from_secs(1));
    h.add(task("w", "plain", None, 0, true)).await;
    let stats = h.store.queue_stats(ORG, "w").await.unwrap();
    assert_eq!(stats.groups_with_due, 3);
    assert_eq!((stats.scheduled, stats.queued), (1, 4));
    assert_eq!(stats.oldest_due_time, Some(grouped_due));
    let oldest = h.store.queue_oldest_due().await.unwrap();
    let w: Vec<_> = oldest.iter().filter(|q| q.queue == "w").collect();
    assert_eq!(w.len(), 1, "{oldest:?}");
    assert_eq!(w[0].oldest_due, grouped_due);

    let claimed = h.claim(1).await;
    let running_group = claimed[0].group.clone().unwrap_or_default();

    let page = |after: Option<&str>| PageRequest {
        limit: 2,
        after: after.map(str::to_string),
    };
    let first = h.store.queue_groups(ORG, "w", "", &page(None)).await;
    let first = first.unwrap();
    let names: Vec<&str> = first.items.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(names, ["eu:1", "eu:2"]);
    let rest = h
        .store
        .queue_groups(ORG, "w", "", &page(first.next.as_deref()))
        .await
        .unwrap();
    let names: Vec<&str> = rest.items.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(names, ["eu:3", "us:1"]);
    assert_eq!(rest.next, None);
    let all: Vec<GroupStats> = first.items.into_iter().chain(rest.items).collect();
    for g in &all {
        let expect = match g.group.as_str() {
            "eu:3" => (0, 0, 1),
            name if name == running_group => (1, 0, 0),
            _ => (0, 1, 0),
        };
        assert_eq!((g.running, g.due, g.scheduled), expect, "{g:?}");
    }
    let eu = h
        .store
        .queue_groups(ORG, "w", "eu:", &page(Some("eu:1")))
        .await
        .unwrap();
    let names: Vec<&str> = eu.items.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(names, ["eu:2", "eu:3"]);
    let missing = h.store.queue_groups(ORG, "nope", "", &page(None)).await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );
}

/// Every way a task goes in marks its queue ordered in the same commit
/// when the task has a group or a priority, and only then: a plain create,
/// one that claims its Idempotency-Key in the insert, one completing a key
/// locked before (the transactional create) and a batch. A queue left
/// unmarked would never start its grouped tasks.
async fn every_create_path_marks_an_ordered_queue(h: Harness) {
    for q in ["one", "claimed", "locked", "batch", "plain"] {
        h.store
            .queue_create(ORG, q, &QueueConfig::default(), None)
            .await
            .unwrap();
    }
    let ordered = async |q: &str| {
        h.raw_i64(&format!(
            "SELECT ordered FROM queues WHERE org = '{ORG}' AND name = '{q}'"
        ))
        .await
    };
    let completion = |key: &str, token: &str, claim: bool| KeyCompletion {
        org: ORG.into(),
        principal: "admin".into(),
        key: key.into(),
        token: token.into(),
        fingerprint: "fp".into(),
        status: 201,
        resource_kind: "task",
        resource_id: "t".into(),
        body: None,
        retain_for: Duration::from_secs(3600),
        claim,
    };

    h.add(task("plain", "p0", None, 0, false)).await;
    h.store
        .task_create_batch(TaskBatch {
            org: ORG.into(),
            queue: "plain".into(),
            tasks: vec![Ok(task("plain", "p1", None, 0, false))],
            atomic: false,
            completion: None,
        })
        .await
        .unwrap();
    assert_eq!(ordered("plain").await, 0);

    h.add(task("one", "t", Some("g"), 0, false)).await;
    assert_eq!(ordered("one").await, 1);

    let mut claimed = task("claimed", "t", None, 3, false);
    claimed.completion = Some(completion("k1", "tok-1", true));
    h.add(claimed).await;
    assert_eq!(ordered("claimed").await, 1);

    let token = match h
        .store
        .idempotency_begin(&IdempotencyBegin {
            org: ORG.into(),
            principal: "admin".into(),
            key: "k2".into(),
            fingerprint: "fp".into(),
            lock_for: Duration::from_secs(60),
            retain_for: Duration::from_secs(3600),
        })
        .await
        .unwrap()
    {
        LockOutcome::Started(token) => token,
        other => panic!("{other:?}"),
    };
    let mut locked = task("locked", "t", Some("g"), 0, false);
    locked.completion = Some(completion("k2", &token, false));
    h.add(locked).await;
    assert_eq!(ordered("locked").await, 1);

    let created = h
        .store
        .task_create_batch(TaskBatch {
            org: ORG.into(),
            queue: "batch".into(),
            tasks: vec![
                Ok(task("batch", "a", None, 0, false)),
                Ok(task("batch", "b", Some("g"), 0, false)),
            ],
            atomic: false,
            completion: None,
        })
        .await
        .unwrap();
    assert!(
        created
            .items
            .iter()
            .all(|i| matches!(i, BatchItem::Created(_))),
        "{:?}",
        created.items
    );
    assert_eq!(ordered("batch").await, 1);
}

/// A node that starts on a store holding an ordered pull queue claims it
/// in turns from its first claim: the first sends what the second does,
/// not a plain claim first to find the queue ordered.
async fn a_new_node_claims_an_ordered_queue_in_turns_at_once(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    for (i, group) in ["a", "a", "a", "b", "b", "b"].iter().enumerate() {
        h.add(task("w", &format!("t{i}"), Some(group), 0, true))
            .await;
    }
    let (node, sent) = h.counted_node().await;
    let mut costs = Vec::new();
    for _ in 0..2 {
        let before = sent.total();
        let claimed = node.work_claim(claim_of(2)).await.unwrap();
        costs.push(sent.total() - before);
        let n = groups_of(&claimed);
        assert_eq!((n.get("a"), n.get("b")), (Some(&1), Some(&1)), "in turns");
    }
    assert_eq!(
        costs[0], costs[1],
        "statements of the first and second claims"
    );
}

/// SQLite's claim in turns walks the group keys from the queue's cursor
/// and stops once it has its tasks, so its work follows the groups it
/// visits, not the queue: a claim of ten from a queue of ten times the
/// groups and tasks costs about what it costs from the smaller one. Work is
/// counted in virtual-machine instructions, the same on any machine. (The
/// PostgreSQL store's own tests read its plan for the same property.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_claims_in_turns_cost_the_groups_they_visit_not_the_queue() {
    let h = Harness::sqlite().await;
    let queues = [("small", 200), ("large", 2000)];
    for (queue, groups) in queues {
        let config = QueueConfig {
            mode: QueueMode::Pull,
            group_concurrency: Some(10),
            ..QueueConfig::default()
        };
        h.store
            .queue_create(ORG, queue, &config, None)
            .await
            .unwrap();
        for chunk in 0..groups * 5 / 1000 {
            let tasks = (chunk * 1000..(chunk + 1) * 1000)
                .map(|i| {
                    let group = format!("g{}", i % groups);
                    Ok(task(queue, &format!("t{i}"), Some(&group), 0, true))
                })
                .collect();
            h.store
                .task_create_batch(TaskBatch {
                    org: ORG.into(),
                    queue: queue.into(),
                    tasks,
                    atomic: true,
                    completion: None,
                })
                .await
                .unwrap();
        }
    }
    let (node, sent) = h.counted_node().await;
    let support::Sent::Sqlite(counts) = &sent else {
        unreachable!("a SQLite harness counts its statements")
    };
    let vm_steps = || counts.vm_steps.load(std::sync::atomic::Ordering::Relaxed);
    let mut steps = Vec::new();
    for (queue, _) in queues {
        let claim = || WorkClaim {
            queue: queue.into(),
            ..claim_of(10)
        };
        // The first claim of a queue starts its cursor; the second is measured.
        node.work_claim(claim()).await.unwrap();
        let before = vm_steps();
        let claimed = node.work_claim(claim()).await.unwrap();
        steps.push(vm_steps() - before);
        let groups = groups_of(&claimed);
        assert_eq!(
            (claimed.len(), groups.len()),
            (10, 10),
            "{queue}: {groups:?}"
        );
    }
    assert!(
        steps[1] < steps[0] * 3 / 2,
        "claims of ten took {} instructions among 200 groups, {} among 2,000",
        steps[0],
        steps[1]
    );
}

/// Group names order by their bytes on every store and whatever the
/// database's collation, as the node that moves a queue's turn on
/// compares them: a claim of two among `a`, `B`, `c` and `D` (bytes: `B`,
/// `D`, `a`, `c`; `en-US`: `a`, `B`, `c`, `D`) must not give a group a
/// second task before every group has had one, and the groups listed under
/// a prefix are those that start with it, in byte order.
async fn group_names_order_by_their_bytes(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    for g in ["a", "B", "c", "D"] {
        for i in 0..2 {
            h.add(task("w", &format!("{g}{i}"), Some(g), 0, true)).await;
        }
    }
    let mut first_turn = h.claim(2).await;
    first_turn.extend(h.claim(2).await);
    let turn = groups_of(&first_turn);
    assert_eq!(turn.len(), 4, "one task of each group first: {turn:?}");
    assert_eq!(h.claim(2).await.len(), 2);

    for g in ["acct:5", "acctZ", "acct9", "acct", "Acct1", "acc"] {
        h.add(task("w", &format!("p-{g}"), Some(g), 0, true)).await;
    }
    let page = PageRequest {
        limit: 10,
        after: None,
    };
    let listed = h.store.queue_groups(ORG, "w", "acct", &page).await.unwrap();
    let names: Vec<&str> = listed.items.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(names, ["acct", "acct9", "acct:5", "acctZ"]);
    let all = h.store.queue_groups(ORG, "w", "", &page).await.unwrap();
    let names: Vec<&str> = all.items.iter().map(|g| g.group.as_str()).collect();
    let mut bytewise = names.clone();
    bytewise.sort();
    assert_eq!(names, bytewise, "the list in byte order");
}

/// Migration 021 on a database collated `en-US` that already holds
/// grouped tasks (at version 20, so 022 undone too): once a node has
/// brought the schema up to date, the tasks
/// made before take turns in byte order (with the column still in the
/// database's collation, `B` got two tasks before `D` had one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_tasks_made_before_migration_021_take_turns_in_byte_order() {
    let h = Harness::postgres_linguistic().await;
    h.pull_queue(QueueConfig::default()).await;
    for g in ["a", "B", "c", "D"] {
        for i in 0..2 {
            h.add(task("w", &format!("{g}{i}"), Some(g), 0, true)).await;
        }
    }
    h.raw(
        "ALTER TABLE tasks ALTER COLUMN group_key TYPE TEXT COLLATE \"default\"; \
         ALTER TABLE task_dispatches DROP COLUMN n; UPDATE idem_schema SET version = 20",
    )
    .await;
    let node = h.reopen().await;
    assert_eq!(
        h.raw_i64("SELECT version FROM idem_schema").await,
        idem_store::schema::VERSION
    );
    let mut first_turn = node.work_claim(claim_of(2)).await.unwrap();
    first_turn.extend(node.work_claim(claim_of(2)).await.unwrap());
    let turn = groups_of(&first_turn);
    assert_eq!(turn.len(), 4, "one task of each group first: {turn:?}");
}

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await,
    postgres_linguistic: Harness::postgres_linguistic().await;
    group_names_order_by_their_bytes,
    claims_take_turns_among_groups,
    a_group_running_fewer_takes_more_of_a_claim,
    priority_orders_a_groups_tasks,
    a_groups_limit_holds_across_claims_and_nodes,
    a_fifo_group_runs_in_order_through_retries,
    a_changed_group_order_applies_to_the_next_claim,
    push_claims_take_turns_within_limits,
    statistics_and_the_list_count_groups,
    every_create_path_marks_an_ordered_queue,
    a_new_node_claims_an_ordered_queue_in_turns_at_once,
}
