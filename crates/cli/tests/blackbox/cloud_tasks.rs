//! `header_style: cloud_tasks`: deliveries carry Cloud Tasks' headers with
//! the meanings Cloud Tasks gives them, a queue's style is its tasks'
//! default, and idem-guard's Cloud Tasks identity runs a handler once for
//! two deliveries of one task.

use crate::harness::target::{Target, wait_state};
use crate::harness::{Server, parse_time_str, unique};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use idem_guard::{Guard, IdentitySource, KeyConfig, MemoryStore};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const WITHIN: Duration = Duration::from_secs(20);

idem_testkit::store_tests!(
    Server::start;
    cloud_tasks_headers_arrive_as_documented_on_first_and_later_attempts,
    a_queue_style_is_its_tasks_default_and_a_task_may_name_its_own,
    a_style_that_does_not_apply_is_refused_naming_header_style,
    the_guards_cloud_tasks_identity_runs_the_handler_once_for_two_deliveries,
    the_cli_sets_header_styles,
);

fn task(id: &str, url: &str) -> Value {
    json!({"task_id": id, "target": {"url": url}})
}

fn fast_retries(name: &str, style: &str) -> Value {
    json!({"name": name, "header_style": style,
           "retry_config": {"min_backoff_ms": 100, "max_backoff_ms": 200, "max_attempts": 10}})
}

/// `X-CloudTasks-TaskETA` as microseconds since the epoch.
fn eta_micros(eta: &str) -> i128 {
    let (secs, frac) = eta.split_once('.').expect("a decimal with a fraction");
    assert_eq!(frac.len(), 6, "microseconds: {eta}");
    secs.parse::<i128>().unwrap() * 1_000_000 + frac.parse::<i128>().unwrap()
}

async fn cloud_tasks_headers_arrive_as_documented_on_first_and_later_attempts(s: Server) {
    let target = Target::start().await;
    let q = s.create_queue_with(fast_retries("ct", "cloud_tasks")).await;
    assert_eq!(q["header_style"], "cloud_tasks");
    // 5xx answers are retries without an execution; a 404 is an execution
    // (the handler answered) that failed.
    let five = s
        .create_task("ct", task("five", &target.url("/fail/2/500")))
        .await;
    s.create_task("ct", task("four", &target.url("/fail/1/404")))
        .await;
    assert_eq!(five["header_style"], "cloud_tasks");
    let got = target.wait_for("five", 3, WITHIN).await;
    let eta = parse_time_str(five["schedule_time"].as_str().unwrap()).unwrap();
    for (i, r) in got.iter().enumerate() {
        let h = |name: &str| r.header(name).map(str::to_string);
        assert_eq!(h("x-cloudtasks-queuename").as_deref(), Some("ct"));
        assert_eq!(h("x-cloudtasks-taskname").as_deref(), Some("five"));
        assert_eq!(
            h("x-cloudtasks-taskretrycount"),
            Some(i.to_string()),
            "attempt {}",
            i + 1
        );
        assert_eq!(h("x-cloudtasks-taskexecutioncount").as_deref(), Some("0"));
        let sent = eta_micros(&h("x-cloudtasks-tasketa").expect("eta"));
        assert_eq!(sent * 1000, eta, "the schedule time, to the microsecond");
        if i == 0 {
            assert_eq!(h("x-cloudtasks-taskpreviousresponse"), None);
            assert_eq!(h("x-cloudtasks-taskretryreason"), None);
        } else {
            assert_eq!(
                h("x-cloudtasks-taskpreviousresponse").as_deref(),
                Some("500")
            );
            let reason = h("x-cloudtasks-taskretryreason").expect("a retry reason");
            assert!(reason.contains("500"), "{reason}");
        }
        // Idem's own identity and signature stay.
        assert_eq!(h("idem-task-id").as_deref(), Some("five"));
        assert!(h("idempotency-key").is_some() && h("webhook-signature").is_some());
    }
    let got = target.wait_for("four", 2, WITHIN).await;
    let executions: Vec<_> = got
        .iter()
        .map(|r| r.header("x-cloudtasks-taskexecutioncount").unwrap())
        .collect();
    assert_eq!(executions, ["0", "1"]);
    assert_eq!(
        got[1].header("x-cloudtasks-taskpreviousresponse"),
        Some("404")
    );
    assert_eq!(got[1].header("x-cloudtasks-taskretrycount"), Some("1"));
    wait_state(&s, "ct", "four", "succeeded", WITHIN).await;
}

async fn a_queue_style_is_its_tasks_default_and_a_task_may_name_its_own(s: Server) {
    let target = Target::start().await;
    let plain = s.create_queue("plain").await;
    assert_eq!(plain["header_style"], "idem");
    s.create_queue_with(json!({"name": "ct", "header_style": "cloud_tasks"}))
        .await;
    let mut own = task("own", &target.url("/ok"));
    own["header_style"] = json!("cloud_tasks");
    assert_eq!(
        s.create_task("plain", own).await["header_style"],
        "cloud_tasks"
    );
    let mut opted_out = task("opted-out", &target.url("/ok"));
    opted_out["header_style"] = json!("idem");
    assert_eq!(s.create_task("ct", opted_out).await["header_style"], "idem");
    assert_eq!(
        s.create_task("plain", task("default", &target.url("/ok")))
            .await["header_style"],
        "idem"
    );
    for id in ["own", "opted-out", "default"] {
        let got = target.wait_for(id, 1, WITHIN).await;
        let sent = got[0].header("x-cloudtasks-taskname");
        assert_eq!(sent, (id == "own").then_some(id), "task {id}");
    }
    // A queue's style changes the tasks created after it; a task keeps the
    // style it was created with, as it keeps its retry policy.
    s.create_paused_queue_with(json!({"name": "later"})).await;
    s.create_task("later", task("before", &target.url("/ok")))
        .await;
    let patched = s
        .patch("/v1/queues/later", json!({"header_style": "cloud_tasks"}))
        .await
        .ok(200)
        .json
        .clone();
    assert_eq!(patched["header_style"], "cloud_tasks");
    assert_eq!(s.get_queue("later").await["header_style"], "cloud_tasks");
    // On PostgreSQL a node trusts a queue's configuration for new tasks for
    // up to a second, as it does for its retry policy.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    s.create_task("later", task("after", &target.url("/ok")))
        .await;
    assert_eq!(s.get_task("later", "before").await["header_style"], "idem");
    assert_eq!(
        s.get_task("later", "after").await["header_style"],
        "cloud_tasks"
    );
}

async fn a_style_that_does_not_apply_is_refused_naming_header_style(s: Server) {
    s.create_queue("q").await;
    let mut bad = task("t", "http://127.0.0.1:9/");
    bad["header_style"] = json!("cloud_scheduler");
    s.post("/v1/queues/q/tasks", bad)
        .await
        .invalid("header_style");
    s.get("/v1/queues/q/tasks/t")
        .await
        .problem(404, "NOT_FOUND");
    s.post(
        "/v1/queues",
        json!({"name": "bad", "header_style": "cloud_scheduler"}),
    )
    .await
    .invalid("header_style");
    s.get("/v1/queues/bad").await.problem(404, "NOT_FOUND");
    s.patch("/v1/queues/q", json!({"header_style": "cloud_scheduler"}))
        .await
        .invalid("header_style");
    assert_eq!(s.get_queue("q").await["header_style"], "idem");
    s.post(
        "/v1/queues",
        json!({"name": "odd", "header_style": "cloud_teapots"}),
    )
    .await
    .invalid("header_style");
    s.post(
        "/v1/jobs",
        json!({"name": "j", "schedule": "* * * * *", "header_style": "cloud_tasks",
               "target": {"url": "http://127.0.0.1:9/"}}),
    )
    .await
    .invalid("header_style");
    s.get("/v1/jobs/j").await.problem(404, "NOT_FOUND");
}

/// A handler behind idem-guard keyed by Cloud Tasks' identity alone, and in
/// front of it a fault: the first answer is lost (turned into a 500 after
/// the handler did its work), as when a connection drops on the way back.
async fn the_guards_cloud_tasks_identity_runs_the_handler_once_for_two_deliveries(s: Server) {
    let runs = Arc::new(AtomicU32::new(0));
    let seen = Arc::new(Mutex::new(Vec::<(String, u16)>::new()));
    let keys = KeyConfig::new().with_sources(vec![IdentitySource::CloudTasks]);
    let guard = Guard::new(Arc::new(MemoryStore::new())).with_keys(keys);
    let handler_runs = runs.clone();
    let handler = axum::Router::new()
        .route(
            "/charge",
            axum::routing::post(move || {
                let runs = handler_runs.clone();
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    "charged"
                }
            }),
        )
        .layer(guard.layer());
    let lost = Arc::new(AtomicBool::new(false));
    let recorded = seen.clone();
    let app = handler.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let lost = lost.clone();
            let recorded = recorded.clone();
            async move {
                let name = req
                    .headers()
                    .get("x-cloudtasks-taskname")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let answer: Response = next.run(req).await;
                let status = answer.status().as_u16();
                recorded.lock().unwrap().push((name, status));
                if !lost.swap(true, Ordering::SeqCst) {
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                }
                answer
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    s.create_queue_with(fast_retries("payments", "cloud_tasks"))
        .await;
    s.create_task("payments", task("charge-1", &format!("{base}/charge")))
        .await;
    let done = wait_state(&s, "payments", "charge-1", "succeeded", WITHIN).await;
    server.abort();
    assert_eq!(done["attempt_count"], 2, "{done}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [("charge-1".to_string(), 200), ("charge-1".to_string(), 200)],
        "two deliveries reached the guard"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the handler ran once");
}

async fn the_cli_sets_header_styles(s: Server) {
    let q = unique("q");
    s.idem(&["queue", "create", &q, "--header-style", "cloud_tasks"])
        .await
        .ok();
    assert_eq!(s.get_queue(&q).await["header_style"], "cloud_tasks");
    s.idem(&["queue", "update", &q, "--header-style", "idem"])
        .await
        .ok();
    assert_eq!(s.get_queue(&q).await["header_style"], "idem");
    s.idem(&[
        "task",
        "create",
        &q,
        "--task-id",
        "t1",
        "--url",
        "http://127.0.0.1:9/",
        "--header-style",
        "cloud_tasks",
    ])
    .await
    .ok();
    assert_eq!(s.get_task(&q, "t1").await["header_style"], "cloud_tasks");
    // The CLI refuses a style that does not apply before sending anything.
    s.idem(&["queue", "update", &q, "--header-style", "cloud_scheduler"])
        .await
        .fails(2, "invalid value");
}
