//! `idem webhook create|ls|get|rm`: the organization's event webhooks.

use super::queue::ListArgs;
use super::{ApiArgs, Context, fields, table};
use clap::{Args, Subcommand};
use idem_client::{EventType, Webhook};

#[derive(Args, Debug)]
pub struct WebhookArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: WebhookCommand,
}

#[derive(Subcommand, Debug)]
enum WebhookCommand {
    /// Send events to a URL (a signed POST of JSON per event).
    Create {
        /// Where events go (http or https).
        url: String,
        /// An event to send: task.failed or job.run_failed (repeatable).
        #[arg(long = "event", required = true, value_parser = parse_event)]
        events: Vec<EventType>,
    },
    /// List the organization's webhooks.
    Ls(ListArgs),
    /// Show a webhook.
    Get { id: String },
    /// Remove a webhook; events already raised are still delivered.
    Rm { id: String },
}

fn parse_event(s: &str) -> Result<EventType, String> {
    EventType::parse(s).ok_or_else(|| "expected task.failed or job.run_failed".to_string())
}

fn events(w: &Webhook) -> String {
    w.events
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn show(w: &Webhook) {
    fields(&[
        ("id", w.id.clone()),
        ("url", w.url.clone()),
        ("events", events(w)),
        ("created", w.created_at.to_string()),
    ])
}

pub async fn run(args: WebhookArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    let c = &cx.client;
    match args.command {
        WebhookCommand::Create { url, events } => {
            cx.show(&c.create_webhook(&url, &events).await?, show)
        }
        WebhookCommand::Ls(list) => {
            let answer = c.list_webhooks(&list.options()).await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|w| {
                        vec![
                            w.id.clone(),
                            w.url.clone(),
                            events(w),
                            w.created_at.to_string(),
                        ]
                    })
                    .collect();
                table(&["ID", "URL", "EVENTS", "CREATED"], &rows);
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        WebhookCommand::Get { id } => cx.show(&c.get_webhook(&id).await?, show),
        WebhookCommand::Rm { id } => {
            c.delete_webhook(&id).await?;
            cx.done(&format!("deleted webhook {id}"));
            Ok(())
        }
    }
}
