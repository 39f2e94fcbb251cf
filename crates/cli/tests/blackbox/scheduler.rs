//! Cron jobs end to end (API.md §5): the real binary fires jobs at a local
//! target, on SQLite and on PostgreSQL.

use crate::harness::Server;
use crate::harness::jobs::*;
use crate::harness::target::*;
use jiff::Timestamp;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

async fn a_job_every_second_fires_once_per_second_with_exact_headers(s: Server) {
    let target = Target::start().await;
    let created = create_job(
        &s,
        json!({"name": "tick", "schedule": "* * * * * *",
               "target": {"url": target.url("/ok"), "json": {"report": "daily"}}}),
    )
    .await;
    assert_eq!(created["state"], "enabled");
    assert_eq!(created["catch_up"], "latest");
    assert_eq!(created["attempt_deadline_s"], 180);
    let next = ts(created["next_run_time"].as_str().unwrap());
    assert!(next > ts(created["created_at"].as_str().unwrap()));

    let got = wait_runs_of(&target, "tick", 4, Duration::from_secs(10)).await;
    s.post_empty("/v1/jobs/tick/pause").await.ok(200);
    let secrets = s.get("/v1/signing-secrets").await.ok(200).json.clone();
    let secret = secrets["secrets"][0]["secret"]
        .as_str()
        .unwrap()
        .to_string();

    let mut instants = BTreeSet::new();
    for r in &got {
        let at = r.header("idem-schedule-time").unwrap();
        let key = expected_run_id("default", "tick", at);
        assert_eq!(r.header("idempotency-key"), Some(key.as_str()));
        assert_eq!(r.header("webhook-id"), Some(key.as_str()));
        assert_eq!(r.header("idem-run-kind"), Some("scheduled"));
        assert_eq!(r.header("idem-retry-count"), Some("0"));
        assert_eq!(r.header("x-cloudscheduler"), None);
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(&r.body[..], br#"{"report":"daily"}"#);
        assert!(signature_verifies(&secret, r));
        let instant = ts(at);
        assert_eq!(instant.subsec_nanosecond(), 0, "{at} is not a whole second");
        assert!(instants.insert(instant), "instant {at} delivered twice");
    }
    assert_consecutive_seconds(&instants);

    // The store lists the same runs, each once, and the job shows the last.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let listed = runs(&s, "tick").await;
    let listed_times: BTreeSet<Timestamp> = listed
        .iter()
        .map(|r| ts(r["schedule_time"].as_str().unwrap()))
        .collect();
    assert_eq!(listed_times.len(), listed.len(), "a run listed twice");
    assert!(instants.is_subset(&listed_times));
    for r in &listed {
        assert_eq!(r["job"], "tick");
        assert_eq!(r["kind"], "scheduled");
        assert_eq!(
            r["run_id"],
            expected_run_id("default", "tick", r["schedule_time"].as_str().unwrap())
        );
    }
    let job = s.get("/v1/jobs/tick").await.ok(200).json.clone();
    assert_eq!(job["state"], "paused");
    assert_eq!(job["next_run_time"], Value::Null);
    assert_eq!(job["last_run"]["run_id"], listed[0]["run_id"]);
}

async fn retries_keep_the_schedule_time_and_the_key(s: Server) {
    let target = Target::start().await;
    create_job(
        &s,
        json!({"name": "flaky", "schedule": "* * * * * *",
               "target": {"url": target.url("/fail/2/500")},
               "retry_config": {"retry_count": 3, "min_backoff_ms": 100}}),
    )
    .await;
    let first = wait_runs_of(&target, "flaky", 1, Duration::from_secs(10)).await;
    s.post_empty("/v1/jobs/flaky/pause").await.ok(200);
    let key = first[0].header("idempotency-key").unwrap().to_string();
    let attempts = target.wait_for(&key, 3, Duration::from_secs(10)).await;
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!(
            a.header("idem-schedule-time"),
            first[0].header("idem-schedule-time")
        );
        assert_eq!(a.header("idem-retry-count"), Some(i.to_string().as_str()));
        assert_eq!(a.header("webhook-id"), Some(key.as_str()));
    }
    assert_eq!(attempts[1].header("idem-previous-response"), Some("500"));

    let run_path = format!("/v1/jobs/flaky/runs/{key}");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let run = loop {
        let run = s.get(&run_path).await.ok(200).json.clone();
        if run["state"] == "succeeded" || std::time::Instant::now() > deadline {
            break run;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(run["state"], "succeeded");
    assert_eq!(run["attempt_count"], 3);
    assert_eq!(run["last_attempt"]["status_code"], 200);
}

async fn cloud_scheduler_style_adds_its_headers(s: Server) {
    let target = Target::start().await;
    create_job(
        &s,
        json!({"name": "legacy", "schedule": "* * * * * *", "header_style": "cloud_scheduler",
               "target": {"url": target.url("/ok"), "method": "GET"}}),
    )
    .await;
    let got = wait_runs_of(&target, "legacy", 1, Duration::from_secs(10)).await;
    s.post_empty("/v1/jobs/legacy/pause").await.ok(200);
    let r = &got[0];
    assert_eq!(r.method, "GET");
    assert_eq!(r.header("x-cloudscheduler"), Some("true"));
    assert_eq!(r.header("x-cloudscheduler-jobname"), Some("legacy"));
    assert_eq!(
        r.header("x-cloudscheduler-scheduletime"),
        r.header("idem-schedule-time")
    );
    assert_eq!(r.header("idem-job"), Some("legacy"));
}

async fn a_manual_run_does_not_take_the_next_scheduled_run(s: Server) {
    let target = Target::start().await;
    create_job(
        &s,
        json!({"name": "both", "schedule": "* * * * * *", "target": {"url": target.url("/ok")}}),
    )
    .await;
    wait_runs_of(&target, "both", 1, Duration::from_secs(10)).await;
    let before = Timestamp::now();
    let manual = s
        .request(reqwest::Method::POST, "/v1/jobs/both/run")
        .header("idempotency-key", "manual-1")
        .send()
        .await
        .ok(201)
        .json
        .clone();
    assert_eq!(manual["kind"], "manual");
    let at = manual["schedule_time"].as_str().unwrap().to_string();
    assert!(
        ts(&at)
            >= before
                .checked_sub(jiff::SignedDuration::from_secs(1))
                .unwrap()
    );
    let run_id = manual["run_id"].as_str().unwrap().to_string();
    // A retried request replays the same run instead of starting another.
    let replay = s
        .request(reqwest::Method::POST, "/v1/jobs/both/run")
        .header("idempotency-key", "manual-1")
        .send()
        .await;
    replay.ok(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json["run_id"], run_id);

    // Scheduled runs go on, every second, around the manual one.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    s.post_empty("/v1/jobs/both/pause").await.ok(200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let got = of_job(&target, "both");
    let manual_got: Vec<&Received> = got
        .iter()
        .filter(|r| r.header("idem-run-kind") == Some("manual"))
        .collect();
    assert_eq!(manual_got.len(), 1, "the manual run was delivered once");
    assert_eq!(
        manual_got[0].header("idempotency-key"),
        Some(run_id.as_str())
    );
    assert_eq!(
        manual_got[0].header("idempotency-key"),
        Some(expected_run_id("default", "both", &at).as_str())
    );
    let scheduled: BTreeSet<Timestamp> = got
        .iter()
        .filter(|r| r.header("idem-run-kind") == Some("scheduled"))
        .map(|r| ts(r.header("idem-schedule-time").unwrap()))
        .collect();
    assert!(scheduled.len() >= 3, "{scheduled:?}");
    assert_consecutive_seconds(&scheduled);
    let listed = runs(&s, "both").await;
    assert!(
        listed
            .iter()
            .any(|r| r["run_id"] == run_id && r["kind"] == "manual")
    );
}

async fn jobs_are_validated_versioned_and_deleted_with_their_runs(s: Server) {
    let bad = s
        .post(
            "/v1/jobs",
            json!({"name": "bad", "schedule": "0 25 * * *", "target": {"url": "http://x/"}}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT")
        .clone();
    assert_eq!(bad["extensions"]["errors"][0]["field"], "schedule", "{bad}");
    let bad = s
        .post(
            "/v1/jobs",
            json!({"name": "bad", "schedule": "@daily", "time_zone": "Europe/Atlantis",
                   "target": {"url": "http://x/"}}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT")
        .clone();
    assert_eq!(
        bad["extensions"]["errors"][0]["field"], "time_zone",
        "{bad}"
    );
    s.get("/v1/jobs/bad").await.problem(404, "NOT_FOUND");

    let job = create_job(
        &s,
        json!({"name": "nightly", "schedule": "0 3 * * *", "time_zone": "Europe/Berlin",
               "target": {"url": "http://127.0.0.1:9/"}}),
    )
    .await;
    s.post(
        "/v1/jobs",
        json!({"name": "nightly", "schedule": "0 3 * * *", "target": {"url": "http://x/"}}),
    )
    .await
    .problem(409, "JOB_ALREADY_EXISTS");
    // 03:00 in Berlin is 01:00 or 02:00 UTC.
    let next = ts(job["next_run_time"].as_str().unwrap());
    assert!(
        matches!(next.to_zoned(jiff::tz::TimeZone::UTC).hour(), 1 | 2),
        "{next}"
    );

    let updated = s
        .patch(
            "/v1/jobs/nightly",
            json!({"schedule": "30 4 * * *", "expected_updated_at": job["updated_at"]}),
        )
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(updated["schedule"], "30 4 * * *");
    let stale = s
        .patch(
            "/v1/jobs/nightly",
            json!({"schedule": "0 5 * * *", "expected_updated_at": job["updated_at"]}),
        )
        .await
        .problem(409, "STALE_VERSION")
        .clone();
    assert!(stale["detail"].as_str().unwrap().contains("nightly"));
    assert_eq!(
        s.get("/v1/jobs/nightly").await.ok(200).json["schedule"],
        "30 4 * * *",
        "a stale update wrote nothing"
    );

    s.post_empty("/v1/jobs/nightly/run").await.ok(201);
    assert_eq!(runs(&s, "nightly").await.len(), 1);
    // The job queue holding runs is not a queue users see.
    let queues = s.get("/v1/queues").await.ok(200).json.clone();
    assert!(queues["items"].as_array().unwrap().is_empty(), "{queues}");
    s.get("/v1/queues/~jobs").await.problem(404, "NOT_FOUND");
    s.get("/v1/queues/~jobs/tasks")
        .await
        .problem(404, "NOT_FOUND");

    s.delete("/v1/jobs/nightly").await.ok(204);
    s.get("/v1/jobs/nightly").await.problem(404, "NOT_FOUND");
    s.get("/v1/jobs/nightly/runs")
        .await
        .problem(404, "NOT_FOUND");
}

/// A run opens to its attempts, each with its duration and what the target
/// answered, page by page; a run is found only under its own job.
async fn a_run_lists_its_attempts(s: Server) {
    let target = Target::start().await;
    for name in ["ledger", "other"] {
        create_job(
            &s,
            json!({"name": name, "schedule": "0 0 1 1 *",
                   "target": {"url": target.url("/answer/500/40")},
                   "retry_config": {"retry_count": 1, "min_backoff_ms": 100, "max_backoff_ms": 100}}),
        )
        .await;
    }
    let run_id = run_until(&s, "ledger", "failed", Duration::from_secs(10)).await;
    let run_path = format!("/v1/jobs/ledger/runs/{run_id}");
    let attempts = s
        .get(&format!("{run_path}/attempts"))
        .await
        .ok(200)
        .json
        .clone();
    let items = attempts["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{attempts}");
    for (i, a) in items.iter().enumerate() {
        assert_eq!(a["attempt"], i + 1);
        assert_eq!(a["status_code"], 500);
        assert!(a["duration_ms"].is_u64(), "{a}");
        assert!(a["finished_at"].is_string(), "{a}");
        let body = a["response"]["body"].as_str().unwrap();
        assert!(
            body.starts_with("refused with 500\n") && body.len() == 40,
            "{a}"
        );
    }

    let first = s
        .get(&format!("{run_path}/attempts?limit=1"))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(first["items"][0]["attempt"], 1);
    let token = first["next_page_token"].as_str().unwrap();
    let second = s
        .get(&format!("{run_path}/attempts?limit=1&page_token={token}"))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(second["items"][0]["attempt"], 2);

    s.get(&format!("/v1/jobs/other/runs/{run_id}/attempts"))
        .await
        .problem(404, "NOT_FOUND");
    s.get("/v1/jobs/ledger/runs/no-such-run/attempts")
        .await
        .problem(404, "NOT_FOUND");
    s.get(&format!("/v1/jobs/gone/runs/{run_id}/attempts"))
        .await
        .problem(404, "NOT_FOUND");
}

async fn preview_computes_instants_across_dst(s: Server) {
    let r = s
        .post(
            "/v1/schedules/preview",
            json!({"schedule": "30 2 * * *", "time_zone": "Europe/Berlin",
                   "after": "2026-03-27T12:00:00Z", "count": 3}),
        )
        .await
        .ok(200)
        .json
        .clone();
    // 02:30 does not exist on 2026-03-29: it fires at 03:00 CEST.
    assert_eq!(
        r["times"],
        json!([
            "2026-03-28T01:30:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-30T00:30:00Z"
        ])
    );
    let bad = s
        .post(
            "/v1/schedules/preview",
            json!({"schedule": "* * * * *", "count": 1001}),
        )
        .await
        .problem(400, "INVALID_ARGUMENT")
        .clone();
    assert_eq!(bad["extensions"]["errors"][0]["field"], "count");
}

idem_testkit::store_tests!(
    Server::start;
    a_job_every_second_fires_once_per_second_with_exact_headers,
    retries_keep_the_schedule_time_and_the_key,
    cloud_scheduler_style_adds_its_headers,
    a_manual_run_does_not_take_the_next_scheduled_run,
    jobs_are_validated_versioned_and_deleted_with_their_runs,
    a_run_lists_its_attempts,
    preview_computes_instants_across_dst,
);
