//! `idem backup` and `idem restore`: a consistent copy of the embedded
//! SQLite store, taken while a node serves and writes to it, and putting
//! one back in place with the node stopped. A PostgreSQL store is backed
//! up and restored with PostgreSQL's own tools.

use anyhow::{Context, bail};
use clap::Args;
use idem_store::schema::{SchemaState, VERSION};
use idem_store::sqlite;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `idem backup --help`.
pub const BACKUP_HELP: &str = "\
Copies the embedded SQLite store (DATA_DIR/idem.db) to FILE (--to): one consistent
snapshot holding every write committed before the copy began and none
after, taken while a node serves and keeps writing. The copy reads in one
read transaction and never holds the write lock, so the node's writes go
on; until it ends the node's write-ahead log (idem.db-wal) cannot be
checkpointed past the snapshot and grows.

The copy is written to a temporary file in FILE's directory, checked with
SQLite's integrity check, flushed to disk and only then renamed to FILE, so
that FILE is either the whole previous file or the whole new backup, never
part of one. An existing FILE is refused unless --force is given.

Prints the file written, its size in bytes and the schema version it holds.
The backup is a single self-contained SQLite file (no -wal or -shm beside
it); `idem restore` puts it back.

A PostgreSQL store (--database-url, IDEM_DATABASE_URL) is not copied by
this command: use `pg_dump -Fc` (and `pg_restore` to put it back).";

/// `idem restore --help`.
pub const RESTORE_HELP: &str = "\
Restores the embedded SQLite store (DATA_DIR/idem.db) from FILE (--from), a
file `idem backup` wrote, into an empty DATA_DIR: a folder that holds
anything is refused unless --force is given. Stop every node serving DATA_DIR first: the restore
refuses while any process has the store open.

FILE is copied to a temporary file in DATA_DIR and checked there (SQLite's
integrity check, an Idem schema, a schema version not newer than this
idem's) before anything in DATA_DIR changes; a file that fails is refused
and the current store left as it was. The old idem.db-wal and idem.db-shm
are removed, the copy is flushed to disk and renamed over idem.db, and the
directory is flushed. With --force, a store DATA_DIR already holds is
replaced (take a backup of it first). DATA_DIR is created if it does not
exist.

A backup from an older idem is restored as it is: the next `idem serve`
migrates it (or run `idem migrate`).

A PostgreSQL store (--database-url, IDEM_DATABASE_URL) is not restored by
this command: use `pg_restore` on a dump taken with `pg_dump -Fc`.";

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The file to write the backup to; its directory must exist.
    #[arg(long = "to", value_name = "FILE")]
    out: PathBuf,
    /// Replace FILE if it exists (atomically: FILE stays the old file
    /// until the new one is complete).
    #[arg(long)]
    force: bool,
    /// Folder of the embedded SQLite store whose idem.db is copied.
    #[arg(long, env = "IDEM_DATA_DIR", default_value = "./idem-data")]
    data_dir: PathBuf,
    /// A PostgreSQL store: refused, with how to back it up (`pg_dump -Fc`).
    #[arg(long, env = "IDEM_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// The backup file to restore (one `idem backup` wrote).
    #[arg(long = "from", value_name = "FILE")]
    backup: PathBuf,
    /// Restore into a DATA_DIR that is not empty, replacing the store it
    /// holds.
    #[arg(long)]
    force: bool,
    /// Folder of the embedded SQLite store whose idem.db is replaced.
    #[arg(long, env = "IDEM_DATA_DIR", default_value = "./idem-data")]
    data_dir: PathBuf,
    /// A PostgreSQL store: refused, with how to restore it (`pg_restore`).
    #[arg(long, env = "IDEM_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
}

const PG_BACKUP: &str = "idem backup copies the embedded SQLite store only; back up a \
     PostgreSQL store with PostgreSQL's tools: `pg_dump -Fc -f idem.dump \"$IDEM_DATABASE_URL\"` \
     (restore it with `pg_restore --no-owner -d <new database URL> idem.dump`)";

const PG_RESTORE: &str = "idem restore restores the embedded SQLite store only; restore a \
     PostgreSQL store from a `pg_dump -Fc` dump with `pg_restore --no-owner -d <database URL> \
     idem.dump` into an empty database";

/// How long `idem restore` waits for the current store's lock: a node
/// serving on it holds a lock for as long as it runs, so a longer wait
/// would only delay the refusal.
const RESTORE_LOCK_WAIT: Duration = Duration::from_secs(1);

pub async fn backup(args: BackupArgs) -> anyhow::Result<()> {
    if args.database_url.is_some() {
        bail!(PG_BACKUP);
    }
    tokio::task::spawn_blocking(move || backup_file(&args)).await?
}

pub async fn restore(args: RestoreArgs) -> anyhow::Result<()> {
    if args.database_url.is_some() {
        bail!(PG_RESTORE);
    }
    tokio::task::spawn_blocking(move || restore_file(&args)).await?
}

fn backup_file(args: &BackupArgs) -> anyhow::Result<()> {
    let source = args.data_dir.join("idem.db");
    if !source.is_file() {
        bail!(
            "no store at {}: --data-dir (or IDEM_DATA_DIR) names the folder `idem serve` keeps \
             idem.db in",
            source.display()
        );
    }
    let out = &args.out;
    if out.is_dir() {
        bail!("{} is a directory; name the file to write", out.display());
    }
    if !args.force && out.symlink_metadata().is_ok() {
        bail!("{} exists; pass --force to replace it", out.display());
    }
    let dir = parent_of(out);
    let name = out
        .file_name()
        .with_context(|| format!("{} names no file", out.display()))?;
    let temp = TempFile(dir.join(format!(
        ".{}.idem-backup-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    )));
    // VACUUM INTO writes only into a file that is absent or empty.
    temp.remove();

    // `VACUUM INTO`, not the online backup API. The backup API copies page
    // by page over several steps; when another connection (the node's
    // writer, in another process) commits between two steps, it starts
    // again from the first page, so under a steady write load it may never
    // finish, and copying in one step would hold the read for as long
    // anyway. `VACUUM INTO` reads the whole file in one read transaction,
    // which in WAL mode sees one snapshot (every write committed before it
    // began, none after) and neither blocks the writer nor waits for it.
    // What the node pays is that checkpoints cannot move past that snapshot
    // while the copy runs: the WAL grows for that time and is reset after.
    // The copy is compacted and in rollback-journal mode: one file, nothing
    // beside it to lose.
    let conn = Connection::open_with_flags(
        &source,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("opening {}", source.display()))?;
    conn.busy_timeout(sqlite::BUSY_TIMEOUT)?;
    let into = temp
        .0
        .to_str()
        .with_context(|| format!("{} is not a UTF-8 path", temp.0.display()))?;
    conn.execute("VACUUM INTO ?1", [into])
        .with_context(|| format!("copying {} to {}", source.display(), temp.0.display()))?;
    drop(conn);

    let state = verify(&temp.0).with_context(|| {
        format!(
            "the copy of {} failed its check; nothing was written to {}",
            source.display(),
            out.display()
        )
    })?;
    sync_file(&temp.0)?;
    if args.force {
        std::fs::rename(&temp.0, out)
            .with_context(|| format!("renaming {} to {}", temp.0.display(), out.display()))?;
    } else {
        // A link fails when OUT appeared since the check above, where a
        // rename would replace it.
        match std::fs::hard_link(&temp.0, out) {
            Ok(()) => temp.remove(),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                bail!("{} exists; pass --force to replace it", out.display())
            }
            // A file system without hard links.
            Err(_) if out.symlink_metadata().is_err() => std::fs::rename(&temp.0, out)
                .with_context(|| format!("renaming {} to {}", temp.0.display(), out.display()))?,
            Err(e) => return Err(e).with_context(|| format!("writing {}", out.display())),
        }
    }
    sync_dir(dir)?;
    let bytes = std::fs::metadata(out)
        .with_context(|| format!("reading {}", out.display()))?
        .len();
    crate::commands::fields(&[
        ("backup", out.display().to_string()),
        ("of", source.display().to_string()),
        ("bytes", bytes.to_string()),
        ("schema_version", state.store.to_string()),
    ]);
    Ok(())
}

fn restore_file(args: &RestoreArgs) -> anyhow::Result<()> {
    let backup = &args.backup;
    if !backup.is_file() {
        bail!("{}: no such file", backup.display());
    }
    let dir = &args.data_dir;
    // A restore into a folder that holds anything would overwrite what
    // an operator may not have meant to lose: only into an empty one,
    // unless told.
    if !args.force
        && let Ok(mut entries) = std::fs::read_dir(dir)
        && let Some(entry) = entries.next()
    {
        let name = entry.map(|e| e.file_name().to_string_lossy().into_owned());
        bail!(
            "{} is not empty (it holds {}): restore into an empty folder, or pass --force to \
             replace the store it holds (`idem backup` it first)",
            dir.display(),
            name.unwrap_or_else(|_| "entries".into())
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let target = dir.join("idem.db");

    // The backup is checked as copied next to the store: what is checked
    // is what gets installed, and the file given is only ever read.
    let temp = TempFile(dir.join(format!(".idem.db.restore-{}.tmp", std::process::id())));
    temp.remove();
    std::fs::copy(backup, &temp.0)
        .with_context(|| format!("copying {} to {}", backup.display(), temp.0.display()))?;
    let state = verify(&temp.0)
        .and_then(|state| Ok(state.refuse_newer().map(|()| state)?))
        .with_context(|| {
            format!(
                "{} cannot be restored; {} is unchanged",
                backup.display(),
                target.display()
            )
        })?;
    sync_file(&temp.0)?;

    if target.exists() {
        take_over(&target, args.force)?;
    }
    // The old store's WAL and shared memory would be read as the new
    // file's; take_over has checkpointed the WAL into the old file, so
    // the old store is whole without it until the rename below.
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut side = target.clone().into_os_string();
        side.push(suffix);
        match std::fs::remove_file(&side) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("removing {}", PathBuf::from(side).display()));
            }
        }
    }
    std::fs::rename(&temp.0, &target)
        .with_context(|| format!("renaming {} to {}", temp.0.display(), target.display()))?;
    sync_dir(dir)?;
    let bytes = std::fs::metadata(&target)
        .with_context(|| format!("reading {}", target.display()))?
        .len();
    crate::commands::fields(&[
        ("restored", target.display().to_string()),
        ("from", backup.display().to_string()),
        ("bytes", bytes.to_string()),
        ("schema_version", state.store.to_string()),
    ]);
    if !state.pending().is_empty() {
        println!(
            "the backup's schema is version {}, older than this idem's {VERSION}: `idem serve` \
             (or `idem migrate`) migrates it",
            state.store
        );
    }
    Ok(())
}

/// Makes sure the store at `path` may be replaced: no process has it open,
/// and it holds no schema unless `force`. Leaves everything the WAL holds
/// checkpointed into the file.
///
/// A node keeps its connections open for as long as it serves, and in WAL
/// mode every open connection holds a shared lock on the database file
/// (released only when it closes), even while idle. A connection in
/// exclusive locking mode must take the file's exclusive lock, which no
/// such lock allows; a plain `BEGIN EXCLUSIVE` would not do, as in WAL
/// mode it only excludes other writers, and succeeds while a node is idle.
fn take_over(path: &Path, force: bool) -> anyhow::Result<()> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("opening {}", path.display()))?;
    conn.busy_timeout(RESTORE_LOCK_WAIT)?;
    let locked = conn
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
        .and_then(|()| conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)));
    let objects: i64 = match locked {
        Ok(n) => n,
        Err(rusqlite::Error::SqliteFailure(e, _))
            if matches!(e.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) =>
        {
            bail!(
                "{} is in use: a node (`idem serve`) or another process has it open; stop it \
                 before restoring",
                path.display()
            )
        }
        // Not a database, or a damaged one: what a restore is for, once
        // asked to replace it.
        Err(e) if force => {
            eprintln!(
                "warning: {} is not a readable store ({e}); replacing it",
                path.display()
            );
            return Ok(());
        }
        Err(e) => bail!(
            "{} exists and is not a readable store ({e}); pass --force to replace it",
            path.display()
        ),
    };
    if objects > 0 && !force {
        bail!(
            "{} holds a store already; pass --force to replace it (`idem backup` it first to \
             keep it)",
            path.display()
        );
    }
    conn.execute_batch("COMMIT")?;
    // The lock is kept after the commit (exclusive locking mode), so no
    // writer adds to the WAL between this and the close.
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .with_context(|| format!("checkpointing {}", path.display()))?;
    drop(conn);
    Ok(())
}

/// Checks that the file at `path` is a whole SQLite database holding an
/// Idem store; the schema version it records.
fn verify(path: &Path) -> anyhow::Result<SchemaState> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let problems = conn
        .prepare("PRAGMA integrity_check")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| anyhow::anyhow!("not an Idem store: {e}"))?;
    if problems != ["ok"] {
        let shown: Vec<_> = problems.iter().take(5).map(String::as_str).collect();
        bail!("SQLite's integrity check failed: {}", shown.join("; "));
    }
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'
           AND name IN ('organizations', 'queues', 'tasks')",
        [],
        |r| r.get(0),
    )?;
    drop(conn);
    let state = sqlite::schema_state(path)?;
    if tables < 3 || state.store < 1 {
        bail!("not an Idem store: a SQLite database without Idem's schema");
    }
    Ok(state)
}

/// A temporary file, removed when dropped unless it was renamed away.
struct TempFile(PathBuf);

impl TempFile {
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The directory a file named on the command line is in.
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn sync_file(path: &Path) -> anyhow::Result<()> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("flushing {} to disk", path.display()))
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("flushing {} to disk", dir.display()))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
