//! `idem key create|ls|revoke`: a principal's API keys.

use super::queue::ListArgs;
use super::{ApiArgs, Context, fields, or_dash, table};
use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct KeyArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: KeyCommand,
}

#[derive(Subcommand, Debug)]
enum KeyCommand {
    /// Create an API key for a principal; the key is shown this once.
    Create { principal: String },
    /// List a principal's keys (never their secrets).
    Ls {
        principal: String,
        #[command(flatten)]
        page: ListArgs,
    },
    /// Revoke a key at once.
    Revoke { principal: String, id: String },
}

pub async fn run(args: KeyArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    let c = &cx.client;
    match args.command {
        KeyCommand::Create { principal } => {
            let answer = c.create_api_key(&principal).await?;
            cx.show(&answer, |k| {
                fields(&[
                    ("id", k.id.clone()),
                    ("principal", k.principal.clone()),
                    ("key", k.key.clone()),
                    ("created", k.created_at.to_string()),
                ]);
                eprintln!("note: the key is shown only this once");
            })
        }
        KeyCommand::Ls { principal, page } => {
            let answer = c.list_api_keys(&principal, &page.options()).await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|k| {
                        vec![
                            k.id.clone(),
                            k.principal.clone(),
                            k.created_at.to_string(),
                            or_dash(k.last_used_at),
                        ]
                    })
                    .collect();
                table(&["ID", "PRINCIPAL", "CREATED", "LAST USED"], &rows);
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        KeyCommand::Revoke { principal, id } => {
            c.revoke_api_key(&principal, &id).await?;
            cx.done(&format!("revoked key {id} of {principal}"));
            Ok(())
        }
    }
}
