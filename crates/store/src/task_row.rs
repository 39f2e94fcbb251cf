//! The row of `tasks`, defined once: the columns a task is read from and
//! how they become a [`Task`], the columns a new task is inserted with and
//! what each starts as, and the parameters of a create in every form an
//! insert takes (one row, many rows, `unnest` arrays, the keyed group
//! commit). Every path that reads or inserts a task goes through here, so
//! that a column added is added once.
//!
//! Reads go by column name, resolved when the crate is compiled: [`col`]
//! holds each column's index in [`COLUMNS`], both generated from the one
//! list in `with_columns!`, so the text selected and the indices read can
//! never disagree, and a name not in the list does not compile. The
//! drivers could look names up in each row instead (rusqlite and
//! tokio-postgres both can), but that is a search among the row's column
//! names for every value of every row a claim returns; a read here costs
//! what a positional one did.
//!
//! Inserts are written by name too: [`insert_task!`] pairs each inserted
//! column with its value in one list, and each form names the value it
//! gives each column. The forms are `const` text built at compile time
//! (the many-row inserts of `tables::tasks` once per process), so the
//! statements sent are those written out by hand before.

use crate::Result;
use crate::driver::Value;
use crate::records::*;
use crate::sql::{Row, corrupt, json, target_with_callbacks};
use idem_core::clock::from_micros;
use idem_core::job::{HeaderStyle, RunKind};
use idem_core::queue::RetryConfig;

/// The columns a task is read from, handed to `$then!` after `[$args]`.
macro_rules! with_columns {
    ($then:ident $(, $arg:tt)*) => {
        $crate::task_row::$then! {
            [$($arg)*]
            queue task_id uid status target body_form body schedule_time next_attempt_at
            dispatch_deadline_s retry_config attempt_count cancel_requested created_at
            finished_at last_attempt dedup_expires_at job run_kind header_style tag
            attempt_id claimant lease_expires_at result group_key priority
        }
    };
}
pub(crate) use with_columns;

/// The columns, separated by commas, each qualified with `alias.` if given.
macro_rules! join_columns {
    ([] $first:ident $($col:ident)*) => {
        concat!(stringify!($first) $(, ", ", stringify!($col))*)
    };
    ([$alias:ident] $first:ident $($col:ident)*) => {
        concat!(
            stringify!($alias), ".", stringify!($first)
            $(, ", ", stringify!($alias), ".", stringify!($col))*
        )
    };
}
pub(crate) use join_columns;

/// The columns a task is read from, as text for `concat!`:
/// `task_columns!()`, or `task_columns!(t)` qualified with `t.` where a
/// bare name could be ambiguous. Read with [`read`].
macro_rules! task_columns {
    () => {
        $crate::task_row::with_columns!(join_columns)
    };
    ($alias:ident) => {
        $crate::task_row::with_columns!(join_columns, $alias)
    };
}
pub(crate) use task_columns;

macro_rules! column_indices {
    ([] $($col:ident)*) => {
        #[allow(non_camel_case_types, dead_code)]
        #[repr(usize)]
        enum Column {
            $($col),*
        }

        /// Each column's index in [`COLUMNS`].
        #[allow(non_upper_case_globals, dead_code)]
        pub(crate) mod col {
            $(pub(crate) const $col: usize = super::Column::$col as usize;)*
        }

        /// How many columns [`COLUMNS`] lists: the index of whatever a
        /// query selects after them.
        pub(crate) const COUNT: usize = [$(stringify!($col)),*].len();
    };
}
use column_indices;
with_columns!(column_indices);

/// The columns a task is read from ([`task_columns!`]).
pub(crate) const COLUMNS: &str = task_columns!();

/// Reads a task from a row that selected [`COLUMNS`] first.
pub(crate) fn read(r: &impl Row) -> Result<Task> {
    let status = r.text(col::status)?;
    let run = match r.opt_text(col::job)? {
        None => None,
        Some(job) => {
            let kind = r.text(col::run_kind)?;
            let style = r.text(col::header_style)?;
            Some(RunInfo {
                job,
                kind: RunKind::parse(&kind).ok_or_else(|| corrupt("run kind", &kind))?,
                header_style: HeaderStyle::parse(&style)
                    .ok_or_else(|| corrupt("header style", &style))?,
            })
        }
    };
    let (target, callbacks, stored_style) =
        target_with_callbacks(r, [col::target, col::body_form, col::body])?;
    let header_style = run.as_ref().map_or(stored_style, |r| r.header_style);
    let status = Status::parse(&status).ok_or_else(|| corrupt("task status", &status))?;
    // A lease is shown while it is held: a recovered or finished claim
    // leaves its columns behind until the next claim overwrites them, and
    // they tell the holder's repeated end from a stranger's.
    let (attempt_id, claimant) = (r.opt_text(col::attempt_id)?, r.opt_text(col::claimant)?);
    let (lease, ended_claim) = match (status, attempt_id, claimant) {
        (Status::Running, Some(attempt_id), Some(claimant)) => (
            r.opt_i64(col::lease_expires_at)?.map(|until| Lease {
                attempt_id,
                claimant,
                lease_expires_at: from_micros(until),
            }),
            None,
        ),
        (_, Some(attempt_id), Some(claimant)) => (
            None,
            Some(EndedClaim {
                attempt_id,
                claimant,
            }),
        ),
        _ => (None, None),
    };
    Ok(Task {
        queue: r.text(col::queue)?,
        task_id: r.text(col::task_id)?,
        uid: r.text(col::uid)?,
        status,
        target,
        callbacks,
        schedule_time: from_micros(r.i64(col::schedule_time)?),
        next_attempt_at: from_micros(r.i64(col::next_attempt_at)?),
        dispatch_deadline_s: r.i64(col::dispatch_deadline_s)? as u32,
        retry_config: json::<RetryConfig>("retry config", &r.text(col::retry_config)?)?,
        attempt_count: r.i64(col::attempt_count)? as u32,
        cancel_requested: r.i64(col::cancel_requested)? != 0,
        created_at: from_micros(r.i64(col::created_at)?),
        finished_at: r.opt_i64(col::finished_at)?.map(from_micros),
        last_attempt: r
            .opt_text(col::last_attempt)?
            .map(|t| json::<Attempt>("last attempt", &t))
            .transpose()?,
        dedup_expires_at: r.opt_i64(col::dedup_expires_at)?.map(from_micros),
        run,
        header_style,
        tag: r.opt_text(col::tag)?,
        lease,
        ended_claim,
        result: r.opt_text(col::result)?,
        group: Some(r.text(col::group_key)?).filter(|g| !g.is_empty()),
        priority: r.i64(col::priority)? as i32,
    })
}

/// An insert of one new task's row: `insert_task!(VALUES; …)` or
/// `insert_task!(SELECT; …)`, naming the value (SQL text) of each column a
/// caller gives. A new task is `pending`, due at its schedule time, never
/// attempted nor cancelled; that part is written here alone. The caller
/// appends what follows the values (`FROM`, `WHERE`, `ON CONFLICT`).
macro_rules! insert_task {
    ($verb:ident; org: $org:expr, queue: $queue:expr, task_id: $task_id:expr, uid: $uid:expr,
     target: $target:expr, body_form: $body_form:expr, body: $body:expr,
     schedule_time: $schedule_time:expr, dispatch_deadline_s: $deadline:expr,
     retry_config: $retry:expr, created_at: $created_at:expr, tag: $tag:expr,
     job: $job:expr, run_kind: $run_kind:expr, header_style: $style:expr,
     group_key: $group:expr, priority: $priority:expr $(,)?) => {
        $crate::task_row::insert_task!(@$verb
            org = $org,
            queue = $queue,
            task_id = $task_id,
            uid = $uid,
            status = "'pending'",
            target = $target,
            body_form = $body_form,
            body = $body,
            schedule_time = $schedule_time,
            next_attempt_at = $schedule_time,
            dispatch_deadline_s = $deadline,
            retry_config = $retry,
            attempt_count = "0",
            cancel_requested = "0",
            created_at = $created_at,
            tag = $tag,
            job = $job,
            run_kind = $run_kind,
            header_style = $style,
            group_key = $group,
            priority = $priority)
    };
    (@VALUES $c0:ident = $v0:expr $(, $c:ident = $v:expr)*) => {
        concat!(
            "INSERT INTO tasks (", stringify!($c0) $(, ", ", stringify!($c))*,
            ") VALUES (", $v0 $(, ", ", $v)*, ")"
        )
    };
    (@SELECT $c0:ident = $v0:expr $(, $c:ident = $v:expr)*) => {
        concat!(
            "INSERT INTO tasks (", stringify!($c0) $(, ", ", stringify!($c))*,
            ") SELECT ", $v0 $(, ", ", $v)*
        )
    };
}
pub(crate) use insert_task;

/// [`insert_task!`] of a create, its values the parameters $1–$14 in the
/// order of [`NewTask::args`]: `insert_new_task!(VALUES)` as they are,
/// `insert_new_task!(SELECT typed)` cast to their types (PostgreSQL infers
/// none in a select list), `insert_new_task!(SELECT v)` from the columns of
/// a relation `v` named as the fields of [`NewTask`], such as
/// [`unnest_new_tasks!`]'s.
macro_rules! insert_new_task {
    (VALUES) => {
        $crate::task_row::insert_task!(VALUES;
            org: "$1", queue: "$2", task_id: "$3", uid: "$4", target: "$5",
            body_form: "$6", body: "$7", schedule_time: "$8", dispatch_deadline_s: "$9",
            retry_config: "$10", created_at: "$11", tag: "$12",
            job: "NULL", run_kind: "NULL", header_style: "NULL",
            group_key: "$13", priority: "$14")
    };
    (SELECT typed) => {
        $crate::task_row::insert_task!(SELECT;
            org: "$1::text", queue: "$2::text", task_id: "$3::text", uid: "$4::text",
            target: "$5::text", body_form: "$6::text", body: "$7::bytea",
            schedule_time: "$8::bigint", dispatch_deadline_s: "$9::bigint",
            retry_config: "$10::text", created_at: "$11::bigint", tag: "$12::text",
            job: "NULL", run_kind: "NULL", header_style: "NULL",
            group_key: "$13::text", priority: "$14::smallint")
    };
    (SELECT v) => {
        $crate::task_row::insert_task!(SELECT;
            org: "v.org", queue: "v.queue", task_id: "v.task_id", uid: "v.uid",
            target: "v.target", body_form: "v.body_form", body: "v.body",
            schedule_time: "v.schedule_time", dispatch_deadline_s: "v.dispatch_deadline_s",
            retry_config: "v.retry_config", created_at: "v.created_at", tag: "v.tag",
            job: "NULL", run_kind: "NULL", header_style: "NULL",
            group_key: "v.group_key", priority: "v.priority")
    };
}
pub(crate) use insert_new_task;

/// Many creates as a relation `v`, one row per element of the array
/// parameters $1–$14 ([`NewTaskArrays`]), numbered `ord` in array order:
/// `unnest_new_tasks!()`, or with more arrays after them,
/// `unnest_new_tasks!(", $13::text[]", ", more")` naming their columns.
macro_rules! unnest_new_tasks {
    () => {
        $crate::task_row::unnest_new_tasks!("", "")
    };
    ($arrays:expr, $names:expr) => {
        concat!(
            "unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::bytea[], $8::bigint[], $9::bigint[], $10::text[], $11::bigint[], $12::text[], \
             $13::text[], $14::smallint[]",
            $arrays,
            ") WITH ORDINALITY AS v(org, queue, task_id, uid, target, body_form, body, \
             schedule_time, dispatch_deadline_s, retry_config, created_at, tag, group_key, \
             priority",
            $names,
            ", ord)"
        )
    };
}
pub(crate) use unnest_new_tasks;

/// A priority as stored: validated to −100…100 by the API, so within two
/// bytes; anything past them is held at the bound.
pub(crate) fn priority(p: i32) -> i16 {
    p.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

/// How many parameters a create's row takes.
pub(crate) const NEW_TASK_PARAMS: usize = 14;

/// A create's column values, as resolved against its queue.
#[derive(Clone, Copy)]
pub(crate) struct NewTask<'a> {
    pub org: &'a str,
    pub queue: &'a str,
    pub task_id: &'a str,
    pub uid: &'a str,
    pub target: &'a str,
    pub body_form: Option<&'a str>,
    pub body: Option<&'a [u8]>,
    pub schedule_time: i64,
    pub dispatch_deadline_s: i64,
    pub retry_config: &'a str,
    pub created_at: i64,
    /// A pull task's tag.
    pub tag: Option<&'a str>,
    /// Its group, `''` for none.
    pub group_key: &'a str,
    pub priority: i16,
}

impl<'a> NewTask<'a> {
    /// What the task's row holds in stored bytes, as the counters and the
    /// byte quota count them: its target and payload.
    pub(crate) fn bytes(&self) -> u64 {
        stored_bytes(self.target, self.body)
    }

    /// The parameters of [`insert_new_task!`], in their order.
    pub(crate) fn args(&self) -> [Value<'a>; NEW_TASK_PARAMS] {
        [
            Value::Text(self.org),
            Value::Text(self.queue),
            Value::Text(self.task_id),
            Value::Text(self.uid),
            Value::Text(self.target),
            Value::OptText(self.body_form),
            Value::Blob(self.body),
            Value::Int(self.schedule_time),
            Value::Int(self.dispatch_deadline_s),
            Value::Text(self.retry_config),
            Value::Int(self.created_at),
            Value::OptText(self.tag),
            Value::Text(self.group_key),
            Value::Small(self.priority),
        ]
    }
}

/// A task's stored bytes, from its target and payload columns: what
/// `task_counts` sums (`octet_length` of each in SQL).
pub(crate) fn stored_bytes(target: &str, body: Option<&[u8]>) -> u64 {
    (target.len() + body.map_or(0, <[u8]>::len)) as u64
}

/// The stored bytes of the task a row of [`COLUMNS`] holds, as
/// [`stored_bytes`] measures them.
pub(crate) fn read_bytes(r: &impl Row) -> Result<u64> {
    Ok(stored_bytes(
        &r.text(col::target)?,
        r.opt_blob(col::body)?.as_deref(),
    ))
}

/// The array parameters of [`unnest_new_tasks!`]: each parameter of
/// [`NewTask::args`] for every row, one array per parameter.
pub(crate) struct NewTaskArrays<'a>([Vec<Value<'a>>; NEW_TASK_PARAMS]);

impl<'a> NewTaskArrays<'a> {
    pub(crate) fn of(rows: impl ExactSizeIterator<Item = NewTask<'a>>) -> NewTaskArrays<'a> {
        let n = rows.len();
        let mut arrays: [Vec<Value<'a>>; NEW_TASK_PARAMS] =
            std::array::from_fn(|_| Vec::with_capacity(n));
        for row in rows {
            for (array, value) in arrays.iter_mut().zip(row.args()) {
                array.push(value);
            }
        }
        NewTaskArrays(arrays)
    }

    /// The arrays as PostgreSQL parameters $1–$14.
    pub(crate) fn params(
        &self,
    ) -> impl Iterator<Item = &(dyn tokio_postgres::types::ToSql + Sync)> {
        self.0
            .iter()
            .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_indices_follow_the_columns() {
        let names: Vec<&str> = COLUMNS.split(", ").collect();
        assert_eq!(names.len(), COUNT);
        assert_eq!(names[col::queue], "queue");
        assert_eq!(names[col::target], "target");
        assert_eq!(names[col::lease_expires_at], "lease_expires_at");
        assert_eq!(names[col::result], "result");
        assert_eq!(
            task_columns!(t).split(", ").collect::<Vec<_>>(),
            names.iter().map(|n| format!("t.{n}")).collect::<Vec<_>>()
        );
    }

    #[test]
    fn each_form_gives_every_column_a_value() {
        for sql in [
            insert_new_task!(VALUES),
            insert_new_task!(SELECT typed),
            insert_new_task!(SELECT v),
        ] {
            let (columns, values) = sql
                .strip_prefix("INSERT INTO tasks (")
                .and_then(|s| s.split_once(") "))
                .unwrap();
            let values = values
                .trim_start_matches("VALUES (")
                .trim_start_matches("SELECT ")
                .trim_end_matches(')');
            assert_eq!(
                columns.split(", ").count(),
                values.split(", ").count(),
                "{sql}"
            );
        }
        assert_eq!(
            insert_new_task!(VALUES),
            "INSERT INTO tasks (org, queue, task_id, uid, status, target, body_form, body, \
             schedule_time, next_attempt_at, dispatch_deadline_s, retry_config, attempt_count, \
             cancel_requested, created_at, tag, job, run_kind, header_style, group_key, priority) \
             VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $8, $9, $10, 0, 0, $11, $12, NULL, \
             NULL, NULL, $13, $14)"
        );
    }
}
