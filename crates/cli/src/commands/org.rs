//! `idem org create`.

use super::{ApiArgs, Context, fields};
use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct OrgArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: OrgCommand,
}

#[derive(Subcommand, Debug)]
enum OrgCommand {
    /// Create an organization (admins of `default` only); prints its first
    /// admin key, once.
    Create { name: String },
}

pub async fn run(args: OrgArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    match args.command {
        OrgCommand::Create { name } => {
            let answer = cx.client.create_organization(&name).await?;
            cx.show(&answer, |o| {
                fields(&[("name", o.name.clone()), ("admin key", o.admin_key.clone())]);
                eprintln!("note: the admin key is shown only this once");
            })
        }
    }
}
