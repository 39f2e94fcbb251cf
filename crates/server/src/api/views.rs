//! Store records as the API shows them: the conversions into `idem_api`'s
//! response bodies (API.md §9), and the bodies of the events (§12), which
//! show a task or run as these same views do.

use super::extract::encode_page_token;
use idem_api as api;
use idem_core::event::EventType;
use idem_core::job::RunKind;
use idem_core::task::Target;
use idem_core::tenancy::Role;
use idem_store::events::EventRenderer;
use idem_store::{
    ApiKey, Caller, Job, Page, Principal, Queue, QueueStats, SigningSecret, Task, Webhook,
};
use jiff::Timestamp;

/// A page of records as `{items, next_page_token}`.
pub fn list<R, T>(page: Page<R>, view: impl FnMut(R) -> T) -> api::List<T> {
    api::List {
        items: page.items.into_iter().map(view).collect(),
        next_page_token: page.next.as_deref().map(encode_page_token),
    }
}

pub fn queue(q: Queue, stats: QueueStats) -> api::Queue {
    api::Queue {
        name: q.name,
        state: q.state,
        mode: q.config.mode,
        person_only: q.config.person_only,
        rate_limits: q.config.rate_limits,
        retry_config: q.config.retry_config,
        dispatch_deadline_s: q.config.dispatch_deadline_s,
        dedup_window_s: q.config.dedup_window_s,
        failed_retention_s: q.config.failed_retention_s,
        on_success: q.config.callbacks.on_success.map(target),
        on_failure: q.config.callbacks.on_failure.map(target),
        header_style: q.config.header_style,
        group_concurrency: q.config.group_concurrency,
        group_order: q.config.group_order,
        created_at: q.created_at,
        updated_at: q.updated_at,
        stats: api::QueueStats {
            tasks: api::TaskCounts {
                scheduled: stats.scheduled,
                queued: stats.queued,
                running: stats.running,
                succeeded: stats.succeeded,
                failed: stats.failed,
                cancelled: stats.cancelled,
            },
            oldest_due_time: stats.oldest_due_time,
            dispatched_last_minute: stats.dispatched_last_minute,
            in_flight: stats.running,
            groups_with_due: stats.groups_with_due,
        },
    }
}

/// A target with its body in the form it was given.
pub fn target(t: Target) -> api::Target {
    api::Target::from(t)
}

/// A task as anyone may see it: a lease's token is shown to nobody.
pub fn task(t: Task, now: Timestamp) -> api::Task {
    task_showing_token(t, now, false)
}

/// A task as `caller` sees it: a lease's token (`attempt_id`) only to the
/// lease's holder and to admins, since whoever has it could otherwise act
/// as the holder's retry (API.md §11).
pub fn task_seen_by(t: Task, now: Timestamp, caller: &Caller) -> api::Task {
    let shown = caller.role >= Role::Admin
        || t.lease
            .as_ref()
            .is_some_and(|l| l.claimant == caller.principal);
    task_showing_token(t, now, shown)
}

fn task_showing_token(t: Task, now: Timestamp, token_shown: bool) -> api::Task {
    let state = t.state(now);
    // A pull task keeps its payload where a push task keeps its target.
    let (target_view, payload) = if t.is_pull() {
        let payload = t.target.body.is_some().then(|| target(t.target).into());
        (None, payload)
    } else {
        (Some(target(t.target)), None)
    };
    api::Task {
        state,
        task_id: t.task_id,
        queue: t.queue,
        target: target_view,
        payload,
        tag: t.tag,
        group: t.group,
        priority: t.priority,
        lease: t.lease.map(|l| api::Lease {
            attempt_id: token_shown.then_some(l.attempt_id),
            claimant: l.claimant,
            lease_expires_at: l.lease_expires_at,
        }),
        result: t
            .result
            .and_then(|r| serde_json::value::RawValue::from_string(r).ok()),
        schedule_time: t.schedule_time,
        dispatch_deadline_s: t.dispatch_deadline_s,
        retry_config: t.retry_config,
        attempt_count: t.attempt_count,
        created_at: t.created_at,
        finished_at: t.finished_at,
        last_attempt: t.last_attempt,
        on_success: t.callbacks.on_success.map(target),
        on_failure: t.callbacks.on_failure.map(target),
        header_style: t.header_style,
    }
}

pub fn job(j: Job, now: Timestamp) -> api::Job {
    let next_run_time = j.next_run_time(now);
    api::Job {
        name: j.name,
        schedule: j.config.schedule,
        time_zone: j.config.time_zone,
        target: target(j.config.target),
        attempt_deadline_s: j.config.attempt_deadline_s,
        retry_config: j.config.retry_config,
        catch_up: j.config.catch_up,
        header_style: j.config.header_style,
        next_run_time,
        state: j.state,
        last_run: j.last_run.map(|t| run(t, now)),
        created_at: j.created_at,
        updated_at: j.updated_at,
        paused_reason: j.paused_reason,
    }
}

/// `t` must be a run (`t.run` set); the store hands out no other kind where
/// a run is asked for.
pub fn run(t: Task, now: Timestamp) -> api::Run {
    let (job, kind) = t
        .run
        .as_ref()
        .map_or((String::new(), RunKind::Scheduled), |r| {
            (r.job.clone(), r.kind)
        });
    api::Run {
        state: t.state(now),
        run_id: t.task_id,
        job,
        schedule_time: t.schedule_time,
        kind,
        attempt_count: t.attempt_count,
        last_attempt: t.last_attempt,
        created_at: t.created_at,
        finished_at: t.finished_at,
    }
}

pub fn principal(p: Principal) -> api::Principal {
    api::Principal {
        name: p.name,
        kind: p.kind,
        role: p.role,
        created_at: p.created_at,
    }
}

/// A listed key: never its secret.
pub fn api_key(k: ApiKey) -> api::ApiKey {
    api::ApiKey {
        id: k.id,
        principal: k.principal,
        created_at: k.created_at,
        last_used_at: k.last_used_at,
    }
}

pub fn webhook(w: Webhook) -> api::Webhook {
    api::Webhook {
        id: w.id,
        url: w.url,
        events: w.events,
        created_at: w.created_at,
    }
}

pub fn signing_secret(s: SigningSecret) -> api::SigningSecret {
    api::SigningSecret {
        id: s.id,
        secret: s.secret,
        created_at: s.created_at,
    }
}

/// Writes the bodies of events for the store: a callback or webhook shows
/// the task (or run) through the functions `GET` answers with, so the two
/// cannot drift apart. `idem serve` opens its store with it.
pub struct EventViews;

impl EventRenderer for EventViews {
    fn render(&self, event: EventType, t: Task, now: Timestamp) -> Vec<u8> {
        let body = match event {
            EventType::JobRunFailed => {
                let run = run(t, now);
                serde_json::to_vec(&api::JobRunEvent {
                    event,
                    job: run.job.clone(),
                    run,
                })
            }
            EventType::TaskSucceeded | EventType::TaskFailed => {
                serde_json::to_vec(&api::TaskEvent {
                    event,
                    queue: t.queue.clone(),
                    task: task(t, now),
                })
            }
        };
        body.expect("an event's view serializes")
    }
}
