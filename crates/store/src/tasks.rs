//! Task rules both backends apply inside their transactions.

use crate::records::{Status, Task, TaskCreate, TaskSummary};
use crate::sql::{target_columns, to_json};
use crate::{Error, Result};
use idem_core::FieldErrors;
use idem_core::clock::{from_micros, to_micros};
use idem_core::queue::{MAX_DEADLINE_S, MIN_DEADLINE_S, QueueConfig, RetryConfig};

/// A create request resolved against its queue, as column values.
pub(crate) struct TaskInsert {
    pub uid: String,
    pub target: String,
    pub body_form: Option<&'static str>,
    pub body: Option<Vec<u8>>,
    pub schedule_time: i64,
    pub dispatch_deadline_s: i64,
    pub retry_config: String,
    retry: RetryConfig,
    deadline: u32,
}

impl TaskInsert {
    /// Fills what the request left out from the queue and validates the
    /// result: the task carries the policy it was accepted with.
    pub(crate) fn resolve(p: &TaskCreate, queue: &QueueConfig, now: i64) -> Result<TaskInsert> {
        let mut errors = FieldErrors::new();
        let retry = queue.retry_config.apply(&p.retry_config);
        retry.validate("retry_config", &mut errors);
        let deadline = p.dispatch_deadline_s.unwrap_or(queue.dispatch_deadline_s);
        errors.range(
            "dispatch_deadline_s",
            deadline,
            MIN_DEADLINE_S,
            MAX_DEADLINE_S,
        );
        errors.into_result().map_err(Error::Invalid)?;
        let (target, body_form, body) = target_columns(&p.target);
        Ok(TaskInsert {
            uid: uuid::Uuid::now_v7().simple().to_string(),
            target,
            body_form,
            body,
            schedule_time: p.schedule_time.map(to_micros).unwrap_or(now),
            dispatch_deadline_s: i64::from(deadline),
            retry_config: to_json(&retry),
            retry,
            deadline,
        })
    }

    /// The task this insert creates, without reading it back.
    pub(crate) fn task(&self, p: &TaskCreate, now: i64) -> Task {
        Task {
            queue: p.queue.clone(),
            task_id: p.task_id.clone(),
            uid: self.uid.clone(),
            status: Status::Pending,
            target: p.target.clone(),
            schedule_time: from_micros(self.schedule_time),
            next_attempt_at: from_micros(self.schedule_time),
            dispatch_deadline_s: self.deadline,
            retry_config: self.retry,
            attempt_count: 0,
            cancel_requested: false,
            created_at: from_micros(now),
            finished_at: None,
            last_attempt: None,
            dedup_expires_at: None,
            run: None,
        }
    }
}

/// Whether an existing task's ID may be reused at `now`.
pub(crate) fn tombstone_expired(task: &Task, now: i64) -> bool {
    task.dedup_expires_at.is_some_and(|t| to_micros(t) <= now)
}

pub(crate) fn summary(task: &Task, now: i64) -> TaskSummary {
    TaskSummary {
        task_id: task.task_id.clone(),
        state: task.state(from_micros(now)),
        created_at: task.created_at,
        finished_at: task.finished_at,
    }
}

/// Run-now applies to tasks waiting for an attempt, not to running or
/// finished ones.
pub(crate) fn check_runnable(task: &Task, now: i64) -> Result<()> {
    match task.status {
        Status::Pending => Ok(()),
        Status::Running => Err(Error::FailedPrecondition(format!(
            "task '{}' is running; it cannot be run again until the attempt ends",
            task.task_id
        ))),
        _ => Err(Error::FailedPrecondition(format!(
            "task '{}' has finished ({}); a finished task cannot run",
            task.task_id,
            task.state(from_micros(now)).as_str()
        ))),
    }
}
