//! idem-client's job, run and preview routes against a real `idem serve`
//! on each store: typed answers, problem documents, and retried writes
//! reported as replays.

use crate::harness::fault::{Fault, FaultProxy};
use crate::harness::{Server, quick_retries};
use idem_client::{
    Body, CatchUp, Client, HeaderStyle, JobConfig, JobRetryConfigPatch, JobState, JobUpdate,
    ListOptions, NewJob, NewTarget, RunKind, SchedulePreview, Timestamp,
};

idem_testkit::store_tests!(
    Server::start;
    create_get_list_and_delete,
    updates_check_the_expected_version,
    invalid_jobs_name_the_field,
    pause_resume_and_manual_runs,
    preview_follows_the_time_zone,
    retried_writes_are_replays,
);

/// Fires once a year: nothing scheduled fires during a test.
const YEARLY: &str = "0 0 1 1 *";

/// Runs nowhere: port 9 (discard) refuses connections on the loopback.
fn hook() -> NewTarget {
    NewTarget::new("http://127.0.0.1:9/hook")
}

async fn job_names(c: &Client) -> Vec<String> {
    let mut names: Vec<String> = c
        .list_jobs(&ListOptions::limit(1000))
        .await
        .expect("list jobs")
        .value
        .items
        .into_iter()
        .map(|j| j.name)
        .collect();
    names.sort_unstable();
    names
}

fn ts(s: &str) -> Timestamp {
    s.parse().expect("a timestamp")
}

async fn create_get_list_and_delete(s: Server) {
    let c = s.client();
    let mut new = NewJob::new(
        "nightly",
        "0 3 * * *",
        hook()
            .method("PUT")
            .header("X-Trace", "t1")
            .body(Body::json_text(r#"{"amount": 100.0}"#).unwrap()),
    )
    .time_zone("Europe/Berlin")
    .paused();
    new.config.attempt_deadline_s = Some(60);
    new.config.retry_config = Some(JobRetryConfigPatch {
        retry_count: Some(3),
        min_backoff_ms: Some(1000),
        ..Default::default()
    });
    new.config.catch_up = Some(CatchUp::None);
    new.config.header_style = Some(HeaderStyle::CloudScheduler);
    let created = c.create_job(&new).await.unwrap();
    assert_eq!((created.status, created.replayed), (201, false));
    assert!(created.idempotency_key.is_some(), "writes carry a key");
    assert!(created.request_id.is_some());
    let j = created.value;
    assert_eq!(
        (j.name.as_str(), j.schedule.as_str(), j.time_zone.as_str()),
        ("nightly", "0 3 * * *", "Europe/Berlin")
    );
    assert_eq!(j.state, JobState::Paused);
    assert_eq!(
        (j.target.method.as_str(), j.attempt_deadline_s),
        ("PUT", 60)
    );
    assert_eq!(
        j.target.json.as_ref().unwrap().get(),
        r#"{"amount": 100.0}"#
    );
    assert_eq!(
        j.target.headers.get("X-Trace").map(String::as_str),
        Some("t1")
    );
    assert_eq!(
        (j.retry_config.retry_count, j.retry_config.min_backoff_ms),
        (3, 1000)
    );
    assert_eq!(
        (j.catch_up, j.header_style),
        (CatchUp::None, HeaderStyle::CloudScheduler)
    );
    assert!(j.last_run.is_none());

    // Defaults: UTC, 180 s, no retries, catch up the latest, Idem headers.
    let d = c
        .create_job(&NewJob::new("defaults", YEARLY, hook()))
        .await
        .unwrap()
        .value;
    assert_eq!(d.state, JobState::Enabled);
    assert_eq!((d.time_zone.as_str(), d.attempt_deadline_s), ("UTC", 180));
    assert_eq!(d.retry_config.retry_count, 0);
    assert_eq!(
        (d.catch_up, d.header_style),
        (CatchUp::Latest, HeaderStyle::Idem)
    );
    let next = d.next_run_time.expect("an enabled job has a next run");
    assert!(next > Timestamp::now(), "{next}");
    assert!(
        next.to_string().ends_with("-01-01T00:00:00Z"),
        "fires on 1 January: {next}"
    );

    let got = c.get_job("nightly").await.unwrap();
    assert!(got.idempotency_key.is_none(), "reads carry no key");
    assert_eq!(
        (got.value.name, got.value.updated_at, got.value.created_at),
        ("nightly".to_string(), j.updated_at, j.created_at)
    );
    assert_eq!(job_names(&c).await, ["defaults", "nightly"]);
    let page = c.list_jobs(&ListOptions::limit(1)).await.unwrap().value;
    assert_eq!(page.items.len(), 1);
    let second = c
        .list_jobs(&ListOptions {
            limit: Some(1),
            page_token: Some(page.next_page_token.expect("a second page")),
        })
        .await
        .unwrap()
        .value;
    assert_ne!(second.items[0].name, page.items[0].name);

    let dup = c.create_job(&new).await.unwrap_err();
    let p = dup.problem().expect("a problem document");
    assert_eq!((p.status, p.code.as_str()), (409, "JOB_ALREADY_EXISTS"));

    let deleted = c.delete_job("nightly").await.unwrap();
    assert_eq!(deleted.status, 204);
    let err = c.get_job("nightly").await.unwrap_err();
    let p = err.problem().expect("a problem document");
    assert_eq!((p.status, p.code.as_str()), (404, "NOT_FOUND"));
    assert_eq!(p.instance.as_deref(), Some("/v1/jobs/nightly"));
    assert_eq!(job_names(&c).await, ["defaults"]);
}

async fn updates_check_the_expected_version(s: Server) {
    let c = s.client();
    let v1 = c
        .create_job(&NewJob::new("report", YEARLY, hook()).paused())
        .await
        .unwrap()
        .value;

    let v2 = c
        .update_job(
            "report",
            &JobUpdate {
                schedule: Some("0 0 2 1 *".into()),
                config: JobConfig {
                    time_zone: Some("America/New_York".into()),
                    retry_config: Some(JobRetryConfigPatch {
                        max_doublings: Some(2),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                expected_updated_at: Some(v1.updated_at),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(v2.status, 200);
    assert!(v2.idempotency_key.is_some(), "a PATCH carries a key");
    let v2 = v2.value;
    assert_eq!(
        (v2.schedule.as_str(), v2.time_zone.as_str()),
        ("0 0 2 1 *", "America/New_York")
    );
    assert_eq!(v2.retry_config.max_doublings, 2);
    assert_eq!(
        v2.retry_config.min_backoff_ms, v1.retry_config.min_backoff_ms,
        "a partial retry_config keeps the other fields"
    );
    assert_eq!(
        v2.target.url, v1.target.url,
        "unset fields keep their values"
    );
    assert_eq!(v2.state, JobState::Paused);
    assert!(v2.updated_at > v1.updated_at);
    assert_eq!(v2.created_at, v1.created_at);

    // The version read before that update is stale now: refused, and
    // nothing changes.
    let stale = c
        .update_job(
            "report",
            &JobUpdate {
                schedule: Some("0 0 3 1 *".into()),
                expected_updated_at: Some(v1.updated_at),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    let p = stale.problem().expect("a problem document");
    assert_eq!((p.status, p.code.as_str()), (409, "STALE_VERSION"));
    let now = c.get_job("report").await.unwrap().value;
    assert_eq!(
        (now.schedule.as_str(), now.updated_at),
        ("0 0 2 1 *", v2.updated_at)
    );

    // Without a version the update applies; a new target replaces the old.
    let v3 = c
        .update_job(
            "report",
            &JobUpdate {
                target: Some(NewTarget::new("http://127.0.0.1:9/other").method("GET")),
                config: JobConfig {
                    catch_up: Some(CatchUp::All),
                    attempt_deadline_s: Some(30),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .value;
    assert_eq!(
        (v3.target.url.as_str(), v3.target.method.as_str()),
        ("http://127.0.0.1:9/other", "GET")
    );
    assert_eq!((v3.catch_up, v3.attempt_deadline_s), (CatchUp::All, 30));
    assert_eq!(v3.schedule, "0 0 2 1 *");

    let missing = c
        .update_job("nope", &JobUpdate::default())
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Some("NOT_FOUND"));
}

async fn invalid_jobs_name_the_field(s: Server) {
    let c = s.client();
    let cases = [
        (NewJob::new("bad", "61 * * * *", hook()), "schedule"),
        (
            NewJob::new("bad", YEARLY, hook()).time_zone("Mars/Olympus"),
            "time_zone",
        ),
        (NewJob::new("not a name!", YEARLY, hook()), "name"),
        (
            NewJob::new("bad", YEARLY, NewTarget::new("ftp://x/")),
            "target.url",
        ),
    ];
    for (job, field) in cases {
        let err = c.create_job(&job).await.unwrap_err();
        let p = err.problem().expect("a problem document");
        assert_eq!(
            (p.status, p.code.as_str()),
            (400, "INVALID_ARGUMENT"),
            "{p}"
        );
        let errors = &p.extensions.as_ref().expect("extensions")["errors"];
        assert!(
            errors
                .as_array()
                .is_some_and(|e| e.iter().any(|e| e["field"] == field)),
            "expected an error on {field}: {errors}"
        );
    }
    let mut deadline = NewJob::new("bad", YEARLY, hook());
    deadline.config.attempt_deadline_s = Some(1801);
    let err = c.create_job(&deadline).await.unwrap_err();
    assert_eq!(err.code(), Some("INVALID_ARGUMENT"));
    assert!(job_names(&c).await.is_empty(), "nothing was created");

    c.create_job(&NewJob::new("ok", YEARLY, hook()).paused())
        .await
        .unwrap();
    let err = c
        .update_job(
            "ok",
            &JobUpdate {
                schedule: Some("not cron".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("INVALID_ARGUMENT"));
    assert_eq!(c.get_job("ok").await.unwrap().value.schedule, YEARLY);
}

async fn pause_resume_and_manual_runs(s: Server) {
    let c = s.client();
    c.create_job(&NewJob::new("report", YEARLY, hook()))
        .await
        .unwrap();
    let paused = c.pause_job("report").await.unwrap();
    assert!(paused.idempotency_key.is_some());
    assert_eq!(paused.value.state, JobState::Paused);
    let resumed = c.resume_job("report").await.unwrap().value;
    assert_eq!(resumed.state, JobState::Enabled);
    assert!(resumed.next_run_time.is_some());

    let before = Timestamp::now();
    let first = c.run_job("report").await.unwrap();
    assert_eq!(first.status, 201);
    let first = first.value;
    assert_eq!(
        (first.job.as_str(), first.kind),
        ("report", RunKind::Manual)
    );
    assert!(
        first.run_id.len() == 64
            && first
                .run_id
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "run_id is lowercase hex SHA-256: {}",
        first.run_id
    );
    // A manual run's schedule time is the request's instant.
    let slack = jiff::SignedDuration::from_secs(5);
    assert!(
        first.schedule_time >= before - slack && first.schedule_time <= Timestamp::now() + slack,
        "{}",
        first.schedule_time
    );
    let second = c.run_job("report").await.unwrap().value;
    assert_ne!(second.run_id, first.run_id, "each manual run is its own");

    let got = c.get_run("report", &first.run_id).await.unwrap().value;
    assert_eq!(
        (got.run_id.as_str(), got.kind, got.schedule_time),
        (first.run_id.as_str(), RunKind::Manual, first.schedule_time)
    );
    let runs = c
        .list_runs("report", &ListOptions::default())
        .await
        .unwrap()
        .value;
    let ids: Vec<&str> = runs.items.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(
        ids,
        [second.run_id.as_str(), first.run_id.as_str()],
        "newest first"
    );
    let page = c
        .list_runs("report", &ListOptions::limit(1))
        .await
        .unwrap()
        .value;
    assert_eq!(page.items.len(), 1);
    assert!(page.next_page_token.is_some());

    // The manual runs took no scheduled instant: the next one stands.
    let job = c.get_job("report").await.unwrap().value;
    assert_eq!(job.next_run_time, resumed.next_run_time);

    let missing = c.get_run("report", &"0".repeat(64)).await.unwrap_err();
    assert_eq!(missing.code(), Some("NOT_FOUND"));
    for err in [
        c.run_job("nope").await.unwrap_err(),
        c.list_runs("nope", &ListOptions::default())
            .await
            .unwrap_err(),
    ] {
        assert_eq!(err.code(), Some("NOT_FOUND"), "{err}");
    }
    assert_eq!(
        c.pause_job("nope").await.unwrap_err().code(),
        Some("NOT_FOUND")
    );
}

async fn preview_follows_the_time_zone(s: Server) {
    let c = s.client();
    // Europe/Berlin moves to summer time on 2026-03-29: noon is 11:00Z
    // before and 10:00Z after.
    let preview = SchedulePreview {
        schedule: "0 12 * * *".into(),
        time_zone: Some("Europe/Berlin".into()),
        after: Some(ts("2026-03-27T00:00:00Z")),
        count: Some(3),
    };
    let answer = c.preview_schedule(&preview).await.unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.value.times,
        [
            ts("2026-03-27T11:00:00Z"),
            ts("2026-03-28T11:00:00Z"),
            ts("2026-03-29T10:00:00Z")
        ]
    );

    let now = Timestamp::now();
    let default = c
        .preview_schedule(&SchedulePreview::new("*/5 * * * *"))
        .await
        .unwrap()
        .value
        .times;
    assert_eq!(default.len(), 10, "ten by default");
    assert!(default[0] > now && default.windows(2).all(|w| w[0] < w[1]));

    // Readers may preview.
    let reader = Client::new(s.base(), s.key_with_role("reader").await).unwrap();
    reader
        .preview_schedule(&SchedulePreview::new("@daily"))
        .await
        .unwrap();

    for bad in [
        SchedulePreview::new("not cron"),
        SchedulePreview {
            time_zone: Some("Mars/Olympus".into()),
            ..SchedulePreview::new("@daily")
        },
        SchedulePreview {
            count: Some(1001),
            ..SchedulePreview::new("@daily")
        },
    ] {
        let err = c.preview_schedule(&bad).await.unwrap_err();
        assert_eq!(err.code(), Some("INVALID_ARGUMENT"), "{bad:?}: {err}");
    }
}

/// The answers of a create and of a manual run are lost after the server
/// committed them; each retry carries its call's key and is answered with
/// the original 201, reported as a replay, and nothing happens twice.
async fn retried_writes_are_replays(s: Server) {
    let upstream = s.base().trim_start_matches("http://").to_string();
    let proxy = FaultProxy::start(
        upstream,
        vec![
            Fault::ForwardThenDrop,
            Fault::Forward,
            Fault::ForwardThenDrop,
        ],
    )
    .await;
    let c = Client::builder(&proxy.base)
        .api_key(&s.admin_key)
        .retry(quick_retries())
        .build()
        .unwrap();

    let created = c
        .create_job(&NewJob::new("report", YEARLY, hook()).paused())
        .await
        .expect("the retry is answered with the original 201");
    assert_eq!(
        (created.status, created.replayed, created.attempts),
        (201, true, 2)
    );
    assert_eq!(created.value.name, "report");

    let ran = c
        .run_job("report")
        .await
        .expect("the retry is answered with the original 201");
    assert_eq!((ran.status, ran.replayed, ran.attempts), (201, true, 2));

    let seen = proxy.seen();
    let keys: Vec<Option<&str>> = seen.iter().map(|s| s.idempotency_key.as_deref()).collect();
    let (create_key, run_key) = (
        created.idempotency_key.as_deref(),
        ran.idempotency_key.as_deref(),
    );
    assert!(create_key.is_some() && run_key.is_some() && create_key != run_key);
    assert_eq!(keys, [create_key, create_key, run_key, run_key]);

    let direct = s.client();
    assert_eq!(job_names(&direct).await, ["report"]);
    let runs = direct
        .list_runs("report", &ListOptions::default())
        .await
        .unwrap()
        .value;
    assert_eq!(runs.items.len(), 1, "one manual run");
    assert_eq!(runs.items[0].run_id, ran.value.run_id);

    // A key of the caller's: the same call again is a replay, another call
    // with it is refused.
    let key = idem_client::new_idempotency_key();
    let job = NewJob::new("keyed", YEARLY, hook()).paused();
    let first = direct
        .create_job_with(&job, Some(key.clone()))
        .await
        .unwrap();
    let again = direct
        .create_job_with(&job, Some(key.clone()))
        .await
        .unwrap();
    assert_eq!((first.replayed, again.replayed), (false, true));
    assert_eq!(again.status, 201);
    assert_eq!(again.value.created_at, first.value.created_at);
    let other = NewJob::new("other", YEARLY, hook()).paused();
    let err = direct.create_job_with(&other, Some(key)).await.unwrap_err();
    assert_eq!(err.code(), Some("IDEMPOTENCY_KEY_MISMATCH"));
    assert_eq!(job_names(&direct).await, ["keyed", "report"]);
}
