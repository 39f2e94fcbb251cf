//! Which scheduled instants are due when the scheduler looks at a job.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::Schedule;

/// How old an instant may be at `now` and still count as on time.
///
/// A scheduler that ticks a little late, or a node that restarts within this
/// window, fires the instants it was late for under every policy. Only
/// instants older than this were missed (every node down), and only for those
/// does [`CatchUp`] matter.
pub const ON_TIME_TOLERANCE: SignedDuration = SignedDuration::from_secs(60);

/// The most instants [`due_instants`] returns at once, whatever the policy.
pub const MAX_CATCH_UP: usize = 100;

/// What a job does with the instants it missed while no scheduler ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum CatchUp {
    /// Skip missed instants; fire only those that are on time.
    None,
    /// Fire the most recent instant, whether on time or missed.
    #[default]
    Latest,
    /// Fire every missed instant, the most recent [`MAX_CATCH_UP`] of them.
    All,
}

impl CatchUp {
    /// The name the API and the store use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Latest => "latest",
            Self::All => "all",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::None, Self::Latest, Self::All]
            .into_iter()
            .find(|c| c.as_str() == s)
    }
}

/// The instants to fire now, in ascending order.
///
/// An instant `x` of `schedule` is *eligible* when
/// `since <= x <= now` and, if `last_fired` is `Some(l)`, `x > l`:
///
/// - `last_fired` is the latest instant the job has fired (read from the
///   store, not memory); nothing at or before it fires again.
/// - `since` is the earliest instant that may fire: when the job was
///   created, or later when its schedule or time zone last changed or it
///   was last resumed, if the caller wants instants before those skipped.
///   An instant before `since` is never due, even if `last_fired` is older
///   or `None`; one exactly at `since` is.
/// - `now` is the current time (the store's clock).
///
/// An eligible instant is *on time* when `now - x <= tolerance`
/// ([`ON_TIME_TOLERANCE`], 60 s, unless the operator chose otherwise) and
/// *missed* otherwise. Then:
///
/// - [`CatchUp::None`]: the on-time instants;
/// - [`CatchUp::Latest`]: the on-time instants if there are any, otherwise
///   the most recent missed instant alone;
/// - [`CatchUp::All`]: every eligible instant.
///
/// In every case at most the most recent [`MAX_CATCH_UP`] (100) come back.
/// The scheduler is expected to record the last returned instant as the
/// new `last_fired`; an empty result changes nothing, and calling again
/// with the same inputs skips the same instants, so no cursor is needed for
/// skipped ones. The cost is bounded by the result: the search walks back
/// from `now`, never forward from an old `last_fired`.
pub fn due_instants(
    schedule: &Schedule,
    last_fired: Option<Timestamp>,
    since: Timestamp,
    now: Timestamp,
    catch_up: CatchUp,
    tolerance: SignedDuration,
) -> Vec<Timestamp> {
    let eligible = |x: Timestamp| x >= since && last_fired.is_none_or(|l| x > l);
    let on_time = |x: Timestamp| now.duration_since(x) <= tolerance;

    let mut due = Vec::new();
    let mut cursor = schedule.last_at_or_before(now);
    while let Some(x) = cursor {
        if due.len() == MAX_CATCH_UP || !eligible(x) {
            break;
        }
        if !on_time(x) {
            match catch_up {
                CatchUp::None => break,
                CatchUp::Latest => {
                    if due.is_empty() {
                        due.push(x);
                    }
                    break;
                }
                CatchUp::All => {}
            }
        }
        due.push(x);
        cursor = x
            .checked_sub(SignedDuration::from_nanos(1))
            .ok()
            .and_then(|before| schedule.last_at_or_before(before));
    }
    due.reverse();
    due
}

/// Which of a job's existing runs, created ahead of their instants and not
/// yet attempted, must not fire: those whose instant was missed (older than
/// `tolerance` at `now`) and that the job's `catch_up` would not have fired
/// had the runs not existed yet. Missed is missed, whether or not a run row
/// was written before every node went down.
///
/// `pending` holds the schedule times of such runs; `on_time` says whether
/// the job has an instant within `tolerance` of `now` (fired or pending),
/// which under [`CatchUp::Latest`] takes the place of any missed one.
/// Returns the schedule times to drop, in ascending order.
pub fn missed_runs_to_drop(
    catch_up: CatchUp,
    pending: &[Timestamp],
    now: Timestamp,
    tolerance: SignedDuration,
    on_time: bool,
) -> Vec<Timestamp> {
    let mut missed: Vec<Timestamp> = pending
        .iter()
        .copied()
        .filter(|x| now.duration_since(*x) > tolerance)
        .collect();
    missed.sort();
    let keep = match catch_up {
        CatchUp::None => 0,
        CatchUp::Latest if on_time => 0,
        CatchUp::Latest => 1,
        CatchUp::All => MAX_CATCH_UP,
    };
    missed.truncate(missed.len().saturating_sub(keep));
    missed
}

#[cfg(test)]
mod missed_runs {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    #[test]
    fn each_policy_drops_what_it_would_not_have_fired() {
        let now = at(100);
        let tolerance = SignedDuration::from_secs(1);
        // 97, 98 missed; 99.5 and 100 on time (not droppable).
        let pending = [at(98), at(97), at(100)];
        assert_eq!(
            missed_runs_to_drop(CatchUp::None, &pending, now, tolerance, false),
            vec![at(97), at(98)]
        );
        assert_eq!(
            missed_runs_to_drop(CatchUp::Latest, &pending, now, tolerance, false),
            vec![at(97)],
            "the newest missed fires when nothing is on time"
        );
        assert_eq!(
            missed_runs_to_drop(CatchUp::Latest, &pending, now, tolerance, true),
            vec![at(97), at(98)]
        );
        assert!(missed_runs_to_drop(CatchUp::All, &pending, now, tolerance, true).is_empty());
        let many: Vec<Timestamp> = (0..150).map(|i| at(-i)).collect();
        assert_eq!(
            missed_runs_to_drop(CatchUp::All, &many, now, tolerance, false).len(),
            50,
            "all keeps the newest MAX_CATCH_UP"
        );
    }
}

#[cfg(test)]
mod names {
    use super::CatchUp;

    #[test]
    fn stored_names_are_the_api_names() {
        for c in [CatchUp::None, CatchUp::Latest, CatchUp::All] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
            assert_eq!(CatchUp::parse(c.as_str()), Some(c));
        }
        assert_eq!(CatchUp::parse("Latest"), None);
    }
}
