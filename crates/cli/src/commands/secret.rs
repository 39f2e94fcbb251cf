//! `idem secret ls|rotate|rm`: the signing secrets deliveries are signed
//! with.

use super::{ApiArgs, Context, fields, table};
use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct SecretArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: SecretCommand,
}

#[derive(Subcommand, Debug)]
enum SecretCommand {
    /// List signing secrets, newest (the one signing) first.
    Ls,
    /// Add a secret that signs from now on; older ones stay valid until
    /// removed.
    Rotate,
    /// Remove a secret: signatures made with it stop verifying.
    Rm { id: String },
}

pub async fn run(args: SecretArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    let c = &cx.client;
    match args.command {
        SecretCommand::Ls => cx.show(&c.list_signing_secrets().await?, |s| {
            let rows: Vec<Vec<String>> = s
                .secrets
                .iter()
                .map(|s| vec![s.id.clone(), s.created_at.to_string(), s.secret.clone()])
                .collect();
            table(&["ID", "CREATED", "SECRET"], &rows);
        }),
        SecretCommand::Rotate => cx.show(&c.rotate_signing_secret().await?, |s| {
            fields(&[
                ("id", s.id.clone()),
                ("secret", s.secret.clone()),
                ("created", s.created_at.to_string()),
            ])
        }),
        SecretCommand::Rm { id } => {
            c.delete_signing_secret(&id).await?;
            cx.done(&format!("deleted signing secret {id}"));
            Ok(())
        }
    }
}
