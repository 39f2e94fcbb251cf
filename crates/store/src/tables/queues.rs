//! Queues: their configuration and state. A queue's tasks go with it, and
//! so do its statistics.

use super::idempotency::Keyed;
use super::stats::update_moving;
use super::{after, limit, not_found, released, tasks, within_quota};
use crate::driver::{Conn, args};
use crate::quotas::{Quota, Quotas};
use crate::records::*;
use crate::sql::{self as rows, Row};
use crate::{Error, Result};
use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState};

pub(crate) async fn create<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    config: &QueueConfig,
    quotas: &Quotas,
    now: i64,
) -> Result<Queue> {
    let sql = format!(
        "INSERT INTO queues (org, name, state, config, created_at, updated_at, mode) \
         VALUES ($1, $2, 'running', $3, $4, $4, $5) ON CONFLICT DO NOTHING RETURNING {}",
        rows::QUEUE_COLUMNS
    );
    let mode = config.mode.as_str();
    let config = rows::to_json(config);
    let queue = c
        .query_opt(&sql, &args![org, name, &config, now, mode], |r| {
            rows::queue(r)
        })
        .await?
        .ok_or_else(|| Error::AlreadyExists {
            kind: "queue",
            id: name.to_string(),
        })?;
    within_quota(c, quotas, Quota::Queues, org).await?;
    Ok(queue)
}

/// Whether the queue is one of the organization's under its quota: the
/// scheduler's queue holds the organization's jobs, counted as such, and
/// the event queue is Idem's own. Both are made by what uses them, never
/// by a queue create.
fn counts_as_queue(name: &str) -> bool {
    name != crate::jobs::JOBS_QUEUE && name != crate::events::EVENTS_QUEUE
}

/// The queue, read under the row lock `lock` names (PostgreSQL only).
pub(crate) async fn get<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    lock: &'static str,
) -> Result<Queue> {
    let sql = format!(
        "SELECT {} FROM queues WHERE org = $1 AND name = $2 {}",
        rows::QUEUE_COLUMNS,
        c.lock(lock)
    );
    c.query_opt(&sql, &args![org, name], |r| rows::queue(r))
        .await?
        .ok_or_else(|| not_found("queue", name))
}

/// The organization's queues by name; its job queue is not one of them.
pub(crate) async fn list<C: Conn>(c: &C, org: &str, page: &PageRequest) -> Result<Page<Queue>> {
    let sql = format!(
        "SELECT {} FROM queues WHERE org = $1 AND name > $2 AND name NOT IN ('~jobs', '~events') \
         ORDER BY name LIMIT $3",
        rows::QUEUE_COLUMNS
    );
    let items = c
        .query(&sql, &args![org, after(page), limit(page)], |r| {
            rows::queue(r)
        })
        .await?;
    Ok(Page::from_rows(items, page.limit, |q| q.name.clone()))
}

/// Marks the queue as one whose tasks use groups or priorities, so that
/// its claims take turns among groups from now on; a queue marked already
/// is not written. Called after the insert, in the create's transaction;
/// PostgreSQL's batcher marks in its insert statement instead
/// (`postgres::batch`), and only when a row of the batch asks for it.
pub(crate) async fn mark_ordered<C: Conn>(c: &C, org: &str, name: &str) -> Result<()> {
    c.execute(
        "UPDATE queues SET ordered = 1 WHERE org = $1 AND name = $2 AND ordered = 0",
        &args![org, name],
    )
    .await?;
    Ok(())
}

/// Every organization and every queue, the job queues included.
pub(crate) async fn metric_scopes<C: Conn>(c: &C) -> Result<MetricScopes> {
    Ok(MetricScopes {
        organizations: c
            .query("SELECT name FROM organizations", &[], |r| r.text(0))
            .await?,
        queues: c
            .query("SELECT org, name FROM queues", &[], |r| {
                Ok((r.text(0)?, r.text(1)?))
            })
            .await?,
    })
}

/// Applies `patch` to the configuration as it is under the lock.
pub(crate) async fn update<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    patch: &QueueConfigPatch,
    now: i64,
) -> Result<Queue> {
    let current = get(c, org, name, "FOR UPDATE").await?;
    if let Some(conflict) = current.config.conflict(patch) {
        return Err(Error::FailedPrecondition(conflict));
    }
    let next = current.config.apply(patch).map_err(Error::Invalid)?;
    let sql = format!(
        "UPDATE queues SET config = $1, updated_at = $2 WHERE org = $3 AND name = $4 \
         RETURNING {}",
        rows::QUEUE_COLUMNS
    );
    let config = rows::to_json(&next);
    c.query_opt(&sql, &args![&config, now, org, name], |r| rows::queue(r))
        .await?
        .ok_or_else(|| not_found("queue", name))
}

pub(crate) async fn set_state<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    state: QueueState,
    now: i64,
) -> Result<Queue> {
    let sql = format!(
        "UPDATE queues SET state = $1, updated_at = $2 WHERE org = $3 AND name = $4 \
         RETURNING {}",
        rows::QUEUE_COLUMNS
    );
    c.query_opt(&sql, &args![state.as_str(), now, org, name], |r| {
        rows::queue(r)
    })
    .await?
    .ok_or_else(|| not_found("queue", name))
}

/// The queue, its tasks and their attempts.
pub(crate) async fn delete<C: Conn>(c: &C, org: &str, name: &str) -> Result<()> {
    let n = c
        .execute(
            "DELETE FROM queues WHERE org = $1 AND name = $2",
            &args![org, name],
        )
        .await?;
    if n == 0 {
        return Err(not_found("queue", name));
    }
    tasks::lock_for_delete(c, "org = $1 AND queue = $2", &args![org, name]).await?;
    c.execute(
        "DELETE FROM attempts WHERE task_uid IN \
         (SELECT uid FROM tasks WHERE org = $1 AND queue = $2)",
        &args![org, name],
    )
    .await?;
    c.execute(
        "DELETE FROM tasks WHERE org = $1 AND queue = $2",
        &args![org, name],
    )
    .await?;
    // The counts are zero now; a queue made again under the name starts
    // from no rows.
    for table in ["task_counts", "task_dispatches"] {
        c.execute(
            &format!("DELETE FROM {table} WHERE org = $1 AND queue = $2"),
            &args![org, name],
        )
        .await?;
    }
    if counts_as_queue(name) {
        released(c, Quota::Queues, org, n).await?;
    }
    Ok(())
}

/// Cancels the queue's pending tasks; the record of a keyed purge keeps the
/// answer's body.
pub(crate) async fn purge<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    now: i64,
    keyed: &mut Keyed,
) -> Result<u64> {
    let queue = get(c, org, name, "FOR SHARE").await?;
    let window = queue.config.dedup_window_s as i64 * 1_000_000;
    let n = update_moving(
        c,
        "UPDATE tasks SET status = 'cancelled', \
         finished_at = $1, dedup_expires_at = $1 + CAST($2 AS BIGINT) \
         WHERE org = $3 AND queue = $4 AND status = 'pending'",
        &args![now, window, org, name],
        org,
        (Status::Pending, Status::Cancelled),
    )
    .await?;
    keyed.set_body(|| format!("{{\"cancelled\":{n}}}"));
    Ok(n)
}
