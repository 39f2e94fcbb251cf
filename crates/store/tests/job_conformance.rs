//! The cron job contract (`JobStore`), run against every backend.
//!
//! Each test is written once against `dyn Store` and instantiated for
//! SQLite and PostgreSQL by the macro at the bottom. Time only moves when a
//! test moves the manual clock, so "downtime" is a jump of the clock with no
//! `scheduler_fire` in between.

mod support;

use idem_core::Clock;
use idem_core::job::{CreateJob, HeaderStyle, JobConfig, JobPatch, JobRetryConfigPatch};
use idem_core::job::{JobState, RunKind};
use idem_core::schedule::{CatchUp, ON_TIME_TOLERANCE, run_id};
use idem_store::dispatch::{AttemptOutcome, AttemptResult, ClaimedTask, DispatchClaim};
use idem_store::jobs::{FireParams, FireReport, JOBS_QUEUE, RUN_RETENTION_S};
use idem_store::*;
use jiff::{SignedDuration, Timestamp};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;
use support::{Harness, ORG, new_key, start};

const GRACE: Duration = Duration::from_secs(1);
/// How late an instant may be in the catch-up tests and still be on time.
const SHORT: Duration = Duration::from_secs(1);

fn at(s: &str) -> Timestamp {
    format!("2026-10-16T{s}Z").parse().unwrap()
}

impl Harness {
    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn set(&self, t: Timestamp) {
        self.clock.set(t);
    }

    fn advance_ms(&self, ms: i64) {
        self.clock.advance(SignedDuration::from_millis(ms));
    }

    async fn create(&self, name: &str, config: &JobConfig) -> Job {
        self.store
            .job_create(ORG, name, config, false, None)
            .await
            .unwrap()
    }

    async fn job(&self, name: &str) -> Job {
        self.store.job_get(ORG, name).await.unwrap()
    }

    async fn fire(&self, max_jobs: u32) -> FireReport {
        fire_on(&self.store, max_jobs, ON_TIME_TOLERANCE.unsigned_abs()).await
    }

    async fn fire_within(&self, tolerance: Duration) -> FireReport {
        fire_on(&self.store, 100, tolerance).await
    }

    /// Every run of `job`, newest first, read page by page.
    async fn runs(&self, job: &str) -> Vec<Task> {
        all_runs(&self.store, job).await
    }

    async fn run_times(&self, job: &str) -> Vec<Timestamp> {
        let mut times: Vec<_> = self
            .runs(job)
            .await
            .iter()
            .map(|t| t.schedule_time)
            .collect();
        times.reverse();
        times
    }

    async fn claim(&self, max_tasks: u32) -> Vec<ClaimedTask> {
        self.store
            .dispatch_claim(DispatchClaim {
                attempts_kept: 100,
                max_tasks,
                lease_grace: GRACE,
                fair_share: None,
            })
            .await
            .unwrap()
            .tasks
    }

    async fn complete(&self, claimed: &ClaimedTask, status: u16) -> AttemptOutcome {
        let mut out = self
            .store
            .dispatch_complete(vec![AttemptResult {
                task_uid: claimed.task.uid.clone(),
                attempt: claimed.attempt,
                status_code: Some(status),
                error: None,
                duration: Duration::from_millis(7),
                retry_after: None,
                give_up: false,
                response: None,
            }])
            .await
            .unwrap();
        assert_eq!(out.len(), 1);
        out.remove(0)
    }

    /// Claims and completes with 200 every due run.
    async fn finish_all(&self) {
        for claimed in self.claim(1000).await {
            assert!(matches!(
                self.complete(&claimed, 200).await,
                AttemptOutcome::Applied(_)
            ));
        }
    }
}

async fn fire_on(store: &Arc<dyn Store>, max_jobs: u32, tolerance: Duration) -> FireReport {
    store
        .scheduler_fire(FireParams {
            max_jobs,
            tolerance,
            lookahead: Duration::ZERO,
        })
        .await
        .unwrap()
}

async fn all_runs(store: &Arc<dyn Store>, job: &str) -> Vec<Task> {
    let mut out = Vec::new();
    let mut after = None;
    loop {
        let p = store.job_runs(ORG, job, &page(7, after)).await.unwrap();
        out.extend(p.items);
        match p.next {
            Some(next) => after = Some(next),
            None => return out,
        }
    }
}

fn page(limit: u32, after: Option<String>) -> PageRequest {
    PageRequest { limit, after }
}

/// A job configuration through the API's own validation, with `extra`
/// fields of `POST /v1/jobs` merged in.
fn config_with(schedule: &str, extra: serde_json::Value) -> JobConfig {
    let mut body = serde_json::json!({
        "name": "placeholder",
        "schedule": schedule,
        "target": {
            "url": "http://127.0.0.1:9/hook",
            "headers": {"X-Trace": "1"},
            "body": "tick"
        }
    });
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    serde_json::from_value::<CreateJob>(body)
        .unwrap()
        .resolve()
        .unwrap()
}

fn config(schedule: &str) -> JobConfig {
    config_with(schedule, serde_json::json!({}))
}

fn catch_up(schedule: &str, policy: CatchUp) -> JobConfig {
    JobConfig {
        catch_up: policy,
        ..config(schedule)
    }
}

const EVERY_MINUTE: &str = "* * * * *";
const EVERY_SECOND: &str = "* * * * * *";

fn names(p: &Page<Job>) -> Vec<String> {
    p.items.iter().map(|j| j.name.clone()).collect()
}

fn fired_times(r: &FireReport, job: &str) -> Vec<Timestamp> {
    r.fired
        .iter()
        .filter(|f| f.job == job)
        .map(|f| f.schedule_time)
        .collect()
}

fn invalid_fields(e: Error) -> Vec<String> {
    match e {
        Error::Invalid(f) => f.0.into_iter().map(|e| e.field).collect(),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------

async fn jobs_are_created_read_and_listed(h: Harness) {
    h.set(at("12:00:00.5"));
    let cfg = config_with(
        EVERY_MINUTE,
        serde_json::json!({"time_zone": "Europe/Berlin", "catch_up": "all",
                           "header_style": "cloud_scheduler", "attempt_deadline_s": 30,
                           "retry_config": {"retry_count": 2}}),
    );
    let job = h.create("c", &cfg).await;
    assert_eq!(job.name, "c");
    assert_eq!(job.config, cfg, "the configuration reads back as given");
    assert_eq!(job.state, JobState::Enabled);
    assert_eq!(
        job.next_run_at,
        Some(at("12:01:00")),
        "the first instant after creation"
    );
    assert_eq!(job.last_run, None);
    assert_eq!((job.created_at, job.updated_at), (h.now(), h.now()));
    assert_eq!(h.job("c").await, job);

    let secs = h.create("s", &config(EVERY_SECOND)).await;
    assert_eq!(secs.next_run_at, Some(at("12:00:01")));
    let hourly = h.create("h", &config("@hourly")).await;
    assert_eq!(hourly.next_run_at, Some(at("13:00:00")));

    let paused = h
        .store
        .job_create(ORG, "p", &config(EVERY_MINUTE), true, None)
        .await
        .unwrap();
    assert_eq!(paused.state, JobState::Paused);
    assert_eq!(paused.next_run_at, None, "a paused job has no next run");

    assert!(matches!(
        h.store
            .job_create(ORG, "c", &config(EVERY_SECOND), false, None)
            .await,
        Err(Error::AlreadyExists { kind: "job", .. })
    ));
    assert_eq!(h.job("c").await, job, "the duplicate changed nothing");
    assert!(matches!(
        h.store.job_get(ORG, "nope").await,
        Err(Error::NotFound { kind: "job", .. })
    ));

    h.create("a", &config(EVERY_MINUTE)).await;
    let p1 = h.store.job_list(ORG, &page(2, None)).await.unwrap();
    assert_eq!(names(&p1), ["a", "c"]);
    let p2 = h.store.job_list(ORG, &page(2, p1.next)).await.unwrap();
    assert_eq!(names(&p2), ["h", "p"]);
    let p3 = h.store.job_list(ORG, &page(2, p2.next)).await.unwrap();
    assert_eq!(names(&p3), ["s"]);
    assert_eq!(p3.next, None);
    let whole = h.store.job_list(ORG, &page(10, None)).await.unwrap();
    assert_eq!(whole.items.len(), 5);
    assert_eq!(whole.next, None);
    assert_eq!(whole.items[1], job, "a listed job is the job read alone");

    h.store
        .organization_create("other", new_key(), None)
        .await
        .unwrap();
    let theirs = h.store.job_list("other", &page(10, None)).await.unwrap();
    assert!(theirs.items.is_empty(), "jobs belong to their organization");
    h.store
        .job_create("other", "c", &config(EVERY_MINUTE), false, None)
        .await
        .expect("a name is unique within an organization only");

    // One pass fires every organization's due jobs, each in its own.
    h.set(at("12:01:00"));
    let r = h.fire(100).await;
    let mut fired: Vec<_> = r
        .fired
        .iter()
        .filter(|f| f.job == "c")
        .map(|f| (f.org.as_str(), f.run_id.clone()))
        .collect();
    fired.sort();
    assert_eq!(
        fired,
        [
            (ORG, run_id(ORG, "c", at("12:01:00"))),
            ("other", run_id("other", "c", at("12:01:00")))
        ]
    );
    let mine = h.runs("c").await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].task_id, run_id(ORG, "c", at("12:01:00")));
    assert!(matches!(
        h.store
            .job_run_get(ORG, "c", &run_id("other", "c", at("12:01:00")))
            .await,
        Err(Error::NotFound { .. })
    ));
}

async fn updates_apply_and_check_the_expected_version(h: Harness) {
    h.set(at("12:00:00.5"));
    let created = h.create("j", &config(EVERY_MINUTE)).await;
    h.advance_ms(10_000);

    let patch = JobPatch {
        attempt_deadline_s: Some(30),
        retry_config: Some(JobRetryConfigPatch {
            retry_count: Some(2),
            ..Default::default()
        }),
        header_style: Some(HeaderStyle::CloudScheduler),
        catch_up: Some(CatchUp::None),
        expected_updated_at: Some(created.updated_at),
        ..Default::default()
    };
    let updated = h.store.job_update(ORG, "j", &patch, None).await.unwrap();
    assert_eq!(updated.config.attempt_deadline_s, 30);
    assert_eq!(updated.config.retry_config.retry_count, 2);
    assert_eq!(updated.config.header_style, HeaderStyle::CloudScheduler);
    assert_eq!(updated.config.catch_up, CatchUp::None);
    assert_eq!(
        updated.config.schedule, EVERY_MINUTE,
        "untouched fields stay"
    );
    assert_eq!(updated.config.target, created.config.target);
    assert_eq!(updated.updated_at, h.now());
    assert_eq!(updated.created_at, created.created_at);
    assert_eq!(
        updated.next_run_at, created.next_run_at,
        "the timing did not change, nor does the next run"
    );
    assert_eq!(h.job("j").await, updated);

    // A version that is not the current one: nothing is written.
    h.advance_ms(1000);
    let stale = JobPatch {
        attempt_deadline_s: Some(60),
        expected_updated_at: Some(created.updated_at),
        ..Default::default()
    };
    assert!(matches!(
        h.store.job_update(ORG, "j", &stale, None).await,
        Err(Error::Stale(_))
    ));
    assert_eq!(h.job("j").await, updated);

    // An invalid result: nothing is written, the field is named.
    let bad = JobPatch {
        schedule: Some("61 * * * *".into()),
        attempt_deadline_s: Some(60),
        ..Default::default()
    };
    let e = h.store.job_update(ORG, "j", &bad, None).await.unwrap_err();
    assert_eq!(invalid_fields(e), ["schedule"]);
    let bad_zone = JobPatch {
        time_zone: Some("Mars/Olympus".into()),
        ..Default::default()
    };
    let e = h
        .store
        .job_update(ORG, "j", &bad_zone, None)
        .await
        .unwrap_err();
    assert_eq!(invalid_fields(e), ["time_zone"]);
    assert_eq!(h.job("j").await, updated);

    // Without a version the update applies whatever the current one.
    let blind = JobPatch {
        attempt_deadline_s: Some(45),
        ..Default::default()
    };
    let v3 = h.store.job_update(ORG, "j", &blind, None).await.unwrap();
    assert_eq!(v3.config.attempt_deadline_s, 45);
    let exact = JobPatch {
        attempt_deadline_s: Some(46),
        expected_updated_at: Some(v3.updated_at),
        ..Default::default()
    };
    assert_eq!(
        h.store
            .job_update(ORG, "j", &exact, None)
            .await
            .unwrap()
            .config
            .attempt_deadline_s,
        46
    );

    assert!(matches!(
        h.store.job_update(ORG, "nope", &blind, None).await,
        Err(Error::NotFound { kind: "job", .. })
    ));
}

async fn a_new_schedule_takes_effect_from_now(h: Harness) {
    h.set(at("12:00:00.5"));
    h.create("j", &config(EVERY_MINUTE)).await;
    // Three instants pass unfired; then the schedule changes.
    h.set(at("12:03:30"));
    let patch = JobPatch {
        schedule: Some("*/2 * * * *".into()),
        ..Default::default()
    };
    let job = h.store.job_update(ORG, "j", &patch, None).await.unwrap();
    assert_eq!(job.next_run_at, Some(at("12:04:00")), "recomputed from now");
    let r = h.fire(100).await;
    assert!(
        r.fired.is_empty(),
        "instants before the change are not fired late (latest would otherwise fire 12:03): {r:?}"
    );
    assert_eq!(r.next_at, Some(at("12:04:00")));
    h.set(at("12:04:00"));
    assert_eq!(fired_times(&h.fire(100).await, "j"), [at("12:04:00")]);
    h.set(at("12:05:00"));
    assert!(h.fire(100).await.fired.is_empty(), "12:05 is not */2");
    h.set(at("12:06:00"));
    assert_eq!(fired_times(&h.fire(100).await, "j"), [at("12:06:00")]);

    // A time zone change also restarts the schedule.
    h.set(at("12:06:30"));
    let tz = JobPatch {
        schedule: Some("0 13 * * *".into()),
        time_zone: Some("Europe/Berlin".into()),
        ..Default::default()
    };
    let job = h.store.job_update(ORG, "j", &tz, None).await.unwrap();
    // 13:00 in Berlin (CEST, +02:00) on 2026-10-16 is 11:00Z: tomorrow's.
    assert_eq!(
        job.next_run_at,
        Some("2026-10-17T11:00:00Z".parse().unwrap())
    );
    assert_eq!(h.run_times("j").await, [at("12:04:00"), at("12:06:00")]);
}

async fn paused_jobs_never_fire_and_resume_skips_the_pause(h: Harness) {
    h.set(at("12:00:00.5"));
    h.create("j", &config(EVERY_MINUTE)).await;
    h.set(at("12:00:10"));
    let paused = h
        .store
        .job_set_state(ORG, "j", JobState::Paused, None)
        .await
        .unwrap();
    assert_eq!(paused.state, JobState::Paused);
    assert_eq!(paused.next_run_at, None);
    assert_eq!(paused.updated_at, h.now());

    for t in ["12:01:00", "12:02:00", "12:05:30"] {
        h.set(at(t));
        let r = h.fire(100).await;
        assert!(r.fired.is_empty(), "a paused job never fires: {r:?}");
        assert_eq!(r.next_at, None);
    }
    assert!(h.runs("j").await.is_empty());

    // Resuming schedules from now: 12:01–12:05 came due while paused and
    // are not fired, even under catch-up `latest`.
    let resumed = h
        .store
        .job_set_state(ORG, "j", JobState::Enabled, None)
        .await
        .unwrap();
    assert_eq!(resumed.state, JobState::Enabled);
    assert_eq!(resumed.next_run_at, Some(at("12:06:00")));
    assert!(h.fire(100).await.fired.is_empty());
    h.set(at("12:06:00"));
    assert_eq!(fired_times(&h.fire(100).await, "j"), [at("12:06:00")]);
    assert_eq!(h.run_times("j").await, [at("12:06:00")]);

    // Resuming an enabled job changes nothing about its schedule.
    h.set(at("12:06:20"));
    let again = h
        .store
        .job_set_state(ORG, "j", JobState::Enabled, None)
        .await
        .unwrap();
    assert_eq!(again.next_run_at, Some(at("12:07:00")));

    // A job created paused starts from its resume.
    let p = h
        .store
        .job_create(ORG, "p", &catch_up(EVERY_MINUTE, CatchUp::All), true, None)
        .await
        .unwrap();
    assert_eq!(p.next_run_at, None);
    h.set(at("12:09:30"));
    assert!(fired_times(&h.fire(100).await, "p").is_empty());
    let p = h
        .store
        .job_set_state(ORG, "p", JobState::Enabled, None)
        .await
        .unwrap();
    assert_eq!(p.next_run_at, Some(at("12:10:00")));
    assert!(
        fired_times(&h.fire(100).await, "p").is_empty(),
        "even `all` skips a pause"
    );

    // Paused, a schedule change keeps the job without a next run.
    h.store
        .job_set_state(ORG, "p", JobState::Paused, None)
        .await
        .unwrap();
    let patch = JobPatch {
        schedule: Some("*/5 * * * *".into()),
        ..Default::default()
    };
    let p = h.store.job_update(ORG, "p", &patch, None).await.unwrap();
    assert_eq!((p.state, p.next_run_at), (JobState::Paused, None));
    h.set(at("12:20:00"));
    assert!(fired_times(&h.fire(100).await, "p").is_empty());

    assert!(matches!(
        h.store
            .job_set_state(ORG, "nope", JobState::Paused, None)
            .await,
        Err(Error::NotFound { kind: "job", .. })
    ));
}

async fn each_instant_fires_once_as_time_advances(h: Harness) {
    h.set(at("12:00:00.5"));
    let cfg = config_with(
        EVERY_SECOND,
        serde_json::json!({"header_style": "cloud_scheduler", "attempt_deadline_s": 30,
                           "retry_config": {"retry_count": 2}}),
    );
    h.create("tick", &cfg).await;
    let r = h.fire(100).await;
    assert!(r.fired.is_empty(), "nothing is due yet");
    assert_eq!(r.jobs, 0);
    assert_eq!(r.next_at, Some(at("12:00:01")));

    let mut expected = Vec::new();
    for i in 1..=5 {
        let instant = start() + SignedDuration::from_secs(i);
        // On time, a little late.
        h.set(instant + SignedDuration::from_millis(300));
        let r = h.fire(100).await;
        assert_eq!(r.jobs, 1);
        assert_eq!(r.fired.len(), 1, "exactly one run for {instant}: {r:?}");
        let f = &r.fired[0];
        assert_eq!(f.org, ORG);
        assert_eq!(f.job, "tick");
        assert_eq!(f.schedule_time, instant);
        assert_eq!(f.created_at, h.now());
        assert_eq!(f.run_id, run_id(ORG, "tick", instant));
        assert_eq!(r.next_at, Some(instant + SignedDuration::from_secs(1)));

        let again = h.fire(100).await;
        assert!(again.fired.is_empty(), "fired twice at one now: {again:?}");
        assert_eq!(again.next_at, r.next_at);
        expected.push(instant);

        let run = h.store.job_run_get(ORG, "tick", &f.run_id).await.unwrap();
        assert_eq!(run.queue, JOBS_QUEUE);
        assert_eq!(run.task_id, f.run_id);
        assert_eq!(
            run.run,
            Some(RunInfo {
                job: "tick".into(),
                kind: RunKind::Scheduled,
                header_style: HeaderStyle::CloudScheduler,
            })
        );
        assert_eq!(run.schedule_time, instant);
        assert_eq!(run.next_attempt_at, instant);
        assert_eq!(run.created_at, h.now());
        assert_eq!(run.status, Status::Pending);
        assert_eq!(run.attempt_count, 0);
        assert_eq!(run.target, cfg.target);
        assert_eq!(run.dispatch_deadline_s, cfg.attempt_deadline_s);
        assert_eq!(run.retry_config, cfg.retry_config.to_retry_config());
        assert_eq!(run.retry_config.max_attempts, 3, "retry_count + 1");
        assert_eq!(
            h.job("tick").await.last_run.map(|t| t.task_id),
            Some(f.run_id.clone()),
            "the newest run is the job's last run"
        );
        assert_eq!(
            h.job("tick").await.next_run_at,
            Some(instant + SignedDuration::from_secs(1))
        );
    }
    assert_eq!(h.run_times("tick").await, expected);

    // Exactly at an instant, it is due.
    h.set(at("12:00:06"));
    assert_eq!(fired_times(&h.fire(100).await, "tick"), [at("12:00:06")]);

    // An every-minute job on the minute.
    h.create("minute", &config(EVERY_MINUTE)).await;
    for m in 1..=3 {
        h.set(start() + SignedDuration::from_mins(m));
        let r = h.fire(100).await;
        assert_eq!(
            fired_times(&r, "minute"),
            [start() + SignedDuration::from_mins(m)]
        );
        assert!(h.fire(100).await.fired.is_empty());
    }
    assert_eq!(h.run_times("minute").await.len(), 3);
    h.assert_counters_match_rows(ORG).await;
}

async fn a_pass_fires_at_most_max_jobs(h: Harness) {
    h.set(at("12:00:00.5"));
    for i in 0..5 {
        h.create(&format!("j{i}"), &config(EVERY_MINUTE)).await;
    }
    h.set(at("12:01:00"));
    let mut fired = Vec::new();
    for want in [2, 2, 1, 0] {
        let r = h.fire(2).await;
        assert_eq!(r.jobs as usize, want, "{r:?}");
        assert_eq!(r.fired.len(), want);
        let next = if want == 2 {
            at("12:01:00")
        } else {
            at("12:02:00")
        };
        assert_eq!(r.next_at, Some(next), "{r:?}");
        fired.extend(r.fired);
    }
    let jobs: BTreeSet<_> = fired.iter().map(|f| f.job.clone()).collect();
    assert_eq!(jobs.len(), 5, "each job fired once: {fired:?}");
    for i in 0..5 {
        assert_eq!(h.run_times(&format!("j{i}")).await, [at("12:01:00")]);
    }
}

async fn missed_instants_follow_the_catch_up_policy(h: Harness) {
    h.set(at("12:00:00.5"));
    h.create("none", &catch_up(EVERY_MINUTE, CatchUp::None))
        .await;
    h.create("latest", &catch_up(EVERY_MINUTE, CatchUp::Latest))
        .await;
    h.create("all", &catch_up(EVERY_MINUTE, CatchUp::All)).await;

    // Down from 12:00:00.5 to 12:05:30: 12:01–12:05 were missed.
    h.set(at("12:05:30"));
    let r = h.fire_within(SHORT).await;
    assert_eq!(r.jobs, 3);
    assert!(fired_times(&r, "none").is_empty(), "{r:?}");
    assert_eq!(fired_times(&r, "latest"), [at("12:05:00")]);
    let all: Vec<_> = (1..=5)
        .map(|m| start() + SignedDuration::from_mins(m))
        .collect();
    assert_eq!(fired_times(&r, "all"), all);
    assert_eq!(r.next_at, Some(at("12:06:00")));
    for job in ["none", "latest", "all"] {
        assert_eq!(h.job(job).await.next_run_at, Some(at("12:06:00")));
    }

    let again = h.fire_within(SHORT).await;
    assert!(again.fired.is_empty(), "{again:?}");
    assert!(
        h.fire(100).await.fired.is_empty(),
        "not under a longer tolerance either"
    );
    assert!(h.runs("none").await.is_empty());
    assert_eq!(h.run_times("latest").await, [at("12:05:00")]);
    assert_eq!(h.run_times("all").await, all);
    assert_eq!(
        h.job("latest").await.last_run.map(|t| t.schedule_time),
        Some(at("12:05:00"))
    );
    assert_eq!(
        h.job("all").await.last_run.map(|t| t.schedule_time),
        Some(at("12:05:00")),
        "the last run is the most recent instant"
    );

    // Back on time, every policy fires the next instant.
    h.set(at("12:06:00.4"));
    let r = h.fire_within(SHORT).await;
    for job in ["none", "latest", "all"] {
        assert_eq!(fired_times(&r, job), [at("12:06:00")], "{job}");
    }

    // A second outage: 12:07–12:09 missed, 12:10 on time.
    h.set(at("12:10:00.5"));
    let r = h.fire_within(SHORT).await;
    assert_eq!(fired_times(&r, "none"), [at("12:10:00")]);
    assert_eq!(fired_times(&r, "latest"), [at("12:10:00")]);
    assert_eq!(
        fired_times(&r, "all"),
        [
            at("12:07:00"),
            at("12:08:00"),
            at("12:09:00"),
            at("12:10:00")
        ]
    );
}

async fn catch_up_all_fires_at_most_one_hundred(h: Harness) {
    h.set(at("12:00:00.5"));
    h.create("all", &catch_up(EVERY_SECOND, CatchUp::All)).await;
    // 300 instants missed: 12:00:01 through 12:05:00.
    h.set(at("12:05:00.5"));
    let r = h.fire_within(SHORT).await;
    let times = fired_times(&r, "all");
    assert_eq!(times.len(), 100);
    assert_eq!(times.first(), Some(&at("12:03:21")), "the most recent 100");
    assert_eq!(times.last(), Some(&at("12:05:00")));
    assert!(
        times
            .windows(2)
            .all(|w| w[1].duration_since(w[0]) == SignedDuration::from_secs(1))
    );
    assert!(h.fire_within(SHORT).await.fired.is_empty());
    assert_eq!(h.run_times("all").await, times);
    assert_eq!(h.job("all").await.next_run_at, Some(at("12:05:01")));
}

async fn manual_runs_are_runs_of_their_own(h: Harness) {
    h.set(at("12:00:00.5"));
    let cfg = config_with(
        EVERY_MINUTE,
        serde_json::json!({"attempt_deadline_s": 20, "retry_config": {"retry_count": 1}}),
    );
    h.create("j", &cfg).await;
    h.set(at("12:00:10.25"));
    let manual = h.store.job_run_now(ORG, "j", None).await.unwrap();
    assert_eq!(manual.queue, JOBS_QUEUE);
    assert_eq!(manual.task_id, run_id(ORG, "j", h.now()));
    assert_eq!(
        manual.run,
        Some(RunInfo {
            job: "j".into(),
            kind: RunKind::Manual,
            header_style: HeaderStyle::Idem,
        })
    );
    assert_eq!(manual.schedule_time, h.now());
    assert_eq!(manual.next_attempt_at, h.now(), "due at once");
    assert_eq!(manual.status, Status::Pending);
    assert_eq!(manual.dispatch_deadline_s, 20);
    assert_eq!(manual.retry_config.max_attempts, 2);
    assert_eq!(manual.target, cfg.target);

    let job = h.job("j").await;
    assert_eq!(
        job.next_run_at,
        Some(at("12:01:00")),
        "the schedule is untouched"
    );
    assert_eq!(job.last_run.as_ref(), Some(&manual));
    assert_eq!(
        h.store
            .job_run_get(ORG, "j", &manual.task_id)
            .await
            .unwrap(),
        manual
    );
    assert!(
        h.fire(100).await.fired.is_empty(),
        "a manual run fires nothing"
    );

    // Scheduled runs go on; manual ones interleave by schedule time.
    h.set(at("12:01:00"));
    assert_eq!(fired_times(&h.fire(100).await, "j"), [at("12:01:00")]);
    h.set(at("12:02:00"));
    assert_eq!(fired_times(&h.fire(100).await, "j"), [at("12:02:00")]);
    h.set(at("12:02:30.125"));
    let manual2 = h.store.job_run_now(ORG, "j", None).await.unwrap();
    assert_eq!(manual2.schedule_time, at("12:02:30.125"));
    assert_eq!(
        h.job("j").await.last_run.map(|t| t.uid),
        Some(manual2.uid.clone())
    );
    assert_eq!(h.job("j").await.next_run_at, Some(at("12:03:00")));
    h.set(at("12:03:00"));
    assert_eq!(fired_times(&h.fire(100).await, "j"), [at("12:03:00")]);

    let want = [
        (at("12:03:00"), RunKind::Scheduled),
        (at("12:02:30.125"), RunKind::Manual),
        (at("12:02:00"), RunKind::Scheduled),
        (at("12:01:00"), RunKind::Scheduled),
        (at("12:00:10.25"), RunKind::Manual),
    ];
    let mut got = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let p = h.store.job_runs(ORG, "j", &page(2, after)).await.unwrap();
        pages += 1;
        assert!(p.items.len() <= 2);
        got.extend(
            p.items
                .iter()
                .map(|t| (t.schedule_time, t.run.as_ref().unwrap().kind)),
        );
        match p.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(got, want, "newest first");
    assert_eq!(pages, 3);
    let one = h.store.job_runs(ORG, "j", &page(5, None)).await.unwrap();
    assert_eq!(one.items.len(), 5);
    assert_eq!(one.next, None, "an exact page has no next");

    // Another job's run is not this job's.
    h.advance_ms(250);
    h.create("k", &config(EVERY_MINUTE)).await;
    let theirs = h.store.job_run_now(ORG, "k", None).await.unwrap();
    assert!(matches!(
        h.store.job_run_get(ORG, "j", &theirs.task_id).await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(h.runs("k").await, std::slice::from_ref(&theirs));
    assert!(matches!(
        h.store.job_run_get(ORG, "j", "0000").await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        h.store.job_runs(ORG, "nope", &page(5, None)).await,
        Err(Error::NotFound { kind: "job", .. })
    ));
    assert!(matches!(
        h.store.job_run_now(ORG, "nope", None).await,
        Err(Error::NotFound { kind: "job", .. })
    ));
    let e = h
        .store
        .job_runs(ORG, "j", &page(2, Some("garbage".into())))
        .await
        .unwrap_err();
    assert_eq!(invalid_fields(e), ["page_token"]);

    // A paused job still runs on demand, and stays paused.
    h.store
        .job_set_state(ORG, "k", JobState::Paused, None)
        .await
        .unwrap();
    h.advance_ms(1);
    let on_demand = h.store.job_run_now(ORG, "k", None).await.unwrap();
    let k = h.job("k").await;
    assert_eq!((k.state, k.next_run_at), (JobState::Paused, None));
    assert_eq!(k.last_run.map(|t| t.uid), Some(on_demand.uid));
    h.assert_counters_match_rows(ORG).await;
}

/// API.md §5: "a manual run never takes the identity of the next scheduled
/// run, so that run is not skipped" — also when it is requested at the very
/// instant the schedule fires.
async fn a_manual_run_at_a_scheduled_instant_skips_nothing(h: Harness) {
    h.set(at("12:00:00.5"));
    h.create("j", &config(EVERY_MINUTE)).await;

    // Manual first, then the scheduler at the same instant.
    h.set(at("12:01:00"));
    let manual = h.store.job_run_now(ORG, "j", None).await.unwrap();
    assert_eq!(manual.run.as_ref().unwrap().kind, RunKind::Manual);
    assert_ne!(manual.task_id, run_id(ORG, "j", at("12:01:00")));
    assert_eq!(manual.task_id, run_id(ORG, "j", manual.schedule_time));
    assert!(
        manual.schedule_time <= h.now()
            && h.now().duration_since(manual.schedule_time) <= SignedDuration::from_micros(1),
        "the request's instant, give or take a microsecond: {}",
        manual.schedule_time
    );
    let r = h.fire(100).await;
    assert_eq!(fired_times(&r, "j"), [at("12:01:00")], "{r:?}");
    let scheduled = h
        .store
        .job_run_get(ORG, "j", &run_id(ORG, "j", at("12:01:00")))
        .await
        .unwrap();
    assert_eq!(scheduled.run.unwrap().kind, RunKind::Scheduled);
    assert_ne!(scheduled.uid, manual.uid);

    // The scheduler first, then a manual run at the same instant.
    h.set(at("12:02:00"));
    assert_eq!(fired_times(&h.fire(100).await, "j"), [at("12:02:00")]);
    let manual2 = h.store.job_run_now(ORG, "j", None).await.unwrap();
    assert_eq!(manual2.run.as_ref().unwrap().kind, RunKind::Manual);
    let kinds: Vec<_> = h
        .runs("j")
        .await
        .iter()
        .map(|t| t.run.as_ref().unwrap().kind)
        .collect();
    assert_eq!(
        kinds.len(),
        4,
        "two scheduled and two manual runs: {kinds:?}"
    );
    assert_eq!(kinds.iter().filter(|k| **k == RunKind::Manual).count(), 2);
    let due: HashSet<_> = h.claim(10).await.into_iter().map(|c| c.task.uid).collect();
    assert_eq!(due.len(), 4, "manual runs are due at once, too");
    assert!(due.contains(&manual.uid) && due.contains(&manual2.uid));
}

async fn deleting_a_job_deletes_its_runs(h: Harness) {
    h.store
        .queue_create(ORG, "q", &Default::default(), None)
        .await
        .unwrap();
    h.set(at("12:00:00.5"));
    h.create("j", &config(EVERY_MINUTE)).await;
    h.create("keep", &config(EVERY_MINUTE)).await;
    h.set(at("12:01:00"));
    assert_eq!(h.fire(100).await.fired.len(), 2);
    h.advance_ms(500);
    let manual = h.store.job_run_now(ORG, "j", None).await.unwrap();
    let scheduled = run_id(ORG, "j", at("12:01:00"));

    let queues = h.store.queue_list(ORG, &page(10, None)).await.unwrap();
    let qnames: Vec<_> = queues.items.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(qnames, ["q"], "the job queue is hidden");
    let first = h.store.queue_list(ORG, &page(1, None)).await.unwrap();
    assert_eq!(first.items.len(), 1);
    assert_eq!(first.next, None);

    // A run in flight when its job goes: its result is not recorded.
    let claimed = h.claim(10).await;
    assert_eq!(claimed.len(), 3);
    let in_flight = claimed
        .iter()
        .find(|c| c.task.task_id == scheduled)
        .unwrap()
        .clone();

    h.store.job_delete(ORG, "j").await.unwrap();
    assert!(matches!(
        h.store.job_get(ORG, "j").await,
        Err(Error::NotFound { kind: "job", .. })
    ));
    for id in [&scheduled, &manual.task_id] {
        assert!(matches!(
            h.store.job_run_get(ORG, "j", id).await,
            Err(Error::NotFound { .. })
        ));
        assert!(matches!(
            h.store.task_get(ORG, JOBS_QUEUE, id).await,
            Err(Error::NotFound { .. })
        ));
    }
    assert!(matches!(
        h.complete(&in_flight, 200).await,
        AttemptOutcome::Stale { .. }
    ));
    assert!(matches!(
        h.store.job_delete(ORG, "j").await,
        Err(Error::NotFound { kind: "job", .. })
    ));
    assert_eq!(
        names(&h.store.job_list(ORG, &page(10, None)).await.unwrap()),
        ["keep"]
    );
    assert_eq!(h.runs("keep").await.len(), 1, "other jobs keep their runs");
    h.set(at("12:02:00"));
    assert_eq!(
        h.fire(100)
            .await
            .fired
            .iter()
            .map(|f| f.job.as_str())
            .collect::<Vec<_>>(),
        ["keep"],
        "a deleted job fires no more"
    );

    // The name is free again, with no history.
    let again = h.create("j", &config(EVERY_MINUTE)).await;
    assert_eq!(again.last_run, None);
    assert!(h.runs("j").await.is_empty());
    let qnames: Vec<_> = h
        .store
        .queue_list(ORG, &page(10, None))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|q| q.name)
        .collect();
    assert_eq!(qnames, ["q"]);
}

async fn runs_are_claimed_and_completed_like_tasks(h: Harness) {
    h.set(at("12:00:00.5"));
    let cfg = config_with(
        EVERY_MINUTE,
        serde_json::json!({"attempt_deadline_s": 30, "retry_config": {"retry_count": 1}}),
    );
    h.create("j", &cfg).await;
    assert!(h.claim(10).await.is_empty(), "no run before its instant");
    h.set(at("12:01:00"));
    h.fire(100).await;
    h.advance_ms(200);

    let claimed = h.claim(10).await;
    assert_eq!(claimed.len(), 1);
    let c = &claimed[0];
    let id = run_id(ORG, "j", at("12:01:00"));
    assert_eq!((c.org.as_str(), c.task.queue.as_str()), (ORG, JOBS_QUEUE));
    assert_eq!(c.task.task_id, id);
    assert_eq!(c.attempt, 1);
    assert_eq!(c.task.status, Status::Running);
    assert_eq!(c.task.run.as_ref().unwrap().kind, RunKind::Scheduled);
    assert_eq!(
        c.lease_expires_at,
        h.now() + SignedDuration::from_secs(30) + SignedDuration::try_from(GRACE).unwrap()
    );
    assert_eq!(
        h.job("j").await.last_run.unwrap().status,
        Status::Running,
        "the last run is read live"
    );
    assert!(h.claim(10).await.is_empty(), "claimed once");

    h.advance_ms(1000);
    match h.complete(c, 200).await {
        AttemptOutcome::Applied(f) => {
            assert_eq!(f.status, Status::Succeeded);
            assert_eq!((f.org.as_str(), f.queue.as_str()), (ORG, JOBS_QUEUE));
            assert_eq!(f.task_id, id);
        }
        other => panic!("{other:?}"),
    }
    let run = h.store.job_run_get(ORG, "j", &id).await.unwrap();
    assert_eq!(run.status, Status::Succeeded);
    assert_eq!(run.finished_at, Some(h.now()));
    let last = run.last_attempt.clone().expect("the attempt is recorded");
    assert_eq!((last.attempt, last.status_code), (1, Some(200)));
    assert_eq!(
        run.dedup_expires_at,
        Some(h.now() + SignedDuration::from_secs(RUN_RETENTION_S as i64)),
        "a finished run is kept for the run retention"
    );
    assert_eq!(h.job("j").await.last_run, Some(run.clone()));
    let attempts = h
        .store
        .task_attempts(ORG, JOBS_QUEUE, &id, &all_attempts())
        .await
        .unwrap()
        .items;
    assert_eq!(attempts.len(), 1);

    // A failing run is retried by the job's policy (retry_count 1: two
    // attempts), and a pause does not stop runs already created.
    h.set(at("12:02:00"));
    h.fire(100).await;
    h.store
        .job_set_state(ORG, "j", JobState::Paused, None)
        .await
        .unwrap();
    let id2 = run_id(ORG, "j", at("12:02:00"));
    let c = h.claim(10).await;
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].task.task_id, id2);
    assert!(
        matches!(h.complete(&c[0], 500).await, AttemptOutcome::Applied(f) if f.status == Status::Pending)
    );
    h.set(at("13:00:00"));
    let c = h.claim(10).await;
    assert_eq!(c.len(), 1, "retried");
    assert_eq!(c[0].attempt, 2);
    assert!(
        matches!(h.complete(&c[0], 503).await, AttemptOutcome::Applied(f) if f.status == Status::Failed)
    );
    let run = h.store.job_run_get(ORG, "j", &id2).await.unwrap();
    assert_eq!((run.status, run.attempt_count), (Status::Failed, 2));
    assert_eq!(run.last_attempt.unwrap().status_code, Some(503));
    let job = h.job("j").await;
    assert_eq!(
        job.last_run.map(|t| (t.task_id, t.status)),
        Some((id2, Status::Failed))
    );
    assert!(h.claim(10).await.is_empty());
}

async fn the_sweeper_keeps_a_jobs_latest_run(h: Harness) {
    h.set(at("12:00:00.5"));
    h.create("j", &config(EVERY_MINUTE)).await;
    h.create("idle", &config("0 0 1 1 *")).await;
    h.store
        .queue_create(ORG, "q", &Default::default(), None)
        .await
        .unwrap();
    for m in 1..=3 {
        h.set(start() + SignedDuration::from_mins(m));
        assert_eq!(h.fire(100).await.fired.len(), 1);
        h.finish_all().await;
    }
    // A pending run is never swept, however old.
    h.set(at("12:03:30"));
    let manual = h.store.job_run_now(ORG, "idle", None).await.unwrap();
    assert_eq!(
        h.store.task_sweep_tombstones(100).await.unwrap(),
        0,
        "inside the window"
    );

    // Past the retention of every finished run.
    h.set(at("12:03:30") + SignedDuration::from_secs(RUN_RETENTION_S as i64));
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 2);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 0);
    let left = h.runs("j").await;
    assert_eq!(left.len(), 1);
    assert_eq!(
        left[0].schedule_time,
        at("12:03:00"),
        "the latest run stays"
    );
    assert_eq!(h.job("j").await.last_run, Some(left[0].clone()));
    assert_eq!(h.runs("idle").await, std::slice::from_ref(&manual));

    // Once a newer run exists, the old latest run goes like any other.
    let r = h.fire(100).await;
    assert_eq!(fired_times(&r, "j").len(), 1, "catch-up latest: {r:?}");
    h.finish_all().await;
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 1);
    let left = h.runs("j").await;
    assert_eq!(left.len(), 1);
    assert_eq!(Some(left[0].clone()), h.job("j").await.last_run);
    assert_ne!(left[0].schedule_time, at("12:03:00"));
    // The idle job's only run, finished long ago, is its last run: kept.
    h.advance_ms(2 * 1000 * RUN_RETENTION_S as i64);
    assert_eq!(h.store.task_sweep_tombstones(100).await.unwrap(), 0);
    assert_eq!(h.runs("idle").await.len(), 1);
}

/// Two nodes on one database fire concurrently, over and over, as time
/// advances: every instant of every job has exactly one run.
async fn two_nodes_fire_each_instant_once(h: Harness) {
    h.set(at("12:00:00.5"));
    let jobs: Vec<String> = (0..4).map(|i| format!("j{i}")).collect();
    for j in &jobs {
        h.create(j, &config(EVERY_SECOND)).await;
    }
    let nodes = [h.store.clone(), h.other.clone()];
    let mut reports = Vec::new();
    let seconds = 20;
    for _ in 0..seconds {
        h.advance_ms(1000);
        let mut handles = Vec::new();
        for round in 0..3u32 {
            for node in &nodes {
                let node = node.clone();
                // Small passes make nodes share a second's due jobs.
                let max_jobs = 1 + round % 3;
                handles.push(tokio::spawn(async move {
                    fire_on(&node, max_jobs, ON_TIME_TOLERANCE.unsigned_abs()).await
                }));
            }
        }
        for handle in handles {
            reports.push(handle.await.unwrap());
        }
    }
    // Whatever the passes above left due, on time still.
    for node in &nodes {
        reports.push(fire_on(node, 100, ON_TIME_TOLERANCE.unsigned_abs()).await);
    }
    let expected: Vec<_> = (1..=seconds)
        .map(|s| start() + SignedDuration::from_secs(s))
        .collect();
    let mut reported = HashSet::new();
    for f in reports.iter().flat_map(|r| &r.fired) {
        assert!(
            reported.insert(f.run_id.clone()),
            "run {} of {} at {} reported twice",
            f.run_id,
            f.job,
            f.schedule_time
        );
    }
    assert_eq!(reported.len(), jobs.len() * expected.len());
    for j in &jobs {
        let runs = all_runs(&h.other, j).await;
        let times: Vec<_> = runs.iter().rev().map(|t| t.schedule_time).collect();
        assert_eq!(times, expected, "job {j}");
        for t in &runs {
            assert_eq!(t.task_id, run_id(ORG, j, t.schedule_time));
            assert!(reported.contains(&t.task_id));
        }
    }
}

async fn fire_ahead(h: &Harness, lookahead_s: u64) -> FireReport {
    h.store
        .scheduler_fire(FireParams {
            max_jobs: 100,
            tolerance: ON_TIME_TOLERANCE.unsigned_abs(),
            lookahead: Duration::from_secs(lookahead_s),
        })
        .await
        .unwrap()
}

async fn runs_are_created_ahead_and_redone_after_a_change(h: Harness) {
    h.set(at("12:00:00.5"));
    h.create("ahead", &config(EVERY_SECOND)).await;
    let report = fire_ahead(&h, 3).await;
    assert_eq!(
        fired_times(&report, "ahead"),
        [at("12:00:01"), at("12:00:02"), at("12:00:03")],
        "the instants up to now + lookahead"
    );
    assert_eq!(report.next_at, Some(at("12:00:04")));
    assert!(fire_ahead(&h, 3).await.fired.is_empty(), "created once");
    let job = h.job("ahead").await;
    assert_eq!(job.last_run, None, "no run's time has come yet");
    assert_eq!(job.next_run_time(h.now()), Some(at("12:00:01")));
    for run in h.runs("ahead").await {
        assert_eq!(run.state(h.now()), idem_core::task::TaskState::Scheduled);
        assert_eq!(run.next_attempt_at, run.schedule_time);
    }
    // Not claimable before its instant.
    assert!(h.claim(100).await.is_empty());
    h.set(at("12:00:01"));
    let claimed = h.claim(100).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.schedule_time, at("12:00:01"));
    assert_eq!(
        h.job("ahead").await.last_run.map(|r| r.schedule_time),
        Some(at("12:00:01"))
    );

    // A change deletes what was created ahead with the old target; the
    // next pass creates it again with the new one.
    h.set(at("12:00:01.5"));
    let patch = idem_core::job::UpdateJob {
        target: Some(
            serde_json::from_value(serde_json::json!({"url": "http://127.0.0.1:9/new"})).unwrap(),
        ),
        ..Default::default()
    }
    .into_patch()
    .unwrap();
    h.store
        .job_update(ORG, "ahead", &patch, None)
        .await
        .unwrap();
    assert_eq!(
        h.run_times("ahead").await.len(),
        1,
        "only the claimed run is left"
    );
    let report = fire_ahead(&h, 3).await;
    assert_eq!(
        fired_times(&report, "ahead"),
        [at("12:00:02"), at("12:00:03"), at("12:00:04")]
    );
    for run in h.runs("ahead").await {
        let want = if run.schedule_time == at("12:00:01") {
            "http://127.0.0.1:9/hook"
        } else {
            "http://127.0.0.1:9/new"
        };
        assert_eq!(run.target.url, want, "run at {}", run.schedule_time);
    }

    // Pausing deletes the runs ahead; resuming starts from then.
    h.store
        .job_set_state(ORG, "ahead", JobState::Paused, None)
        .await
        .unwrap();
    assert_eq!(h.run_times("ahead").await, [at("12:00:01")]);
    h.set(at("12:00:10.5"));
    h.store
        .job_set_state(ORG, "ahead", JobState::Enabled, None)
        .await
        .unwrap();
    let report = fire_ahead(&h, 2).await;
    assert_eq!(
        fired_times(&report, "ahead"),
        [at("12:00:11"), at("12:00:12")]
    );
}

/// Runs created ahead of their instant whose instant was then missed (no
/// pass and no dispatcher ran: every node was down) follow the job's
/// `catch_up` at the next pass, exactly as instants without a row do.
async fn runs_created_ahead_of_missed_instants_follow_the_catch_up(h: Harness) {
    h.set(at("12:00:00.5"));
    for (name, policy) in [
        ("none", CatchUp::None),
        ("latest", CatchUp::Latest),
        ("all", CatchUp::All),
    ] {
        h.create(name, &catch_up(EVERY_SECOND, policy)).await;
    }
    let ahead = |report: &FireReport, job: &str| fired_times(report, job).len();
    let report = fire_ahead(&h, 5).await;
    for job in ["none", "latest", "all"] {
        assert_eq!(ahead(&report, job), 5, "{job}: 12:00:01 to 12:00:05 ahead");
    }
    // Every node down until 12:00:03.5: 01 and 02 were missed (more than a
    // second late), 03 is on time, 04 and 05 are still ahead.
    h.set(at("12:00:03.5"));
    let dropped = h
        .store
        .scheduler_drop_missed(Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(
        dropped, 4,
        "none drops both missed, latest both (03 is on time)"
    );
    assert_eq!(
        h.store
            .scheduler_drop_missed(Duration::from_secs(1))
            .await
            .unwrap(),
        0,
        "what is kept is kept"
    );
    assert_eq!(
        h.run_times("none").await[..3],
        [at("12:00:03"), at("12:00:04"), at("12:00:05")]
    );
    assert_eq!(
        h.run_times("latest").await[..3],
        [at("12:00:03"), at("12:00:04"), at("12:00:05")]
    );
    assert_eq!(
        h.run_times("all").await[..5],
        [
            at("12:00:01"),
            at("12:00:02"),
            at("12:00:03"),
            at("12:00:04"),
            at("12:00:05")
        ]
    );
}

idem_testkit::backend_tests! {
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await;
    runs_created_ahead_of_missed_instants_follow_the_catch_up,
    jobs_are_created_read_and_listed,
    runs_are_created_ahead_and_redone_after_a_change,
    updates_apply_and_check_the_expected_version,
    a_new_schedule_takes_effect_from_now,
    paused_jobs_never_fire_and_resume_skips_the_pause,
    each_instant_fires_once_as_time_advances,
    a_pass_fires_at_most_max_jobs,
    missed_instants_follow_the_catch_up_policy,
    catch_up_all_fires_at_most_one_hundred,
    manual_runs_are_runs_of_their_own,
    a_manual_run_at_a_scheduled_instant_skips_nothing,
    deleting_a_job_deletes_its_runs,
    runs_are_claimed_and_completed_like_tasks,
    the_sweeper_keeps_a_jobs_latest_run,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_fire_each_instant_once_on_postgres() {
    two_nodes_fire_each_instant_once(Harness::postgres().await).await
}

fn all_attempts() -> idem_store::PageRequest {
    idem_store::PageRequest {
        limit: 1000,
        after: None,
    }
}
