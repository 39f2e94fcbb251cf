//! Organization event webhooks (API.md §12; admin only).

use crate::client::{Call, Client, Payload, Response};
use crate::error::Error;
use crate::list::ListOptions;
use idem_api::{CreateWebhook, EventType, List, Webhook};
use reqwest::Method;

/// Event webhook operations.
impl Client {
    /// `POST /v1/webhooks`: 201 with the webhook; 429 `RESOURCE_EXHAUSTED`
    /// when the organization has as many as it may.
    pub async fn create_webhook(
        &self,
        url: &str,
        events: &[EventType],
    ) -> Result<Response<Webhook>, Error> {
        let body = CreateWebhook {
            url: url.into(),
            events: events.to_vec(),
        };
        let call = Call::new(Method::POST, ["webhooks"]).payload(Payload::json(&body)?);
        self.execute(call).await
    }

    /// `GET /v1/webhooks`: one page of the organization's webhooks.
    pub async fn list_webhooks(
        &self,
        page: &ListOptions,
    ) -> Result<Response<List<Webhook>>, Error> {
        self.execute(page.apply(Call::new(Method::GET, ["webhooks"])))
            .await
    }

    /// `GET /v1/webhooks/{id}`.
    pub async fn get_webhook(&self, id: &str) -> Result<Response<Webhook>, Error> {
        self.execute(Call::new(Method::GET, ["webhooks", id])).await
    }

    /// `DELETE /v1/webhooks/{id}`: events already raised are still
    /// delivered.
    pub async fn delete_webhook(&self, id: &str) -> Result<Response<()>, Error> {
        self.execute(Call::new(Method::DELETE, ["webhooks", id]))
            .await
    }
}
