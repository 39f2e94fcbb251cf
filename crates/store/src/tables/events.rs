//! Events about work that ended (API.md §12): completion callbacks of a
//! queue or task, and an organization's event webhooks (`webhooks`).
//!
//! An event is a task of the organization's event queue, `~events` (a name
//! no user queue can take), inserted by the statement batch that makes the
//! task it reports final, in the same transaction: a crash can never leave
//! a final task without its event, nor an event of a task that did not
//! end. Its task ID is its run key, derived from the reported task's run
//! key and the event type (and the webhook, for a webhook's copy), and it
//! is inserted with `ON CONFLICT DO NOTHING`, so one final state gives one
//! event per receiver. The dispatcher then claims, signs, retries and
//! records it as any task. Its body is written by the [`EventRenderer`]
//! the store was opened with: the store decides which events a final state
//! raises, the API what a receiver reads.
//!
//! Whether anything is to be sent is known from the row the completion
//! reads anyway (the task's target carries its own callbacks, the queue's
//! configuration the queue's, the organization's row the event types its
//! webhooks want), so a completion with nothing configured runs no
//! statement more.

use super::dispatch::RunningRow;
use super::idempotency::Keyed;
use super::stats::count_inserted;
use super::{after, limit, not_found, released, within_quota};
use crate::driver::{Conn, args};
use crate::events::{EVENT_RETENTION_S, EVENTS_QUEUE, EventRenderer};
use crate::jobs::JOBS_QUEUE;
use crate::quotas::{Quota, Quotas};
use crate::records::{Page, PageRequest, Status, Task, Webhook};
use crate::sql::{self as rows, Row, StoredTarget};
use crate::task_row::{self, insert_task, stored_bytes, task_columns};
use crate::{Error, Result};
use idem_core::clock::from_micros;
use idem_core::event::{EventType, event_run_key, webhook_run_key};
use idem_core::queue::{MAX_BURST, MAX_CONCURRENCY, MAX_RATE, QueueConfig, RateLimits};
use idem_core::run_key::task_run_key;
use idem_core::task::{BodyForm, Target};
use std::collections::BTreeSet;

/// The event queue's configuration: no limits of its own (an event follows
/// from work its source queue's limits already admitted), events kept for
/// [`EVENT_RETENTION_S`]. Retry policy and deadline are each event's own,
/// copied from the queue of the task it reports.
fn events_queue_config() -> QueueConfig {
    QueueConfig {
        rate_limits: RateLimits {
            max_dispatches_per_second: MAX_RATE,
            max_burst_size: MAX_BURST,
            max_concurrent_dispatches: MAX_CONCURRENCY,
        },
        dedup_window_s: EVENT_RETENTION_S,
        ..QueueConfig::default()
    }
}

/// Parameters: org, config (JSON), now.
const SQL_ENSURE_EVENTS_QUEUE: &str = "INSERT INTO queues \
     (org, name, state, config, created_at, updated_at) \
     VALUES ($1, '~events', 'running', $2, $3, $3) ON CONFLICT DO NOTHING";

/// Parameters: org, run key, uid, target, body form, body, now, deadline,
/// retry config.
macro_rules! insert_event {
    () => {
        concat!(
            insert_task!(VALUES;
                org: "$1", queue: "'~events'", task_id: "$2", uid: "$3", target: "$4",
                body_form: "$5", body: "$6", schedule_time: "$7", dispatch_deadline_s: "$8",
                retry_config: "$9", created_at: "$7", tag: "NULL", job: "NULL",
                run_kind: "NULL", header_style: "NULL", group_key: "''", priority: "0"),
            " ON CONFLICT (org, queue, task_id) DO NOTHING"
        )
    };
}
const SQL_INSERT_EVENT: &str = insert_event!();
/// [`SQL_INSERT_EVENT`] on PostgreSQL, counting the event it inserts.
const SQL_INSERT_EVENT_COUNTED: &str = count_inserted!(insert_event!(), "", "SELECT 1 FROM ins");

/// The event a task's final state raises, if any: a job's run raises only
/// its failure, an event raises none (no event about an event).
fn event_of(queue: &str, status: Status) -> Option<EventType> {
    match (queue, status) {
        (EVENTS_QUEUE, _) => None,
        (JOBS_QUEUE, Status::Failed) => Some(EventType::JobRunFailed),
        (JOBS_QUEUE, _) => None,
        (_, Status::Succeeded) => Some(EventType::TaskSucceeded),
        (_, Status::Failed) => Some(EventType::TaskFailed),
        _ => None,
    }
}

/// Whether the organization's webhooks want `event`, from the list its row
/// keeps.
fn webhooks_want(webhook_events: Option<&str>, event: EventType) -> bool {
    webhook_events.is_some_and(|list| list.split(' ').any(|e| e == event.as_str()))
}

/// The callback of `event` for this task: its own, else its queue's.
fn callback_of(row: &RunningRow, event: EventType) -> Result<Option<Target>> {
    if row.queue == JOBS_QUEUE {
        return Ok(None);
    }
    if let Some(own) = &row.target_json
        && own.contains("\"on_")
    {
        let stored: StoredTarget = rows::json("target", own)?;
        if let Some(t) = stored.callbacks.of(event) {
            return Ok(Some(t.clone()));
        }
    }
    Ok(row.queue_config.callbacks.of(event).cloned())
}

/// Inserts the events of a task that just became `status`, in the
/// transaction that made it so. Runs no statement when nothing listens.
/// Answers how many were inserted.
pub(crate) async fn on_final<C: Conn>(
    c: &C,
    now: i64,
    row: &RunningRow,
    status: Status,
    render: &dyn EventRenderer,
) -> Result<u64> {
    let Some(event) = event_of(&row.queue, status) else {
        return Ok(0);
    };
    let callback = callback_of(row, event)?;
    let to_webhooks = webhooks_want(row.webhook_events.as_deref(), event);
    if callback.is_none() && !to_webhooks {
        return Ok(0);
    }
    const SQL_TASK: &str = concat!("SELECT ", task_columns!(), " FROM tasks WHERE uid = $1");
    let task = c
        .query_opt(SQL_TASK, &args![&row.uid], |r| task_row::read(r))
        .await?
        .ok_or_else(|| Error::Internal(format!("task {} vanished while ending", row.uid)))?;
    let (source_key, body) = event_body(&row.org, event, task, now, render)?;
    let mut deliveries: Vec<(String, Target)> = Vec::new();
    if let Some(target) = callback {
        deliveries.push((event_run_key(&source_key, event), target));
    }
    if to_webhooks {
        let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE org = $1 ORDER BY id");
        let hooks = c.query(&sql, &args![&row.org], |r| webhook(r)).await?;
        for hook in hooks.into_iter().filter(|h| h.events.contains(&event)) {
            let target = Target {
                url: hook.url,
                method: "POST".into(),
                headers: Default::default(),
                body: None,
                oidc: None,
                secret_headers: Vec::new(),
                trace: None,
            };
            deliveries.push((webhook_run_key(&source_key, event, &hook.id), target));
        }
    }
    if deliveries.is_empty() {
        return Ok(0);
    }
    let config = rows::to_json(&events_queue_config());
    c.execute(SQL_ENSURE_EVENTS_QUEUE, &args![&row.org, &config, now])
        .await?;
    // A run's retry policy is its job's; a task's event takes its queue's,
    // not the task's own overrides, which were about the task's target.
    let retry = if row.queue == JOBS_QUEUE {
        row.retry_config
    } else {
        row.queue_config.retry_config
    };
    let retry = rows::to_json(&retry);
    let deadline = i64::from(row.queue_config.dispatch_deadline_s);
    let mut inserted = 0;
    for (key, mut target) in deliveries {
        if !target
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("content-type"))
        {
            target
                .headers
                .insert("Content-Type".into(), "application/json".into());
        }
        target.body = Some((BodyForm::Json, body.clone()));
        let (target, body_form, body) = rows::target_columns(&target);
        let uid = uuid::Uuid::now_v7().simple().to_string();
        let n = c
            .execute(
                C::DIALECT.pick(SQL_INSERT_EVENT, SQL_INSERT_EVENT_COUNTED),
                &args![
                    &row.org, &key, &uid, &target, body_form, &body, now, deadline, &retry,
                ],
            )
            .await?;
        c.count_inserted(
            &row.org,
            EVENTS_QUEUE,
            n,
            stored_bytes(&target, body.as_deref()),
        );
        inserted += n;
    }
    Ok(inserted)
}

/// The reported task's run key, and the event's JSON body as `render`
/// writes it.
fn event_body(
    org: &str,
    event: EventType,
    task: Task,
    now: i64,
    render: &dyn EventRenderer,
) -> Result<(String, Vec<u8>)> {
    let key = match event {
        EventType::JobRunFailed => {
            // A run's job names it in the body: a run row without one is
            // corrupt, and its event would tell the receiver nothing.
            if task.run.is_none() {
                return Err(Error::Internal(format!("run {} has no job", task.task_id)));
            }
            task.task_id.clone()
        }
        EventType::TaskSucceeded | EventType::TaskFailed => {
            task_run_key(org, &task.queue, &task.task_id, task.created_at)
        }
    };
    Ok((key, render.render(event, task, from_micros(now))))
}

fn webhook(r: &impl Row) -> Result<Webhook> {
    let events = r.text(2)?;
    Ok(Webhook {
        id: r.text(0)?,
        url: r.text(1)?,
        events: rows::json("webhook events", &events)?,
        created_at: from_micros(r.i64(3)?),
    })
}

const WEBHOOK_COLUMNS: &str = "id, url, events, created_at";

/// Rewrites the organization's list of the event types its webhooks want,
/// under its row lock (taken first, so concurrent changes apply in turn).
async fn refresh_org_events<C: Conn>(c: &C, org: &str) -> Result<()> {
    let lock = format!(
        "SELECT 1 FROM organizations WHERE name = $1 {}",
        c.lock("FOR NO KEY UPDATE")
    );
    c.query_opt(&lock, &args![org], |_| Ok(())).await?;
    let lists = c
        .query(
            "SELECT events FROM webhooks WHERE org = $1",
            &args![org],
            |r| r.text(0),
        )
        .await?;
    let mut wanted = BTreeSet::new();
    for list in lists {
        let events: Vec<EventType> = rows::json("webhook events", &list)?;
        wanted.extend(events);
    }
    let joined = (!wanted.is_empty()).then(|| {
        wanted
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    });
    c.execute(
        "UPDATE organizations SET webhook_events = $1 WHERE name = $2",
        &args![&joined, org],
    )
    .await?;
    Ok(())
}

/// The caller validated `url` and `events`. The record of a keyed create
/// names the new webhook.
pub(crate) async fn webhook_create<C: Conn>(
    c: &C,
    org: &str,
    url: &str,
    events: &[EventType],
    quotas: &Quotas,
    now: i64,
    keyed: &mut Keyed,
) -> Result<Webhook> {
    let id = uuid::Uuid::now_v7().simple().to_string();
    let list = rows::to_json(&events);
    c.execute(
        "INSERT INTO webhooks (org, id, url, events, created_at) VALUES ($1, $2, $3, $4, $5)",
        &args![org, &id, url, &list, now],
    )
    .await?;
    refresh_org_events(c, org).await?;
    within_quota(c, quotas, Quota::Webhooks, org).await?;
    keyed.set_resource_id(|| id.clone());
    Ok(Webhook {
        id,
        url: url.to_string(),
        events: events.to_vec(),
        created_at: from_micros(now),
    })
}

pub(crate) async fn webhook_list<C: Conn>(
    c: &C,
    org: &str,
    page: &PageRequest,
) -> Result<Page<Webhook>> {
    let sql = format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE org = $1 AND id > $2 ORDER BY id LIMIT $3"
    );
    let found = c
        .query(&sql, &args![org, after(page), limit(page)], |r| webhook(r))
        .await?;
    Ok(Page::from_rows(found, page.limit, |w| w.id.clone()))
}

pub(crate) async fn webhook_get<C: Conn>(c: &C, org: &str, id: &str) -> Result<Webhook> {
    let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE org = $1 AND id = $2");
    c.query_opt(&sql, &args![org, id], |r| webhook(r))
        .await?
        .ok_or_else(|| not_found("webhook", id))
}

/// Events already created for it are still delivered.
pub(crate) async fn webhook_delete<C: Conn>(c: &C, org: &str, id: &str) -> Result<()> {
    let n = c
        .execute(
            "DELETE FROM webhooks WHERE org = $1 AND id = $2",
            &args![org, id],
        )
        .await?;
    if n == 0 {
        return Err(not_found("webhook", id));
    }
    refresh_org_events(c, org).await?;
    released(c, Quota::Webhooks, org, n).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_user_tasks_and_failed_runs_raise_events() {
        assert_eq!(
            event_of("q", Status::Succeeded),
            Some(EventType::TaskSucceeded)
        );
        assert_eq!(event_of("q", Status::Failed), Some(EventType::TaskFailed));
        assert_eq!(event_of("q", Status::Cancelled), None);
        assert_eq!(
            event_of(JOBS_QUEUE, Status::Failed),
            Some(EventType::JobRunFailed)
        );
        assert_eq!(event_of(JOBS_QUEUE, Status::Succeeded), None);
        assert_eq!(event_of(EVENTS_QUEUE, Status::Failed), None);
    }

    #[test]
    fn the_organization_list_is_matched_by_whole_names() {
        assert!(webhooks_want(
            Some("job.run_failed task.failed"),
            EventType::TaskFailed
        ));
        assert!(!webhooks_want(
            Some("job.run_failed"),
            EventType::TaskFailed
        ));
        assert!(!webhooks_want(None, EventType::JobRunFailed));
    }
}
