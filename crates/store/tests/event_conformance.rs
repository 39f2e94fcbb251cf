//! Completion events (API.md §12), run against every backend: a task's
//! final state raises its callback's and its organization's webhooks'
//! events in the transaction that makes it final, once per final state.

mod support;

use idem_core::event::{Callbacks, EventType, event_run_key, webhook_run_key};
use idem_core::queue::{QueueConfig, RateLimits, RetryConfig};
use idem_core::run_key::task_run_key;
use idem_core::task::Target;
use idem_store::dispatch::*;
use idem_store::events::EVENTS_QUEUE;
use idem_store::*;
use jiff::SignedDuration;
use std::time::Duration;
use support::{Harness, ORG};

fn target(url: &str) -> Target {
    Target {
        url: url.into(),
        ..support::hook(None)
    }
}

/// One attempt per task, so a failure is final at once.
fn config(callbacks: Callbacks) -> QueueConfig {
    QueueConfig {
        mode: Default::default(),
        person_only: false,
        rate_limits: RateLimits {
            max_dispatches_per_second: 10_000.0,
            max_burst_size: 10_000,
            max_concurrent_dispatches: 10_000,
        },
        retry_config: RetryConfig {
            max_attempts: 1,
            ..RetryConfig::default()
        },
        dispatch_deadline_s: 5,
        dedup_window_s: 600,
        failed_retention_s: 600,
        callbacks,
        header_style: Default::default(),
        group_concurrency: None,
        group_order: Default::default(),
    }
}

impl Harness {
    async fn create(&self, queue: &str, task_id: &str, callbacks: Callbacks) -> Task {
        self.store
            .task_create(TaskCreate {
                target: target("http://127.0.0.1:9/work"),
                callbacks,
                ..TaskCreate::example(ORG, queue, task_id)
            })
            .await
            .unwrap()
    }

    async fn claim(&self) -> ClaimedBatch {
        self.store
            .dispatch_claim(DispatchClaim {
                attempts_kept: 100,
                max_tasks: 100,
                lease_grace: Duration::from_secs(1),
                fair_share: None,
            })
            .await
            .unwrap()
    }

    async fn finish(&self, claimed: &ClaimedTask, status: u16) -> Result<Vec<AttemptOutcome>> {
        self.store
            .dispatch_complete(vec![AttemptResult {
                task_uid: claimed.task.uid.clone(),
                attempt: claimed.attempt,
                status_code: Some(status),
                error: None,
                duration: Duration::from_millis(3),
                retry_after: None,
                give_up: false,
                response: None,
            }])
            .await
    }
}

fn by_id<'a>(batch: &'a ClaimedBatch, id: &str) -> &'a ClaimedTask {
    batch
        .tasks
        .iter()
        .find(|t| t.task.task_id == id)
        .unwrap_or_else(|| panic!("{id} not claimed"))
}

fn events(batch: &ClaimedBatch) -> Vec<&ClaimedTask> {
    batch
        .tasks
        .iter()
        .filter(|t| t.task.queue == EVENTS_QUEUE)
        .collect()
}

fn body(t: &ClaimedTask) -> serde_json::Value {
    let (_, bytes) = t.task.target.body.as_ref().expect("an event has a body");
    serde_json::from_slice(bytes).unwrap()
}

async fn a_final_state_raises_its_callback_event_once(h: Harness) {
    let queue_cbs = Callbacks {
        on_success: Some(target("http://127.0.0.1:9/queue-ok")),
        on_failure: Some(target("http://127.0.0.1:9/queue-failed")),
    };
    h.store
        .queue_create(ORG, "q", &config(queue_cbs), None)
        .await
        .unwrap();
    let ok = h.create("q", "ok", Callbacks::default()).await;
    let own = Callbacks {
        on_failure: Some(target("http://127.0.0.1:9/own-failed")),
        ..Callbacks::default()
    };
    let bad = h.create("q", "bad", own).await;
    let first = h.claim().await;
    assert!(events(&first).is_empty(), "nothing ended yet");
    h.finish(by_id(&first, "ok"), 200).await.unwrap();
    h.finish(by_id(&first, "bad"), 500).await.unwrap();
    // A late duplicate of each result applies nothing and raises nothing.
    for id in ["ok", "bad"] {
        let out = h.finish(by_id(&first, id), 200).await.unwrap();
        assert!(matches!(out[0], AttemptOutcome::Stale { .. }), "{out:?}");
    }

    let second = h.claim().await;
    let raised = events(&second);
    assert_eq!(raised.len(), 2, "one event per final state: {raised:?}");
    let ok_key = event_run_key(
        &task_run_key(ORG, "q", "ok", ok.created_at),
        EventType::TaskSucceeded,
    );
    let bad_key = event_run_key(
        &task_run_key(ORG, "q", "bad", bad.created_at),
        EventType::TaskFailed,
    );
    let ok_event = by_id(&second, &ok_key);
    assert_eq!(ok_event.task.target.url, "http://127.0.0.1:9/queue-ok");
    let b = body(ok_event);
    assert_eq!(b["type"], "task.succeeded");
    assert_eq!(b["queue"], "q");
    assert_eq!(b["task"]["task_id"], "ok");
    assert_eq!(b["task"]["state"], "succeeded");
    assert_eq!(b["task"]["last_attempt"]["status_code"], 200);
    let bad_event = by_id(&second, &bad_key);
    assert_eq!(
        bad_event.task.target.url, "http://127.0.0.1:9/own-failed",
        "the task's own callback wins over its queue's"
    );
    let b = body(bad_event);
    assert_eq!(b["type"], "task.failed");
    assert_eq!(b["task"]["state"], "failed");
    assert_eq!(b["task"]["last_attempt"]["status_code"], 500);
    assert_eq!(
        bad_event.task.retry_config.max_attempts, 1,
        "an event retries as its task's queue does"
    );

    // An event ending raises no event of its own.
    h.finish(ok_event, 200).await.unwrap();
    h.finish(bad_event, 200).await.unwrap();
    h.clock.advance(SignedDuration::from_secs(60));
    assert!(h.claim().await.tasks.is_empty(), "no event about an event");

    // Events are Idem's own: neither a queue nor a task of the user.
    let queues = h
        .store
        .queue_list(
            ORG,
            &PageRequest {
                limit: 100,
                after: None,
            },
        )
        .await
        .unwrap();
    let names: Vec<&str> = queues.items.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(names, ["q"]);
    let tasks = h
        .store
        .task_list(
            ORG,
            "q",
            TaskFilter::default(),
            &PageRequest {
                limit: 100,
                after: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(tasks.items.len(), 2);
    h.assert_counters_match_rows(ORG).await;
}

async fn without_callbacks_or_webhooks_nothing_is_raised(h: Harness) {
    h.store
        .queue_create(ORG, "q", &config(Callbacks::default()), None)
        .await
        .unwrap();
    h.create("q", "a", Callbacks::default()).await;
    h.create("q", "b", Callbacks::default()).await;
    let first = h.claim().await;
    h.finish(by_id(&first, "a"), 200).await.unwrap();
    h.finish(by_id(&first, "b"), 500).await.unwrap();
    assert!(h.claim().await.tasks.is_empty());
}

async fn a_webhook_receives_only_the_events_it_names(h: Harness) {
    h.store
        .queue_create(ORG, "q", &config(Callbacks::default()), None)
        .await
        .unwrap();
    let failed = h
        .store
        .webhook_create(
            ORG,
            "http://127.0.0.1:9/failed",
            &[EventType::TaskFailed],
            None,
        )
        .await
        .unwrap();
    let runs = h
        .store
        .webhook_create(
            ORG,
            "http://127.0.0.1:9/runs",
            &[EventType::JobRunFailed],
            None,
        )
        .await
        .unwrap();
    let bad = h.create("q", "bad", Callbacks::default()).await;
    h.create("q", "ok", Callbacks::default()).await;
    let first = h.claim().await;
    h.finish(by_id(&first, "bad"), 503).await.unwrap();
    h.finish(by_id(&first, "ok"), 204).await.unwrap();
    // The event's task is pending, counted as a created task is.
    h.assert_counters_match_rows(ORG).await;
    let second = h.claim().await;
    let raised = events(&second);
    assert_eq!(raised.len(), 1, "task.failed only, to its one webhook");
    let key = webhook_run_key(
        &task_run_key(ORG, "q", "bad", bad.created_at),
        EventType::TaskFailed,
        &failed.id,
    );
    assert_eq!(raised[0].task.task_id, key);
    assert_eq!(raised[0].task.target.url, "http://127.0.0.1:9/failed");
    assert_eq!(body(raised[0])["task"]["task_id"], "bad");

    // Deleting the webhooks stops the events: the organization's row says
    // nothing listens any more.
    h.store.webhook_delete(ORG, &failed.id).await.unwrap();
    h.store.webhook_delete(ORG, &runs.id).await.unwrap();
    assert!(
        h.store
            .webhook_list(
                ORG,
                &PageRequest {
                    limit: 10,
                    after: None
                }
            )
            .await
            .unwrap()
            .items
            .is_empty()
    );
    h.create("q", "bad-again", Callbacks::default()).await;
    let third = h.claim().await;
    h.finish(by_id(&third, "bad-again"), 500).await.unwrap();
    h.clock.advance(SignedDuration::from_secs(1));
    let fourth = h.claim().await;
    assert!(events(&fourth).is_empty(), "{:?}", ids(&fourth));
    h.assert_counters_match_rows(ORG).await;
}

fn ids(batch: &ClaimedBatch) -> Vec<String> {
    batch.tasks.iter().map(|t| t.task.task_id.clone()).collect()
}

/// The event is written by the transaction that ends the task: when it
/// cannot be written, the task does not end either, and the next attempt
/// result (or lease recovery) ends it with its event.
async fn a_task_never_ends_without_its_event(h: Harness) {
    h.store
        .queue_create(ORG, "q", &config(Callbacks::default()), None)
        .await
        .unwrap();
    h.store
        .webhook_create(
            ORG,
            "http://127.0.0.1:9/failed",
            &[EventType::TaskFailed],
            None,
        )
        .await
        .unwrap();
    h.create("q", "bad", Callbacks::default()).await;
    let first = h.claim().await;
    // Raising the event now fails half-way (the final state is written,
    // the webhooks cannot be read).
    h.raw("ALTER TABLE webhooks RENAME TO webhooks_away").await;
    assert!(h.finish(by_id(&first, "bad"), 500).await.is_err());
    let task = h.store.task_get(ORG, "q", "bad").await.unwrap();
    assert_eq!(task.status, Status::Running, "the final state rolled back");
    assert!(task.finished_at.is_none());
    h.raw("ALTER TABLE webhooks_away RENAME TO webhooks").await;
    h.finish(by_id(&first, "bad"), 500).await.unwrap();
    assert_eq!(
        h.store.task_get(ORG, "q", "bad").await.unwrap().status,
        Status::Failed
    );
    assert_eq!(events(&h.claim().await).len(), 1);
}

idem_testkit::backend_tests! {
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await;
    a_final_state_raises_its_callback_event_once,
    without_callbacks_or_webhooks_nothing_is_raised,
    a_webhook_receives_only_the_events_it_names,
    a_task_never_ends_without_its_event,
}
