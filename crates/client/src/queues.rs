//! `/v1/queues` (API.md §3, "Queues").

use crate::client::{Call, Client, Payload, Response};
use crate::error::Error;
use crate::list::ListOptions;
use idem_api::{CreateQueue, Group, List, Purged, Queue, QueueConfigPatch};
use reqwest::Method;

/// A queue to create: a name, and any settings that differ from the
/// server's defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewQueue {
    /// 1–100 of `[A-Za-z0-9_-]`.
    pub name: String,
    /// The settings; unset fields take the server's defaults.
    pub config: QueueConfigPatch,
}

impl NewQueue {
    /// A queue with the server's default settings.
    pub fn new(name: impl Into<String>) -> Self {
        NewQueue {
            name: name.into(),
            config: QueueConfigPatch::default(),
        }
    }
}

/// Queue operations.
impl Client {
    /// `POST /v1/queues` (admin): 201 with the queue, or 409
    /// `QUEUE_ALREADY_EXISTS`.
    pub async fn create_queue(&self, queue: &NewQueue) -> Result<Response<Queue>, Error> {
        let body = CreateQueue::new(&queue.name, queue.config.clone());
        let call = Call::new(Method::POST, ["queues"]).payload(Payload::json(&body)?);
        self.execute(call).await
    }

    /// `GET /v1/queues`: one page of queues.
    pub async fn list_queues(&self, page: &ListOptions) -> Result<Response<List<Queue>>, Error> {
        self.execute(page.apply(Call::new(Method::GET, ["queues"])))
            .await
    }

    /// `GET /v1/queues/{queue}/groups`: one page of the queue's groups with
    /// live tasks, by name; with `id_prefix`, those whose name starts with
    /// it.
    pub async fn list_queue_groups(
        &self,
        queue: &str,
        id_prefix: Option<&str>,
        page: &ListOptions,
    ) -> Result<Response<List<Group>>, Error> {
        let call =
            Call::new(Method::GET, ["queues", queue, "groups"]).query("id_prefix", id_prefix);
        self.execute(page.apply(call)).await
    }

    /// `GET /v1/queues/{queue}`.
    pub async fn get_queue(&self, name: &str) -> Result<Response<Queue>, Error> {
        self.execute(Call::new(Method::GET, ["queues", name])).await
    }

    /// `PATCH /v1/queues/{queue}` (admin): changes the given settings.
    pub async fn update_queue(
        &self,
        name: &str,
        config: &QueueConfigPatch,
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
