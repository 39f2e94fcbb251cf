//! What a backend provides to the shared tables: a connection that runs one
//! statement at a time, with parameters of one small value type.
//!
//! The operations in [`crate::tables`] are written once, as `async` code
//! over [`Conn`]. PostgreSQL runs them on a pooled connection and awaits
//! each round trip; SQLite runs them on its writer (or a reader) thread,
//! where a statement never waits, so the same future completes on its
//! first poll ([`run_now`]). Statements a backend awaits together are
//! pipelined on PostgreSQL and simply run in order on SQLite.

use crate::records::Status;
use crate::sql::Row;
use crate::{Error, Result};
use std::future::Future;

/// Where a statement's text differs between the backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// A row-locking clause (`FOR UPDATE`, `FOR KEY SHARE`, …) on
    /// PostgreSQL, where concurrent transactions must be ordered; nothing on
    /// SQLite, whose single writer already runs one write at a time.
    pub(crate) fn lock(self, clause: &'static str) -> &'static str {
        match self {
            Dialect::Postgres => clause,
            Dialect::Sqlite => "",
        }
    }

    /// The statement text of this dialect, where the two differ.
    pub(crate) fn pick<T>(self, sqlite: T, postgres: T) -> T {
        match self {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => postgres,
        }
    }
}

/// A statement parameter. SQLite reads `$n` as the n-th parameter in order
/// of first appearance, so statements shared by both backends number their
/// parameters in ascending order of first use.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    Int(i64),
    /// A two-byte integer: a task's priority.
    Small(i16),
    OptInt(Option<i64>),
    Real(f64),
    Text(&'a str),
    OptText(Option<&'a str>),
    Blob(Option<&'a [u8]>),
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<Option<i64>> for Value<'_> {
    fn from(v: Option<i64>) -> Self {
        Value::OptInt(v)
    }
}
impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}
impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(v)
    }
}
impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Text(v)
    }
}
impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Value::OptText(v)
    }
}
impl<'a> From<&'a Option<String>> for Value<'a> {
    fn from(v: &'a Option<String>) -> Self {
        Value::OptText(v.as_deref())
    }
}
impl<'a> From<&'a Option<Vec<u8>>> for Value<'a> {
    fn from(v: &'a Option<Vec<u8>>) -> Self {
        Value::Blob(v.as_deref())
    }
}

/// Statement parameters, converted in place: `args![org, &name, now]`.
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        [$($crate::driver::Value::from($v)),*]
    };
}
pub(crate) use args;

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Value::Int(v) => v.to_sql(),
            Value::Small(v) => v.to_sql(),
            Value::OptInt(v) => v.to_sql(),
            Value::Real(v) => v.to_sql(),
            Value::Text(v) => v.to_sql(),
            Value::OptText(v) => v.to_sql(),
            Value::Blob(v) => v.to_sql(),
        }
    }
}

impl tokio_postgres::types::ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        match self {
            Value::Int(v) => v.to_sql(ty, out),
            Value::Small(v) => v.to_sql(ty, out),
            Value::OptInt(v) => v.to_sql(ty, out),
            Value::Real(v) => v.to_sql(ty, out),
            Value::Text(v) => v.to_sql(ty, out),
            Value::OptText(v) => v.to_sql(ty, out),
            Value::Blob(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }

    // Each variant checks the column type as its own Rust type would.
    fn to_sql_checked(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        match self {
            Value::Int(v) => v.to_sql_checked(ty, out),
            Value::Small(v) => v.to_sql_checked(ty, out),
            Value::OptInt(v) => v.to_sql_checked(ty, out),
            Value::Real(v) => v.to_sql_checked(ty, out),
            Value::Text(v) => v.to_sql_checked(ty, out),
            Value::OptText(v) => v.to_sql_checked(ty, out),
            Value::Blob(v) => v.to_sql_checked(ty, out),
        }
    }
}

/// One connection (or transaction) of a backend, running the shared
/// statements.
pub(crate) trait Conn {
    const DIALECT: Dialect;
    type Row<'r>: Row;

    /// Runs a statement; answers how many rows it changed.
    async fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<u64>;

    /// Runs a query, mapping every row.
    async fn query<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        map: impl Fn(&Self::Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>>;

    /// Runs a query answering at most one row.
    async fn query_opt<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        map: impl Fn(&Self::Row<'_>) -> Result<T>,
    ) -> Result<Option<T>>;

    /// Counts `tasks` new (pending) tasks holding `bytes` stored bytes
    /// that a statement inserted into `queue` and did not count itself:
    /// SQLite's writer keeps no insert trigger and counts them once per
    /// commit (`sqlite::counts`). PostgreSQL's statements count their own
    /// rows ([`count_inserted!`](crate::tables::stats::count_inserted)).
    fn count_inserted(&self, _org: &str, _queue: &str, _tasks: u64, _bytes: u64) {}

    /// Counts `tasks` tasks of `queue` holding `bytes` stored bytes that a
    /// statement moved from one status to another, `(from, to)`. SQLite's
    /// writer keeps no status trigger and counts them once per commit
    /// (`sqlite::counts`): every statement that changes a task's status
    /// reports it here, or the queue's counters drift from its rows.
    /// PostgreSQL's trigger counts them.
    fn count_moved(
        &self,
        _org: &str,
        _queue: &str,
        _moved: (Status, Status),
        _tasks: u64,
        _bytes: u64,
    ) {
    }

    /// A row-locking clause, or nothing where the backend needs none.
    fn lock(&self, clause: &'static str) -> &'static str {
        Self::DIALECT.lock(clause)
    }
}

/// Completes a future that never waits, as every operation on SQLite's
/// connections is.
pub(crate) fn run_now<T>(f: impl Future<Output = Result<T>>) -> Result<T> {
    use futures_util::FutureExt;
    f.now_or_never()
        .unwrap_or_else(|| Err(Error::Internal("a SQLite operation waited".into())))
}
