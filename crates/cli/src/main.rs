//! The `idem` binary: flag parsing and wiring; the work lives in the
//! library crates.

mod serve;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "idem",
    version,
    about = "Task queue and cron scheduler with exactly-once effects"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API, dispatcher and scheduler.
    Serve(serve::ServeArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve(args) => runtime.block_on(serve::run(args)),
    }
}
