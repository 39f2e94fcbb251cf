//! Reading a cron expression into the one form croner is given.
//!
//! Croner accepts more than Idem promises (a year field, `L`, `W`, `#`, `?`,
//! a leading `+` that switches the day fields to AND), and its messages talk
//! about its own internals. Checking every field here keeps the accepted
//! language exactly the documented one, lets each rejection name the field
//! at fault, and leaves croner only numeric fields already known to be valid.

/// An expression rewritten for croner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Normalized {
    /// Six space-separated numeric fields, seconds first.
    pub pattern: String,
    /// Whether a day must match both day fields (AND) instead of either (OR).
    pub dom_and_dow: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Names {
    None,
    Months,
    Weekdays,
}

struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    /// Where `N/step` ends. For the day of the week this is Saturday (6),
    /// not the 7 that also spells Sunday, so `0/2` means 0,2,4,6 as `*/2`
    /// does rather than firing twice on Sundays.
    step_end: u32,
    names: Names,
}

const FIELDS: [Field; 6] = [
    Field {
        name: "second",
        min: 0,
        max: 59,
        step_end: 59,
        names: Names::None,
    },
    Field {
        name: "minute",
        min: 0,
        max: 59,
        step_end: 59,
        names: Names::None,
    },
    Field {
        name: "hour",
        min: 0,
        max: 23,
        step_end: 23,
        names: Names::None,
    },
    Field {
        name: "day-of-month",
        min: 1,
        max: 31,
        step_end: 31,
        names: Names::None,
    },
    Field {
        name: "month",
        min: 1,
        max: 12,
        step_end: 12,
        names: Names::Months,
    },
    Field {
        name: "day-of-week",
        min: 0,
        max: 7,
        step_end: 6,
        names: Names::Weekdays,
    },
];

const DAY_OF_MONTH: usize = 3;
const DAY_OF_WEEK: usize = 5;

pub(super) const NICKNAMES: [(&str, &str); 7] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];

const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const UNSUPPORTED_HINT: &str = "`L`, `W`, `#` and `?` are not supported";

/// Checks `expr` and rewrites it as six numeric fields.
pub(super) fn normalize(expr: &str) -> Result<Normalized, String> {
    let trimmed = expr.trim();
    if trimmed.is_empty() {
        return Err("the schedule is empty".to_owned());
    }
    let expanded = if trimmed.starts_with('@') {
        NICKNAMES
            .iter()
            .find(|(nickname, _)| nickname.eq_ignore_ascii_case(trimmed))
            .map(|(_, fields)| *fields)
            .ok_or_else(|| {
                format!(
                    "`{trimmed}` is not a supported nickname: use @yearly, @annually, \
                     @monthly, @weekly, @daily, @midnight or @hourly, alone"
                )
            })?
    } else {
        trimmed
    };

    let mut fields: Vec<&str> = expanded.split_whitespace().collect();
    match fields.len() {
        5 => fields.insert(0, "0"),
        6 => {}
        n => {
            return Err(format!(
                "expected 5 fields (minute hour day-of-month month day-of-week) \
                 or 6 with seconds first, found {n}"
            ));
        }
    }

    let mut normalized = Vec::with_capacity(FIELDS.len());
    for (field, text) in FIELDS.iter().zip(&fields) {
        normalized.push(normalize_field(field, text)?);
    }

    // Vixie cron decides by the first character as written: a day field
    // that starts with `*` (even `*/2`) counts as unrestricted, and then a
    // day has to satisfy both fields; two restricted fields are ORed.
    let dom_and_dow = fields[DAY_OF_MONTH].starts_with('*') || fields[DAY_OF_WEEK].starts_with('*');

    Ok(Normalized {
        pattern: normalized.join(" "),
        dom_and_dow,
    })
}

fn normalize_field(field: &Field, text: &str) -> Result<String, String> {
    let mut items = Vec::new();
    for item in text.split(',') {
        if item.is_empty() {
            return Err(format!(
                "{} field `{text}`: empty item in the list",
                field.name
            ));
        }
        items.push(normalize_item(field, text, item)?);
    }
    Ok(items.join(","))
}

fn normalize_item(field: &Field, text: &str, item: &str) -> Result<String, String> {
    let (range, step) = match item.split_once('/') {
        Some((range, step)) => (range, Some(parse_step(field, text, step)?)),
        None => (item, None),
    };

    let range = if range == "*" {
        "*".to_owned()
    } else if let Some((low, high)) = range.split_once('-') {
        let low = parse_value(field, text, low, false)?;
        let mut high_value = parse_value(field, text, high, true)?;
        // `SUN-SUN` is one day, not the whole week that 0-7 would be.
        if field.names == Names::Weekdays
            && low == 0
            && high_value == 7
            && !high.starts_with(|c: char| c.is_ascii_digit())
        {
            high_value = 0;
        }
        let high = high_value;
        if low > high {
            return Err(format!(
                "{} field `{text}`: the range {low}-{high} runs backwards",
                field.name
            ));
        }
        format!("{low}-{high}")
    } else {
        let value = parse_value(field, text, range, false)?;
        match step {
            // `N/step` is read as `N-<last>/step`, as cronie and Quartz do.
            Some(_) if value > field.step_end => {
                return Err(format!(
                    "{} field `{text}`: `{item}` starts after the last value, {}",
                    field.name, field.step_end
                ));
            }
            Some(_) => format!("{value}-{}", field.step_end),
            None => value.to_string(),
        }
    };

    Ok(match step {
        Some(step) => format!("{range}/{step}"),
        None => range,
    })
}

fn parse_step(field: &Field, text: &str, step: &str) -> Result<u32, String> {
    let valid = !step.is_empty() && step.bytes().all(|b| b.is_ascii_digit());
    match step.parse::<u32>() {
        Ok(n) if valid && (1..=field.max).contains(&n) => Ok(n),
        _ => Err(format!(
            "{} field `{text}`: the step must be a number from 1 to {}",
            field.name, field.max
        )),
    }
}

fn parse_value(field: &Field, text: &str, token: &str, range_end: bool) -> Result<u32, String> {
    if token.is_empty() {
        return Err(format!(
            "{} field `{text}`: a number is missing",
            field.name
        ));
    }
    if token.bytes().all(|b| b.is_ascii_digit()) {
        return match token.parse::<u32>() {
            Ok(n) if (field.min..=field.max).contains(&n) => Ok(n),
            _ => Err(format!(
                "{} field `{text}`: {token} is out of range {}-{}",
                field.name, field.min, field.max
            )),
        };
    }
    if token.bytes().all(|b| b.is_ascii_alphabetic()) {
        let upper = token.to_ascii_uppercase();
        let found = match field.names {
            Names::Months => MONTHS
                .iter()
                .position(|m| *m == upper)
                .map(|i| i as u32 + 1),
            // SUN closing a range is 7, so `FRI-SUN` reads as 5-7.
            Names::Weekdays => WEEKDAYS
                .iter()
                .position(|d| *d == upper)
                .map(|i| if i == 0 && range_end { 7 } else { i as u32 }),
            Names::None => None,
        };
        if let Some(n) = found {
            return Ok(n);
        }
        if matches!(upper.as_str(), "L" | "W" | "LW") {
            return Err(format!("{} field `{text}`: {UNSUPPORTED_HINT}", field.name));
        }
        return Err(match field.names {
            Names::Months => format!(
                "{} field `{text}`: `{token}` is not a month name (JAN to DEC)",
                field.name
            ),
            Names::Weekdays => format!(
                "{} field `{text}`: `{token}` is not a day name (SUN to SAT)",
                field.name
            ),
            Names::None => format!(
                "{} field `{text}`: names are allowed only in the month and day-of-week fields",
                field.name
            ),
        });
    }
    if token.contains(['L', 'W', 'l', 'w', '#', '?']) {
        return Err(format!("{} field `{text}`: {UNSUPPORTED_HINT}", field.name));
    }
    Err(format!(
        "{} field `{text}`: `{token}` is not a number or a name",
        field.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(expr: &str) -> String {
        normalize(expr).unwrap().pattern
    }

    #[test]
    fn five_fields_get_second_zero() {
        assert_eq!(pattern("*/5 * * * *"), "0 */5 * * * *");
        assert_eq!(pattern("  1 2   3 4 5  "), "0 1 2 3 4 5");
    }

    #[test]
    fn six_fields_keep_seconds() {
        assert_eq!(pattern("30 */5 * * * *"), "30 */5 * * * *");
    }

    #[test]
    fn nicknames_expand_case_insensitively() {
        assert_eq!(pattern("@yearly"), "0 0 0 1 1 *");
        assert_eq!(pattern("@ANNUALLY"), "0 0 0 1 1 *");
        assert_eq!(pattern("@monthly"), "0 0 0 1 * *");
        assert_eq!(pattern("@weekly"), "0 0 0 * * 0");
        assert_eq!(pattern("@Daily"), "0 0 0 * * *");
        assert_eq!(pattern("@midnight"), "0 0 0 * * *");
        assert_eq!(pattern("@hourly"), "0 0 * * * *");
    }

    #[test]
    fn names_become_numbers() {
        assert_eq!(pattern("0 9 * JAN-MAR MON-FRI"), "0 0 9 * 1-3 1-5");
        assert_eq!(pattern("0 9 * dec sun"), "0 0 9 * 12 0");
        assert_eq!(pattern("0 9 * * FRI-SUN"), "0 0 9 * * 5-7");
        assert_eq!(pattern("0 9 * * SUN-SAT"), "0 0 9 * * 0-6");
        assert_eq!(pattern("0 9 * * SUN-SUN"), "0 0 9 * * 0-0");
        assert_eq!(pattern("0 9 * * 0-7"), "0 0 9 * * 0-7");
        assert_eq!(pattern("0 9 * * MON-SUN"), "0 0 9 * * 1-7");
        assert_eq!(pattern("0 9 * JUL,AUG WED,sat"), "0 0 9 * 7,8 3,6");
    }

    #[test]
    fn single_start_step_runs_to_the_last_value() {
        assert_eq!(pattern("5/5 * * * *"), "0 5-59/5 * * * *");
        assert_eq!(pattern("0 0/6 * * *"), "0 0 0-23/6 * * *");
        assert_eq!(pattern("0 0 1/10 * *"), "0 0 0 1-31/10 * *");
        assert_eq!(pattern("0 0 * FEB/3 *"), "0 0 0 * 2-12/3 *");
        assert_eq!(pattern("0 0 * * MON/2"), "0 0 0 * * 1-6/2");
    }

    #[test]
    fn day_field_semantics_follow_vixie_cron() {
        assert!(!normalize("0 0 13 * 5").unwrap().dom_and_dow);
        assert!(normalize("0 0 */2 * 1").unwrap().dom_and_dow);
        assert!(normalize("0 0 13 * */2").unwrap().dom_and_dow);
        assert!(normalize("0 0 * * 1").unwrap().dom_and_dow);
    }

    fn error(expr: &str) -> String {
        normalize(expr).unwrap_err()
    }

    #[test]
    fn rejections_name_the_field_and_the_reason() {
        assert_eq!(error(""), "the schedule is empty");
        assert_eq!(error("   "), "the schedule is empty");
        assert_eq!(
            error("* * * * * * *"),
            "expected 5 fields (minute hour day-of-month month day-of-week) \
             or 6 with seconds first, found 7"
        );
        assert!(error("* * * *").ends_with("found 4"));
        assert_eq!(
            error("60 * * * *"),
            "minute field `60`: 60 is out of range 0-59"
        );
        assert_eq!(
            error("0 24 * * *"),
            "hour field `24`: 24 is out of range 0-23"
        );
        assert_eq!(
            error("0 0 0 * *"),
            "day-of-month field `0`: 0 is out of range 1-31"
        );
        assert_eq!(
            error("0 0 * 13 *"),
            "month field `13`: 13 is out of range 1-12"
        );
        assert_eq!(
            error("0 0 * * 8"),
            "day-of-week field `8`: 8 is out of range 0-7"
        );
        assert_eq!(
            error("5-2 * * * *"),
            "minute field `5-2`: the range 5-2 runs backwards"
        );
        assert_eq!(
            error("*/0 * * * *"),
            "minute field `*/0`: the step must be a number from 1 to 59"
        );
        assert_eq!(
            error("0,,5 * * * *"),
            "minute field `0,,5`: empty item in the list"
        );
        assert_eq!(
            error("0 0 * * 7/2"),
            "day-of-week field `7/2`: `7/2` starts after the last value, 6"
        );
        assert_eq!(
            error("/5 * * * *"),
            "minute field `/5`: a number is missing"
        );
    }

    #[test]
    fn quartz_extensions_are_rejected() {
        for expr in [
            "0 0 L * *",
            "0 0 15W * *",
            "0 0 LW * *",
            "0 0 * * 5L",
            "0 0 * * MON#2",
            "0 0 ? * MON",
        ] {
            assert!(
                error(expr).ends_with(UNSUPPORTED_HINT),
                "{expr}: {}",
                error(expr)
            );
        }
        assert_eq!(
            error("0 0 * * +MON"),
            "day-of-week field `+MON`: `+MON` is not a number or a name"
        );
    }

    #[test]
    fn names_only_where_they_belong() {
        assert_eq!(
            error("MON * * * *"),
            "minute field `MON`: names are allowed only in the month and day-of-week fields"
        );
        assert_eq!(
            error("0 0 * FOO *"),
            "month field `FOO`: `FOO` is not a month name (JAN to DEC)"
        );
        assert_eq!(
            error("0 0 * * MONDAY"),
            "day-of-week field `MONDAY`: `MONDAY` is not a day name (SUN to SAT)"
        );
        assert_eq!(
            error("0 0 * MON *"),
            "month field `MON`: `MON` is not a month name (JAN to DEC)"
        );
    }

    #[test]
    fn nicknames_must_stand_alone() {
        assert!(error("@reboot").starts_with("`@reboot` is not a supported nickname"));
        assert!(error("@daily 5").starts_with("`@daily 5` is not a supported nickname"));
    }

    #[test]
    fn huge_numbers_are_out_of_range_not_a_panic() {
        assert_eq!(
            error("99999999999999999999 * * * *"),
            "minute field `99999999999999999999`: 99999999999999999999 is out of range 0-59"
        );
        assert_eq!(
            error("*/99999999999 * * * *"),
            "minute field `*/99999999999`: the step must be a number from 1 to 59"
        );
    }
}
