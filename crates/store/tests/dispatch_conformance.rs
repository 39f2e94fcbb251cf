//! The dispatch contract (`DispatchStore`), run against every backend.
//!
//! Each test is written once against `dyn Store` and instantiated for
//! SQLite and PostgreSQL by the macro at the bottom. Time only moves when a
//! test moves the manual clock.

mod support;

use idem_core::queue::{
    QueueConfig, QueueConfigPatch, QueueState, RateLimits, RateLimitsPatch, RetryConfig,
};
use idem_core::task::{AttemptResponse, TaskState};
use idem_store::dispatch::*;
use idem_store::*;
use jiff::{SignedDuration, Timestamp};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use support::{Harness, ORG};

const GRACE: Duration = Duration::from_secs(1);

/// A claim of at most `max_tasks` with no fair share, keeping 100 attempts.
fn plain_claim(max_tasks: u32) -> DispatchClaim {
    DispatchClaim {
        attempts_kept: 100,
        max_tasks,
        lease_grace: GRACE,
        fair_share: None,
    }
}

impl Harness {
    fn advance_ms(&self, ms: i64) {
        self.clock.advance(SignedDuration::from_millis(ms));
    }

    fn now(&self) -> Timestamp {
        use idem_core::Clock;
        self.clock.now()
    }

    async fn queue(&self, name: &str, config: QueueConfig) {
        self.store
            .queue_create(ORG, name, &config, None)
            .await
            .unwrap();
    }

    async fn task_at(&self, queue: &str, task_id: &str, schedule_time: Option<Timestamp>) -> Task {
        self.task_of(ORG, queue, task_id, schedule_time).await
    }

    async fn task_of(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        schedule_time: Option<Timestamp>,
    ) -> Task {
        self.store
            .task_create(TaskCreate {
                target: support::hook(None),
                schedule_time,
                dispatch_deadline_s: Some(1),
                ..TaskCreate::example(org, queue, task_id)
            })
            .await
            .unwrap()
    }

    async fn task(&self, queue: &str, task_id: &str) -> Task {
        self.task_at(queue, task_id, None).await
    }

    async fn claim(&self, max_tasks: u32) -> ClaimedBatch {
        self.store
            .dispatch_claim(plain_claim(max_tasks))
            .await
            .unwrap()
    }

    async fn claim_ids(&self, max_tasks: u32) -> Vec<String> {
        ids(&self.claim(max_tasks).await)
    }

    async fn complete(&self, claimed: &ClaimedTask, status: Option<u16>) -> AttemptOutcome {
        self.complete_with(result_of(claimed, status)).await
    }

    async fn complete_with(&self, result: AttemptResult) -> AttemptOutcome {
        let mut out = self.store.dispatch_complete(vec![result]).await.unwrap();
        assert_eq!(out.len(), 1);
        out.remove(0)
    }

    async fn get(&self, queue: &str, task_id: &str) -> Task {
        self.store.task_get(ORG, queue, task_id).await.unwrap()
    }
}

fn ids(batch: &ClaimedBatch) -> Vec<String> {
    batch.tasks.iter().map(|t| t.task.task_id.clone()).collect()
}

/// Limits that never get in the way, and fast retries.
fn open_config() -> QueueConfig {
    QueueConfig {
        mode: Default::default(),
        person_only: false,
        rate_limits: RateLimits {
            max_dispatches_per_second: 10_000.0,
            max_burst_size: 10_000,
            max_concurrent_dispatches: 10_000,
        },
        retry_config: RetryConfig {
            max_attempts: 5,
            max_retry_duration_s: 0,
            min_backoff_ms: 1000,
            max_backoff_ms: 60_000,
            max_doublings: 3,
        },
        dispatch_deadline_s: 1,
        dedup_window_s: 600,
        // Failed tasks go with the dedup window, unless a test says.
        failed_retention_s: 0,
        callbacks: Default::default(),
        header_style: Default::default(),
        group_concurrency: None,
        group_order: Default::default(),
    }
}

fn with_limits(rate: f64, burst: u32, concurrency: u32) -> QueueConfig {
    QueueConfig {
        mode: Default::default(),
        person_only: false,
        rate_limits: RateLimits {
            max_dispatches_per_second: rate,
            max_burst_size: burst,
            max_concurrent_dispatches: concurrency,
        },
        ..open_config()
    }
}

async fn claims_follow_schedule_time(h: Harness) {
    h.queue("q", open_config()).await;
    let t0 = h.now();
    h.task_at("q", "third", Some(t0 - SignedDuration::from_secs(1)))
        .await;
    h.task_at("q", "first", Some(t0 - SignedDuration::from_secs(30)))
        .await;
    h.task_at("q", "second", Some(t0 - SignedDuration::from_secs(10)))
        .await;
    // Before the running tasks' leases expire (deadline 1 s + grace 1 s).
    let later = t0 + SignedDuration::from_millis(1500);
    h.task_at("q", "later", Some(later)).await;

    let batch = h.claim(2).await;
    assert_eq!(ids(&batch), ["first", "second"]);
    let claimed = &batch.tasks[0];
    assert_eq!(claimed.org, ORG);
    assert_eq!(claimed.attempt, 1);
    assert_eq!(claimed.task.status, Status::Running);
    assert_eq!(
        claimed.lease_expires_at,
        t0 + SignedDuration::from_secs(1) + SignedDuration::try_from(GRACE).unwrap()
    );
    assert_eq!(claimed.previous_status(), None);
    assert_eq!(h.get("q", "first").await.state(h.now()), TaskState::Running);

    let batch = h.claim(10).await;
    assert_eq!(ids(&batch), ["third"], "the future task is not due");
    assert_eq!(
        batch.wake_at,
        Some(later),
        "wakes when the next task is due"
    );
    h.clock.set(later);
    assert_eq!(h.claim_ids(10).await, ["later"]);
}

async fn a_claim_records_the_attempt_start_and_the_org_secrets(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    h.advance_ms(1);
    let rotated = h.store.signing_secret_rotate(ORG, None).await.unwrap();
    let batch = h.claim(10).await;
    let secrets = &batch.signing_secrets[ORG];
    assert_eq!(secrets.len(), 2, "both secrets during a rotation");
    assert_eq!(secrets[0], rotated.secret, "newest first");
    let attempts = h
        .store
        .task_attempts(ORG, "q", "t", &all_attempts())
        .await
        .unwrap()
        .items;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].attempt, 1);
    assert_eq!(attempts[0].started_at, h.now());
    assert_eq!(attempts[0].finished_at, None);
}

async fn paused_queues_are_not_claimed(h: Harness) {
    h.queue("paused", open_config()).await;
    h.queue("open", open_config()).await;
    h.task("paused", "p").await;
    h.task("open", "o").await;
    h.store
        .queue_set_state(ORG, "paused", QueueState::Paused, None)
        .await
        .unwrap();
    let batch = h.claim(10).await;
    assert_eq!(ids(&batch), ["o"]);
    assert!(batch.wake_at.is_some(), "o's lease expiry is ahead");
    assert!(h.claim(10).await.tasks.is_empty());
    h.store
        .queue_set_state(ORG, "paused", QueueState::Running, None)
        .await
        .unwrap();
    assert_eq!(h.claim_ids(10).await, ["p"]);
}

async fn concurrency_limit_caps_running_tasks(h: Harness) {
    h.queue("q", with_limits(10_000.0, 10_000, 2)).await;
    for i in 0..5 {
        h.task("q", &format!("t{i}")).await;
    }
    let batch = h.claim(10).await;
    assert_eq!(ids(&batch), ["t0", "t1"]);
    assert!(h.claim(10).await.tasks.is_empty(), "both slots are taken");
    h.complete(&batch.tasks[0], Some(200)).await;
    assert_eq!(h.claim_ids(10).await, ["t2"], "one slot came free");
    assert!(h.claim(10).await.tasks.is_empty());
}

async fn token_bucket_limits_the_claim_rate(h: Harness) {
    h.queue("q", with_limits(5.0, 2, 100)).await;
    for i in 0..6 {
        h.task("q", &format!("t{i}")).await;
    }
    let batch = h.claim(10).await;
    assert_eq!(ids(&batch), ["t0", "t1"], "a full bucket gives the burst");
    assert_eq!(
        batch.wake_at,
        Some(h.now() + SignedDuration::from_millis(200)),
        "wakes for the next token"
    );
    h.advance_ms(100);
    assert!(h.claim(10).await.tasks.is_empty(), "half a token");
    h.advance_ms(100);
    assert_eq!(h.claim_ids(10).await, ["t2"]);
    h.advance_ms(10_000);
    assert_eq!(
        h.claim_ids(10).await,
        ["t3", "t4"],
        "an idle bucket holds no more than the burst"
    );
}

async fn a_failure_is_retried_after_the_backoff(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    let first = h.claim(1).await.tasks.remove(0);
    let answer = AttemptResponse::keep(Some("text/plain"), "upstream «down»".as_bytes(), true);
    let done = h
        .complete_with(AttemptResult {
            response: Some(answer.clone()),
            ..result_of(&first, Some(503))
        })
        .await;
    let AttemptOutcome::Applied(f) = done else {
        panic!("{done:?}")
    };
    assert_eq!(f.status, Status::Pending);
    let task = h.get("q", "t").await;
    assert_eq!(task.next_attempt_at, h.now() + SignedDuration::from_secs(1));
    assert_eq!(task.state(h.now()), TaskState::Queued);
    let last = task.last_attempt.unwrap();
    assert_eq!((last.attempt, last.status_code), (1, Some(503)));
    assert_eq!(last.duration_ms, Some(7));
    assert_eq!(
        last.response.as_ref(),
        Some(&answer),
        "the task's last attempt"
    );

    assert!(h.claim(1).await.tasks.is_empty(), "backing off");
    h.advance_ms(1000);
    let second = h.claim(1).await.tasks.remove(0);
    assert_eq!(second.attempt, 2);
    assert_eq!(second.previous_status(), Some(503));
    assert_eq!(second.task.schedule_time, first.task.schedule_time);

    // A Retry-After longer than the backoff (2 s for retry 2) wins.
    let result = AttemptResult {
        task_uid: second.task.uid.clone(),
        attempt: 2,
        status_code: Some(429),
        error: None,
        duration: Duration::from_millis(1),
        retry_after: Some(Duration::from_secs(30)),
        give_up: false,
        response: None,
    };
    h.complete_with(result).await;
    let task = h.get("q", "t").await;
    assert_eq!(
        task.next_attempt_at,
        h.now() + SignedDuration::from_secs(30)
    );
    let attempts = h
        .store
        .task_attempts(ORG, "q", "t", &all_attempts())
        .await
        .unwrap()
        .items;
    let codes: Vec<_> = attempts.iter().map(|a| a.status_code).collect();
    assert_eq!(codes, [Some(503), Some(429)]);
    let answers: Vec<_> = attempts.iter().map(|a| a.response.as_ref()).collect();
    assert_eq!(
        answers,
        [Some(&answer), None],
        "each attempt keeps its own answer"
    );
    assert!(attempts.iter().all(|a| a.finished_at.is_some()));
}

async fn a_failure_that_gives_up_ends_the_task_with_attempts_left(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    let first = h.claim(1).await.tasks.remove(0);
    let done = h
        .complete_with(AttemptResult {
            task_uid: first.task.uid.clone(),
            attempt: first.attempt,
            status_code: None,
            error: Some("refused by target policy".into()),
            duration: Duration::from_millis(1),
            retry_after: None,
            give_up: true,
            response: None,
        })
        .await;
    let AttemptOutcome::Applied(f) = done else {
        panic!("{done:?}")
    };
    assert_eq!(
        f.status,
        Status::Failed,
        "no retry, though 4 attempts remain"
    );
    let task = h.get("q", "t").await;
    assert_eq!(task.state(h.now()), TaskState::Failed);
    assert!(task.finished_at.is_some());
    let last = task.last_attempt.unwrap();
    assert_eq!(last.error.as_deref(), Some("refused by target policy"));
    h.advance_ms(120_000);
    assert!(h.claim(1).await.tasks.is_empty(), "never claimed again");
}

async fn final_states_set_the_dedup_expiry(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 1;
    h.queue("q", config).await;
    h.task("q", "ok").await;
    h.task("q", "bad").await;
    let batch = h.claim(10).await;
    h.advance_ms(250);
    h.complete(&batch.tasks[0], Some(204)).await;
    h.complete(&batch.tasks[1], None).await;
    let window = SignedDuration::from_secs(600);
    for (id, state) in [("ok", TaskState::Succeeded), ("bad", TaskState::Failed)] {
        let task = h.get("q", id).await;
        assert_eq!(task.state(h.now()), state, "{id}");
        assert_eq!(task.finished_at, Some(h.now()));
        assert_eq!(task.dedup_expires_at, Some(h.now() + window));
        let err = h
            .store
            .task_create(TaskCreate {
                target: task.target.clone(),
                ..TaskCreate::example(ORG, "q", id)
            })
            .await
            .unwrap_err();
        assert!(matches!(err, Error::TaskExists(_)), "{err:?}");
    }
    let bad = h.get("q", "bad").await.last_attempt.unwrap();
    assert_eq!(bad.error.as_deref(), Some("connection refused"));
    assert!(h.claim(10).await.tasks.is_empty(), "final tasks stay put");
}

async fn retry_duration_ends_retries(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 0;
    config.retry_config.max_retry_duration_s = 2;
    h.queue("q", config).await;
    h.task("q", "t").await;
    let mut attempts = 0;
    loop {
        let batch = h.claim(1).await;
        let Some(claimed) = batch.tasks.first() else {
            break;
        };
        attempts += 1;
        h.complete(claimed, Some(500)).await;
        let next = h.get("q", "t").await.next_attempt_at;
        h.clock.set(next.max(h.now()));
    }
    // Waits 1 s then 2 s: the second retry would start 3 s after the first.
    assert_eq!(attempts, 2);
    assert_eq!(h.get("q", "t").await.status, Status::Failed);
}

async fn an_expired_lease_is_redelivered(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    let first = h.claim(1).await.tasks.remove(0);
    h.advance_ms(1999);
    let batch = h.claim(1).await;
    assert!(batch.tasks.is_empty() && batch.recovered.is_empty());
    assert_eq!(batch.wake_at, Some(first.lease_expires_at));

    h.advance_ms(1);
    let batch = h.claim(1).await;
    assert!(batch.tasks.is_empty(), "the lost attempt backs off first");
    assert_eq!(batch.recovered.len(), 1);
    assert_eq!(batch.recovered[0].status, Status::Pending);
    let lost = h.get("q", "t").await.last_attempt.unwrap();
    assert_eq!(lost.attempt, 1);
    assert_eq!(lost.status_code, None);
    assert!(lost.error.unwrap().contains("lease expired"));

    h.advance_ms(1000);
    let again = h.claim(1).await.tasks.remove(0);
    assert_eq!(again.attempt, 2);
    assert_eq!(again.task.uid, first.task.uid);
}

async fn stale_attempt_result_is_ignored(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    let first = h.claim(1).await.tasks.remove(0);
    h.advance_ms(2000);
    h.claim(1).await;
    h.advance_ms(1000);
    let second = h.claim(1).await.tasks.remove(0);
    assert_eq!(second.attempt, 2);

    // The presumed-dead first attempt answers late: nothing changes.
    let late = h.complete(&first, Some(200)).await;
    assert_eq!(
        late,
        AttemptOutcome::Stale {
            task_uid: first.task.uid.clone()
        }
    );
    let task = h.get("q", "t").await;
    assert_eq!((task.status, task.attempt_count), (Status::Running, 2));

    let done = h.complete(&second, Some(200)).await;
    assert!(matches!(done, AttemptOutcome::Applied(ref f) if f.status == Status::Succeeded));
    // A duplicate report of an applied result is stale too.
    assert!(matches!(
        h.complete(&second, Some(500)).await,
        AttemptOutcome::Stale { .. }
    ));
    assert_eq!(h.get("q", "t").await.status, Status::Succeeded);
}

/// One batch of results naming the same attempt twice (a delivery reported
/// again): the first applies, the second is stale, and the task keeps the
/// first one's outcome.
/// What a delivery of `claimed` reports: the status, or a connection error.
fn result_of(claimed: &ClaimedTask, status: Option<u16>) -> AttemptResult {
    AttemptResult {
        task_uid: claimed.task.uid.clone(),
        attempt: claimed.attempt,
        status_code: status,
        error: status.is_none().then(|| "connection refused".to_string()),
        duration: Duration::from_millis(7),
        retry_after: None,
        give_up: false,
        response: None,
    }
}

async fn a_result_reported_twice_in_one_batch_applies_once(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    let claimed = h.claim(1).await.tasks.remove(0);
    let out = h
        .store
        .dispatch_complete(vec![
            result_of(&claimed, Some(200)),
            result_of(&claimed, Some(500)),
        ])
        .await
        .unwrap();
    assert!(
        matches!(&out[0], AttemptOutcome::Applied(f) if f.status == Status::Succeeded),
        "{out:?}"
    );
    assert!(matches!(out[1], AttemptOutcome::Stale { .. }), "{out:?}");
    assert_eq!(h.get("q", "t").await.status, Status::Succeeded);
    let attempts = h
        .store
        .task_attempts(
            ORG,
            "q",
            "t",
            &PageRequest {
                limit: 10,
                after: None,
            },
        )
        .await
        .unwrap()
        .items;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].status_code, Some(200));
}

async fn a_cancel_ends_a_running_task_and_its_late_result_changes_nothing(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "fails").await;
    h.task("q", "succeeds").await;
    let batch = h.claim(10).await;
    h.advance_ms(250);
    for id in ["fails", "succeeds"] {
        let task = h.store.task_cancel(ORG, "q", id).await.unwrap();
        assert_eq!(task.state(h.now()), TaskState::Cancelled, "{id}");
        assert_eq!(task.finished_at, Some(h.now()));
        assert_eq!(
            task.dedup_expires_at,
            Some(h.now() + SignedDuration::from_secs(600))
        );
        assert_eq!(task.aborted_attempt(), Some(1));
        let last = task.last_attempt.clone().unwrap();
        assert_eq!(last.attempt, 1);
        assert_eq!(last.status_code, None);
        assert_eq!(last.error.as_deref(), Some(ABORTED_BY_CANCEL));
        assert_eq!(last.duration_ms, Some(250));
        assert_eq!(last.finished_at, Some(h.now()));
        // The attempt's own record says the same.
        let attempts = h
            .store
            .task_attempts(ORG, "q", id, &all_attempts())
            .await
            .unwrap()
            .items;
        assert_eq!(attempts, vec![last]);
    }
    // The aborted attempts report late, one failing, one succeeding: both
    // are stale, neither a retry nor a success follows.
    for (claimed, status) in batch.tasks.iter().zip([Some(500), Some(200)]) {
        assert_eq!(
            h.complete(claimed, status).await,
            AttemptOutcome::Stale {
                task_uid: claimed.task.uid.clone()
            }
        );
    }
    for id in ["fails", "succeeds"] {
        let task = h.get("q", id).await;
        assert_eq!(task.status, Status::Cancelled);
        assert_eq!(task.attempt_count, 1);
        assert_eq!(task.aborted_attempt(), Some(1));
    }
    // Cancelling again changes nothing.
    h.advance_ms(1000);
    let again = h.store.task_cancel(ORG, "q", "fails").await.unwrap();
    assert_eq!(again, h.get("q", "fails").await);
    assert_eq!(
        again.finished_at,
        Some(h.now() - SignedDuration::from_secs(1))
    );
    h.advance_ms(60_000);
    assert!(h.claim(10).await.tasks.is_empty());
    h.assert_counters_match_rows(ORG).await;
}

/// A node that stops gives back the leases it holds: each task is pending
/// again with its attempt unmade, and is counted so; a lease no longer
/// held is left alone.
async fn released_leases_make_their_tasks_pending_again(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    h.task("q", "u").await;
    let batch = h.claim(2).await;
    assert_eq!(ids(&batch), ["t", "u"]);
    let held = (batch.tasks[0].task.uid.clone(), batch.tasks[0].attempt);
    let not_held = (batch.tasks[1].task.uid.clone(), batch.tasks[1].attempt + 1);
    let released = h
        .store
        .dispatch_release(vec![held, not_held])
        .await
        .unwrap();
    assert_eq!(released, 1, "only the lease held");
    // Counted, not compared with `assert_stats_match`: the attempts
    // dispatched in the last minute count the released one, which started.
    h.assert_counters_match_rows(ORG).await;
    let stats = h.store.queue_stats(ORG, "q").await.unwrap();
    assert_eq!((stats.queued, stats.running), (1, 1));
    let t = h.get("q", "t").await;
    assert_eq!((t.status, t.attempt_count), (Status::Pending, 0));
    assert!(
        h.store
            .task_attempts(ORG, "q", "t", &all_attempts())
            .await
            .unwrap()
            .items
            .is_empty(),
        "the attempt is unmade"
    );
    let again = h.claim(2).await;
    assert_eq!(ids(&again), ["t"]);
    assert_eq!(again.tasks[0].attempt, 1);
    h.assert_counters_match_rows(ORG).await;
}

async fn a_cancel_after_the_result_leaves_the_task_as_it_ended(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    let batch = h.claim(1).await;
    h.complete(&batch.tasks[0], Some(200)).await;
    let task = h.store.task_cancel(ORG, "q", "t").await.unwrap();
    assert_eq!(task.status, Status::Succeeded);
    assert_eq!(task.aborted_attempt(), None);
    assert_eq!(task.last_attempt.unwrap().status_code, Some(200));
}

async fn leases_lost_names_the_attempts_no_longer_running(h: Harness) {
    h.queue("q", open_config()).await;
    for id in ["cancelled", "finished", "running"] {
        h.task("q", id).await;
    }
    let batch = h.claim(10).await;
    let attempt = |id: &str| {
        let t = batch.tasks.iter().find(|t| t.task.task_id == id).unwrap();
        (t.task.uid.clone(), t.attempt)
    };
    h.store.task_cancel(ORG, "q", "cancelled").await.unwrap();
    let finished = batch
        .tasks
        .iter()
        .find(|t| t.task.task_id == "finished")
        .unwrap();
    h.complete(finished, Some(200)).await;
    let (running, token) = attempt("running");
    let asked = vec![
        attempt("cancelled"),
        attempt("finished"),
        (running.clone(), token),
        (running.clone(), token + 1),
        ("no-such-task".to_string(), 1),
    ];
    let lost = h.store.dispatch_leases_lost(asked.clone()).await.unwrap();
    let expected: Vec<_> = asked
        .into_iter()
        .filter(|a| *a != (running.clone(), token))
        .collect();
    assert_eq!(lost, expected);
    assert!(
        h.store
            .dispatch_leases_lost(Vec::new())
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_cancelled_task_is_never_claimed(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    h.store.task_cancel(ORG, "q", "t").await.unwrap();
    assert!(h.claim(10).await.tasks.is_empty());
}

async fn a_lease_expiring_after_a_cancel_does_not_bring_the_task_back(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "t").await;
    h.claim(1).await;
    let cancelled = h.store.task_cancel(ORG, "q", "t").await.unwrap();
    // Past the lease (deadline 1 s + grace 1 s) and any backoff.
    h.advance_ms(60_000);
    let batch = h.claim(1).await;
    assert!(batch.recovered.is_empty(), "{:?}", batch.recovered);
    assert!(batch.tasks.is_empty());
    assert_eq!(batch.wake_at, None, "no lease left to wait for");
    assert_eq!(h.get("q", "t").await, cancelled);
}

async fn concurrent_claims_have_one_winner(h: Harness) {
    h.queue("a", open_config()).await;
    h.queue("b", open_config()).await;
    for i in 0..150 {
        h.task(if i % 2 == 0 { "a" } else { "b" }, &format!("t{i}"))
            .await;
    }
    let claimer = |store: Arc<dyn Store>| async move {
        let mut mine = Vec::new();
        let mut idle_rounds = 0;
        while idle_rounds < 3 {
            let batch = store.dispatch_claim(plain_claim(7)).await.unwrap();
            if batch.tasks.is_empty() {
                idle_rounds += 1;
                tokio::task::yield_now().await;
            } else {
                idle_rounds = 0;
            }
            mine.extend(batch.tasks.into_iter().map(|t| t.task.uid));
        }
        mine
    };
    let (one, two) = tokio::join!(
        tokio::spawn(claimer(h.store.clone())),
        tokio::spawn(claimer(h.other.clone()))
    );
    let (one, two) = (one.unwrap(), two.unwrap());
    let all: HashSet<&String> = one.iter().chain(&two).collect();
    assert_eq!(one.len() + two.len(), 150, "every task claimed once");
    assert_eq!(all.len(), 150, "no task claimed twice");
}

async fn queue_limits_are_shared_by_all_claimers(h: Harness) {
    h.queue("q", with_limits(10_000.0, 10_000, 3)).await;
    for i in 0..10 {
        h.task("q", &format!("t{i}")).await;
    }
    let a = h.claim(2).await.tasks.len();
    let b = h
        .other
        .dispatch_claim(plain_claim(10))
        .await
        .unwrap()
        .tasks
        .len();
    assert_eq!((a, b), (2, 1));
    h.store
        .queue_update(
            ORG,
            "q",
            &QueueConfigPatch {
                rate_limits: Some(RateLimitsPatch {
                    max_concurrent_dispatches: Some(5),
                    ..RateLimitsPatch::default()
                }),
                ..QueueConfigPatch::default()
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(h.claim(10).await.tasks.len(), 2, "a raised limit applies");
}

async fn a_claim_gives_no_organization_more_than_its_share(h: Harness) {
    const OTHER: &str = "other";
    h.store
        .organization_create(OTHER, support::new_key(), None)
        .await
        .unwrap();
    h.queue("q", open_config()).await;
    h.store
        .queue_create(OTHER, "q", &open_config(), None)
        .await
        .unwrap();
    for i in 0..6 {
        h.task("q", &format!("mine-{i}")).await;
        h.task_of(OTHER, "q", &format!("theirs-{i}"), None).await;
    }
    let claim = |in_flight: &[(&str, u32)], max_per_org: Option<u32>| DispatchClaim {
        max_tasks: 8,
        lease_grace: GRACE,
        attempts_kept: 100,
        fair_share: Some(FairShare {
            slots: 8,
            max_per_org,
            in_flight: in_flight.iter().map(|(o, n)| (o.to_string(), *n)).collect(),
        }),
    };
    let per_org = |batch: &ClaimedBatch| {
        let mine = batch.tasks.iter().filter(|t| t.org == ORG).count();
        (mine, batch.tasks.len() - mine)
    };
    // Two organizations want slots: 8 / (2 + 1) each, a share kept back.
    let batch = h.store.dispatch_claim(claim(&[], None)).await.unwrap();
    assert_eq!(per_org(&batch), (2, 2));
    // What an organization holds counts against its share.
    let batch = h
        .store
        .dispatch_claim(claim(&[(ORG, 2), (OTHER, 1)], None))
        .await
        .unwrap();
    assert_eq!(per_org(&batch), (0, 1));
    // An explicit cap replaces the share.
    let batch = h
        .store
        .dispatch_claim(claim(&[(ORG, 2), (OTHER, 3)], Some(4)))
        .await
        .unwrap();
    assert_eq!(per_org(&batch), (2, 1));
}

/// An organization alone in wanting slots still leaves a share for the
/// others once a second organization exists; on a server of one
/// organization it may take every slot.
async fn a_lone_organization_takes_every_slot_only_when_it_is_the_only_one(h: Harness) {
    h.queue("q", open_config()).await;
    for i in 0..10 {
        h.task("q", &format!("t{i}")).await;
    }
    let claim = || DispatchClaim {
        max_tasks: 8,
        lease_grace: GRACE,
        attempts_kept: 100,
        fair_share: Some(FairShare {
            slots: 8,
            max_per_org: None,
            in_flight: Default::default(),
        }),
    };
    let batch = h.store.dispatch_claim(claim()).await.unwrap();
    assert_eq!(batch.tasks.len(), 8, "the only organization");
    h.store
        .organization_create("other", support::new_key(), None)
        .await
        .unwrap();
    for i in 10..15 {
        h.task("q", &format!("t{i}")).await;
    }
    let batch = h.store.dispatch_claim(claim()).await.unwrap();
    assert_eq!(batch.tasks.len(), 4, "8 / (1 + 1) slots of 7 due tasks");
}

/// The statistics a queue should show, counted from its tasks one by one.
async fn counted_stats(h: &Harness, queue: &str) -> QueueStats {
    let now = h.now();
    let minute_ago = now - SignedDuration::from_secs(60);
    let mut stats = QueueStats::default();
    let mut page = all_attempts();
    loop {
        let tasks = h
            .store
            .task_list(ORG, queue, TaskFilter::default(), &page)
            .await
            .unwrap();
        for t in &tasks.items {
            match t.state(now) {
                TaskState::Scheduled => stats.scheduled += 1,
                TaskState::Queued => stats.queued += 1,
                TaskState::Running => stats.running += 1,
                TaskState::Succeeded => stats.succeeded += 1,
                TaskState::Failed => stats.failed += 1,
                TaskState::Cancelled => stats.cancelled += 1,
            }
            if t.status == Status::Pending && t.next_attempt_at <= now {
                stats.oldest_due_time = Some(
                    stats
                        .oldest_due_time
                        .map_or(t.next_attempt_at, |o| o.min(t.next_attempt_at)),
                );
            }
            let attempts = h
                .store
                .task_attempts(ORG, queue, &t.task_id, &all_attempts())
                .await
                .unwrap();
            stats.dispatched_last_minute += attempts
                .items
                .iter()
                .filter(|a| a.started_at > minute_ago && a.started_at <= now)
                .count() as u64;
        }
        match tasks.next {
            Some(next) => page.after = Some(next),
            None => return stats,
        }
    }
}

/// Compares the queue's statistics, and the metric counts, with its tasks.
async fn assert_stats_match(h: &Harness, queue: &str, step: &str) -> QueueStats {
    let counted = counted_stats(h, queue).await;
    let stats = h.store.queue_stats(ORG, queue).await.unwrap();
    assert_eq!(stats, counted, "{queue} after {step}");
    let counts = h.store.task_counts_by_state().await.unwrap();
    let metric = |status: Status| {
        counts
            .iter()
            .filter(|c| c.org == ORG && c.queue == queue && c.status == status)
            .map(|c| c.count)
            .sum::<u64>()
    };
    assert_eq!(
        [
            metric(Status::Pending),
            metric(Status::Running),
            metric(Status::Succeeded),
            metric(Status::Failed),
            metric(Status::Cancelled),
        ],
        [
            stats.scheduled + stats.queued,
            stats.running,
            stats.succeeded,
            stats.failed,
            stats.cancelled,
        ],
        "metric counts of {queue} after {step}"
    );
    h.assert_counters_match_rows(ORG).await;
    stats
}

/// Every statement that inserts tasks counts them in the statistics: a
/// create, a keyed create, a batch, the replacement of an expired
/// tombstone (the transactional path), a job's run and an event.
async fn every_way_a_task_is_made_is_counted(h: Harness) {
    use idem_core::event::EventType;
    use idem_store::idempotency::KeyCompletion;
    use idem_store::jobs::JOBS_QUEUE;
    h.queue("q", open_config()).await;
    let new = |task_id: &str| TaskCreate {
        target: support::hook(None),
        dispatch_deadline_s: Some(1),
        ..TaskCreate::example(ORG, "q", task_id)
    };
    h.store
        .webhook_create(
            ORG,
            "http://127.0.0.1:9/events",
            &[EventType::TaskSucceeded],
            None,
        )
        .await
        .unwrap();
    h.store.task_create(new("single")).await.unwrap();
    let keyed = TaskCreate {
        completion: Some(KeyCompletion {
            org: ORG.into(),
            principal: "admin".into(),
            key: "k1".into(),
            token: "tok-k1".into(),
            fingerprint: "fp".into(),
            status: 201,
            resource_kind: "task",
            resource_id: "q/keyed".into(),
            body: None,
            retain_for: Duration::from_secs(3600),
            claim: true,
        }),
        ..new("keyed")
    };
    h.store.task_create(keyed).await.unwrap();
    let made = h
        .store
        .task_create_batch(TaskBatch {
            org: ORG.into(),
            queue: "q".into(),
            tasks: vec![Ok(new("b1")), Ok(new("b2")), Ok(new("b3"))],
            atomic: false,
            completion: None,
        })
        .await
        .unwrap();
    assert!(
        made.items
            .iter()
            .all(|i| matches!(i, BatchItem::Created(_)))
    );
    let stats = assert_stats_match(&h, "q", "creates").await;
    assert_eq!(stats.queued, 5);

    h.store.task_cancel(ORG, "q", "b3").await.unwrap();
    h.advance_ms(601_000);
    h.store.task_create(new("b3")).await.unwrap();
    assert_stats_match(&h, "q", "a tombstone replaced").await;

    let job: idem_core::job::CreateJob = serde_json::from_value(serde_json::json!({
        "name": "j", "schedule": "* * * * *",
        "target": {"url": "http://127.0.0.1:9/hook"}
    }))
    .unwrap();
    let job = job.resolve().unwrap();
    h.store
        .job_create(ORG, "j", &job, false, None)
        .await
        .unwrap();
    h.store.job_run_now(ORG, "j", None).await.unwrap();
    let runs = assert_stats_match(&h, JOBS_QUEUE, "a job's run").await;
    assert_eq!(runs.queued, 1, "the run is counted");

    // A delivery that succeeds raises the webhook's event.
    let claimed = h.claim(10).await;
    let single = claimed.tasks.iter().find(|c| c.task.task_id == "single");
    h.complete(single.expect("the single task is due"), Some(200))
        .await;
    let events = assert_stats_match(&h, "~events", "an event").await;
    assert_eq!(events.queued, 1, "the event is counted");
    assert_stats_match(&h, "q", "a delivery").await;
}

async fn queue_stats_match_counted_tasks_after_a_mixed_workload(h: Harness) {
    h.queue("q", open_config()).await;
    h.queue("other", open_config()).await;
    let empty = assert_stats_match(&h, "q", "nothing").await;
    assert_eq!(empty, QueueStats::default());

    let start = h.now();
    for i in 0..10 {
        h.task("q", &format!("t{i}")).await;
        h.advance_ms(1);
    }
    let ahead = Some(h.now() + SignedDuration::from_secs(3600));
    for i in 0..3 {
        h.task_at("q", &format!("s{i}"), ahead).await;
    }
    h.task("other", "t0").await;
    // A duplicate is refused and counts nothing.
    let dup = h
        .store
        .task_create(TaskCreate {
            target: support::hook(None),
            ..TaskCreate::example(ORG, "q", "t0")
        })
        .await;
    assert!(matches!(dup, Err(Error::TaskExists(_))), "{dup:?}");
    let created = assert_stats_match(&h, "q", "creates").await;
    assert_eq!((created.scheduled, created.queued), (3, 10));
    assert_eq!(created.oldest_due_time, Some(start));
    assert_stats_match(&h, "other", "creates").await;

    // Six attempts start; two succeed, two fail and back off, one gives up,
    // one stays in flight.
    let (mut batch, others): (Vec<_>, Vec<_>) = h
        .claim(7)
        .await
        .tasks
        .into_iter()
        .partition(|t| t.task.queue == "q");
    assert_eq!((batch.len(), others.len()), (6, 1));
    let claimed = assert_stats_match(&h, "q", "a claim").await;
    assert_eq!((claimed.running, claimed.dispatched_last_minute), (6, 6));
    h.advance_ms(5);
    for t in batch.drain(..2) {
        h.complete(&t, Some(200)).await;
    }
    for t in batch.drain(..2) {
        h.complete(&t, Some(500)).await;
    }
    let gave_up = batch.remove(0);
    h.complete_with(AttemptResult {
        task_uid: gave_up.task.uid.clone(),
        attempt: gave_up.attempt,
        status_code: Some(400),
        error: None,
        duration: Duration::from_millis(3),
        retry_after: None,
        give_up: true,
        response: None,
    })
    .await;
    h.complete(&others[0], Some(200)).await;
    assert_stats_match(&h, "other", "completions").await;
    let completed = assert_stats_match(&h, "q", "completions").await;
    assert_eq!(
        (completed.succeeded, completed.failed, completed.running),
        (2, 1, 1)
    );

    // A queued task and a scheduled one are cancelled; one scheduled task
    // is run now, so it is queued.
    h.store.task_cancel(ORG, "q", "t9").await.unwrap();
    h.store.task_cancel(ORG, "q", "s1").await.unwrap();
    h.store.task_run_now(ORG, "q", "s2", None).await.unwrap();
    assert_stats_match(&h, "q", "cancels and run-now").await;

    // The attempt in flight loses its lease; the retries come due, and
    // three due tasks are claimed and succeed.
    h.advance_ms(2_000);
    let retried = h.claim(3).await;
    assert_eq!(retried.recovered.len(), 1);
    assert_stats_match(&h, "q", "lease expiry and retries").await;
    for t in &retried.tasks {
        h.complete(t, Some(200)).await;
    }
    assert_stats_match(&h, "q", "retries").await;

    // The rest is purged; a minute later nothing counts as dispatched.
    h.store.queue_purge(ORG, "q", None).await.unwrap();
    let purged = assert_stats_match(&h, "q", "a purge").await;
    assert_eq!((purged.scheduled, purged.queued), (0, 0), "{purged:?}");
    assert!(purged.cancelled >= 3, "{purged:?}");
    h.advance_ms(61_000);
    let later = assert_stats_match(&h, "q", "a minute").await;
    assert_eq!(later.dispatched_last_minute, 0);

    // Past the dedup window the tombstones are swept.
    h.advance_ms(600_000);
    while h.store.task_sweep_tombstones(4).await.unwrap() > 0 {}
    let swept = assert_stats_match(&h, "q", "sweeping").await;
    assert_eq!(swept, QueueStats::default());

    // A queue deleted and made again starts from nothing.
    h.store.queue_delete(ORG, "q").await.unwrap();
    assert!(matches!(
        h.store.queue_stats(ORG, "q").await,
        Err(Error::NotFound { .. })
    ));
    h.queue("q", open_config()).await;
    assert_eq!(
        assert_stats_match(&h, "q", "re-creation").await,
        QueueStats::default()
    );
    assert_stats_match(&h, "other", "everything").await;
}

/// Two stores (two nodes' pools on PostgreSQL) create into one queue from
/// many tasks at once, duplicates included, while both claim, complete and
/// sweep: no count is lost or doubled, whichever rows the writers used.
async fn queue_stats_stay_exact_under_concurrent_writers(h: Harness) {
    let mut config = open_config();
    config.dedup_window_s = 0;
    h.queue("q", config).await;
    let target = support::hook(None);
    let mut writers = Vec::new();
    for w in 0..8u32 {
        let store = if w % 2 == 0 {
            h.store.clone()
        } else {
            h.other.clone()
        };
        let target = target.clone();
        writers.push(tokio::spawn(async move {
            let (mut created, mut claimed) = (0, 0);
            for i in 0..40u32 {
                // Writers w and w+1 share IDs: one of each pair is refused.
                let id = format!("t{}-{i}", w / 2);
                let made = store
                    .task_create(TaskCreate {
                        target: target.clone(),
                        ..TaskCreate::example(ORG, "q", &id)
                    })
                    .await;
                match made {
                    Ok(_) => created += 1,
                    Err(Error::TaskExists(_)) => {}
                    Err(e) => panic!("{e:?}"),
                }
                if i % 8 == 0 {
                    let batch = store.dispatch_claim(plain_claim(5)).await.unwrap();
                    let results = batch
                        .tasks
                        .iter()
                        .map(|t| AttemptResult {
                            task_uid: t.task.uid.clone(),
                            attempt: t.attempt,
                            status_code: Some(200),
                            error: None,
                            duration: Duration::from_millis(1),
                            retry_after: None,
                            give_up: false,
                            response: None,
                        })
                        .collect();
                    claimed += batch.tasks.len() as u64;
                    store.dispatch_complete(results).await.unwrap();
                    store.task_sweep_tombstones(3).await.unwrap();
                }
            }
            (created, claimed)
        }));
    }
    let (mut created, mut claimed) = (0, 0);
    for w in writers {
        let (c, d) = w.await.unwrap();
        created += c;
        claimed += d;
    }
    // Each ID is created at least once; with no dedup window, the second of
    // a pair may come after the first was finished and swept, and creates
    // it again.
    assert!((160..=320).contains(&created), "{created} created");
    // Swept tasks took their attempts with them; the dispatch count keeps
    // them for its minute.
    let expected = |counted: QueueStats| QueueStats {
        dispatched_last_minute: claimed,
        ..counted
    };
    let stats = h.store.queue_stats(ORG, "q").await.unwrap();
    assert_eq!(stats, expected(counted_stats(&h, "q").await));
    assert!(stats.succeeded + stats.queued > 0, "{stats:?}");
    while h.store.task_sweep_tombstones(50).await.unwrap() > 0 {}
    h.other.task_sweep_tombstones(50).await.unwrap();
    let stats = h.other.queue_stats(ORG, "q").await.unwrap();
    assert_eq!(
        stats,
        expected(counted_stats(&h, "q").await),
        "after folding"
    );
    assert_eq!(stats.succeeded, 0, "swept with a zero window");
}

/// A claim logs its attempts for `dispatched_last_minute` as one entry of
/// their count (PostgreSQL; SQLite counts in memory and keeps the table
/// empty), and drops its queue's entries older than a minute, so the
/// table holds a minute of claims per queue whatever the rate.
async fn dispatches_are_logged_once_per_claim_for_a_minute(h: Harness) {
    h.queue("q", open_config()).await;
    let entries = async || match h.postgres_url() {
        Some(_) => h.raw_i64("SELECT count(*) FROM task_dispatches").await,
        None => 0,
    };
    // Each claim's tasks succeed, so that none comes back to the next.
    let claim_all = async || {
        let batch = h.claim(10).await;
        for t in &batch.tasks {
            h.complete(t, Some(200)).await;
        }
        batch.tasks.len()
    };
    for i in 0..5 {
        h.task("q", &format!("a{i}")).await;
    }
    assert_eq!(claim_all().await, 5);
    let stats = h.store.queue_stats(ORG, "q").await.unwrap();
    assert_eq!(stats.dispatched_last_minute, 5);
    let on_postgres = h.postgres_url().is_some();
    assert_eq!(entries().await, if on_postgres { 1 } else { 0 });

    h.advance_ms(30_000);
    for i in 0..2 {
        h.task("q", &format!("b{i}")).await;
    }
    assert_eq!(claim_all().await, 2);
    let stats = h.store.queue_stats(ORG, "q").await.unwrap();
    assert_eq!(stats.dispatched_last_minute, 7);
    assert_eq!(entries().await, if on_postgres { 2 } else { 0 });

    // Past the first claim's minute: its entry goes with the next claim.
    h.advance_ms(31_000);
    h.task("q", "c0").await;
    assert_eq!(claim_all().await, 1);
    let stats = h.store.queue_stats(ORG, "q").await.unwrap();
    assert_eq!(stats.dispatched_last_minute, 3);
    assert_eq!(entries().await, if on_postgres { 2 } else { 0 });
}

/// Migration 022 on a PostgreSQL database of version 21, whose trigger on
/// `attempts` logged one entry per attempt: the entries written before
/// count one each, and the trigger is gone, so a claim after the upgrade
/// counts its attempts once (with the trigger left, twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_dispatches_logged_before_migration_022_count_once_each() {
    let h = Harness::postgres().await;
    h.queue("q", open_config()).await;
    let now = h.now().as_microsecond();
    h.raw(&format!(
        "ALTER TABLE task_dispatches DROP COLUMN n; \
         CREATE FUNCTION idem_task_dispatches_insert() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN INSERT INTO task_dispatches (org, queue, started_at) \
         SELECT t.org, t.queue, a.started_at FROM idem_new a JOIN tasks t ON t.uid = a.task_uid; \
         RETURN NULL; END $$; \
         CREATE TRIGGER task_dispatches_insert AFTER INSERT ON attempts \
         REFERENCING NEW TABLE AS idem_new FOR EACH STATEMENT \
         EXECUTE FUNCTION idem_task_dispatches_insert(); \
         INSERT INTO task_dispatches (org, queue, started_at) \
         VALUES ('{ORG}', 'q', {now}), ('{ORG}', 'q', {now}), ('{ORG}', 'q', {now}); \
         UPDATE idem_schema SET version = 21"
    ))
    .await;
    let node = h.reopen().await;
    assert_eq!(
        h.raw_i64("SELECT version FROM idem_schema").await,
        idem_store::schema::VERSION
    );
    let stats = node.queue_stats(ORG, "q").await.unwrap();
    assert_eq!(stats.dispatched_last_minute, 3);

    for i in 0..2 {
        h.task("q", &format!("t{i}")).await;
    }
    let claimed = node.dispatch_claim(plain_claim(10)).await.unwrap();
    assert_eq!(claimed.tasks.len(), 2);
    let stats = node.queue_stats(ORG, "q").await.unwrap();
    assert_eq!(stats.dispatched_last_minute, 5);
}

/// Claims the task and fails its attempt with a 500 until it is `failed`,
/// moving the clock to each retry; the attempts it took.
async fn fail_for_good(h: &Harness, queue: &str, task_id: &str) -> u32 {
    let mut attempts = 0;
    loop {
        let task = h.get(queue, task_id).await;
        if task.status == Status::Failed {
            return attempts;
        }
        h.clock.set(task.next_attempt_at.max(h.now()));
        let batch = h.claim(1).await;
        let claimed = batch.tasks.first().expect("the task is due");
        assert_eq!(claimed.task.task_id, task_id);
        h.complete(claimed, Some(500)).await;
        attempts += 1;
    }
}

async fn redrive_runs_a_failed_task_again_with_its_identity_and_a_fresh_budget(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 2;
    h.queue("q", config).await;
    let created = h.task("q", "t").await;
    assert_eq!(fail_for_good(&h, "q", "t").await, 2);
    h.advance_ms(5_000);

    let redriven = h.store.task_redrive(ORG, "q", "t", None).await.unwrap();
    assert_eq!(redriven.state(h.now()), TaskState::Queued);
    let stats = assert_stats_match(&h, "q", "a redrive").await;
    assert_eq!((stats.queued, stats.failed), (1, 0));
    assert_eq!(redriven.status, Status::Pending);
    assert_eq!(redriven.next_attempt_at, h.now(), "due now");
    // What the run key and the identity headers are made of is unchanged.
    assert_eq!(redriven.uid, created.uid);
    assert_eq!(redriven.created_at, created.created_at);
    assert_eq!(redriven.schedule_time, created.schedule_time);
    assert_eq!(redriven.attempt_count, 2, "attempts keep counting");
    assert_eq!(redriven.finished_at, None);
    assert_eq!(redriven.dedup_expires_at, None);
    assert!(redriven.last_attempt.is_some(), "the last attempt stays");

    // Attempt numbers continue, and the budget starts afresh: the first
    // failure after the redrive is retried although 3 attempts exceed 2.
    let batch = h.claim(1).await;
    assert_eq!(batch.tasks[0].attempt, 3);
    h.complete(&batch.tasks[0], Some(500)).await;
    let task = h.get("q", "t").await;
    assert_eq!(task.status, Status::Pending, "retried, not failed");
    assert_eq!(
        task.next_attempt_at,
        h.now() + SignedDuration::from_secs(1),
        "the first retry's backoff"
    );
    h.clock.set(task.next_attempt_at);
    let batch = h.claim(1).await;
    assert_eq!(batch.tasks[0].attempt, 4);
    h.complete(&batch.tasks[0], Some(200)).await;
    let task = h.get("q", "t").await;
    assert_eq!(task.state(h.now()), TaskState::Succeeded);
    assert_eq!(task.attempt_count, 4);
    let attempts = h
        .store
        .task_attempts(ORG, "q", "t", &all_attempts())
        .await
        .unwrap();
    let numbers: Vec<u32> = attempts.items.iter().map(|a| a.attempt).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    let codes: Vec<Option<u16>> = attempts.items.iter().map(|a| a.status_code).collect();
    assert_eq!(codes, [Some(500), Some(500), Some(500), Some(200)]);

    // Succeeded: nothing to redrive.
    let err = h.store.task_redrive(ORG, "q", "t", None).await.unwrap_err();
    assert!(matches!(err, Error::FailedPrecondition(_)), "{err:?}");
}

async fn a_redriven_task_s_retry_duration_counts_from_its_new_first_attempt(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 0;
    config.retry_config.max_retry_duration_s = 2;
    h.queue("q", config).await;
    h.task("q", "t").await;
    assert_eq!(fail_for_good(&h, "q", "t").await, 2);
    h.advance_ms(3_600_000);
    h.store.task_redrive(ORG, "q", "t", None).await.unwrap();
    let batch = h.claim(1).await;
    h.complete(&batch.tasks[0], Some(500)).await;
    assert_eq!(
        h.get("q", "t").await.status,
        Status::Pending,
        "an hour after the first attempt ever, but within 2 s of the first since the redrive"
    );
}

async fn redrive_refuses_a_task_that_has_not_ended(h: Harness) {
    h.queue("q", open_config()).await;
    h.task("q", "queued").await;
    h.task_at(
        "q",
        "scheduled",
        Some(h.now() + SignedDuration::from_secs(60)),
    )
    .await;
    h.task("q", "running").await;
    h.task("q", "cancelled").await;
    h.store.task_cancel(ORG, "q", "cancelled").await.unwrap();
    // Claims "queued" and "running" (schedule order, then uid); one is
    // completed to leave it queued for a retry.
    let batch = h.claim(2).await;
    assert_eq!(batch.tasks.len(), 2);
    let queued = batch
        .tasks
        .iter()
        .find(|t| t.task.task_id == "queued")
        .unwrap();
    h.complete(queued, Some(500)).await;
    for id in ["queued", "scheduled", "running"] {
        let before = h.get("q", id).await;
        let err = h.store.task_redrive(ORG, "q", id, None).await.unwrap_err();
        match &err {
            Error::FailedPrecondition(msg) => assert!(msg.contains(id), "{msg}"),
            other => panic!("{id}: {other:?}"),
        }
        assert_eq!(h.get("q", id).await, before, "{id} unchanged");
    }
    let err = h
        .store
        .task_redrive(ORG, "q", "missing", None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");

    // A cancelled task runs after all.
    let task = h
        .store
        .task_redrive(ORG, "q", "cancelled", None)
        .await
        .unwrap();
    assert_eq!(task.state(h.now()), TaskState::Queued);
    assert_eq!(task.attempt_count, 0);
    assert_eq!(h.claim_ids(10).await, ["cancelled"]);
}

async fn bulk_redrive_takes_the_ended_tasks_in_its_state_and_time_range(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 1;
    h.queue("q", config).await;
    let t0 = h.now();
    for id in ["f1", "f2"] {
        h.task("q", id).await;
    }
    let batch = h.claim(10).await;
    for t in &batch.tasks {
        h.complete(t, Some(500)).await;
    }
    h.advance_ms(10_000);
    let t1 = h.now();
    h.task("q", "f3").await;
    h.task("q", "ok").await;
    let batch = h.claim(10).await;
    for t in &batch.tasks {
        let code = if t.task.task_id == "ok" { 200 } else { 500 };
        h.complete(t, Some(code)).await;
    }
    h.task("q", "c1").await;
    h.store.task_cancel(ORG, "q", "c1").await.unwrap();
    h.advance_ms(1_000);

    let failed = |after: Option<Timestamp>, before: Option<Timestamp>| RedriveFilter {
        finished_after: after,
        finished_before: before,
        ..RedriveFilter::all(Status::Failed)
    };
    let r = h
        .store
        .task_redrive_many(ORG, "q", failed(Some(t0), Some(t1)), None)
        .await
        .unwrap();
    assert_eq!(r.count, 2);
    for id in ["f1", "f2"] {
        assert_eq!(h.get("q", id).await.state(h.now()), TaskState::Queued);
    }
    let stats = assert_stats_match(&h, "q", "a bulk redrive").await;
    assert_eq!((stats.queued, stats.failed), (2, 1));
    assert_eq!(h.get("q", "f3").await.status, Status::Failed, "ended later");
    let r = h
        .store
        .task_redrive_many(ORG, "q", failed(Some(t1), None), None)
        .await
        .unwrap();
    assert_eq!(r.count, 1);
    assert_eq!(h.get("q", "f3").await.status, Status::Pending);
    assert_eq!(h.get("q", "c1").await.status, Status::Cancelled);
    assert_eq!(h.get("q", "ok").await.status, Status::Succeeded);

    let cancelled = RedriveFilter::all(Status::Cancelled);
    let r = h
        .store
        .task_redrive_many(ORG, "q", cancelled, None)
        .await
        .unwrap();
    assert_eq!(r.count, 1);
    let r = h
        .store
        .task_redrive_many(ORG, "q", failed(None, None), None)
        .await
        .unwrap();
    assert_eq!(r.count, 0, "nothing left to redrive");
    let mut due = h.claim_ids(10).await;
    due.sort();
    assert_eq!(due, ["c1", "f1", "f2", "f3"]);
    let stats = assert_stats_match(&h, "q", "claims of redriven tasks").await;
    assert_eq!((stats.running, stats.failed, stats.cancelled), (4, 0, 0));

    let err = h
        .store
        .task_redrive_many(ORG, "missing", failed(None, None), None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
}

async fn bulk_redrive_takes_every_matching_task_at_once(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 1;
    h.queue("q", config).await;
    let n = 1_500u32;
    for i in 0..n {
        h.task("q", &format!("t{i:05}")).await;
    }
    let batch = h.claim(n).await;
    assert_eq!(batch.tasks.len() as u32, n);
    let results = batch
        .tasks
        .iter()
        .map(|t| AttemptResult {
            task_uid: t.task.uid.clone(),
            attempt: t.attempt,
            status_code: Some(500),
            error: None,
            duration: Duration::from_millis(1),
            retry_after: None,
            give_up: false,
            response: None,
        })
        .collect();
    h.store.dispatch_complete(results).await.unwrap();
    let all_failed = RedriveFilter::all(Status::Failed);
    let r = h
        .store
        .task_redrive_many(ORG, "q", all_failed, None)
        .await
        .unwrap();
    assert_eq!(r.count, u64::from(n));
    for id in ["t00000", "t00999", "t01499"] {
        assert_eq!(h.get("q", id).await.status, Status::Pending, "{id}");
    }
    let stats = assert_stats_match(&h, "q", "a large bulk redrive").await;
    assert_eq!((stats.queued, stats.failed), (u64::from(n), 0));
}

async fn a_failed_task_is_kept_for_its_retention_whatever_its_dedup_window(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 1;
    config.dedup_window_s = 10;
    config.failed_retention_s = 100;
    h.queue("q", config.clone()).await;
    // A window longer than the retention keeps the ID taken for the window.
    config.dedup_window_s = 300;
    h.queue("long", config).await;
    for (q, id) in [("q", "bad"), ("q", "ok"), ("q", "gone"), ("long", "bad")] {
        h.task(q, id).await;
    }
    h.store.task_cancel(ORG, "q", "gone").await.unwrap();
    let batch = h.claim(10).await;
    for t in &batch.tasks {
        let code = if t.task.task_id == "ok" { 200 } else { 500 };
        h.complete(t, Some(code)).await;
    }
    let ended = h.now();
    assert_eq!(
        h.get("q", "bad").await.dedup_expires_at,
        Some(ended + SignedDuration::from_secs(100))
    );
    assert_eq!(
        h.get("long", "bad").await.dedup_expires_at,
        Some(ended + SignedDuration::from_secs(300))
    );

    h.advance_ms(11_000);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 2);
    for id in ["ok", "gone"] {
        let err = h.store.task_get(ORG, "q", id).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{id}: {err:?}");
    }
    assert_eq!(
        h.get("q", "bad").await.status,
        Status::Failed,
        "outlives its window"
    );
    let err = h
        .store
        .task_create(TaskCreate {
            target: h.get("q", "bad").await.target,
            ..TaskCreate::example(ORG, "q", "bad")
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::TaskExists(_)),
        "its ID stays taken: {err:?}"
    );

    h.advance_ms(90_000);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 1);
    let err = h.store.task_get(ORG, "q", "bad").await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
    h.task("q", "bad").await;
    assert_eq!(h.get("long", "bad").await.status, Status::Failed);
    h.advance_ms(200_000);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 1);
}

async fn a_redriven_task_is_not_swept_and_ends_with_a_new_expiry(h: Harness) {
    let mut config = open_config();
    config.retry_config.max_attempts = 1;
    config.dedup_window_s = 10;
    config.failed_retention_s = 20;
    h.queue("q", config).await;
    h.task("q", "t").await;
    fail_for_good(&h, "q", "t").await;
    h.advance_ms(15_000);
    h.store.task_redrive(ORG, "q", "t", None).await.unwrap();
    h.advance_ms(60_000);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 0);
    let batch = h.claim(1).await;
    h.complete(&batch.tasks[0], Some(500)).await;
    let task = h.get("q", "t").await;
    assert_eq!(task.status, Status::Failed);
    assert_eq!(task.attempt_count, 2);
    assert_eq!(
        task.dedup_expires_at,
        Some(h.now() + SignedDuration::from_secs(20))
    );
}

idem_testkit::backend_tests! {
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await;
    every_way_a_task_is_made_is_counted,
    claims_follow_schedule_time,
    a_claim_records_the_attempt_start_and_the_org_secrets,
    paused_queues_are_not_claimed,
    concurrency_limit_caps_running_tasks,
    token_bucket_limits_the_claim_rate,
    a_failure_is_retried_after_the_backoff,
    a_failure_that_gives_up_ends_the_task_with_attempts_left,
    final_states_set_the_dedup_expiry,
    retry_duration_ends_retries,
    an_expired_lease_is_redelivered,
    stale_attempt_result_is_ignored,
    a_result_reported_twice_in_one_batch_applies_once,
    a_cancel_ends_a_running_task_and_its_late_result_changes_nothing,
    a_cancel_after_the_result_leaves_the_task_as_it_ended,
    released_leases_make_their_tasks_pending_again,
    a_cancelled_task_is_never_claimed,
    leases_lost_names_the_attempts_no_longer_running,
    a_lease_expiring_after_a_cancel_does_not_bring_the_task_back,
    concurrent_claims_have_one_winner,
    queue_limits_are_shared_by_all_claimers,
    a_claim_gives_no_organization_more_than_its_share,
    a_lone_organization_takes_every_slot_only_when_it_is_the_only_one,
    queue_stats_match_counted_tasks_after_a_mixed_workload,
    queue_stats_stay_exact_under_concurrent_writers,
    dispatches_are_logged_once_per_claim_for_a_minute,
    redrive_runs_a_failed_task_again_with_its_identity_and_a_fresh_budget,
    a_redriven_task_s_retry_duration_counts_from_its_new_first_attempt,
    redrive_refuses_a_task_that_has_not_ended,
    bulk_redrive_takes_the_ended_tasks_in_its_state_and_time_range,
    bulk_redrive_takes_every_matching_task_at_once,
    a_failed_task_is_kept_for_its_retention_whatever_its_dedup_window,
    a_redriven_task_is_not_swept_and_ends_with_a_new_expiry,
}

fn all_attempts() -> idem_store::PageRequest {
    idem_store::PageRequest {
        limit: 1000,
        after: None,
    }
}
