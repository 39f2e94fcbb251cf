//! `/v1/webhooks` and the events Idem delivers: completion callbacks of
//! queues and tasks, and an organization's event webhooks.

use crate::{Run, Task};
use idem_core::event::EventType;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `POST /v1/webhooks`: where an organization's events go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWebhook {
    /// An http or https URL, subject to the target policy; it receives a
    /// signed `POST` with the event as JSON.
    pub url: String,
    /// At least one of `task.failed`, `job.run_failed`.
    pub events: Vec<EventType>,
}

/// An organization's event webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookView))]
pub struct Webhook {
    /// Its ID, used to delete it.
    pub id: String,
    /// Where events are delivered.
    pub url: String,
    /// The events it receives.
    pub events: Vec<EventType>,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
}

/// The body of a `task.succeeded` or `task.failed` delivery, to a queue's
/// or task's callback or to an organization webhook.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskEvent {
    /// `task.succeeded` or `task.failed`.
    #[serde(rename = "type")]
    pub event: EventType,
    /// The task's queue.
    pub queue: String,
    /// The task as it ended, with its last attempt.
    pub task: Task,
}

/// The body of a `job.run_failed` delivery.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobRunEvent {
    /// `job.run_failed`.
    #[serde(rename = "type")]
    pub event: EventType,
    /// The job's name.
    pub job: String,
    /// The run as it ended, with its last attempt.
    pub run: Run,
}
