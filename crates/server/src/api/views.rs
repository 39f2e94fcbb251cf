//! Store records as the API shows them: the conversions into `idem_api`'s
//! response bodies (API.md §9).

use super::extract::encode_page_token;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use idem_api as api;
use idem_core::job::RunKind;
use idem_core::task::{BodyForm, Target};
use idem_store::{ApiKey, Job, Page, Principal, Queue, QueueStats, SigningSecret, Task};
use jiff::Timestamp;
use serde_json::value::RawValue;

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
        rate_limits: q.config.rate_limits,
        retry_config: q.config.retry_config,
        dispatch_deadline_s: q.config.dispatch_deadline_s,
        dedup_window_s: q.config.dedup_window_s,
        failed_retention_s: q.config.failed_retention_s,
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
        },
    }
}

/// A target with its body in the form it was given.
pub fn target(t: Target) -> api::Target {
    let mut view = api::Target {
        url: t.url,
        method: t.method,
        headers: t.headers,
        body: None,
        body_base64: None,
        json: None,
    };
    match t.body {
        Some((BodyForm::Text, bytes)) => match String::from_utf8(bytes) {
            Ok(text) => view.body = Some(text),
            Err(e) => view.body_base64 = Some(STANDARD.encode(e.into_bytes())),
        },
        Some((BodyForm::Json, bytes)) => match std::str::from_utf8(&bytes)
            .ok()
            .and_then(|s| RawValue::from_string(s.to_string()).ok())
        {
            Some(raw) => view.json = Some(raw),
            None => view.body_base64 = Some(STANDARD.encode(bytes)),
        },
        Some((BodyForm::Base64, bytes)) => view.body_base64 = Some(STANDARD.encode(bytes)),
        None => {}
    }
    view
}

pub fn task(t: Task, now: Timestamp) -> api::Task {
    api::Task {
        state: t.state(now),
        task_id: t.task_id,
        queue: t.queue,
        target: target(t.target),
        schedule_time: t.schedule_time,
        dispatch_deadline_s: t.dispatch_deadline_s,
        retry_config: t.retry_config,
        attempt_count: t.attempt_count,
        created_at: t.created_at,
        finished_at: t.finished_at,
        last_attempt: t.last_attempt,
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

pub fn signing_secret(s: SigningSecret) -> api::SigningSecret {
    api::SigningSecret {
        id: s.id,
        secret: s.secret,
        created_at: s.created_at,
    }
}
