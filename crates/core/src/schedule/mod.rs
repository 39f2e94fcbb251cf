//! Cron schedules: parsing, time zones and the instants a job fires at
//! (API.md §5).
//!
//! # Expressions
//!
//! [`Schedule::parse`] accepts standard unix cron with 5 fields
//! (`minute hour day-of-month month day-of-week`) or 6 with a seconds field
//! first, and the nicknames `@yearly`, `@annually`, `@monthly`, `@weekly`,
//! `@daily`, `@midnight` and `@hourly` (each on its own). A field is a
//! comma-separated list of `*`, `N`, `N-M`, each optionally followed by
//! `/step`. Months may be written `JAN`–`DEC` and days of the week
//! `SUN`–`SAT` (both case-insensitive, also in ranges); day of the week 0
//! and 7 are both Sunday.
//!
//! Decisions where cron dialects differ:
//!
//! - `N/step` (Quartz, cronie) is accepted and means `N-<last>/step`: `5/15`
//!   in the minute field is `5,20,35,50`, the same as `5-59/15`. In the
//!   day-of-week field the last value is 6 (Saturday). `/step` without a
//!   start is rejected.
//! - Day of month and day of week combine as in Vixie cron: if either field
//!   starts with `*` a day must match both; if both are restricted a day
//!   matching either one fires (`0 0 13 * FRI` fires on every 13th and every
//!   Friday, `0 0 */2 * MON` only on odd-numbered days that are Mondays).
//! - Quartz extensions (`L`, `W`, `#`, `?`), a year field and `@reboot` are
//!   rejected, as is an expression that can never fire (`0 0 30 2 *`).
//!
//! # Time zones and daylight saving time
//!
//! The expression is matched against the wall clock of the schedule's IANA
//! time zone. A schedule fires at the instants its matching wall-clock
//! times denote, where:
//!
//! - a wall-clock time that does not exist (the clock jumps forward) denotes
//!   the first instant after the gap, i.e. the moment of the jump. Every
//!   skipped time therefore fires once, there, together with anything
//!   scheduled exactly at the end of the gap: `*/15 2 * * *` in
//!   Europe/Berlin on 2026-03-29 fires once, at 03:00 CEST (01:00Z);
//! - a wall-clock time that happens twice (the clock goes back) denotes only
//!   its first occurrence. During the repeated stretch the schedule does not
//!   fire at all: `*/15 * * * *` in Europe/Berlin on 2026-10-25 fires at
//!   02:00, 02:15, 02:30 and 02:45 CEST and next at 03:00 CET, an hour and a
//!   quarter later.
//!
//! Croner's own time-zone search differs (it drops gap times of interval
//! schedules and fires them in both occurrences of a repeated hour), so
//! croner is used only on wall-clock times and the mapping to instants is
//! done here.

mod catch_up;
mod expr;
mod run_id;

#[cfg(test)]
mod tests;

pub use catch_up::{CatchUp, MAX_CATCH_UP, ON_TIME_TOLERANCE, due_instants, missed_runs_to_drop};
pub use run_id::{format_schedule_time, run_id};

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};

/// The most instants [`Schedule::preview`] is meant to be asked for; the
/// API rejects larger counts.
pub const MAX_PREVIEW: usize = 1000;

/// Why a schedule could not be built. Each variant names the request field
/// at fault, so the API can answer 400 pointing at it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The cron expression (the `schedule` field) is invalid.
    #[error("invalid schedule: {0}")]
    Schedule(String),
    /// The time zone (the `time_zone` field) is unknown or malformed.
    #[error("invalid time zone: {0}")]
    TimeZone(String),
}

impl ScheduleError {
    /// The request field at fault: `"schedule"` or `"time_zone"`.
    pub fn field(&self) -> &'static str {
        match self {
            ScheduleError::Schedule(_) => "schedule",
            ScheduleError::TimeZone(_) => "time_zone",
        }
    }

    /// The reason, without the field's name.
    pub fn message(&self) -> &str {
        match self {
            ScheduleError::Schedule(m) | ScheduleError::TimeZone(m) => m,
        }
    }
}

/// A parsed cron expression bound to a time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    expression: String,
    time_zone_name: String,
    time_zone: TimeZone,
    cron: Cron,
}

impl Schedule {
    /// Parses a cron expression (see the [module documentation](self)) to be
    /// evaluated in the IANA time zone `time_zone`.
    ///
    /// The expression is checked first, so when both are invalid the error
    /// is [`ScheduleError::Schedule`]. Defaulting an absent zone to `"UTC"`
    /// is the caller's job; an empty string is rejected.
    pub fn parse(expr: &str, time_zone: &str) -> Result<Schedule, ScheduleError> {
        let cron = parse_expression(expr)?;
        let tz = parse_time_zone(time_zone)?;
        Ok(Schedule {
            expression: expr.trim().to_owned(),
            time_zone_name: tz.iana_name().unwrap_or(time_zone).to_owned(),
            time_zone: tz,
            cron,
        })
    }

    /// The expression as given, without surrounding whitespace.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The zone's IANA name, as spelled by the time zone database (a name
    /// given in another letter case comes back in the database's).
    pub fn time_zone_name(&self) -> &str {
        &self.time_zone_name
    }

    /// The zone the expression is evaluated in.
    pub fn time_zone(&self) -> &TimeZone {
        &self.time_zone
    }

    /// The first instant strictly after `after` at which the schedule fires,
    /// following the daylight-saving rules of the
    /// [module documentation](self). Instants are whole seconds.
    ///
    /// `None` only past the end of the supported calendar (year 5000).
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        let from = self.first_wall_after(after)?;
        let wall = self.cron.find_next_occurrence(&from, true).ok()?;
        self.resolve(wall)
    }

    /// The last instant at or before `at` at which the schedule fires: the
    /// mirror of [`Schedule::next_after`], used to look back over missed
    /// instants without walking forward through all of them.
    pub fn last_at_or_before(&self, at: Timestamp) -> Option<Timestamp> {
        let bound = self.first_wall_after(at)?;
        let wall = self.cron.find_previous_occurrence(&bound, false).ok()?;
        self.resolve(wall)
    }

    /// The next `count` instants after `after`, each found by
    /// [`Schedule::next_after`] from the one before, exactly as the scheduler
    /// advances. The caller bounds `count` (see [`MAX_PREVIEW`]); fewer come
    /// back only at the end of the supported calendar.
    pub fn preview(&self, after: Timestamp, count: usize) -> Vec<Timestamp> {
        let mut times = Vec::with_capacity(count.min(MAX_PREVIEW));
        let mut cursor = after;
        while times.len() < count {
            match self.next_after(cursor) {
                Some(next) => {
                    times.push(next);
                    cursor = next;
                }
                None => break,
            }
        }
        times
    }

    /// The instant a wall-clock time denotes under the API.md's rules: the
    /// first occurrence of a repeated time, the end of the gap for a skipped
    /// one.
    ///
    /// This map never decreases as the wall clock advances, which is what
    /// lets a search over wall-clock times answer questions about instants.
    fn resolve(&self, wall: DateTime) -> Option<Timestamp> {
        match self.time_zone.to_ambiguous_timestamp(wall).offset() {
            AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(wall).ok(),
            AmbiguousOffset::Fold { before, .. } => before.to_timestamp(wall).ok(),
            AmbiguousOffset::Gap { after, .. } => {
                // Read with the later offset, a time inside the gap lands
                // before the jump, so the next transition is the jump itself.
                let before_jump = after.to_timestamp(wall).ok()?;
                self.time_zone
                    .following(before_jump)
                    .next()
                    .map(|transition| transition.timestamp())
            }
        }
    }

    /// The earliest wall-clock time whose instant (by [`Schedule::resolve`])
    /// is strictly after `t`. Because `resolve` never decreases, the wall
    /// times at or past it are exactly those firing after `t`.
    fn first_wall_after(&self, t: Timestamp) -> Option<DateTime> {
        let offset = self.time_zone.to_offset(t);
        let wall = offset
            .to_datetime(t)
            .with()
            .subsec_nanosecond(0)
            .build()
            .ok()?;
        match self.time_zone.to_ambiguous_timestamp(wall).offset() {
            // `t` is in the second pass over a repeated stretch. Every time
            // of that stretch denotes its first pass, already behind `t`, so
            // the answer is where the stretch ends.
            AmbiguousOffset::Fold { before, after } if offset == after => {
                let first_pass = before.to_timestamp(wall).ok()?;
                let fall_back = self.time_zone.following(first_pass).next()?.timestamp();
                Some(before.to_datetime(fall_back))
            }
            _ => wall.checked_add(SignedDuration::from_secs(1)).ok(),
        }
    }
}

fn parse_expression(expr: &str) -> Result<Cron, ScheduleError> {
    let normalized = expr::normalize(expr).map_err(ScheduleError::Schedule)?;
    let cron = CronParser::builder()
        .seconds(Seconds::Required)
        .year(Year::Disallowed)
        .dom_and_dow(normalized.dom_and_dow)
        .build()
        .parse(&normalized.pattern)
        .map_err(|e| ScheduleError::Schedule(e.to_string()))?;
    // Calendars repeat every 400 years, so a pattern with no match before
    // croner's search limit has none at all: only a day of the month that
    // none of its months has (`0 0 30 2 *`, `0 0 31 4,6,9,11 *`) does that.
    let probe = DateTime::constant(2000, 1, 1, 0, 0, 0, 0);
    if cron.find_next_occurrence(&probe, true).is_err() {
        return Err(ScheduleError::Schedule(
            "the schedule never fires: none of its months has the day of the month it names"
                .to_owned(),
        ));
    }
    Ok(cron)
}

/// A pattern of schedules that all parse and fire, for the OpenAPI
/// document: a nickname, or 5 or 6 fields each `*`, `*/step` or a list of
/// values (days of the month up to 28, so that every month has them). The
/// parser takes more (ranges, names, any day); what the pattern allows,
/// it takes.
pub fn schedule_pattern() -> String {
    let field = |value: &str, step: &str| format!("(?:\\*(?:/{step})?|{value}(?:,{value})*)");
    let seconds = field("[0-5]?[0-9]", "(?:[1-9]|[1-5][0-9])");
    let fields = [
        field("[0-5]?[0-9]", "(?:[1-9]|[1-5][0-9])"),
        field("(?:[01]?[0-9]|2[0-3])", "(?:[1-9]|1[0-9]|2[0-3])"),
        field("(?:0?[1-9]|1[0-9]|2[0-8])", "(?:[1-9]|[12][0-9]|3[01])"),
        field("(?:0?[1-9]|1[0-2])", "(?:[1-9]|1[0-2])"),
        field("[0-7]", "[1-7]"),
    ];
    let nicknames = expr::NICKNAMES
        .iter()
        .map(|(name, _)| &name[1..])
        .collect::<Vec<_>>()
        .join("|");
    format!("^(?:@(?:{nicknames})|(?:{seconds} )?{})$", fields.join(" "))
}

/// Every name [`parse_time_zone`] takes, sorted: the time zone database's,
/// as this machine has it.
pub fn time_zone_names() -> Vec<String> {
    let mut names: Vec<String> = jiff::tz::db()
        .available()
        .map(|name| name.as_str().to_owned())
        .filter(|name| parse_time_zone(name).is_ok())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Looks up an IANA time zone name (`Europe/Berlin`, `UTC`) in the time
/// zone database, case-insensitively.
pub fn parse_time_zone(name: &str) -> Result<TimeZone, ScheduleError> {
    if name.is_empty() {
        return Err(ScheduleError::TimeZone("the time zone is empty".to_owned()));
    }
    // The database is read from the file system; only characters that occur
    // in IANA names reach it, so no name can reach outside it.
    let plausible = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'+'))
        && !name.starts_with('/')
        && !name.split('/').any(str::is_empty);
    let unknown = || {
        ScheduleError::TimeZone(format!(
            "`{name}` is not an IANA time zone name such as `Europe/Berlin` or `UTC`"
        ))
    };
    if !plausible {
        return Err(unknown());
    }
    TimeZone::get(name).map_err(|_| unknown())
}
