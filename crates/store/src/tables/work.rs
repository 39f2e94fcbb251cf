//! Pull queues: workers claim due tasks and act on the leases they hold
//! (API.md §11).
//!
//! A claim is the push dispatcher's claim made by a worker, the same
//! statement ([`due`]) with a lease of its own: the task goes `running`,
//! its attempt count grows and an attempt row records the start;
//! its end goes through [`dispatch::apply_next`], so a pull task's final
//! state raises its events, counts and tombstone exactly as a push task's,
//! and an expired lease is recovered by the dispatcher's claim like any
//! other (the attempt counts as failed).
//!
//! The lease token is `attempt_id`, not the attempt number: a release gives
//! the attempt back (the number is reused by the next claim), so the token
//! carries a nonce of its claim and a random part of its task's as well.
//! Every action on a lease is conditional on `attempt_id`, an unexpired
//! `lease_expires_at` and, unless an admin acts, the caller holding it.
//!
//! A claim's columns stay on the row after it ends, until the next claim
//! ([`Task::ended_claim`]): a holder whose answer to a complete or fail was
//! lost sends it again, and is answered the task as it is now if the
//! attempt ended exactly so ([`replays`]) rather than `LEASE_LOST`.

use super::due::{self, Due, PullLease, Turns};
use super::{dispatch, not_found, queues, tasks};
use crate::dispatch::{AttemptResult, WorkDone};
use crate::driver::{Conn, Dialect, args};
use crate::events::EventRenderer;
use crate::records::*;
use crate::sql::Row as _;
use crate::task_row;
use crate::{Error, Result};
use idem_core::clock::{from_micros, to_micros};
use idem_core::queue::{QueueConfig, QueueMode};
use std::time::Duration;

/// A fresh claim's nonce: the lease token is `<nonce>-<attempt>`.
fn nonce() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

fn micros(s: u32) -> i64 {
    i64::from(s) * 1_000_000
}

/// The queue, which must be a pull queue.
async fn pull_queue<C: Conn>(c: &C, org: &str, queue: &str) -> Result<QueueConfig> {
    let q = queues::get(c, org, queue, "").await?;
    if q.config.mode != QueueMode::Pull {
        return Err(Error::FailedPrecondition(format!(
            "queue '{queue}' is a push queue: Idem delivers its tasks, workers cannot claim or \
             end them"
        )));
    }
    Ok(q.config)
}

fn person_required(queue: &str) -> Error {
    Error::PersonRequired(format!(
        "queue '{queue}' is person-only: completing or failing its tasks needs a person's key"
    ))
}

/// Whether a worker may report ends on the queue at all (one call of many
/// ends is refused whole, changing nothing, where each end would be): it
/// must be a pull queue, and a person's key on a person-only one.
pub(crate) async fn may_end<C: Conn>(c: &C, org: &str, queue: &str, person: bool) -> Result<()> {
    let config = pull_queue(c, org, queue).await?;
    if config.person_only && !person {
        return Err(person_required(queue));
    }
    Ok(())
}

/// Records the attempts a claim of queue `queue` started, as the
/// dispatcher does.
async fn started<C: Conn>(
    c: &C,
    (org, queue): (&str, &str),
    claimed: &[Task],
    now: i64,
    kept: u32,
) -> Result<()> {
    let started: Vec<(&str, u32)> = claimed
        .iter()
        .map(|t| (t.uid.as_str(), t.attempt_count))
        .collect();
    dispatch::record_started(c, (org, queue), &started, now, kept).await
}

/// The pull queues a store has found ordered: their claims go to
/// [`claim_in_turns`] at once. A queue never stops being ordered, so the
/// set is only ever wrong about a queue deleted and made again under its
/// name, which [`claim_in_turns`] finds plain and the claim forgets.
pub(crate) type OrderedQueues = std::sync::Mutex<std::collections::HashSet<(String, String)>>;

/// The queues marked ordered, for a store's [`OrderedQueues`] as it opens:
/// a node's first claim of an ordered queue after a start then goes to
/// [`claim_in_turns`] at once, rather than first trying the plain claim.
pub(crate) async fn ordered_queues<C: Conn>(
    c: &C,
) -> Result<std::collections::HashSet<(String, String)>> {
    let found = c
        .query(
            "SELECT org, name FROM queues WHERE ordered <> 0",
            &args![],
            |r| Ok((r.text(0)?, r.text(1)?)),
        )
        .await?;
    Ok(found.into_iter().collect())
}

/// Claims up to `max_tasks` due tasks of the queue in schedule order, with
/// the claim statement the dispatcher's claim uses ([`due`]), in one
/// statement. A queue whose tasks use groups or priorities answers none to
/// it, and is claimed in turns ([`claim_in_turns`]).
pub(crate) async fn claim<C: Conn>(
    c: &C,
    p: &WorkClaim,
    now: i64,
    ordered: &OrderedQueues,
) -> Result<Vec<Task>> {
    let nonce = nonce();
    let lease = PullLease {
        length: micros(p.lease_s),
        nonce: &nonce,
        claimant: &p.claimant,
    };
    let due = Due {
        org: &p.org,
        queue: &p.queue,
        tag: p.tag.as_deref(),
        max: p.max_tasks,
        groups: None,
    };
    let id = (p.org.clone(), p.queue.clone());
    let known = ordered.lock().expect("ordered queues").contains(&id);
    let mut claimed = match known {
        true => claim_in_turns(c, &due, &lease, now).await?,
        false => None,
    };
    if known && claimed.is_none() {
        ordered.lock().expect("ordered queues").remove(&id);
    }
    if claimed.is_none() {
        let plain = due::pull(c, now, &due, &lease).await?;
        if !plain.is_empty() {
            claimed = Some(plain);
        } else {
            // Nothing due, no such queue, or an ordered one: only the
            // second is an error.
            pull_queue(c, &p.org, &p.queue).await?;
            claimed = claim_in_turns(c, &due, &lease, now).await?;
            if claimed.is_some() {
                ordered.lock().expect("ordered queues").insert(id);
            }
        }
    }
    let claimed = claimed.unwrap_or_default();
    if !claimed.is_empty() {
        started(c, (&p.org, &p.queue), &claimed, now, p.attempts_kept).await?;
    }
    Ok(claimed)
}

/// The queue's turn among groups, under its row lock on PostgreSQL: the
/// dispatcher's claim holds the same lock, so a group's running tasks,
/// pushed or pulled, are counted by one claim at a time. `$1` org, `$2`
/// queue.
const SQL_LOCK_TURNS: [&str; 2] = [
    "SELECT config, group_cursor FROM queues WHERE org = $1 AND name = $2 AND ordered <> 0",
    "SELECT config, group_cursor FROM queues WHERE org = $1 AND name = $2 AND ordered <> 0 \
     FOR NO KEY UPDATE",
];

/// Claims an ordered queue's due tasks in turns among its groups, within
/// their limits, and moves the queue's turn on; `None` if the queue is not
/// ordered (or not there).
async fn claim_in_turns<C: Conn>(
    c: &C,
    due: &Due<'_>,
    lease: &PullLease<'_>,
    now: i64,
) -> Result<Option<Vec<Task>>> {
    let locked = c
        .query_opt(
            C::DIALECT.pick(SQL_LOCK_TURNS[0], SQL_LOCK_TURNS[1]),
            &args![due.org, due.queue],
            |r| Ok((r.text(0)?, r.text(1)?)),
        )
        .await?;
    let Some((config, cursor)) = locked else {
        return Ok(None);
    };
    let config: QueueConfig = serde_json::from_str(&config)
        .map_err(|e| Error::Internal(format!("unreadable queue config: {e}")))?;
    let turns = Turns {
        limit: config.group_limit(),
        order: config.group_order,
        cursor: &cursor,
    };
    let in_turns = Due {
        groups: Some(turns),
        ..*due
    };
    let claimed = due::pull(c, now, &in_turns, lease).await?;
    if let Some(cursor) =
        turns.next_cursor(claimed.iter().map(|t| t.group.as_deref().unwrap_or("")))
    {
        c.execute(
            "UPDATE queues SET group_cursor = $1 WHERE org = $2 AND name = $3",
            &args![cursor.as_str(), due.org, due.queue],
        )
        .await?;
    }
    Ok(Some(claimed))
}

/// The answer to a claim or an assignment of a task that is leased.
fn claimed_error(task: &Task) -> Error {
    match &task.lease {
        Some(lease) => Error::WorkClaimed {
            task_id: task.task_id.clone(),
            claimant: lease.claimant.clone(),
            lease_expires_at: lease.lease_expires_at,
        },
        None => Error::FailedPrecondition(format!(
            "task '{}' is running and cannot be claimed",
            task.task_id
        )),
    }
}

/// Leases one task nobody holds to `claimant`: a pending task, whatever its
/// schedule time (a worker who names a task wants that one). A leased task
/// answers [`Error::WorkClaimed`], whoever holds it.
async fn lease_one<C: Conn>(
    c: &C,
    org: &str,
    task: &Task,
    claimant: &str,
    lease_s: u32,
    attempts_kept: u32,
    now: i64,
) -> Result<Task> {
    match task.status {
        Status::Pending => {}
        Status::Running if task.lease.is_some() => return Err(claimed_error(task)),
        _ => {
            return Err(Error::FailedPrecondition(format!(
                "task '{}' has ended ({}); it cannot be claimed",
                task.task_id,
                task.state(from_micros(now)).as_str()
            )));
        }
    }
    let nonce = nonce();
    let lease = PullLease {
        length: micros(lease_s),
        nonce: &nonce,
        claimant,
    };
    let leased = due::lease_one(c, now, org, &task.uid, &lease)
        .await?
        .ok_or_else(|| Error::Retryable("the task changed under its claim".into()))?;
    started(
        c,
        (org, &task.queue),
        std::slice::from_ref(&leased),
        now,
        attempts_kept,
    )
    .await?;
    Ok(leased)
}

/// The task's lease if `attempt_id` names it, it has not expired and, when
/// the caller is not an admin, the caller (`holder`) holds it: to anyone
/// else the lease is as good as gone, and they learn nothing of whose it is.
fn held<'a>(task: &'a Task, attempt_id: &str, holder: Option<&str>, now: i64) -> Result<&'a Lease> {
    task.lease
        .as_ref()
        .filter(|l| {
            l.attempt_id == attempt_id
                && to_micros(l.lease_expires_at) > now
                && holder.is_none_or(|h| h == l.claimant)
        })
        .ok_or_else(|| {
            Error::LeaseLost(format!(
                "attempt '{attempt_id}' does not hold task '{}': its lease expired, was \
                 released or reassigned, or the task finished",
                task.task_id
            ))
        })
}

/// Whether `principal` exists in the organization, for a lease given to it.
async fn check_principal<C: Conn>(c: &C, org: &str, principal: &str) -> Result<()> {
    let found = c
        .query_opt(
            "SELECT 1 FROM principals WHERE org = $1 AND name = $2",
            &args![org, principal],
            |_| Ok(()),
        )
        .await?;
    if found.is_none() {
        return Err(Error::NotFound {
            kind: "principal",
            id: principal.to_owned(),
        });
    }
    Ok(())
}

/// One action on one task of a pull queue, in the caller's transaction.
/// Answers the task as the action left it, and the final state it reached
/// (if any), which the caller announces.
pub(crate) async fn act<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    action: WorkAction,
    now: i64,
    render: &dyn EventRenderer,
) -> Result<WorkDone> {
    let action = match WorkEnd::of(action) {
        Ok(report) => return end(c, org, queue, task_id, report, now, render).await,
        Err(action) => action,
    };
    let task = leased_task(c, org, queue, task_id).await?;
    // SQLite numbers `$n` parameters in order of first use: `set` uses
    // those before `first`, the condition `first` and the next.
    let lease_sql = |set: &str, first: u8| {
        format!(
            "UPDATE tasks SET {set} WHERE uid = ${first} AND status = 'running' \
             AND attempt_id = ${} RETURNING {}",
            first + 1,
            task_row::COLUMNS
        )
    };
    fn updated<T>(t: Option<T>) -> Result<T> {
        t.ok_or_else(|| Error::Retryable("the task changed".into()))
    }
    let task = match action {
        WorkAction::Claim {
            claimant,
            lease_s,
            attempts_kept,
        } => lease_one(c, org, &task, &claimant, lease_s, attempts_kept, now).await?,
        WorkAction::Assign {
            principal,
            lease_s,
            attempts_kept,
        } => {
            check_principal(c, org, &principal).await?;
            lease_one(c, org, &task, &principal, lease_s, attempts_kept, now).await?
        }
        WorkAction::Heartbeat {
            attempt_id,
            lease_s,
            holder,
        } => {
            held(&task, &attempt_id, holder.as_deref(), now)?;
            let sql = lease_sql("lease_expires_at = $1", 2);
            updated(
                c.query_opt(
                    &sql,
                    &args![now + micros(lease_s), &task.uid, &attempt_id],
                    |r| task_row::read(r),
                )
                .await?,
            )?
        }
        WorkAction::Reassign {
            attempt_id,
            principal,
            holder,
            lease_s,
        } => {
            let lease = held(&task, &attempt_id, None, now)?;
            if let Some(holder) = holder
                && holder != lease.claimant
            {
                return Err(Error::PermissionDenied(format!(
                    "only the holder of the lease ('{}') or an admin may reassign it",
                    lease.claimant
                )));
            }
            check_principal(c, org, &principal).await?;
            let sql = lease_sql("claimant = $1, lease_expires_at = $2", 3);
            updated(
                c.query_opt(
                    &sql,
                    &args![&principal, now + micros(lease_s), &task.uid, &attempt_id],
                    |r| task_row::read(r),
                )
                .await?,
            )?
        }
        WorkAction::Release { attempt_id, holder } => {
            held(&task, &attempt_id, holder.as_deref(), now)?;
            // The attempt is given back: its row goes and its number is
            // the next claim's; the retry budget starts afresh if it was
            // the first.
            let sql = lease_sql(
                "status = 'pending', next_attempt_at = $1, lease_expires_at = NULL, \
                 attempt_id = NULL, claimant = NULL, attempt_count = attempt_count - 1, \
                 first_attempt_at = CASE WHEN attempt_count - 1 <= attempts_before_redrive \
                 THEN NULL ELSE first_attempt_at END",
                2,
            );
            let (released, bytes) = updated(
                c.query_opt(&sql, &args![now, &task.uid, &attempt_id], |r| {
                    Ok((task_row::read(r)?, task_row::read_bytes(r)?))
                })
                .await?,
            )?;
            c.count_moved(org, queue, (Status::Running, Status::Pending), 1, bytes);
            c.execute(
                "DELETE FROM attempts WHERE task_uid = $1 AND attempt = $2",
                &args![&task.uid, i64::from(task.attempt_count)],
            )
            .await?;
            released
        }
        WorkAction::Complete { .. } | WorkAction::Fail { .. } => {
            unreachable!("completions and failures end above")
        }
    };
    Ok(WorkDone::new(task, None))
}

/// The task an action names, locked, which must be of a pull queue.
async fn leased_task<C: Conn>(c: &C, org: &str, queue: &str, task_id: &str) -> Result<Task> {
    let task = tasks::require(c, org, queue, task_id, "FOR UPDATE").await?;
    if !task.is_pull() {
        pull_queue(c, org, queue).await?;
    }
    Ok(task)
}

/// A worker's report on its attempt: completed (`Ok`, with the result) or
/// failed (`Err`, with the error).
#[derive(Debug, Clone)]
pub(crate) struct WorkEnd {
    attempt_id: String,
    outcome: std::result::Result<Option<String>, String>,
    person: bool,
    holder: Option<String>,
}

impl WorkEnd {
    /// The report `action` makes, or the action if it is not one.
    pub(crate) fn of(action: WorkAction) -> std::result::Result<WorkEnd, WorkAction> {
        match action {
            WorkAction::Complete {
                attempt_id,
                result,
                person,
                holder,
            } => Ok(WorkEnd {
                attempt_id,
                outcome: Ok(result),
                person,
                holder,
            }),
            WorkAction::Fail {
                attempt_id,
                error,
                person,
                holder,
            } => Ok(WorkEnd {
                attempt_id,
                outcome: Err(error),
                person,
                holder,
            }),
            other => Err(other),
        }
    }
}

/// An end that may be written: the lease holds, and the dispatcher's rules
/// decided what follows.
pub(crate) struct DecidedEnd {
    pub row: dispatch::RunningRow,
    pub next: dispatch::NextState,
}

/// What an end comes to: written, or answered as the holder's repetition
/// of the end that already ended its attempt, writing nothing.
pub(crate) enum Decision {
    Write(Box<DecidedEnd>),
    Replay,
}

/// Completes or fails the attempt `report` names, in the caller's
/// transaction: the task locked and read, the end decided and written.
pub(crate) async fn end<C: Conn>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    report: WorkEnd,
    now: i64,
    render: &dyn EventRenderer,
) -> Result<WorkDone> {
    let task = leased_task(c, org, queue, task_id).await?;
    let row = dispatch::running(c, &task.uid)
        .await?
        .ok_or_else(|| not_found("task", &task.task_id))?;
    match decide_end_of(&task, row, report, now)? {
        Decision::Write(decided) => write_end(c, *decided, now, render).await,
        Decision::Replay => Ok(WorkDone {
            task,
            finished: None,
            replayed: true,
        }),
    }
}

/// Whether `end` repeats, by the same holder, the end that ended its
/// attempt: the claim it names is the task's last, held by the same
/// principal (any, for an admin), that attempt is the task's last and
/// ended as `end` says (succeeded with an equal result, or failed with
/// the same error), and nothing has claimed the task since. An attempt
/// the store ended (an expired lease; a cancel leaves it `cancelled`) is
/// no worker's to repeat.
fn replays(task: &Task, end: &WorkEnd) -> bool {
    let Some(claim) = &task.ended_claim else {
        return false;
    };
    let attempt = end
        .attempt_id
        .rsplit_once('-')
        .and_then(|(_, n)| n.parse::<u32>().ok());
    let last = task.last_attempt.as_ref();
    if claim.attempt_id != end.attempt_id
        || end.holder.as_ref().is_some_and(|h| *h != claim.claimant)
        || attempt.is_none()
        || last.map(|a| a.attempt) != attempt
    {
        return false;
    }
    match &end.outcome {
        Ok(result) => task.status == Status::Succeeded && same_json(result, &task.result),
        Err(error) => {
            matches!(task.status, Status::Pending | Status::Failed)
                && last.and_then(|a| a.error.as_deref()) == Some(error.as_str())
                && error != dispatch::LEASE_EXPIRED
        }
    }
}

/// Two results as JSON values: a repeated end may format its result anew.
fn same_json(a: &Option<String>, b: &Option<String>) -> bool {
    let value = |s: &Option<String>| {
        s.as_deref()
            .map(serde_json::from_str::<serde_json::Value>)
            .transpose()
            .ok()
    };
    match (value(a), value(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Checks a completion or failure against the task (locked, of a pull
/// queue) and its running row, and decides its next state by the
/// dispatcher's rules: a failure retries as the backoff says or fails the
/// task. Nothing is written, so that many ends can be decided together and
/// only those that hold written.
pub(crate) fn decide_end_of(
    task: &Task,
    row: dispatch::RunningRow,
    end: WorkEnd,
    now: i64,
) -> Result<Decision> {
    if row.queue_config.person_only && !end.person {
        return Err(person_required(&task.queue));
    }
    if let Err(lost) = held(task, &end.attempt_id, end.holder.as_deref(), now) {
        return if replays(task, &end) {
            Ok(Decision::Replay)
        } else {
            Err(lost)
        };
    }
    let started_at = row.started_at.unwrap_or(now);
    let attempt = AttemptResult {
        task_uid: row.uid.clone(),
        attempt: row.attempt_count,
        status_code: None,
        error: end.outcome.as_ref().err().cloned(),
        duration: Duration::from_micros(u64::try_from(now - started_at).unwrap_or(0)),
        retry_after: None,
        give_up: false,
        response: None,
    };
    let mut next = row.outcome(&attempt, now);
    if let Ok(result) = end.outcome {
        let window = row.queue_config.kept_for_us(false);
        next.status = Status::Succeeded;
        next.next_attempt_at = None;
        next.finished_at = Some(now);
        next.dedup_expires_at = Some(now.saturating_add(window));
        next.attempt = row.attempt(&attempt, now);
        next.result = result;
    }
    Ok(Decision::Write(Box::new(DecidedEnd { row, next })))
}

/// Writes a decided end: a final state raises its events in this
/// transaction (and, on PostgreSQL, a NOTIFY for the nodes' waiters, sent
/// if it commits). Answers the task as it is now.
async fn write_end<C: Conn>(
    c: &C,
    end: DecidedEnd,
    now: i64,
    render: &dyn EventRenderer,
) -> Result<WorkDone> {
    let DecidedEnd { row, next } = end;
    let finished = dispatch::apply_next(c, now, &row, next, render).await?;
    let finished = finished.is_final().then_some(finished);
    if let Some(f) = &finished
        && C::DIALECT == Dialect::Postgres
    {
        c.execute(
            "SELECT pg_notify($1, $2)",
            &args![dispatch::FINISHED_CHANNEL, &dispatch::encode_finished(f)],
        )
        .await?;
    }
    let task = tasks::require(c, &row.org, &row.queue, &row.task_id, "").await?;
    Ok(WorkDone::new(task, finished))
}
