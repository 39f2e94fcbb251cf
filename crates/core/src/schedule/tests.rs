//! Schedules evaluated at explicit instants: calendars, daylight saving time
//! in zones with one-hour and half-hour shifts, catch-up and parsing.

use super::*;
use jiff::tz::Offset;
use proptest::prelude::*;

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn schedule(expr: &str, tz: &str) -> Schedule {
    Schedule::parse(expr, tz).unwrap_or_else(|e| panic!("{expr} in {tz}: {e}"))
}

/// The next `n` instants after `after`, rendered for comparison.
fn next(expr: &str, tz: &str, after: &str, n: usize) -> Vec<String> {
    schedule(expr, tz)
        .preview(ts(after), n)
        .into_iter()
        .map(|t| t.to_string())
        .collect()
}

/// Confirms the transition the DST tests below are built around, so a change
/// in the time zone database fails loudly here rather than as a puzzling
/// schedule mismatch.
fn assert_transition(tz: &str, at: &str, before: &str, after: &str) {
    let zone = TimeZone::get(tz).unwrap();
    let t = ts(at);
    let found = zone
        .following(t.checked_sub(SignedDuration::from_secs(1)).unwrap())
        .next()
        .unwrap();
    assert_eq!(found.timestamp(), t, "{tz} transition");
    let before_offset = zone.to_offset(t.checked_sub(SignedDuration::from_secs(1)).unwrap());
    assert_eq!(before_offset.to_string(), before, "{tz} offset before");
    assert_eq!(zone.to_offset(t).to_string(), after, "{tz} offset after");
}

// ----- Calendar -----

#[test]
fn every_five_minutes_in_utc() {
    assert_eq!(
        next("*/5 * * * *", "UTC", "2026-06-01T12:03:10Z", 3),
        [
            "2026-06-01T12:05:00Z",
            "2026-06-01T12:10:00Z",
            "2026-06-01T12:15:00Z"
        ]
    );
}

#[test]
fn next_after_is_strictly_after() {
    let s = schedule("@hourly", "UTC");
    assert_eq!(
        s.next_after(ts("2026-06-01T12:00:00Z")),
        Some(ts("2026-06-01T13:00:00Z"))
    );
    assert_eq!(
        s.next_after(ts("2026-06-01T11:59:59.999999999Z")),
        Some(ts("2026-06-01T12:00:00Z"))
    );
    assert_eq!(
        s.next_after(ts("2026-06-01T12:00:00.000000001Z")),
        Some(ts("2026-06-01T13:00:00Z"))
    );
}

#[test]
fn last_at_or_before_includes_the_instant_itself() {
    let s = schedule("@hourly", "UTC");
    assert_eq!(
        s.last_at_or_before(ts("2026-06-01T12:00:00Z")),
        Some(ts("2026-06-01T12:00:00Z"))
    );
    assert_eq!(
        s.last_at_or_before(ts("2026-06-01T11:59:59.999Z")),
        Some(ts("2026-06-01T11:00:00Z"))
    );
}

#[test]
fn day_31_skips_short_months() {
    assert_eq!(
        next("0 0 31 * *", "UTC", "2026-01-31T00:00:00Z", 7),
        [
            "2026-03-31T00:00:00Z",
            "2026-05-31T00:00:00Z",
            "2026-07-31T00:00:00Z",
            "2026-08-31T00:00:00Z",
            "2026-10-31T00:00:00Z",
            "2026-12-31T00:00:00Z",
            "2027-01-31T00:00:00Z"
        ]
    );
}

#[test]
fn leap_day_waits_for_a_leap_year() {
    assert_eq!(
        next("0 0 29 2 *", "UTC", "2025-01-01T00:00:00Z", 2),
        ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"]
    );
    assert_eq!(
        next("0 0 29 2 *", "UTC", "2024-02-29T00:00:00Z", 1),
        ["2028-02-29T00:00:00Z"]
    );
}

#[test]
fn yearly_and_annually() {
    for expr in ["@yearly", "@annually", "0 0 1 1 *"] {
        assert_eq!(
            next(expr, "UTC", "2026-06-01T00:00:00Z", 2),
            ["2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"],
            "{expr}"
        );
    }
    // Local midnight on New Year's Day, an hour before UTC's.
    assert_eq!(
        next("@yearly", "Europe/Berlin", "2026-06-01T00:00:00Z", 1),
        ["2026-12-31T23:00:00Z"]
    );
}

#[test]
fn monthly_weekly_daily_hourly() {
    assert_eq!(
        next("@monthly", "UTC", "2026-01-31T12:00:00Z", 2),
        ["2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"]
    );
    // 2026-06-01 is a Monday; @weekly is Sunday midnight.
    assert_eq!(
        next("@weekly", "UTC", "2026-06-01T00:00:00Z", 2),
        ["2026-06-07T00:00:00Z", "2026-06-14T00:00:00Z"]
    );
    for expr in ["@daily", "@midnight"] {
        assert_eq!(
            next(expr, "America/New_York", "2026-06-01T12:00:00Z", 2),
            ["2026-06-02T04:00:00Z", "2026-06-03T04:00:00Z"],
            "{expr}"
        );
    }
    assert_eq!(
        next("@hourly", "UTC", "2026-06-01T23:30:00Z", 2),
        ["2026-06-02T00:00:00Z", "2026-06-02T01:00:00Z"]
    );
}

#[test]
fn month_and_day_names() {
    // 2026-03-27 is a Friday; the next weekday in January to March after
    // March is New Year's Day 2027, a Friday.
    assert_eq!(
        next("0 9 * JAN-MAR MON-FRI", "UTC", "2026-03-27T10:00:00Z", 4),
        [
            "2026-03-30T09:00:00Z",
            "2026-03-31T09:00:00Z",
            "2027-01-01T09:00:00Z",
            "2027-01-04T09:00:00Z"
        ]
    );
    assert_eq!(
        next("0 9 * jan-mar mon-fri", "UTC", "2026-03-27T10:00:00Z", 4),
        next("0 9 * 1-3 1-5", "UTC", "2026-03-27T10:00:00Z", 4)
    );
}

#[test]
fn sunday_is_0_7_and_closes_ranges() {
    let sundays = ["2026-06-07T12:00:00Z", "2026-06-14T12:00:00Z"];
    for expr in [
        "0 12 * * 0",
        "0 12 * * 7",
        "0 12 * * SUN",
        "0 12 * * SUN-SUN",
    ] {
        assert_eq!(
            next(expr, "UTC", "2026-06-01T00:00:00Z", 2),
            sundays,
            "{expr}"
        );
    }
    assert_eq!(
        next("0 12 * * FRI-SUN", "UTC", "2026-06-01T00:00:00Z", 4),
        [
            "2026-06-05T12:00:00Z",
            "2026-06-06T12:00:00Z",
            "2026-06-07T12:00:00Z",
            "2026-06-12T12:00:00Z"
        ]
    );
}

#[test]
fn steps_and_lists() {
    let expected = [
        "2026-06-01T12:05:00Z",
        "2026-06-01T12:25:00Z",
        "2026-06-01T12:45:00Z",
        "2026-06-01T13:05:00Z",
    ];
    assert_eq!(
        next("5-59/20 * * * *", "UTC", "2026-06-01T12:00:00Z", 4),
        expected
    );
    assert_eq!(
        next("5/20 * * * *", "UTC", "2026-06-01T12:00:00Z", 4),
        expected
    );
    assert_eq!(
        next("0,30 8,17 * * *", "UTC", "2026-06-01T08:10:00Z", 4),
        [
            "2026-06-01T08:30:00Z",
            "2026-06-01T17:00:00Z",
            "2026-06-01T17:30:00Z",
            "2026-06-02T08:00:00Z"
        ]
    );
    assert_eq!(
        next("0 0 1 */4 *", "UTC", "2026-02-01T00:00:00Z", 3),
        [
            "2026-05-01T00:00:00Z",
            "2026-09-01T00:00:00Z",
            "2027-01-01T00:00:00Z"
        ]
    );
    assert_eq!(
        next("10-20/5,45 9 * * *", "UTC", "2026-06-01T00:00:00Z", 5),
        [
            "2026-06-01T09:10:00Z",
            "2026-06-01T09:15:00Z",
            "2026-06-01T09:20:00Z",
            "2026-06-01T09:45:00Z",
            "2026-06-02T09:10:00Z"
        ]
    );
}

#[test]
fn restricted_day_fields_are_ored() {
    // Every Friday and every 13th: 2026-04-13 is a Monday.
    assert_eq!(
        next("0 0 13 * FRI", "UTC", "2026-03-28T00:00:00Z", 5),
        [
            "2026-04-03T00:00:00Z",
            "2026-04-10T00:00:00Z",
            "2026-04-13T00:00:00Z",
            "2026-04-17T00:00:00Z",
            "2026-04-24T00:00:00Z"
        ]
    );
}

#[test]
fn a_day_field_starting_with_star_is_anded() {
    // Odd-numbered days that are Mondays: 03-30, 04-06, 04-20 and 05-04 are
    // even-numbered Mondays.
    assert_eq!(
        next("0 0 */2 * MON", "UTC", "2026-03-28T00:00:00Z", 3),
        [
            "2026-04-13T00:00:00Z",
            "2026-04-27T00:00:00Z",
            "2026-05-11T00:00:00Z"
        ]
    );
}

#[test]
fn seconds_schedules() {
    assert_eq!(
        next("* * * * * *", "UTC", "2026-06-01T12:00:00Z", 3),
        [
            "2026-06-01T12:00:01Z",
            "2026-06-01T12:00:02Z",
            "2026-06-01T12:00:03Z"
        ]
    );
    assert_eq!(
        next("* * * * * *", "UTC", "2026-06-01T12:00:00.5Z", 1),
        ["2026-06-01T12:00:01Z"]
    );
    assert_eq!(
        next("*/20 * * * * *", "UTC", "2026-06-01T12:00:50Z", 2),
        ["2026-06-01T12:01:00Z", "2026-06-01T12:01:20Z"]
    );
    assert_eq!(
        next("30 0 0 * * *", "UTC", "2026-06-01T00:00:30Z", 1),
        ["2026-06-02T00:00:30Z"]
    );
}

// ----- Europe/Berlin: 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z) -----

#[test]
fn berlin_spring_transition_is_where_the_tests_expect() {
    assert_transition("Europe/Berlin", "2026-03-29T01:00:00Z", "+01", "+02");
}

#[test]
fn berlin_spring_fixed_time_in_the_gap_fires_at_the_end_of_the_gap() {
    assert_eq!(
        next("30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 3),
        [
            "2026-03-28T01:30:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-30T00:30:00Z"
        ]
    );
    assert_eq!(
        next("0 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 2),
        ["2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"]
    );
}

#[test]
fn berlin_spring_interval_in_the_gap_fires_once() {
    assert_eq!(
        next("*/15 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 6),
        [
            "2026-03-28T01:00:00Z",
            "2026-03-28T01:15:00Z",
            "2026-03-28T01:30:00Z",
            "2026-03-28T01:45:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-30T00:00:00Z"
        ]
    );
}

#[test]
fn berlin_spring_gap_and_gap_end_share_one_instant() {
    // 02:00 does not exist and 03:00 is where the gap ends: one run.
    assert_eq!(
        next("0 2,3 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 3),
        [
            "2026-03-29T01:00:00Z",
            "2026-03-30T00:00:00Z",
            "2026-03-30T01:00:00Z"
        ]
    );
}

#[test]
fn berlin_spring_every_quarter_hour_and_every_second() {
    assert_eq!(
        next("*/15 * * * *", "Europe/Berlin", "2026-03-29T00:20:00Z", 4),
        [
            "2026-03-29T00:30:00Z",
            "2026-03-29T00:45:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-29T01:15:00Z"
        ]
    );
    assert_eq!(
        next("0 * * * *", "Europe/Berlin", "2026-03-28T23:30:00Z", 3),
        [
            "2026-03-29T00:00:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-29T02:00:00Z"
        ]
    );
    assert_eq!(
        next("* * * * * *", "Europe/Berlin", "2026-03-29T00:59:57Z", 4),
        [
            "2026-03-29T00:59:58Z",
            "2026-03-29T00:59:59Z",
            "2026-03-29T01:00:00Z",
            "2026-03-29T01:00:01Z"
        ]
    );
}

// ----- Europe/Berlin: 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z) -----

#[test]
fn berlin_autumn_transition_is_where_the_tests_expect() {
    assert_transition("Europe/Berlin", "2026-10-25T01:00:00Z", "+02", "+01");
}

#[test]
fn berlin_autumn_repeated_time_fires_on_its_first_occurrence() {
    assert_eq!(
        next("30 2 * * *", "Europe/Berlin", "2026-10-24T00:00:00Z", 3),
        [
            "2026-10-24T00:30:00Z",
            "2026-10-25T00:30:00Z",
            "2026-10-26T01:30:00Z"
        ]
    );
}

#[test]
fn berlin_autumn_every_quarter_hour_skips_the_repeated_hour() {
    assert_eq!(
        next("*/15 * * * *", "Europe/Berlin", "2026-10-25T00:20:00Z", 5),
        [
            "2026-10-25T00:30:00Z",
            "2026-10-25T00:45:00Z",
            "2026-10-25T02:00:00Z",
            "2026-10-25T02:15:00Z",
            "2026-10-25T02:30:00Z"
        ]
    );
}

#[test]
fn berlin_autumn_searches_from_inside_the_repeated_hour() {
    let s = schedule("*/15 * * * *", "Europe/Berlin");
    // 02:10 CET, the second 02:10 of the night.
    assert_eq!(
        s.next_after(ts("2026-10-25T01:10:00Z")),
        Some(ts("2026-10-25T02:00:00Z"))
    );
    // 02:10 CEST, the first.
    assert_eq!(
        s.next_after(ts("2026-10-25T00:10:00Z")),
        Some(ts("2026-10-25T00:15:00Z"))
    );
    assert_eq!(
        s.last_at_or_before(ts("2026-10-25T01:59:59Z")),
        Some(ts("2026-10-25T00:45:00Z"))
    );
    assert_eq!(
        s.last_at_or_before(ts("2026-10-25T02:00:00Z")),
        Some(ts("2026-10-25T02:00:00Z"))
    );
}

#[test]
fn berlin_autumn_hourly_and_every_second() {
    assert_eq!(
        next("0 * * * *", "Europe/Berlin", "2026-10-24T22:30:00Z", 4),
        [
            "2026-10-24T23:00:00Z",
            "2026-10-25T00:00:00Z",
            "2026-10-25T02:00:00Z",
            "2026-10-25T03:00:00Z"
        ]
    );
    assert_eq!(
        next("* * * * * *", "Europe/Berlin", "2026-10-25T00:59:58Z", 3),
        [
            "2026-10-25T00:59:59Z",
            "2026-10-25T02:00:00Z",
            "2026-10-25T02:00:01Z"
        ]
    );
    assert_eq!(
        next("* * * * * *", "Europe/Berlin", "2026-10-25T01:30:00Z", 1),
        ["2026-10-25T02:00:00Z"]
    );
}

// ----- America/New_York: 2026-03-08 and 2026-11-01 -----

#[test]
fn new_york_transitions_are_where_the_tests_expect() {
    assert_transition("America/New_York", "2026-03-08T07:00:00Z", "-05", "-04");
    assert_transition("America/New_York", "2026-11-01T06:00:00Z", "-04", "-05");
}

#[test]
fn new_york_spring() {
    assert_eq!(
        next("30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", 3),
        [
            "2026-03-07T07:30:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:30:00Z"
        ]
    );
    assert_eq!(
        next(
            "*/20 2 * * *",
            "America/New_York",
            "2026-03-08T06:00:00Z",
            2
        ),
        ["2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"]
    );
}

#[test]
fn new_york_autumn() {
    assert_eq!(
        next("30 1 * * *", "America/New_York", "2026-10-31T00:00:00Z", 3),
        [
            "2026-10-31T05:30:00Z",
            "2026-11-01T05:30:00Z",
            "2026-11-02T06:30:00Z"
        ]
    );
    assert_eq!(
        next("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 3),
        [
            "2026-11-01T05:00:00Z",
            "2026-11-01T07:00:00Z",
            "2026-11-01T08:00:00Z"
        ]
    );
}

// ----- Australia/Lord_Howe: half-hour shifts -----

#[test]
fn lord_howe_transitions_are_where_the_tests_expect() {
    // 2026-04-05 02:00 +11 -> 01:30 +1030; 2026-10-04 02:00 +1030 -> 02:30 +11.
    assert_transition(
        "Australia/Lord_Howe",
        "2026-04-04T15:00:00Z",
        "+11",
        "+10:30",
    );
    assert_transition(
        "Australia/Lord_Howe",
        "2026-10-03T15:30:00Z",
        "+10:30",
        "+11",
    );
}

#[test]
fn lord_howe_autumn_half_hour_overlap() {
    assert_eq!(
        next(
            "45 1 * * *",
            "Australia/Lord_Howe",
            "2026-04-03T00:00:00Z",
            3
        ),
        [
            "2026-04-03T14:45:00Z",
            "2026-04-04T14:45:00Z",
            "2026-04-05T15:15:00Z"
        ]
    );
    assert_eq!(
        next(
            "*/15 * * * *",
            "Australia/Lord_Howe",
            "2026-04-04T14:20:00Z",
            4
        ),
        [
            "2026-04-04T14:30:00Z",
            "2026-04-04T14:45:00Z",
            "2026-04-04T15:30:00Z",
            "2026-04-04T15:45:00Z"
        ]
    );
}

#[test]
fn lord_howe_spring_half_hour_gap() {
    assert_eq!(
        next(
            "15 2 * * *",
            "Australia/Lord_Howe",
            "2026-10-02T00:00:00Z",
            3
        ),
        [
            "2026-10-02T15:45:00Z",
            "2026-10-03T15:30:00Z",
            "2026-10-04T15:15:00Z"
        ]
    );
    assert_eq!(
        next(
            "*/15 * * * *",
            "Australia/Lord_Howe",
            "2026-10-03T15:00:00Z",
            3
        ),
        [
            "2026-10-03T15:15:00Z",
            "2026-10-03T15:30:00Z",
            "2026-10-03T15:45:00Z"
        ]
    );
}

// ----- A transition at midnight moves the date -----

#[test]
fn sao_paulo_2018_midnight_gap_and_overlap() {
    // 2018-11-04 00:00 -03 -> 01:00 -02: that midnight never happened.
    assert_transition("America/Sao_Paulo", "2018-11-04T03:00:00Z", "-03", "-02");
    assert_eq!(
        next("@daily", "America/Sao_Paulo", "2018-11-03T12:00:00Z", 2),
        ["2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"]
    );
    // 2019-02-17 00:00 -02 -> 2019-02-16 23:00 -03: 23:xx on the 16th twice.
    assert_transition("America/Sao_Paulo", "2019-02-17T02:00:00Z", "-02", "-03");
    assert_eq!(
        next(
            "30 23 * * *",
            "America/Sao_Paulo",
            "2019-02-15T12:00:00Z",
            3
        ),
        [
            "2019-02-16T01:30:00Z",
            "2019-02-17T01:30:00Z",
            "2019-02-18T02:30:00Z"
        ]
    );
}

// ----- Parsing -----

#[test]
fn errors_name_the_field() {
    let e = Schedule::parse("* * * * * * *", "UTC").unwrap_err();
    assert_eq!(e.field(), "schedule");
    assert!(matches!(e, ScheduleError::Schedule(_)));
    assert!(
        e.to_string()
            .starts_with("invalid schedule: expected 5 fields")
    );

    let e = Schedule::parse("* * * * *", "Mars/Olympus_Mons").unwrap_err();
    assert_eq!(e.field(), "time_zone");
    assert_eq!(
        e.message(),
        "`Mars/Olympus_Mons` is not an IANA time zone name such as `Europe/Berlin` or `UTC`"
    );

    // Both wrong: the expression is reported.
    let e = Schedule::parse("garbage", "nowhere").unwrap_err();
    assert_eq!(e.field(), "schedule");
}

#[test]
fn invalid_expressions() {
    for expr in [
        "",
        "   ",
        "garbage",
        "* * * *",
        "* * * * * * *",
        "0 0 * * * 2027",
        "60 * * * *",
        "* * 32 * *",
        "0 0 L * *",
        "@reboot",
        "@every 5m",
        "*/0 * * * *",
        "/5 * * * *",
        "5-2 * * * *",
        "0 0 * * MON#1",
    ] {
        match Schedule::parse(expr, "UTC") {
            Err(ScheduleError::Schedule(_)) => {}
            other => panic!("{expr:?}: {other:?}"),
        }
    }
}

#[test]
fn an_expression_that_never_fires_is_rejected() {
    for expr in ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31 2 *"] {
        assert_eq!(
            Schedule::parse(expr, "UTC").unwrap_err(),
            ScheduleError::Schedule(
                "the schedule never fires: none of its months has the day of the month it names"
                    .to_owned()
            ),
            "{expr}"
        );
    }
    // A Monday the 30th exists whatever the month: with the day fields ORed
    // this fires on every Monday anyway.
    assert!(Schedule::parse("0 0 30 2 MON", "UTC").is_ok());
}

#[test]
fn invalid_time_zones() {
    for tz in [
        "",
        "Mars/Olympus",
        "Europe/Berlin ",
        "/etc/localtime",
        "../zoneinfo/UTC",
        "Europe//Berlin",
        "+02:00",
    ] {
        match Schedule::parse("* * * * *", tz) {
            Err(ScheduleError::TimeZone(_)) => {}
            other => panic!("{tz:?}: {other:?}"),
        }
    }
    assert_eq!(
        parse_time_zone("").unwrap_err().message(),
        "the time zone is empty"
    );
}

#[test]
fn time_zone_names_come_back_as_the_database_spells_them() {
    let s = schedule("* * * * *", "europe/berlin");
    assert_eq!(s.time_zone_name(), "Europe/Berlin");
    assert_eq!(schedule("* * * * *", "UTC").time_zone_name(), "UTC");
    assert_eq!(
        schedule("0 0 * * *", "Etc/GMT+5").next_after(ts("2026-06-01T00:00:00Z")),
        Some(ts("2026-06-01T05:00:00Z"))
    );
}

#[test]
fn accessors_keep_the_expression() {
    let s = schedule("  */5 * * * *  ", "UTC");
    assert_eq!(s.expression(), "*/5 * * * *");
}

#[test]
fn preview_is_next_after_repeated() {
    let s = schedule("*/15 * * * *", "Europe/Berlin");
    let after = ts("2026-10-24T23:50:00Z");
    let times = s.preview(after, 1000);
    assert_eq!(times.len(), 1000);
    let mut cursor = after;
    for t in &times {
        assert_eq!(Some(*t), s.next_after(cursor));
        cursor = *t;
    }
    assert!(times.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(s.preview(after, 0), Vec::<Timestamp>::new());
}

#[test]
fn the_end_of_the_calendar_ends_the_preview() {
    let s = schedule("@yearly", "UTC");
    let times = s.preview(ts("4997-06-01T00:00:00Z"), 10);
    let rendered: Vec<String> = times.iter().map(|t| t.to_string()).collect();
    assert!(rendered.len() < 10, "{rendered:?}");
    assert_eq!(rendered[0], "4998-01-01T00:00:00Z");
}

// ----- Catch-up -----

fn due(
    expr: &str,
    last_fired: Option<&str>,
    since: &str,
    now: &str,
    catch_up: CatchUp,
) -> Vec<String> {
    due_instants(
        &schedule(expr, "UTC"),
        last_fired.map(ts),
        ts(since),
        ts(now),
        catch_up,
        ON_TIME_TOLERANCE,
    )
    .into_iter()
    .map(|t| t.to_string())
    .collect()
}

const EVERY_5: &str = "*/5 * * * *";
const ALL: [CatchUp; 3] = [CatchUp::None, CatchUp::Latest, CatchUp::All];

#[test]
fn nothing_is_due_before_the_first_instant() {
    for c in ALL {
        assert!(
            due(
                EVERY_5,
                None,
                "2026-06-01T12:02:00Z",
                "2026-06-01T12:04:59Z",
                c
            )
            .is_empty()
        );
    }
}

#[test]
fn an_instant_on_time_is_due_under_every_policy() {
    for c in ALL {
        assert_eq!(
            due(
                EVERY_5,
                None,
                "2026-06-01T12:02:00Z",
                "2026-06-01T12:05:10Z",
                c
            ),
            ["2026-06-01T12:05:00Z"],
            "{c:?}"
        );
        assert_eq!(
            due(
                EVERY_5,
                Some("2026-06-01T12:00:00Z"),
                "2026-06-01T00:00:00Z",
                "2026-06-01T12:06:00Z",
                c
            ),
            ["2026-06-01T12:05:00Z"],
            "{c:?}"
        );
    }
}

#[test]
fn an_instant_at_since_is_due_and_one_before_is_not() {
    assert_eq!(
        due(
            EVERY_5,
            None,
            "2026-06-01T12:05:00Z",
            "2026-06-01T12:05:00Z",
            CatchUp::All
        ),
        ["2026-06-01T12:05:00Z"]
    );
    assert!(
        due(
            EVERY_5,
            None,
            "2026-06-01T12:05:00.001Z",
            "2026-06-01T12:09:00Z",
            CatchUp::All
        )
        .is_empty()
    );
}

#[test]
fn the_last_fired_instant_never_fires_again() {
    for c in ALL {
        assert!(
            due(
                EVERY_5,
                Some("2026-06-01T12:05:00Z"),
                "2026-06-01T00:00:00Z",
                "2026-06-01T12:05:30Z",
                c
            )
            .is_empty()
        );
    }
}

#[test]
fn downtime_with_the_latest_instant_still_on_time() {
    let last = Some("2026-06-01T12:00:00Z");
    let since = "2026-06-01T00:00:00Z";
    let now = "2026-06-01T13:00:20Z";
    assert_eq!(
        due(EVERY_5, last, since, now, CatchUp::None),
        ["2026-06-01T13:00:00Z"]
    );
    assert_eq!(
        due(EVERY_5, last, since, now, CatchUp::Latest),
        ["2026-06-01T13:00:00Z"]
    );
    let all = due(EVERY_5, last, since, now, CatchUp::All);
    assert_eq!(all.len(), 12);
    assert_eq!(all[0], "2026-06-01T12:05:00Z");
    assert_eq!(all[11], "2026-06-01T13:00:00Z");
}

#[test]
fn downtime_with_every_instant_missed() {
    let last = Some("2026-06-01T12:00:00Z");
    let since = "2026-06-01T00:00:00Z";
    // 13:00 is two minutes old: missed.
    let now = "2026-06-01T13:02:00Z";
    assert!(due(EVERY_5, last, since, now, CatchUp::None).is_empty());
    assert_eq!(
        due(EVERY_5, last, since, now, CatchUp::Latest),
        ["2026-06-01T13:00:00Z"]
    );
    assert_eq!(due(EVERY_5, last, since, now, CatchUp::All).len(), 12);
}

#[test]
fn the_tolerance_boundary_is_inclusive() {
    let s = schedule(EVERY_5, "UTC");
    let x = ts("2026-06-01T12:05:00Z");
    let at_edge = x.checked_add(ON_TIME_TOLERANCE).unwrap();
    let past_edge = at_edge.checked_add(SignedDuration::from_nanos(1)).unwrap();
    let since = ts("2026-06-01T12:01:00Z");
    assert_eq!(
        due_instants(&s, None, since, at_edge, CatchUp::None, ON_TIME_TOLERANCE),
        [x]
    );
    assert!(due_instants(&s, None, since, past_edge, CatchUp::None, ON_TIME_TOLERANCE).is_empty());
}

#[test]
fn catch_up_returns_the_most_recent_hundred() {
    let every_second = "* * * * * *";
    let last = Some("2026-06-01T12:00:00Z");
    let since = "2026-06-01T00:00:00Z";
    let now = "2026-06-01T12:10:00Z";
    let all = due(every_second, last, since, now, CatchUp::All);
    assert_eq!(all.len(), MAX_CATCH_UP);
    assert_eq!(all[0], "2026-06-01T12:08:21Z");
    assert_eq!(all[99], "2026-06-01T12:10:00Z");
    // Every instant of the last minute is on time.
    for c in [CatchUp::None, CatchUp::Latest] {
        let on_time = due(every_second, last, since, now, c);
        assert_eq!(on_time.len(), 61, "{c:?}");
        assert_eq!(on_time[0], "2026-06-01T12:09:00Z");
        assert_eq!(on_time[60], "2026-06-01T12:10:00Z");
    }
}

#[test]
fn since_hides_instants_before_a_resume() {
    let last = Some("2026-06-01T11:00:00Z");
    let since = "2026-06-01T12:31:00Z";
    let now = "2026-06-01T12:42:10Z";
    assert_eq!(
        due(EVERY_5, last, since, now, CatchUp::All),
        ["2026-06-01T12:35:00Z", "2026-06-01T12:40:00Z"]
    );
    assert_eq!(
        due(EVERY_5, last, since, now, CatchUp::Latest),
        ["2026-06-01T12:40:00Z"]
    );
    assert!(due(EVERY_5, last, since, now, CatchUp::None).is_empty());
    assert!(due(EVERY_5, None, now, since, CatchUp::All).is_empty());
}

#[test]
fn catch_up_after_years_is_bounded_by_the_result() {
    let all = due(
        "@yearly",
        None,
        "1990-06-01T00:00:00Z",
        "2026-06-01T00:00:00Z",
        CatchUp::All,
    );
    assert_eq!(all.len(), 36);
    assert_eq!(all[0], "1991-01-01T00:00:00Z");
    assert_eq!(all[35], "2026-01-01T00:00:00Z");
}

#[test]
fn catch_up_follows_the_dst_rules() {
    let s = schedule("*/15 * * * *", "Europe/Berlin");
    assert_eq!(
        due_instants(
            &s,
            Some(ts("2026-10-25T00:45:00Z")),
            ts("2026-10-01T00:00:00Z"),
            ts("2026-10-25T02:00:30Z"),
            CatchUp::All,
            ON_TIME_TOLERANCE,
        ),
        [ts("2026-10-25T02:00:00Z")]
    );
    assert_eq!(
        due_instants(
            &s,
            Some(ts("2026-03-29T00:45:00Z")),
            ts("2026-03-01T00:00:00Z"),
            ts("2026-03-29T01:20:00Z"),
            CatchUp::All,
            ON_TIME_TOLERANCE,
        ),
        [ts("2026-03-29T01:00:00Z"), ts("2026-03-29T01:15:00Z")]
    );
}

#[test]
fn catch_up_serde_is_lowercase_and_defaults_to_latest() {
    assert_eq!(CatchUp::default(), CatchUp::Latest);
    for (c, text) in [
        (CatchUp::None, "\"none\""),
        (CatchUp::Latest, "\"latest\""),
        (CatchUp::All, "\"all\""),
    ] {
        assert_eq!(serde_json::to_string(&c).unwrap(), text);
        assert_eq!(serde_json::from_str::<CatchUp>(text).unwrap(), c);
    }
    assert!(serde_json::from_str::<CatchUp>("\"ALL\"").is_err());
}

// ----- Against a brute-force model of API.md §5 -----

/// The instant a wall-clock minute denotes, found by brute force: the first
/// occurrence of a repeated time, and for a skipped time the first instant
/// whose wall clock has passed it.
fn model_instant(tz: &TimeZone, wall: DateTime) -> Timestamp {
    let ambiguous = tz.to_ambiguous_zoned(wall);
    match ambiguous.offset() {
        AmbiguousOffset::Unambiguous { .. } => ambiguous.unambiguous().unwrap().timestamp(),
        AmbiguousOffset::Fold { .. } => ambiguous.earlier().unwrap().timestamp(),
        AmbiguousOffset::Gap { .. } => {
            let mut t = Offset::UTC
                .to_timestamp(wall)
                .unwrap()
                .checked_sub(SignedDuration::from_hours(15))
                .unwrap();
            while tz.to_datetime(t) <= wall {
                t = t.checked_add(SignedDuration::from_mins(1)).unwrap();
            }
            t
        }
    }
}

/// The first firing strictly after `after` by the model, for schedules that
/// fire at least daily on whole minutes.
fn model_next(s: &Schedule, after: Timestamp) -> Timestamp {
    let tz = s.time_zone();
    let start = tz
        .to_datetime(after)
        .checked_sub(SignedDuration::from_hours(4))
        .unwrap()
        .with()
        .second(0)
        .subsec_nanosecond(0)
        .build()
        .unwrap();
    let mut best: Option<Timestamp> = None;
    let mut wall = start;
    for _ in 0..(3 * 24 * 60 + 8 * 60) {
        if s.cron.is_time_matching(&wall).unwrap() {
            let t = model_instant(tz, wall);
            if t > after && best.is_none_or(|b| t < b) {
                best = Some(t);
            }
        }
        wall = wall.checked_add(SignedDuration::from_mins(1)).unwrap();
    }
    best.expect("the model's window holds a firing")
}

const MODEL_EXPRESSIONS: [&str; 11] = [
    "*/15 * * * *",
    "30 2 * * *",
    "*/15 2 * * *",
    "0 * * * *",
    "45 1 * * *",
    "15 2 * * *",
    "0 2,3 * * *",
    "*/7 1-3 * * *",
    "59 1 * * *",
    "0 0 * * *",
    "30 23 * * *",
];

const MODEL_TRANSITIONS: [(&str, &str); 8] = [
    ("Europe/Berlin", "2026-03-29T01:00:00Z"),
    ("Europe/Berlin", "2026-10-25T01:00:00Z"),
    ("America/New_York", "2026-03-08T07:00:00Z"),
    ("America/New_York", "2026-11-01T06:00:00Z"),
    ("Australia/Lord_Howe", "2026-04-04T15:00:00Z"),
    ("Australia/Lord_Howe", "2026-10-03T15:30:00Z"),
    ("America/Sao_Paulo", "2018-11-04T03:00:00Z"),
    ("America/Sao_Paulo", "2019-02-17T02:00:00Z"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn next_after_agrees_with_the_model_around_transitions(
        expr in 0..MODEL_EXPRESSIONS.len(),
        transition in 0..MODEL_TRANSITIONS.len(),
        // Mostly within two hours of the transition, where the rules bite.
        offset_s in prop_oneof![3 => -2 * 3600i64..2 * 3600, 1 => -30 * 3600i64..30 * 3600],
        nanos in prop_oneof![Just(0i32), 0..1_000_000_000i32],
    ) {
        let (tz, at) = MODEL_TRANSITIONS[transition];
        let s = schedule(MODEL_EXPRESSIONS[expr], tz);
        let after = ts(at)
            .checked_add(SignedDuration::new(offset_s, nanos))
            .unwrap();
        let next = s.next_after(after).unwrap();
        prop_assert_eq!(next, model_next(&s, after), "{} in {} after {}", s.expression(), tz, after);
        // Nothing fires between `after` and `next`, and looking back from
        // `next` finds `next`.
        prop_assert_eq!(s.last_at_or_before(next), Some(next));
        let just_before = next.checked_sub(SignedDuration::from_nanos(1)).unwrap();
        let previous = s.last_at_or_before(just_before).unwrap();
        prop_assert!(previous <= after, "{previous} fires between {after} and {next}");
    }
}

/// Cron-ish text: fields of digits, names and operators, with some noise.
fn cron_text() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        4 => "[0-9*/,\\-]{1,8}",
        1 => prop::sample::select(vec!["MON-FRI", "jan", "L", "?", "#", "W", "99999999999", ""])
            .prop_map(str::to_string),
    ];
    prop_oneof![
        4 => prop::collection::vec(field, 0..8).prop_map(|f| f.join(" ")),
        1 => prop::sample::select(vec!["@hourly", "@daily", "@weekly", "@reboot", "@", "@yearly"])
            .prop_map(str::to_string),
        1 => ".{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Hostile schedules and instants: parsing answers a schedule or an
    /// error, and a parsed schedule answers every question, at the ends of
    /// time too, without a panic.
    #[test]
    fn any_schedule_text_parses_or_is_refused_and_never_panics(
        expr in cron_text(),
        tz in prop::sample::select(vec!["UTC", "Europe/Berlin", "Australia/Lord_Howe", "Nowhere/Else", ""]),
        at in prop_oneof![
            Just(Timestamp::MIN),
            Just(Timestamp::MAX),
            (-377_705_023_201i64..=253_402_207_200).prop_map(|s| Timestamp::from_second(s).unwrap()),
        ],
    ) {
        if let Ok(s) = Schedule::parse(&expr, tz) {
            if let Some(next) = s.next_after(at) {
                prop_assert!(next > at, "{expr} in {tz}: {next} after {at}");
            }
            if let Some(last) = s.last_at_or_before(at) {
                prop_assert!(last <= at, "{expr} in {tz}: {last} before {at}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// What the OpenAPI document allows is a schedule: any client that
    /// keeps to its pattern never meets the parser's 400.
    #[test]
    fn every_schedule_the_documents_pattern_allows_parses_and_fires(
        expr in proptest::string::string_regex(
            schedule_pattern().strip_prefix('^').unwrap().strip_suffix('$').unwrap()
        ).unwrap(),
        zone in proptest::sample::select(vec!["UTC", "Europe/Berlin", "America/Sao_Paulo", "Australia/Lord_Howe"]),
    ) {
        let parsed = Schedule::parse(&expr, zone);
        prop_assert!(parsed.is_ok(), "{expr:?} in {zone}: {:?}", parsed.err());
        prop_assert!(parsed.unwrap().next_after(ts("2026-01-01T00:00:00Z")).is_some(), "{expr:?} never fires");
    }
}
