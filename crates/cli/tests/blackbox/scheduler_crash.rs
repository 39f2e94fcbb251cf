//! Missed instants after every node was down (API.md §5, `catch_up`): decided
//! from what the store recorded, so a restart never fires an instant twice.

use crate::harness;
use crate::harness::jobs::*;
use crate::harness::target::*;
use crate::harness::{Backend, Backing, Server};
use jiff::Timestamp;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The schedule times of a job's runs, by when each was created.
fn by_creation(listed: &[Value]) -> BTreeMap<Timestamp, Vec<Timestamp>> {
    let mut out: BTreeMap<Timestamp, Vec<Timestamp>> = BTreeMap::new();
    for r in listed {
        if r["kind"] != "scheduled" {
            continue;
        }
        out.entry(ts(r["created_at"].as_str().unwrap()))
            .or_default()
            .push(ts(r["schedule_time"].as_str().unwrap()));
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

/// After SIGKILL and a restart, each job's missed instants follow its
/// `catch_up` policy, judged from the runs the store recorded: the first
/// pass after the restart (one creation time) fired exactly what the
/// policy says, and no instant ever fired twice.
async fn catch_up_after_sigkill_follows_each_policy(kind: Backend) {
    let target = Target::start().await;
    // Runs created ahead of their instant before the kill fire late after
    // the restart, whatever the policy: a short lookahead keeps most of the
    // downtime's instants missed.
    let grace = ["--misfire-grace", "1s", "--schedule-lookahead", "1s"];
    let s = Server::start_on(Backing::new(kind).await, harness::fresh_key(), &grace).await;
    for (name, schedule, policy) in [
        ("none", "* * * * * *", "none"),
        ("latest", "*/3 * * * * *", "latest"),
        ("all", "* * * * * *", "all"),
    ] {
        create_job(
            &s,
            json!({"name": name, "schedule": schedule, "catch_up": policy,
                   "target": {"url": target.url("/ok")}}),
        )
        .await;
    }
    for job in ["none", "latest", "all"] {
        wait_runs_of(&target, job, 1, Duration::from_secs(10)).await;
    }
    let (backing, key) = s.kill().await;
    tokio::time::sleep(Duration::from_secs(7)).await;
    let s = Server::start_on(backing, key, &grace).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for job in ["none", "latest", "all"] {
        s.post_empty(&format!("/v1/jobs/{job}/pause")).await.ok(200);
    }
    let one_second = jiff::SignedDuration::from_secs(1);
    for job in ["none", "latest", "all"] {
        let listed = runs(&s, job).await;
        let times: BTreeSet<Timestamp> = listed
            .iter()
            .map(|r| ts(r["schedule_time"].as_str().unwrap()))
            .collect();
        assert_eq!(times.len(), listed.len(), "{job}: an instant fired twice");
        let passes = by_creation(&listed);
        // The pass after the restart is the first one followed by a gap in
        // creation times of several seconds.
        let created: Vec<Timestamp> = passes.keys().copied().collect();
        let restart = created
            .windows(2)
            .find(|w| w[1].duration_since(w[0]).as_secs() >= 5)
            .map(|w| w[1])
            .unwrap_or_else(|| panic!("{job}: no downtime visible in {passes:?}"));
        let before: Vec<Timestamp> = passes
            .range(..restart)
            .flat_map(|(_, v)| v.iter().copied())
            .collect();
        let last_before = *before.iter().max().unwrap();
        // The same pass also created the runs of the lookahead ahead.
        let fired: Vec<Timestamp> = passes[&restart]
            .iter()
            .copied()
            .filter(|t| *t <= restart)
            .collect();
        let schedule = match job {
            "latest" => 3,
            _ => 1,
        };
        // Every instant between the last one fired before the kill and the
        // restart's pass, and which of them were on time.
        let mut eligible = Vec::new();
        let mut t = last_before;
        loop {
            t = t
                .checked_add(jiff::SignedDuration::from_secs(schedule))
                .unwrap();
            if t > restart {
                break;
            }
            eligible.push(t);
        }
        let on_time: Vec<Timestamp> = eligible
            .iter()
            .copied()
            .filter(|x| restart.duration_since(*x) <= one_second)
            .collect();
        let expected: Vec<Timestamp> = match job {
            "none" => on_time.clone(),
            "latest" if !on_time.is_empty() => on_time.clone(),
            "latest" => eligible.last().into_iter().copied().collect(),
            _ => eligible.clone(),
        };
        assert!(
            eligible.len() >= 2,
            "{job}: too little downtime: {eligible:?}"
        );
        assert_eq!(
            fired, expected,
            "{job}: eligible {eligible:?}, restart {restart}"
        );
    }
}

idem_testkit::store_tests!(catch_up_after_sigkill_follows_each_policy);

mod runs_created_ahead {
    use super::*;

    idem_testkit::store_tests!(catch_up_none_delivers_no_run_of_a_missed_instant);

    /// `catch_up: none` after an outage delivers no run of a missed instant,
    /// even those whose run rows were created ahead of their instant before the
    /// node died: missed is missed, whether or not its row already existed.
    async fn catch_up_none_delivers_no_run_of_a_missed_instant(kind: Backend) {
        let target = Target::start().await;
        // A lookahead longer than the outage: every instant inside it had its
        // run created before the kill.
        let flags = ["--misfire-grace", "1s", "--schedule-lookahead", "6s"];
        let s = Server::start_on(Backing::new(kind).await, harness::fresh_key(), &flags).await;
        create_job(
            &s,
            json!({"name": "none", "schedule": "* * * * * *", "catch_up": "none",
                   "target": {"url": target.url("/ok")}}),
        )
        .await;
        wait_runs_of(&target, "none", 2, Duration::from_secs(10)).await;
        let (backing, key) = s.kill().await;
        let killed = Timestamp::now();
        tokio::time::sleep(Duration::from_secs(4)).await;
        let restarted = Timestamp::now();
        let s = Server::start_on(backing, key, &flags).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        s.post_empty("/v1/jobs/none/pause").await.ok(200);
        let delivered: BTreeSet<Timestamp> = of_job(&target, "none")
            .iter()
            .map(|r| ts(r.header("idem-schedule-time").unwrap()))
            .collect();
        // Instants more than the grace before the restart, after the kill.
        let grace = jiff::SignedDuration::from_secs(1);
        let missed: Vec<&Timestamp> = delivered
            .iter()
            .filter(|t| **t > killed && restarted.duration_since(**t) > grace)
            .collect();
        assert!(
            missed.is_empty(),
            "missed instants delivered: {missed:?} (killed {killed}, restarted {restarted})"
        );
        assert!(
            delivered.iter().any(|t| *t > restarted),
            "the job fires again after the restart: {delivered:?}"
        );
    }
}
