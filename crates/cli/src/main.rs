//! The `idem` binary: flag parsing and dispatch; the work lives in the
//! library crates and in one module per command.

mod backup;
mod commands;
mod logs;
mod migrate;
mod proxy;
mod serve;
mod tenants;
mod traces;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

// Every request allocates and frees dozens of small buffers across the
// runtime's threads; glibc's allocator spent a fifth of the server's time
// on them (and consolidating its arenas), mimalloc a fraction of that.
// Cargo.toml turns on mimalloc's `override`, so that the C code linked in
// (SQLite's statements and pages above all) allocates with it too: the
// binary exports `malloc` and `free`, which every library then calls.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "idem",
    version,
    about = "Task queue and cron scheduler with exactly-once effects",
    after_help = commands::EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the API, dispatcher and scheduler.
    Serve(serve::ServeArgs),
    /// Run the guard reverse proxy in front of a service.
    Proxy(proxy::ProxyArgs),
    /// Apply the store's pending schema migrations, or list them (--check).
    Migrate(migrate::MigrateArgs),
    /// Copy the SQLite store to a file while it serves (PostgreSQL: pg_dump -Fc).
    #[command(long_about = backup::BACKUP_HELP)]
    Backup(backup::BackupArgs),
    /// Replace a stopped node's SQLite store with a backup.
    #[command(long_about = backup::RESTORE_HELP)]
    Restore(backup::RestoreArgs),
    /// Print the completion script of a shell: bash, zsh or fish.
    Completions { shell: Shell },
    /// Print the man page (roff), subcommands included.
    Man,
    /// Queues: create, ls, get, pause, resume, purge, rm.
    #[command(after_help = commands::EXIT_CODES)]
    Queue(commands::queue::QueueArgs),
    /// Tasks: create, ls, get, attempts, run, rm.
    #[command(after_help = commands::EXIT_CODES)]
    Task(commands::task::TaskArgs),
    /// Cron jobs: create, ls, get, pause, resume, run, runs, rm, preview.
    #[command(after_help = commands::EXIT_CODES)]
    Job(commands::job::JobArgs),
    /// Principals: create, ls, set-role.
    #[command(after_help = commands::EXIT_CODES)]
    Principal(commands::principal::PrincipalArgs),
    /// API keys of a principal: create, ls, revoke.
    #[command(after_help = commands::EXIT_CODES)]
    Key(commands::key::KeyArgs),
    /// Organizations: create.
    #[command(after_help = commands::EXIT_CODES)]
    Org(commands::org::OrgArgs),
    /// Signing secrets: ls, rotate, rm.
    #[command(after_help = commands::EXIT_CODES)]
    Secret(commands::secret::SecretArgs),
    /// Event webhooks (task.failed, job.run_failed): create, ls, get, rm.
    #[command(after_help = commands::EXIT_CODES)]
    Webhook(commands::webhook::WebhookArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Writes what `idem completions` and `idem man` print: both made from the
/// flags' own definitions, so they cannot fall behind them.
fn print_generated(command: &Command) -> std::io::Result<()> {
    let mut cli = Cli::command();
    let mut out = std::io::stdout().lock();
    match command {
        Command::Completions { shell } => {
            let shell = match shell {
                Shell::Bash => clap_complete::Shell::Bash,
                Shell::Zsh => clap_complete::Shell::Zsh,
                Shell::Fish => clap_complete::Shell::Fish,
            };
            // Into a buffer first: the generator panics on a failed write
            // (a closed pipe), where a write here is an error to report.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli, "idem", &mut script);
            std::io::Write::write_all(&mut out, &script)
        }
        _ => {
            cli.build();
            let page = clap_mangen::Man::new(cli.clone());
            page.render_title(&mut out)?;
            page.render_name_section(&mut out)?;
            page.render_synopsis_section(&mut out)?;
            page.render_description_section(&mut out)?;
            page.render_options_section(&mut out)?;
            page.render_subcommands_section(&mut out)?;
            // Each subcommand's own flags, as `idem <command> --help` lists
            // them, under a section of its own.
            for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
                let name = sub.get_name().to_uppercase();
                let sub = sub.clone().bin_name(format!("idem {}", sub.get_name()));
                use std::io::Write;
                writeln!(out, ".SH \"IDEM {name}\"")?;
                let page = clap_mangen::Man::new(sub);
                page.render_synopsis_section(&mut out)?;
                page.render_options_section(&mut out)?;
            }
            page.render_version_section(&mut out)?;
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    // mimalloc asks for transparent huge pages for its arenas and gives
    // unused parts back to the system; each touch of a part given back then
    // faulted in a whole 2 MiB page, zeroed by the kernel: a tenth of the
    // server's CPU under push dispatch (docs/BENCHMARKS.md, "Transparent
    // huge pages"). Off for the process, the faults are of 4 KiB pages. A
    // kernel without the flag leaves things as they were.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    let cli = Cli::parse();
    if matches!(cli.command, Command::Completions { .. } | Command::Man) {
        return match print_generated(&cli.command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => commands::report(&e.into()),
        };
    }
    // reqwest is built with rustls but without a crypto provider; building
    // any HTTP client (a command's, the dispatcher's, the span exporter's)
    // without a process-wide provider panics.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Command::Serve(args) = &cli.command {
        runtime.worker_threads(args.worker_threads());
    }
    let runtime = match runtime.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return commands::report(&e.into()),
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve::run(args).await,
            Command::Proxy(args) => proxy::run(args).await,
            Command::Migrate(args) => migrate::run(args).await,
            Command::Backup(args) => backup::backup(args).await,
            Command::Restore(args) => backup::restore(args).await,
            Command::Completions { .. } | Command::Man => unreachable!("printed above"),
            Command::Queue(args) => commands::queue::run(args).await,
            Command::Task(args) => commands::task::run(args).await,
            Command::Job(args) => commands::job::run(args).await,
            Command::Principal(args) => commands::principal::run(args).await,
            Command::Key(args) => commands::key::run(args).await,
            Command::Org(args) => commands::org::run(args).await,
            Command::Secret(args) => commands::secret::run(args).await,
            Command::Webhook(args) => commands::webhook::run(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => commands::report(&e),
    }
}
