//! The API subcommands (`idem queue|task|job|principal|key|org|secret …`):
//! each file parses one resource's flags, calls the API through
//! `idem-client`, and prints a table or, with `--json`, the API's JSON.

pub mod job;
pub mod key;
pub mod org;
pub mod principal;
pub mod queue;
pub mod secret;
pub mod task;
pub mod webhook;

use anyhow::Context as _;
use clap::Args;
use idem_client::{Client, Error, Response};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// What scripts can rely on; also printed by `idem --help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  any other failure (a local file, an unexpected answer)
  2  usage error: unknown flag, missing or malformed argument
  3  the server refused the request as invalid (400, 413, 415, 422)
  4  not found (404, 410)
  5  conflict: already exists, in progress, stale, not allowed in the current state (409)
  6  unauthenticated or permission denied (401, 403)
  7  unavailable: 429, 5xx or no answer, after retries";

/// Connection and output flags shared by every API subcommand.
#[derive(Args, Debug, Clone)]
pub struct ApiArgs {
    /// Base URL of the Idem server. Given before the action
    /// (`idem task --url URL ls`): `task create --url` and `job create
    /// --url` are the delivery's target.
    // Not global for that reason: a global flag would collide with it.
    #[arg(long, env = "IDEM_URL", default_value = "http://127.0.0.1:7070")]
    pub url: String,
    /// API key (`idem_…`).
    #[arg(long, env = "IDEM_API_KEY", hide_env_values = true, global = true)]
    pub api_key: Option<String>,
    /// For an `https://` URL: a PEM file of CA certificates to trust beside
    /// the system's (a private CA that signed the server's certificate).
    #[arg(long, env = "IDEM_CA_FILE", value_name = "PATH", global = true)]
    pub ca_file: Option<std::path::PathBuf>,
    /// Print the API's JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

/// What a subcommand works with.
pub struct Context {
    pub client: Client,
    pub json: bool,
}

impl Context {
    pub fn new(api: &ApiArgs) -> anyhow::Result<Context> {
        let mut builder = Client::builder(api.url.clone())
            .user_agent(format!("idem-cli/{}", env!("CARGO_PKG_VERSION")));
        if let Some(key) = &api.api_key {
            builder = builder.api_key(key.clone());
        }
        if let Some(path) = &api.ca_file {
            builder = builder.ca_file(path);
        }
        Ok(Context {
            client: builder.build()?,
            json: api.json,
        })
    }

    /// Prints the answer: its JSON as received with `--json`, else what
    /// `table` prints. A replay is worth knowing about, so it is noted on
    /// stderr (stdout stays parseable).
    pub fn show<T>(&self, answer: &Response<T>, table: impl FnOnce(&T)) -> anyhow::Result<()> {
        if answer.replayed {
            eprintln!(
                "note: replayed the result of an earlier request with the same idempotency key"
            );
        }
        if self.json {
            let mut out = std::io::stdout().lock();
            out.write_all(&answer.body)?;
            if !answer.body.ends_with(b"\n") {
                out.write_all(b"\n")?;
            }
            out.flush()?;
        } else {
            table(&answer.value);
        }
        Ok(())
    }

    /// For answers without a body (204): a confirmation line, nothing with
    /// `--json`.
    pub fn done(&self, message: &str) {
        if !self.json {
            println!("{message}");
        }
    }

    /// With `next_page_token`, tells a person how to get the next page; on
    /// stderr so that stdout stays one table.
    pub fn more(&self, next: Option<&str>) {
        if let (false, Some(token)) = (self.json, next) {
            eprintln!("more: pass --page-token {token}");
        }
    }
}

/// Plain aligned columns: a header row and one row per item, two spaces
/// apart; the last column is not padded.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  "));
            }
        }
        println!("{}", out.trim_end());
    };
    line(headers.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// `field: value` lines for one resource.
pub fn fields(pairs: &[(&str, String)]) {
    let width = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in pairs {
        println!("{:<width$}  {v}", format!("{k}:"), width = width + 1);
    }
}

/// An optional value for a table cell.
pub fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

/// A command-line duration as whole seconds, for the API's `_s` fields.
pub fn whole_seconds(flag: &str, d: Duration) -> anyhow::Result<u64> {
    if d.subsec_nanos() != 0 {
        anyhow::bail!(Usage(format!("{flag} must be whole seconds, got {d:?}")));
    }
    Ok(d.as_secs())
}

/// A command-line deadline (`30s`, `10m`) as the whole seconds of the
/// API's `…_deadline_s` fields; too large a value is left for the server to
/// refuse.
pub fn deadline_seconds(flag: &str, d: Option<Duration>) -> anyhow::Result<Option<u32>> {
    Ok(d.map(|d| whole_seconds(flag, d))
        .transpose()?
        .map(|s| u32::try_from(s).unwrap_or(u32::MAX)))
}

/// A command-line duration as milliseconds, for the API's `_ms` fields.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// After a create that failed without a usable answer (none at all, or a
/// 5xx), says how to find out whether it happened: repeating the call with
/// the same idempotency key replays its result instead of creating twice.
pub fn hint_on_lost_answer(error: &Error, what: &str, key: &str) {
    if matches!(error, Error::Transport { .. }) || error.status().is_some_and(|s| s >= 500) {
        eprintln!(
            "hint: {what} may have been created; repeat with --idempotency-key {key} to find out without creating it twice"
        );
    }
}

/// A mistake in the command line found after parsing (exit code 2).
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A command that ran but did not fully succeed, with its exit code (a
/// batch some of whose tasks were refused).
#[derive(Debug)]
pub struct Failed(pub u8, pub String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

impl std::error::Error for Failed {}

/// Reads a file named on the command line (`-` for stdin).
pub fn read_input(path: &str) -> anyhow::Result<Vec<u8>> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).context("reading stdin")?;
        return Ok(buf);
    }
    std::fs::read(path).with_context(|| format!("reading {path}"))
}

/// The exit code for a failed command (see [`EXIT_CODES`]).
pub fn exit_code(error: &anyhow::Error) -> u8 {
    if error.downcast_ref::<Usage>().is_some() {
        return 2;
    }
    if let Some(Failed(code, _)) = error.downcast_ref::<Failed>() {
        return *code;
    }
    let Some(api) = error.downcast_ref::<Error>() else {
        return 1;
    };
    match api {
        Error::InvalidUrl { .. } | Error::InvalidRequest(_) => 2,
        Error::Transport { .. } => 7,
        Error::Build(_) | Error::CaFile { .. } => 1,
        _ => match api.status() {
            Some(400 | 413 | 415 | 422) => 3,
            Some(404 | 410) => 4,
            Some(409) => 5,
            Some(401 | 403) => 6,
            Some(s) if s == 429 || s >= 500 => 7,
            _ => 1,
        },
    }
}

/// Prints the error as one line on stderr and returns its exit code.
pub fn report(error: &anyhow::Error) -> ExitCode {
    // A problem document is already one complete sentence; the context
    // chain would only repeat the route.
    match error.downcast_ref::<Error>() {
        Some(api) => eprintln!("error: {api}"),
        None => eprintln!("error: {error:#}"),
    }
    ExitCode::from(exit_code(error))
}
