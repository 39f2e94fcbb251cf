//! `idem principal create|ls|set-role`.

use super::queue::ListArgs;
use super::{ApiArgs, Context, fields, table};
use clap::{Args, Subcommand};
use idem_client::{NewPrincipal, Principal, PrincipalKind, Role};

#[derive(Args, Debug)]
pub struct PrincipalArgs {
    #[command(flatten)]
    api: ApiArgs,
    #[command(subcommand)]
    command: PrincipalCommand,
}

#[derive(Subcommand, Debug)]
enum PrincipalCommand {
    /// Create a principal (then give it a key with `idem key create`).
    Create {
        name: String,
        /// reader, writer or admin.
        #[arg(long, value_parser = parse_role)]
        role: Role,
        /// service or person.
        #[arg(long, value_parser = parse_kind, default_value = "service")]
        kind: PrincipalKind,
    },
    /// List principals.
    Ls(ListArgs),
    /// Change a principal's role.
    SetRole {
        name: String,
        /// reader, writer or admin.
        #[arg(value_parser = parse_role)]
        role: Role,
    },
}

fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s).ok_or_else(|| "must be reader, writer or admin".into())
}

fn parse_kind(s: &str) -> Result<PrincipalKind, String> {
    PrincipalKind::parse(s).ok_or_else(|| "must be service or person".into())
}

fn show_principal(p: &Principal) {
    fields(&[
        ("name", p.name.clone()),
        ("kind", p.kind.as_str().into()),
        ("role", p.role.as_str().into()),
        ("created", p.created_at.to_string()),
    ]);
}

pub async fn run(args: PrincipalArgs) -> anyhow::Result<()> {
    let cx = Context::new(&args.api)?;
    let c = &cx.client;
    match args.command {
        PrincipalCommand::Create { name, role, kind } => {
            let answer = c
                .create_principal(&NewPrincipal { name, kind, role })
                .await?;
            cx.show(&answer, show_principal)
        }
        PrincipalCommand::Ls(page) => {
            let answer = c.list_principals(&page.options()).await?;
            cx.show(&answer, |page| {
                let rows: Vec<Vec<String>> = page
                    .items
                    .iter()
                    .map(|p| {
                        vec![
                            p.name.clone(),
                            p.kind.as_str().into(),
                            p.role.as_str().into(),
                            p.created_at.to_string(),
                        ]
                    })
                    .collect();
                table(&["NAME", "KIND", "ROLE", "CREATED"], &rows);
            })?;
            cx.more(answer.value.next_page_token.as_deref());
            Ok(())
        }
        PrincipalCommand::SetRole { name, role } => {
            cx.show(&c.set_principal_role(&name, role).await?, show_principal)
        }
    }
}
