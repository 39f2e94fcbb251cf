//! `idem migrate`: brings a store's schema up to this binary's, or with
//! `--check` says what that would apply, so that an upgrade can be
//! checked and applied before any new node serves.

use anyhow::Context;
use clap::Args;
use idem_store::schema::{SchemaState, VERSION};
use idem_store::{postgres, sqlite};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// List the pending migrations instead of applying them; exit 0 only
    /// when there are none (1 when there are).
    #[arg(long)]
    check: bool,
    /// Folder of the embedded SQLite store (unless --database-url is given).
    #[arg(long, env = "IDEM_DATA_DIR", default_value = "./idem-data")]
    data_dir: PathBuf,
    /// PostgreSQL URL of the store, as `idem serve` takes it.
    #[arg(long, env = "IDEM_DATABASE_URL")]
    database_url: Option<String>,
}

/// Where a store is, for the commands that reach it without serving.
pub enum Location<'a> {
    Sqlite(PathBuf),
    Postgres(&'a str),
}

impl Location<'_> {
    pub fn of<'a>(database_url: Option<&'a str>, data_dir: &std::path::Path) -> Location<'a> {
        match database_url {
            Some(url) => Location::Postgres(url),
            None => Location::Sqlite(data_dir.join("idem.db")),
        }
    }

    /// The store's schema against this binary's, read without writing.
    pub async fn schema(&self) -> anyhow::Result<SchemaState> {
        Ok(match self {
            Location::Postgres(url) => postgres::schema_state(url).await?,
            Location::Sqlite(path) => {
                sqlite::schema_state(path).with_context(|| format!("reading {}", path.display()))?
            }
        })
    }
}

pub async fn run(args: MigrateArgs) -> anyhow::Result<()> {
    let location = Location::of(args.database_url.as_deref(), &args.data_dir);
    let state = location.schema().await?;
    state.refuse_newer()?;
    if args.check {
        let pending = state.pending();
        if pending.is_empty() {
            println!("the schema is current (version {VERSION})");
            return Ok(());
        }
        println!(
            "the schema is version {}; this idem's is {VERSION}; pending:",
            state.store
        );
        for name in pending {
            println!("  {name}");
        }
        anyhow::bail!(
            "{} migration(s) pending; `idem migrate` applies them",
            pending.len()
        );
    }
    let before = match &location {
        Location::Postgres(url) => postgres::migrate(url).await?,
        Location::Sqlite(path) => {
            let dir = path.parent().expect("a file in the data directory");
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let path = path.clone();
            tokio::task::spawn_blocking(move || sqlite::migrate_file(&path)).await??
        }
    };
    match before.pending() {
        [] => println!("the schema is current (version {VERSION}); nothing to apply"),
        applied => println!(
            "migrated from version {} to {VERSION}: {}",
            before.store,
            applied.join(", ")
        ),
    }
    Ok(())
}
