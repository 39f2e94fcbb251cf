//! Pull queues (API.md §11): claiming tasks, acting on their leases, and a
//! worker loop that does both.
//!
//! The server ignores `Idempotency-Key` on these routes, so none is sent;
//! the retry layer still retries a call whose answer was lost. A retried
//! claim of one task that had gone through answers 409
//! `WORK_ALREADY_CLAIMED`, and a retried complete or fail that had gone
//! through answers 409 `LEASE_LOST`: read the task to learn where it stands.

use crate::client::{Call, Client, Payload, Response};
use crate::error::Error;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use idem_api::{
    AssignTask, BatchResults, ClaimTask, ClaimTasks, ClaimedTasks, CompleteTask, EndTask, EndTasks,
    FailTask, Heartbeat, Problem, ProblemCode, ReassignTask, ReleaseTask, Task,
};
use reqwest::Method;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// What a claim asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimOptions {
    /// 1–100 tasks.
    pub max_tasks: u32,
    /// How long the server waits for a due task when none is (≤ 30 s).
    pub wait: Duration,
    /// Each lease's length (1–3600 s); heartbeats extend it.
    pub lease: Duration,
    /// Only tasks with this tag.
    pub tag: Option<String>,
}

impl Default for ClaimOptions {
    fn default() -> Self {
        ClaimOptions {
            max_tasks: 1,
            wait: Duration::ZERO,
            lease: Duration::from_secs(60),
            tag: None,
        }
    }
}

fn lease_s(lease: Duration) -> u32 {
    u32::try_from(lease.as_secs().max(1)).unwrap_or(u32::MAX)
}

fn task_call(queue: &str, task_id: &str, action: &str) -> Call {
    Call::new(Method::POST, ["queues", queue, "tasks", task_id, action]).unkeyed()
}

fn end_tasks_call(queue: &str, ends: Vec<EndTask>) -> Result<Call, Error> {
    Ok(Call::new(Method::POST, ["queues", queue, "tasks"])
        .verb("end")
        .unkeyed()
        .payload(Payload::json(&EndTasks { ends })?))
}

/// A `tasks:end` call of the worker loop, in flight.
type Sending<'a> = Pin<Box<dyn Future<Output = Result<(), Error>> + Send + 'a>>;

/// What the worker loop reads of a `tasks:end` answer.
#[derive(Deserialize)]
struct EndAnswers {
    results: Vec<EndAnswer>,
}

#[derive(Deserialize)]
struct EndAnswer {
    status: u16,
    problem: Option<Problem>,
}

/// A complete (`Ok`, with the result) or a fail (`Err`, with the error).
fn end_call(
    queue: &str,
    task_id: &str,
    attempt_id: &str,
    outcome: Result<Option<Box<RawValue>>, String>,
) -> Result<Call, Error> {
    let attempt_id = attempt_id.to_string();
    Ok(match outcome {
        Ok(result) => task_call(queue, task_id, "complete")
            .payload(Payload::json(&CompleteTask { attempt_id, result })?),
        Err(error) => task_call(queue, task_id, "fail")
            .payload(Payload::json(&FailTask { attempt_id, error })?),
    })
}

/// Pull-queue operations.
impl Client {
    /// `POST /v1/queues/{queue}/tasks:claim` (writer): leases up to
    /// `max_tasks` due tasks, in schedule order, waiting up to `wait` for
    /// one; an empty list when none came.
    pub async fn claim_tasks(
        &self,
        queue: &str,
        options: &ClaimOptions,
    ) -> Result<Response<ClaimedTasks>, Error> {
        let body = ClaimTasks {
            max_tasks: Some(options.max_tasks),
            wait_ms: Some(u64::try_from(options.wait.as_millis()).unwrap_or(u64::MAX)),
            lease_s: Some(lease_s(options.lease)),
            tag: options.tag.clone(),
        };
        let mut call = Call::new(Method::POST, ["queues", queue, "tasks"])
            .verb("claim")
            .unkeyed()
            .payload(Payload::json(&body)?);
        call.extra_time = options.wait;
        self.execute(call).await
    }

    /// `POST …/tasks/{task_id}/claim` (writer): leases one task; 409
    /// `WORK_ALREADY_CLAIMED` if it is leased, to the caller as well.
    pub async fn claim_task(
        &self,
        queue: &str,
        task_id: &str,
        lease: Duration,
    ) -> Result<Response<Task>, Error> {
        let body = ClaimTask {
            lease_s: Some(lease_s(lease)),
        };
        self.execute(task_call(queue, task_id, "claim").payload(Payload::json(&body)?))
            .await
    }

    /// `POST …/tasks/{task_id}/heartbeat` (writer): the lease then ends
    /// `lease` from now.
    pub async fn heartbeat_task(
        &self,
        queue: &str,
        task_id: &str,
        attempt_id: &str,
        lease: Duration,
    ) -> Result<Response<Task>, Error> {
        let body = Heartbeat {
            attempt_id: attempt_id.to_string(),
            lease_s: Some(lease_s(lease)),
        };
        self.execute(task_call(queue, task_id, "heartbeat").payload(Payload::json(&body)?))
            .await
    }

    /// `POST …/tasks/{task_id}/complete` (writer; a person on a
    /// `person_only` queue): the task ends `succeeded` with `result`.
    pub async fn complete_task(
        &self,
        queue: &str,
        task_id: &str,
        attempt_id: &str,
        result: Option<Box<RawValue>>,
    ) -> Result<Response<Task>, Error> {
        self.execute(end_call(queue, task_id, attempt_id, Ok(result))?)
            .await
    }

    /// `POST …/tasks/{task_id}/fail` (writer; a person on a `person_only`
    /// queue): the retry policy queues the task again or fails it.
    pub async fn fail_task(
        &self,
        queue: &str,
        task_id: &str,
        attempt_id: &str,
        error: &str,
    ) -> Result<Response<Task>, Error> {
        self.execute(end_call(
            queue,
            task_id,
            attempt_id,
            Err(error.to_string()),
        )?)
        .await
    }

    /// `POST …/tasks/{task_id}/release` (writer): the task is due again
    /// now; the attempt does not count.
    pub async fn release_task(
        &self,
        queue: &str,
        task_id: &str,
        attempt_id: &str,
    ) -> Result<Response<Task>, Error> {
        let body = ReleaseTask {
            attempt_id: attempt_id.to_string(),
        };
        self.execute(task_call(queue, task_id, "release").payload(Payload::json(&body)?))
            .await
    }

    /// `POST …/tasks/{task_id}/reassign` (the lease's holder or an admin):
    /// the lease, same `attempt_id` and a fresh term, goes to `principal`.
    pub async fn reassign_task(
        &self,
        queue: &str,
        task_id: &str,
        attempt_id: &str,
        principal: &str,
    ) -> Result<Response<Task>, Error> {
        let body = ReassignTask {
            attempt_id: attempt_id.to_string(),
            principal: principal.to_string(),
            lease_s: None,
        };
        self.execute(task_call(queue, task_id, "reassign").payload(Payload::json(&body)?))
            .await
    }

    /// `POST …/tasks/{task_id}/assign` (admin): leases a task nobody holds
    /// to `principal`.
    pub async fn assign_task(
        &self,
        queue: &str,
        task_id: &str,
        principal: &str,
        lease: Duration,
    ) -> Result<Response<Task>, Error> {
        let body = AssignTask {
            principal: principal.to_string(),
            lease_s: Some(lease_s(lease)),
        };
        self.execute(task_call(queue, task_id, "assign").payload(Payload::json(&body)?))
            .await
    }

    /// `POST /v1/queues/{queue}/tasks:end` (writer; a person on a
    /// `person_only` queue): completes or fails up to 100 leased attempts
    /// in one call. The answer holds one result per end, in order: 200
    /// with the task, or the problem the task's own complete or fail would
    /// have answered (409 `LEASE_LOST` for an attempt that no longer holds
    /// its task).
    pub async fn end_tasks(
        &self,
        queue: &str,
        ends: Vec<EndTask>,
    ) -> Result<Response<BatchResults>, Error> {
        self.execute(end_tasks_call(queue, ends)?).await
    }

    /// Claims one batch and works it: `handler` runs for each task at once,
    /// its lease is extended every third of its length while the handler
    /// runs, and the task is completed with the handler's `Ok` result or
    /// failed with its `Err` text. Ends are reported with `tasks:end`: those
    /// ready together in one call, while the other handlers go on running.
    /// Answers how many tasks were claimed (0 when none came within
    /// `options.wait`). A task whose lease was lost meanwhile (it expired
    /// and went to another worker) is left as it is.
    pub async fn work_batch<F, Fut>(
        &self,
        queue: &str,
        options: &ClaimOptions,
        handler: F,
    ) -> Result<usize, Error>
    where
        F: Fn(Task) -> Fut,
        Fut: Future<Output = Result<Option<Box<RawValue>>, String>>,
    {
        let claimed = self.claim_tasks(queue, options).await?.value.tasks;
        let n = claimed.len();
        let mut running: FuturesUnordered<_> = claimed
            .into_iter()
            .map(|task| self.run_one(queue, options.lease, task, &handler))
            .collect();
        let mut ready = Vec::new();
        let mut sending: Option<Sending<'_>> = None;
        loop {
            if sending.is_none() && !ready.is_empty() {
                sending = Some(Box::pin(self.send_ends(queue, std::mem::take(&mut ready))));
            }
            let ran = match (sending.as_mut(), running.is_empty()) {
                (None, true) => return Ok(n),
                (None, false) => running.next().await,
                (Some(send), true) => {
                    send.await?;
                    sending = None;
                    None
                }
                (Some(send), false) => tokio::select! {
                    sent = send => {
                        sent?;
                        sending = None;
                        None
                    }
                    ran = running.next() => ran,
                },
            };
            match ran {
                Some(Ok(Some(end))) => ready.push(end),
                Some(Ok(None)) | None => {}
                Some(Err(e)) if e.problem_code() == Some(ProblemCode::LeaseLost) => {}
                Some(Err(e)) => return Err(e),
            }
        }
    }

    /// Reports ends; an end whose lease was lost is no error of the loop's.
    async fn send_ends(&self, queue: &str, ends: Vec<EndTask>) -> Result<(), Error> {
        // Only the outcomes are read: the ended tasks are skipped unread.
        let answers = self
            .execute::<EndAnswers>(end_tasks_call(queue, ends)?)
            .await?
            .value;
        for answer in answers.results {
            if answer.status == 200 {
                continue;
            }
            let e = match answer.problem {
                Some(document) => Error::Problem(Box::new(crate::error::Problem {
                    document,
                    retry_after: None,
                })),
                None => Error::UnexpectedStatus {
                    status: answer.status,
                    request_id: None,
                    body: "an end answered without its problem".into(),
                },
            };
            if e.problem_code() != Some(ProblemCode::LeaseLost) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Works claimed batches one after another, until an error other than
    /// a lost lease.
    pub async fn work<F, Fut>(
        &self,
        queue: &str,
        options: &ClaimOptions,
        handler: F,
    ) -> Result<std::convert::Infallible, Error>
    where
        F: Fn(Task) -> Fut,
        Fut: Future<Output = Result<Option<Box<RawValue>>, String>>,
    {
        loop {
            self.work_batch(queue, options, &handler).await?;
        }
    }

    /// Runs `handler` on one claimed task, heartbeating its lease, and
    /// answers the task's end (none for a task claimed without a lease).
    async fn run_one<F, Fut>(
        &self,
        queue: &str,
        lease: Duration,
        task: Task,
        handler: &F,
    ) -> Result<Option<EndTask>, Error>
    where
        F: Fn(Task) -> Fut,
        Fut: Future<Output = Result<Option<Box<RawValue>>, String>>,
    {
        let Some(attempt_id) = task.lease.as_ref().and_then(|l| l.attempt_id.clone()) else {
            return Ok(None);
        };
        let task_id = task.task_id.clone();
        let every = (lease / 3).max(Duration::from_millis(100));
        let run = handler(task);
        tokio::pin!(run);
        let outcome = loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                () = tokio::time::sleep(every) => {
                    self.heartbeat_task(queue, &task_id, &attempt_id, lease).await?;
                }
            }
        };
        let (result, error) = match outcome {
            Ok(result) => (result, None),
            Err(error) => (None, Some(error)),
        };
        Ok(Some(EndTask {
            task_id,
            attempt_id,
            result,
            error,
        }))
    }
}
