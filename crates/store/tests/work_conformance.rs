//! Pull queues (API.md §11), run against every backend: claims take due
//! tasks once, in schedule order, whichever node claims; a leased task is
//! refused to every claimant, its holder included; an action naming a lease
//! that is not the task's current one changes nothing; expired leases go
//! back to the queue with the attempt counted; release gives the attempt
//! back; fail follows the retry policy.

mod support;

use idem_core::Clock;
use idem_core::queue::{QueueConfig, QueueMode, RetryConfig};
use idem_core::task::{BodyForm, Target};
use idem_core::tenancy::{PrincipalKind, Role};
use idem_store::dispatch::DispatchClaim;
use idem_store::*;
use jiff::{SignedDuration, Timestamp};
use std::collections::HashSet;
use std::time::Duration;
use support::{Harness, ORG};

const LEASE_S: u32 = 30;

fn pull_task(task_id: &str) -> TaskCreate {
    TaskCreate {
        target: Target::payload(Some((BodyForm::Json, br#"{"n":1}"#.to_vec()))),
        pull: true,
        ..TaskCreate::example(ORG, "w", task_id)
    }
}

/// A queue making at most `max_attempts` attempts per task, every
/// retry `backoff_ms` after the failure.
fn fixed_backoff(max_attempts: u32, backoff_ms: u64) -> QueueConfig {
    QueueConfig {
        retry_config: RetryConfig {
            max_attempts,
            min_backoff_ms: backoff_ms,
            max_backoff_ms: backoff_ms,
            ..RetryConfig::default()
        },
        ..QueueConfig::default()
    }
}

fn claim_of(claimant: &str, max_tasks: u32, tag: Option<&str>) -> WorkClaim {
    WorkClaim {
        org: ORG.into(),
        queue: "w".into(),
        claimant: claimant.into(),
        max_tasks,
        lease_s: LEASE_S,
        tag: tag.map(str::to_string),
        attempts_kept: 100,
    }
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

    /// A service principal with the writer role.
    async fn writer(&self, name: &str) {
        self.store
            .principal_create(ORG, name, PrincipalKind::Service, Role::Writer, None)
            .await
            .unwrap();
    }

    async fn add(&self, task: TaskCreate) -> Task {
        self.store.task_create(task).await.unwrap()
    }

    async fn claim(&self, claimant: &str, max_tasks: u32) -> Vec<Task> {
        self.store
            .work_claim(claim_of(claimant, max_tasks, None))
            .await
            .unwrap()
    }

    async fn act(&self, task_id: &str, action: WorkAction) -> Result<Task> {
        self.store
            .work_act(ORG, "w", task_id, action)
            .await
            .map(|done| done.task)
    }

    async fn get(&self, task_id: &str) -> Task {
        self.store.task_get(ORG, "w", task_id).await.unwrap()
    }

    async fn attempts(&self, task_id: &str) -> Vec<idem_core::task::Attempt> {
        let page = PageRequest {
            limit: 100,
            after: None,
        };
        let found = self.store.task_attempts(ORG, "w", task_id, &page).await;
        found.unwrap().items
    }

    /// Runs the dispatcher's claim, which recovers expired leases.
    async fn recover(&self) {
        self.store
            .dispatch_claim(DispatchClaim {
                attempts_kept: 100,
                max_tasks: 10,
                lease_grace: Duration::ZERO,
                fair_share: None,
            })
            .await
            .unwrap();
    }

    fn advance_s(&self, s: i64) {
        self.clock.advance(SignedDuration::from_secs(s));
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }
}

fn heartbeat(attempt_id: &str, lease_s: u32) -> WorkAction {
    WorkAction::Heartbeat {
        attempt_id: attempt_id.into(),
        holder: None,
        lease_s,
    }
}

fn complete(attempt_id: &str, result: Option<&str>) -> WorkAction {
    WorkAction::Complete {
        attempt_id: attempt_id.into(),
        result: result.map(str::to_string),
        person: false,
        holder: None,
    }
}

fn fail(attempt_id: &str) -> WorkAction {
    WorkAction::Fail {
        attempt_id: attempt_id.into(),
        error: "the worker gave up".into(),
        person: false,
        holder: None,
    }
}

fn claim_one(claimant: &str) -> WorkAction {
    WorkAction::Claim {
        claimant: claimant.into(),
        lease_s: LEASE_S,
        attempts_kept: 100,
    }
}

fn is_lease_lost(r: &Result<Task>) -> bool {
    matches!(r, Err(Error::LeaseLost(_)))
}

async fn claims_take_due_tasks_in_schedule_order_and_by_tag(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    h.store
        .queue_create(ORG, "p", &QueueConfig::default(), None)
        .await
        .unwrap();
    let later = h.now() + SignedDuration::from_secs(60);
    h.add(TaskCreate {
        schedule_time: Some(later),
        ..pull_task("later")
    })
    .await;
    h.add(pull_task("first")).await;
    h.advance_s(1);
    h.add(TaskCreate {
        tag: Some("x".into()),
        ..pull_task("tagged")
    })
    .await;
    h.advance_s(1);
    h.add(pull_task("third")).await;

    let tagged = h.store.work_claim(claim_of("alice", 10, Some("x"))).await;
    assert_eq!(ids(&tagged.unwrap()), ["tagged"]);
    let claimed = h.claim("alice", 10).await;
    assert_eq!(ids(&claimed), ["first", "third"], "due, in schedule order");
    for t in &claimed {
        assert_eq!(t.status, Status::Running);
        assert_eq!(t.attempt_count, 1);
        let lease = t.lease.as_ref().unwrap();
        assert_eq!(lease.claimant, "alice");
        assert_eq!(
            lease.lease_expires_at,
            h.now() + SignedDuration::from_secs(LEASE_S.into())
        );
        assert_eq!(lease.attempt_id.rsplit('-').next(), Some("1"));
    }
    assert!(h.claim("alice", 10).await.is_empty(), "the rest is not due");
    h.advance_s(60);
    assert_eq!(ids(&h.claim("bob", 10).await), ["later"]);

    let push = WorkClaim {
        queue: "p".into(),
        ..claim_of("alice", 1, None)
    };
    let refused = h.store.work_claim(push).await;
    assert!(
        matches!(refused, Err(Error::FailedPrecondition(_))),
        "{refused:?}"
    );
    let missing = WorkClaim {
        queue: "nope".into(),
        ..claim_of("alice", 1, None)
    };
    let missing = h.store.work_claim(missing).await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );
    h.assert_counters_match_rows(ORG).await;
}

async fn concurrent_claims_from_two_nodes_take_each_task_once(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    for i in 0..300 {
        h.add(pull_task(&format!("t{i}"))).await;
    }
    let mut claimers = Vec::new();
    for n in 0..8 {
        let store = if n % 2 == 0 {
            h.store.clone()
        } else {
            h.other.clone()
        };
        claimers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let claimed = store
                    .work_claim(claim_of(&format!("w{n}"), 7, None))
                    .await
                    .unwrap();
                if claimed.is_empty() {
                    return mine;
                }
                mine.extend(claimed.into_iter().map(|t| t.task_id));
            }
        }));
    }
    let mut seen = HashSet::new();
    for c in claimers {
        for id in c.await.unwrap() {
            assert!(seen.insert(id.clone()), "{id} claimed twice");
        }
    }
    assert_eq!(seen.len(), 300);
}

async fn a_leased_task_is_refused_to_every_claimant_its_holder_included(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    h.writer("bob").await;
    h.add(pull_task("t")).await;
    let held = h.act("t", claim_one("alice")).await.unwrap();
    let lease = held.lease.clone().unwrap();
    assert_eq!(lease.claimant, "alice");
    h.advance_s(1);
    for action in [
        claim_one("alice"),
        claim_one("bob"),
        WorkAction::Assign {
            principal: "bob".into(),
            lease_s: LEASE_S,
            attempts_kept: 100,
        },
    ] {
        match h.act("t", action).await {
            Err(Error::WorkClaimed {
                task_id,
                claimant,
                lease_expires_at,
            }) => {
                assert_eq!(task_id, "t");
                assert_eq!(claimant, "alice");
                assert_eq!(lease_expires_at, lease.lease_expires_at);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(h.get("t").await.lease, Some(lease), "nothing changed");
    assert!(h.claim("bob", 10).await.is_empty());
}

async fn an_action_on_a_lost_lease_changes_nothing(h: Harness) {
    h.pull_queue(fixed_backoff(100, 1_000)).await;
    h.add(pull_task("t")).await;
    let claimed = h.claim("alice", 1).await.remove(0);
    let id = attempt_id(&claimed);
    let wrong = format!("{id}x");
    for action in [
        heartbeat(&wrong, 60),
        complete(&wrong, None),
        fail(&wrong),
        WorkAction::Release {
            attempt_id: wrong.clone(),
            holder: None,
        },
    ] {
        assert!(is_lease_lost(&h.act("t", action).await));
    }
    assert_eq!(h.get("t").await.lease, claimed.lease, "nothing changed");

    // Past its term the lease is lost even to its own attempt_id, before
    // and after the task goes back to the queue.
    h.advance_s(i64::from(LEASE_S));
    assert!(is_lease_lost(&h.act("t", complete(&id, None)).await));
    assert_eq!(h.get("t").await.status, Status::Running);
    h.recover().await;
    let back = h.get("t").await;
    assert_eq!(back.status, Status::Pending);
    assert_eq!(back.lease, None);
    assert_eq!(back.attempt_count, 1, "the expired attempt counts");
    let attempts = h.attempts("t").await;
    assert_eq!(attempts.len(), 1);
    assert!(
        attempts[0]
            .error
            .as_deref()
            .unwrap()
            .contains("lease expired")
    );
    assert_eq!(
        back.next_attempt_at,
        h.now() + SignedDuration::from_secs(1),
        "backoff"
    );

    h.advance_s(1);
    let again = h.claim("bob", 1).await.remove(0);
    assert_eq!(again.attempt_count, 2);
    assert_ne!(attempt_id(&again), id);
    assert!(is_lease_lost(&h.act("t", complete(&id, None)).await));
    let done = h.act("t", complete(&attempt_id(&again), None)).await;
    assert_eq!(done.unwrap().status, Status::Succeeded);
}

async fn heartbeat_extends_and_release_gives_the_attempt_back(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    h.add(pull_task("t")).await;
    let claimed = h.claim("alice", 1).await.remove(0);
    let id = attempt_id(&claimed);
    h.advance_s(20);
    let beat = h.act("t", heartbeat(&id, 300)).await.unwrap();
    let lease = beat.lease.unwrap();
    assert_eq!(lease.attempt_id, id);
    assert_eq!(
        lease.lease_expires_at,
        h.now() + SignedDuration::from_secs(300)
    );
    h.advance_s(100);
    h.recover().await;
    assert_eq!(h.get("t").await.status, Status::Running, "still held");

    let released = h
        .act(
            "t",
            WorkAction::Release {
                attempt_id: id.clone(),
                holder: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(released.status, Status::Pending);
    assert_eq!(released.lease, None);
    assert_eq!(released.attempt_count, 0, "the attempt does not count");
    assert_eq!(released.next_attempt_at, h.now(), "due now");
    assert!(h.attempts("t").await.is_empty());
    assert!(is_lease_lost(&h.act("t", complete(&id, None)).await));

    let again = h.claim("bob", 1).await.remove(0);
    assert_eq!(again.attempt_count, 1);
    assert_ne!(
        attempt_id(&again),
        id,
        "a fresh token for the reused number"
    );
    h.assert_counters_match_rows(ORG).await;
}

async fn complete_and_fail_follow_the_retry_policy(h: Harness) {
    h.pull_queue(fixed_backoff(2, 5_000)).await;
    h.add(pull_task("ok")).await;
    h.add(pull_task("bad")).await;
    let claimed = h.claim("alice", 2).await;
    let (ok, bad) = (&claimed[0], &claimed[1]);

    let idem_store::dispatch::WorkDone {
        task: done,
        finished,
        ..
    } = h
        .store
        .work_act(
            ORG,
            "w",
            "ok",
            complete(&attempt_id(ok), Some(r#"{"paid":true}"#)),
        )
        .await
        .unwrap();
    assert_eq!(done.status, Status::Succeeded);
    assert_eq!(done.result.as_deref(), Some(r#"{"paid":true}"#));
    assert_eq!(done.lease, None);
    assert_eq!(finished.map(|f| f.status), Some(Status::Succeeded));

    let idem_store::dispatch::WorkDone {
        task: retried,
        finished,
        ..
    } = h
        .store
        .work_act(ORG, "w", "bad", fail(&attempt_id(bad)))
        .await
        .unwrap();
    assert!(finished.is_none());
    assert_eq!(retried.status, Status::Pending);
    assert_eq!(
        retried.next_attempt_at,
        h.now() + SignedDuration::from_secs(5)
    );
    let attempts = h.attempts("bad").await;
    assert_eq!(attempts[0].error.as_deref(), Some("the worker gave up"));
    assert!(h.claim("alice", 2).await.is_empty(), "backing off");

    h.advance_s(5);
    let last = h.claim("alice", 2).await.remove(0);
    assert_eq!(last.attempt_count, 2);
    let idem_store::dispatch::WorkDone {
        task: failed,
        finished,
        ..
    } = h
        .store
        .work_act(ORG, "w", "bad", fail(&attempt_id(&last)))
        .await
        .unwrap();
    assert_eq!(failed.status, Status::Failed);
    assert_eq!(finished.map(|f| f.status), Some(Status::Failed));
    assert_eq!(h.attempts("bad").await.len(), 2);
    h.assert_counters_match_rows(ORG).await;
}

async fn reassign_and_assign_move_leases_between_principals(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    for name in ["alice", "bob"] {
        h.store
            .principal_create(ORG, name, PrincipalKind::Service, Role::Writer, None)
            .await
            .unwrap();
    }
    h.add(pull_task("t")).await;
    h.add(pull_task("u")).await;
    let claimed = h.act("t", claim_one("alice")).await.unwrap();
    let id = attempt_id(&claimed);
    h.advance_s(10);

    let reassign = |principal: &str, holder: Option<&str>| WorkAction::Reassign {
        attempt_id: id.clone(),
        principal: principal.into(),
        holder: holder.map(str::to_string),
        lease_s: 120,
    };
    let refused = h.act("t", reassign("bob", Some("mallory"))).await;
    assert!(
        matches!(refused, Err(Error::PermissionDenied(_))),
        "{refused:?}"
    );
    let unknown = h.act("t", reassign("ghost", None)).await;
    assert!(
        matches!(
            unknown,
            Err(Error::NotFound {
                kind: "principal",
                ..
            })
        ),
        "{unknown:?}"
    );
    assert_eq!(h.get("t").await.lease, claimed.lease, "nothing changed");

    let moved = h.act("t", reassign("bob", Some("alice"))).await.unwrap();
    let lease = moved.lease.unwrap();
    assert_eq!(lease.claimant, "bob");
    assert_eq!(lease.attempt_id, id, "the same attempt");
    assert_eq!(
        lease.lease_expires_at,
        h.now() + SignedDuration::from_secs(120)
    );
    assert_eq!(moved.attempt_count, 1);

    let assign = |principal: &str| WorkAction::Assign {
        principal: principal.into(),
        lease_s: LEASE_S,
        attempts_kept: 100,
    };
    let assigned = h.act("u", assign("alice")).await.unwrap();
    assert_eq!(assigned.lease.unwrap().claimant, "alice");
    assert!(matches!(
        h.act("u", assign("bob")).await,
        Err(Error::WorkClaimed { .. })
    ));
    h.add(pull_task("v")).await;
    assert!(matches!(
        h.act("v", assign("ghost")).await,
        Err(Error::NotFound {
            kind: "principal",
            ..
        })
    ));
    assert_eq!(h.get("v").await.status, Status::Pending);
    h.assert_counters_match_rows(ORG).await;
}

async fn a_person_only_queue_takes_completions_from_persons_only(h: Harness) {
    h.pull_queue(QueueConfig {
        person_only: true,
        ..QueueConfig::default()
    })
    .await;
    h.add(pull_task("t")).await;
    let id = attempt_id(&h.claim("bot", 1).await[0]);
    let by_service = h.act("t", complete(&id, None)).await;
    assert!(
        matches!(by_service, Err(Error::PersonRequired(_))),
        "{by_service:?}"
    );
    let by_service = h.act("t", fail(&id)).await;
    assert!(
        matches!(by_service, Err(Error::PersonRequired(_))),
        "{by_service:?}"
    );
    assert_eq!(h.get("t").await.status, Status::Running);
    let by_person = WorkAction::Complete {
        attempt_id: id,
        result: None,
        person: true,
        holder: None,
    };
    assert_eq!(
        h.act("t", by_person).await.unwrap().status,
        Status::Succeeded
    );
}

/// A claim by ID and an assignment keep only the newest attempts, as the
/// dispatcher and the batch claim do. (Either ignores the backoff: a
/// worker who names a task wants that one.)
async fn claims_keep_only_the_newest_attempts(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    h.writer("bob").await;
    h.add(pull_task("t")).await;
    for n in 0..4 {
        let action = if n % 2 == 0 {
            WorkAction::Claim {
                claimant: "alice".into(),
                lease_s: LEASE_S,
                attempts_kept: 2,
            }
        } else {
            WorkAction::Assign {
                principal: "bob".into(),
                lease_s: LEASE_S,
                attempts_kept: 2,
            }
        };
        let task = h.act("t", action).await.unwrap();
        assert_eq!(task.attempt_count, n + 1);
        h.act("t", fail(&attempt_id(&task))).await.unwrap();
    }
    let kept: Vec<u32> = h.attempts("t").await.iter().map(|a| a.attempt).collect();
    assert_eq!(kept, [3, 4]);
    h.assert_counters_match_rows(ORG).await;
}

/// Many workers ending many tasks at once, each end sent twice and some
/// with a lease that is not theirs: every task ends once, with its attempt
/// recorded and counted; the repeats are answered as replays and, like the
/// strangers, change nothing.
async fn concurrent_ends_settle_each_task_once(h: Harness) {
    h.pull_queue(fixed_backoff(1, 1000)).await;
    for i in 0..60 {
        h.add(pull_task(&format!("t{i}"))).await;
    }
    let claimed = h.claim("alice", 60).await;
    assert_eq!(claimed.len(), 60);
    let mut ends = Vec::new();
    for (i, task) in claimed.iter().enumerate() {
        let lease = attempt_id(task);
        let (action, wrong) = if i % 3 == 0 {
            (fail(&lease), complete("not-a-lease", None))
        } else {
            (
                complete(&lease, Some(&format!("{{\"i\":{i}}}"))),
                fail("not-a-lease"),
            )
        };
        for a in [action.clone(), action, wrong] {
            let (store, id) = (h.store.clone(), task.task_id.clone());
            ends.push(tokio::spawn(async move {
                (id.clone(), store.work_act(ORG, "w", &id, a).await)
            }));
        }
    }
    let (mut ended, mut replayed) = (HashSet::new(), HashSet::new());
    for end in ends {
        let (id, result) = end.await.unwrap();
        match result {
            Ok(idem_store::dispatch::WorkDone {
                task,
                finished,
                replayed: false,
            }) => {
                assert!(ended.insert(id.clone()), "{id} ended twice");
                assert!(finished.is_some(), "a final state is announced");
                assert!(task.lease.is_none());
            }
            Ok(idem_store::dispatch::WorkDone {
                finished,
                replayed: true,
                ..
            }) => {
                assert!(replayed.insert(id.clone()), "{id} replayed twice");
                assert!(finished.is_none(), "a replay announces nothing");
            }
            Err(Error::LeaseLost(_)) => {}
            Err(e) => panic!("{id}: {e:?}"),
        }
    }
    assert_eq!(ended.len(), 60, "every task ended once");
    assert_eq!(replayed, ended, "every repeated end answered as a replay");
    for (i, task) in claimed.iter().enumerate() {
        let now = h.get(&task.task_id).await;
        let attempts = h.attempts(&task.task_id).await;
        assert_eq!(attempts.len(), 1);
        assert!(attempts[0].finished_at.is_some(), "the attempt is recorded");
        if i % 3 == 0 {
            assert_eq!(now.status, Status::Failed);
            assert_eq!(attempts[0].error.as_deref(), Some("the worker gave up"));
        } else {
            assert_eq!(now.status, Status::Succeeded);
            assert_eq!(
                now.result.as_deref(),
                Some(format!("{{\"i\":{i}}}").as_str())
            );
        }
    }
    let stats = h.store.queue_stats(ORG, "w").await.unwrap();
    assert_eq!((stats.succeeded, stats.failed, stats.running), (40, 20, 0));
    h.assert_counters_match_rows(ORG).await;
}

/// Completions and failures of what is not leased pull work: a task or a
/// queue that does not exist, a push queue's task, a pull task nobody
/// claimed. Each is refused with its own answer and changes nothing.
async fn ends_of_what_is_not_leased_pull_work_are_refused(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    h.store
        .queue_create(ORG, "p", &QueueConfig::default(), None)
        .await
        .unwrap();
    h.store
        .task_create(TaskCreate {
            queue: "p".into(),
            target: support::hook(None),
            pull: false,
            ..pull_task("pushed")
        })
        .await
        .unwrap();
    h.add(pull_task("waiting")).await;
    for action in [complete("any", None), fail("any")] {
        let missing = h.act("nope", action.clone()).await;
        assert!(
            matches!(missing, Err(Error::NotFound { .. })),
            "{missing:?}"
        );
        let no_queue = h.store.work_act(ORG, "gone", "t", action.clone()).await;
        assert!(
            matches!(no_queue, Err(Error::NotFound { .. })),
            "{no_queue:?}"
        );
        let pushed = h.store.work_act(ORG, "p", "pushed", action.clone()).await;
        assert!(
            matches!(pushed, Err(Error::FailedPrecondition(_))),
            "{pushed:?}"
        );
        assert!(is_lease_lost(&h.act("waiting", action).await));
    }
    let waiting = h.get("waiting").await;
    assert_eq!(
        (waiting.status, waiting.attempt_count),
        (Status::Pending, 0)
    );
    let pushed = h.store.task_get(ORG, "p", "pushed").await.unwrap();
    assert_eq!(pushed.status, Status::Pending);
}

/// Ends reported together (`work_end_many`) race single ends of the same
/// tasks sent in the opposite order: each task ends once, whichever way
/// its end went, the other answered as its replay, and the call's answers
/// come in its order. A call on a
/// queue that cannot take ends is refused whole and writes nothing.
async fn ends_reported_together_and_alone_settle_each_task_once(h: Harness) {
    h.pull_queue(QueueConfig::default()).await;
    for i in 0..40 {
        h.add(pull_task(&format!("t{i:02}"))).await;
    }
    let claimed = h.claim("alice", 40).await;
    let together: Vec<(String, WorkAction)> = claimed
        .iter()
        .map(|t| (t.task_id.clone(), complete(&attempt_id(t), None)))
        .collect();
    let mut alone = Vec::new();
    for t in claimed.iter().rev() {
        let (store, id, action) = (
            h.store.clone(),
            t.task_id.clone(),
            complete(&attempt_id(t), None),
        );
        alone.push(tokio::spawn(async move {
            (id.clone(), store.work_act(ORG, "w", &id, action).await)
        }));
    }
    let answers = h.store.work_end_many(ORG, "w", together).await.unwrap();
    assert_eq!(answers.len(), 40);
    let (mut ended, mut replays) = (HashSet::new(), 0);
    for (t, answer) in claimed.iter().zip(answers) {
        match answer {
            Ok(done) => {
                assert_eq!(done.task.task_id, t.task_id, "answers in the call's order");
                if done.replayed {
                    replays += 1;
                } else {
                    assert!(ended.insert(t.task_id.clone()));
                }
            }
            Err(e) => panic!("{}: {e:?}", t.task_id),
        }
    }
    for single in alone {
        let (id, result) = single.await.unwrap();
        match result {
            Ok(done) if done.replayed => replays += 1,
            Ok(_) => assert!(ended.insert(id.clone()), "{id} ended twice"),
            Err(e) => panic!("{id}: {e:?}"),
        }
    }
    assert_eq!(ended.len(), 40, "every task ended once");
    assert_eq!(replays, 40, "and its other end was its replay");
    let stats = h.store.queue_stats(ORG, "w").await.unwrap();
    assert_eq!((stats.succeeded, stats.running), (40, 0));

    h.add(pull_task("left")).await;
    let left = h.claim("alice", 1).await.remove(0);
    let end = || vec![("left".to_string(), complete(&attempt_id(&left), None))];
    let missing = h.store.work_end_many(ORG, "gone", end()).await;
    assert!(
        matches!(missing, Err(Error::NotFound { .. })),
        "{missing:?}"
    );
    h.store
        .queue_create(ORG, "p", &QueueConfig::default(), None)
        .await
        .unwrap();
    let pushed = h.store.work_end_many(ORG, "p", end()).await;
    assert!(
        matches!(pushed, Err(Error::FailedPrecondition(_))),
        "{pushed:?}"
    );
    assert_eq!(h.get("left").await.status, Status::Running);
}

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await;
    claims_take_due_tasks_in_schedule_order_and_by_tag,
    concurrent_claims_from_two_nodes_take_each_task_once,
    a_leased_task_is_refused_to_every_claimant_its_holder_included,
    an_action_on_a_lost_lease_changes_nothing,
    heartbeat_extends_and_release_gives_the_attempt_back,
    complete_and_fail_follow_the_retry_policy,
    reassign_and_assign_move_leases_between_principals,
    a_person_only_queue_takes_completions_from_persons_only,
    claims_keep_only_the_newest_attempts,
    concurrent_ends_settle_each_task_once,
    ends_reported_together_and_alone_settle_each_task_once,
    ends_of_what_is_not_leased_pull_work_are_refused,
}
