//! The schema's version, both backends alike: what `idem migrate` applies
//! or checks, what `/readyz` compares with the binary's, and the refusal
//! of a store whose schema is newer than the binary, before anything is
//! written.
//!
//! Each backend keeps one migration file per name below (`schema.sql`
//! is the first) and records how many it has applied: PostgreSQL in
//! `idem_schema`, SQLite in `user_version`.

use crate::{Error, Result};

/// Hands the migrations after the first (`schema.sql`), in order, to
/// `$then!`: the one list both the names below and each backend's
/// statements ([`migration_sql`]) are made from.
macro_rules! with_migrations {
    ($then:ident!($($args:tt)*)) => {
        $then!($($args)*
            "002_dispatch",
            "003_idempotency",
            "004_jobs",
            "005_missed_runs",
            "006_job_paused_reason",
            "007_redrive",
            "008_events",
            "009_queue_stats",
            "010_person_admins",
            "011_oidc_keys",
            "012_pull_queues",
            "013_claim_order",
            "014_counted_inserts",
            "015_org_usage",
            "016_task_bytes",
            "017_groups",
            "018_ordered_by_creates",
            "019_attempt_response",
            "020_usage_slots",
            "021_group_key_bytewise",
            "022_dispatches_per_claim",
            "023_inserts_counted_per_commit",
            "024_status_changes_counted_per_commit",
        )
    };
}

macro_rules! migration_names {
    ($($name:literal,)*) => {
        &["001_schema", $($name),*]
    };
}

/// A backend's migrations, in order: `src/<backend>/schema.sql`, then
/// `src/<backend>/migrations/<name>.sql` for each name.
macro_rules! migration_sql {
    ($backend:literal, $($name:literal,)*) => {
        &[
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/", $backend, "/schema.sql")),
            $(include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"), "/src/", $backend, "/migrations/", $name, ".sql"
            ))),*
        ]
    };
}
pub(crate) use {migration_sql, with_migrations};

/// The migrations, in the order they apply; version N means the first N
/// have been applied.
pub const MIGRATIONS: &[&str] = with_migrations!(migration_names!());

/// The schema version this binary writes and reads.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// A store's schema against this binary's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaState {
    /// The version the store records (0: an empty store).
    pub store: i64,
}

impl SchemaState {
    /// The migrations that would apply, by name; none when the store is
    /// current or newer.
    pub fn pending(&self) -> &'static [&'static str] {
        let applied = usize::try_from(self.store.max(0)).unwrap_or(usize::MAX);
        MIGRATIONS.get(applied..).unwrap_or(&[])
    }

    /// Refuses a store this binary does not know how to read.
    pub fn refuse_newer(&self) -> Result<()> {
        if self.store > VERSION {
            return Err(Error::Unavailable(format!(
                "the store's schema is version {}, newer than this idem's version {VERSION}: \
                 run the idem that migrated it (or a later one), or restore a backup made \
                 before the upgrade",
                self.store
            )));
        }
        Ok(())
    }

    /// Whether a node may serve on it as it is: neither behind nor ahead.
    pub fn check_current(&self) -> Result<()> {
        self.refuse_newer()?;
        if self.store < VERSION {
            return Err(Error::Unavailable(format!(
                "the store's schema is version {}, older than this idem's version {VERSION}: \
                 {} migration(s) pending ({}); run `idem migrate`",
                self.store,
                self.pending().len(),
                self.pending().join(", ")
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_newer_and_current() {
        let empty = SchemaState { store: 0 };
        assert_eq!(empty.pending(), MIGRATIONS);
        assert!(empty.check_current().is_err());
        empty.refuse_newer().expect("an empty store is not newer");
        let one_behind = SchemaState { store: VERSION - 1 };
        assert_eq!(one_behind.pending(), &MIGRATIONS[MIGRATIONS.len() - 1..]);
        let current = SchemaState { store: VERSION };
        assert!(current.pending().is_empty());
        current.check_current().expect("current");
        let newer = SchemaState { store: VERSION + 1 };
        assert!(newer.pending().is_empty());
        let refused = newer.refuse_newer().expect_err("newer").to_string();
        assert!(
            refused.contains(&format!("version {}", VERSION + 1))
                && refused.contains(&format!("version {VERSION}")),
            "{refused}"
        );
    }

    /// A listed migration without its file does not compile; a file not
    /// listed would never run.
    #[test]
    fn every_migration_file_is_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for backend in ["postgres", "sqlite"] {
            let files = std::fs::read_dir(dir.join(format!("{backend}/migrations")))
                .unwrap()
                .count();
            assert_eq!(files, MIGRATIONS.len() - 1, "{backend}: a file not listed");
        }
    }
}
