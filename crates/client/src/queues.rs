//! `/v1/queues` (SPEC 3, "Queues").

use crate::client::{Call, Client, Payload, Response};
use crate::error::Error;
use crate::list::{List, ListOptions};
use idem_core::queue::{QueueState, RateLimits, RateLimitsPatch, RetryConfig, RetryConfigPatch};
use jiff::Timestamp;
use reqwest::Method;
use serde::{Deserialize, Serialize};

/// A queue as the API shows it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Queue {
    /// Unique per organization.
    pub name: String,
    /// `running` or `paused`.
    pub state: QueueState,
    /// Token bucket and concurrency limits.
    pub rate_limits: RateLimits,
    /// How failed deliveries are retried.
    pub retry_config: RetryConfig,
    /// How long a target has to answer, in seconds.
    pub dispatch_deadline_s: u32,
    /// How long a finished task's ID stays taken, in seconds.
    pub dedup_window_s: u64,
    /// When the queue was created.
    pub created_at: Timestamp,
    /// When its configuration or state last changed.
    pub updated_at: Timestamp,
}

/// A queue to create: a name, and any settings that differ from the
/// server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NewQueue {
    /// 1–100 of `[A-Za-z0-9_-]`.
    pub name: String,
    /// The settings; unset fields take the server's defaults.
    #[serde(flatten)]
    pub config: QueueConfig,
}

impl NewQueue {
    /// A queue with the server's default settings.
    pub fn new(name: impl Into<String>) -> Self {
        NewQueue {
            name: name.into(),
            config: QueueConfig::default(),
        }
    }
}

/// Queue settings, each optional: on create, unset fields take the
/// defaults; on update, they keep their values.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueueConfig {
    /// Rate and concurrency limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limits: Option<RateLimitsPatch>,
    /// Retry policy for tasks that do not set their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_config: Option<RetryConfigPatch>,
    /// 1–1800 seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch_deadline_s: Option<u32>,
    /// Seconds a task ID stays taken after its task ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedup_window_s: Option<u64>,
}

/// The answer to a purge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Purged {
    /// Tasks cancelled by the purge.
    pub cancelled: u64,
}

/// Queue operations.
impl Client {
    /// `POST /v1/queues` (admin): 201 with the queue, or 409
    /// `QUEUE_ALREADY_EXISTS`.
    pub async fn create_queue(&self, queue: &NewQueue) -> Result<Response<Queue>, Error> {
        let call = Call::new(Method::POST, ["queues"]).payload(Payload::json(queue)?);
        self.execute(call).await
    }

    /// `GET /v1/queues`: one page of queues.
    pub async fn list_queues(&self, page: &ListOptions) -> Result<Response<List<Queue>>, Error> {
        self.execute(page.apply(Call::new(Method::GET, ["queues"])))
            .await
    }

    /// `GET /v1/queues/{queue}`.
    pub async fn get_queue(&self, name: &str) -> Result<Response<Queue>, Error> {
        self.execute(Call::new(Method::GET, ["queues", name])).await
    }

    /// `PATCH /v1/queues/{queue}` (admin): changes the given settings.
    pub async fn update_queue(
        &self,
        name: &str,
        config: &QueueConfig,
    ) -> Result<Response<Queue>, Error> {
        let call = Call::new(Method::PATCH, ["queues", name]).payload(Payload::json(config)?);
        self.execute(call).await
    }

    /// `DELETE /v1/queues/{queue}` (admin): deletes the queue and its tasks.
    pub async fn delete_queue(&self, name: &str) -> Result<Response<()>, Error> {
        self.execute(Call::new(Method::DELETE, ["queues", name]))
            .await
    }

    /// `POST /v1/queues/{queue}/pause` (admin): stops dispatching; tasks are
    /// still accepted.
    pub async fn pause_queue(&self, name: &str) -> Result<Response<Queue>, Error> {
        self.execute(Call::new(Method::POST, ["queues", name, "pause"]))
            .await
    }

    /// `POST /v1/queues/{queue}/resume` (admin).
    pub async fn resume_queue(&self, name: &str) -> Result<Response<Queue>, Error> {
        self.execute(Call::new(Method::POST, ["queues", name, "resume"]))
            .await
    }

    /// `POST /v1/queues/{queue}/purge` (admin): cancels every task not
    /// running.
    pub async fn purge_queue(&self, name: &str) -> Result<Response<Purged>, Error> {
        self.execute(Call::new(Method::POST, ["queues", name, "purge"]))
            .await
    }
}
