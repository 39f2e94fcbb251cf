//! idem-client's retry layer against a real `idem serve`, with faults
//! injected by a TCP proxy in between: lost answers, timeouts, 429, 503,
//! `IDEMPOTENCY_KEY_IN_PROGRESS`, and the 4xx answers that must not be
//! retried.

use crate::harness::fault::{Fault, FaultProxy};
use crate::harness::{Backend, Server, install_tls_provider, quick_retries, unique};
use idem_client::{Body, Client, Error, ListOptions, NewQueue, NewTarget, NewTask, RetryPolicy};
use std::time::{Duration, Instant};

fn client(base: &str, key: &str, policy: RetryPolicy) -> Client {
    install_tls_provider();
    Client::builder(base)
        .api_key(key)
        .retry(policy)
        .build()
        .expect("client")
}

async fn through(server: &Server, faults: Vec<Fault>) -> FaultProxy {
    FaultProxy::start(server.addr(), faults).await
}

/// The keys of the requests the proxy saw, in order.
fn keys(proxy: &FaultProxy) -> Vec<Option<String>> {
    proxy
        .seen()
        .into_iter()
        .map(|s| s.idempotency_key)
        .collect()
}

async fn queues_named(server: &Server, name: &str) -> usize {
    let page = server
        .client()
        .list_queues(&ListOptions::limit(1000))
        .await
        .expect("list queues")
        .value;
    page.items.iter().filter(|q| q.name == name).count()
}

const UNAVAILABLE: &str =
    r#"{"type":"UNAVAILABLE","title":"Service Unavailable","status":503,"detail":"injected"}"#;
const PROBLEM: &str = "content-type: application/problem+json\r\n";

#[tokio::test]
async fn writes_carry_one_fresh_key_per_call_and_reads_none() {
    let server = Server::start(Backend::Sqlite).await;
    let proxy = through(&server, vec![]).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let name = unique("q");
    let created = c.create_queue(&NewQueue::new(&name)).await.unwrap();
    c.get_queue(&name).await.unwrap();
    let paused = c.pause_queue(&name).await.unwrap();
    let seen = proxy.seen();
    assert_eq!(
        seen.iter().map(|s| s.method.as_str()).collect::<Vec<_>>(),
        ["POST", "GET", "POST"]
    );
    let (k1, k3) = (
        seen[0].idempotency_key.clone(),
        seen[2].idempotency_key.clone(),
    );
    assert!(
        k1.as_deref()
            .is_some_and(|k| uuid::Uuid::parse_str(k).is_ok()),
        "{k1:?}"
    );
    assert_eq!(seen[1].idempotency_key, None);
    assert_ne!(k1, k3, "each logical call has its own key");
    assert_eq!(created.idempotency_key, k1);
    assert_eq!(paused.idempotency_key, k3);
    assert_eq!(
        (created.status, created.replayed, created.attempts),
        (201, false, 1)
    );
    assert!(created.request_id.is_some());
}

/// Operations on pull work carry no key, since the server never replays
/// them by key; a complete whose answer is lost is retried, and the retry,
/// the holder's repeated end, answers 200 with the task as it is,
/// `Idempotent-Replayed: true`.
#[tokio::test]
async fn work_calls_carry_no_key_and_a_lost_complete_replays_to_its_holder() {
    let server = Server::start(Backend::Sqlite).await;
    let queue = unique("w");
    server
        .create_queue_with(serde_json::json!({"name": queue, "mode": "pull"}))
        .await;
    server
        .client()
        .create_task(&queue, &NewTask::work(None).task_id("t"))
        .await
        .unwrap();
    let proxy = through(&server, vec![Fault::Forward, Fault::ForwardThenDrop]).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let options = idem_client::ClaimOptions::default();
    let claimed = c.claim_tasks(&queue, &options).await.unwrap();
    assert_eq!(claimed.idempotency_key, None);
    let lease = claimed.value.tasks[0].lease.clone().unwrap();
    let done = c
        .complete_task(&queue, "t", lease.attempt_id.as_deref().unwrap(), None)
        .await
        .unwrap();
    assert_eq!(
        (done.status, done.replayed, done.attempts),
        (200, true, 2),
        "the retry is answered as the end it repeats"
    );
    assert_eq!(done.value.state, idem_client::TaskState::Succeeded);
    assert_eq!(
        keys(&proxy),
        [None, None, None],
        "claim, complete, its retry"
    );
    let task = server.client().get_task(&queue, "t").await.unwrap().value;
    assert_eq!(task.state, idem_client::TaskState::Succeeded);
    assert_eq!(task.attempt_count, 1, "one attempt, ended once");
}

/// The answer to the first attempt is lost after the server committed it;
/// the retry must carry the same key, and there must be one queue. Holds
/// with and without server-side Idempotency-Key support: a replay answers
/// 201, a server that ignores keys answers QUEUE_ALREADY_EXISTS.
#[tokio::test]
async fn lost_answer_is_retried_with_the_same_key_and_leaves_one_queue() {
    let server = Server::start(Backend::Sqlite).await;
    let proxy = through(&server, vec![Fault::ForwardThenDrop]).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let name = unique("q");
    let outcome = c.create_queue(&NewQueue::new(&name)).await;
    let keys = keys(&proxy);
    assert_eq!(keys.len(), 2, "one lost attempt, one retry: {keys:?}");
    assert!(keys[0].is_some());
    assert_eq!(keys[0], keys[1], "the retry reuses the key");
    match outcome {
        Ok(r) => assert!(r.replayed && r.status == 201, "{r:?}"),
        Err(e) => assert_eq!(e.code(), Some("QUEUE_ALREADY_EXISTS"), "{e}"),
    }
    assert_eq!(queues_named(&server, &name).await, 1);
}

/// The same fault with API.md §2 in force: the retry is a replay.
#[tokio::test]
async fn lost_answer_of_a_create_is_replayed() {
    let server = Server::start(Backend::Sqlite).await;
    let proxy = through(&server, vec![Fault::ForwardThenDrop]).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let name = unique("q");
    let created = c
        .create_queue(&NewQueue::new(&name))
        .await
        .expect("the retry is answered with the original 201");
    assert_eq!(
        (created.status, created.replayed, created.attempts),
        (201, true, 2)
    );
    assert_eq!(created.value.name, name);
    let keys = keys(&proxy);
    assert_eq!(
        keys,
        [created.idempotency_key.clone(), created.idempotency_key]
    );
    assert_eq!(queues_named(&server, &name).await, 1);
}

/// A multipart create is rebuilt for the retry (a form is consumed by
/// sending, and the new one has another boundary) and carries the same key;
/// the server's fingerprint ignores the boundary, so the retry is a replay
/// and one task results.
#[tokio::test]
async fn lost_answer_of_an_upload_is_retried_with_the_same_key() {
    let server = Server::start(Backend::Sqlite).await;
    let queue = unique("q");
    server
        .client()
        .create_queue(&NewQueue::new(&queue))
        .await
        .unwrap();
    let proxy = through(&server, vec![Fault::ForwardThenDrop]).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let task = NewTask::new(NewTarget::new("http://127.0.0.1:9/hook").body(Body::upload(
        vec![0u8, 1, 2, 255],
        Some("application/octet-stream"),
    )))
    .task_id("upload-1")
    .schedule_time(idem_client::Timestamp::now() + jiff::SignedDuration::from_hours(1));
    let outcome = c.create_task(&queue, &task).await;
    let keys = keys(&proxy);
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys[0].is_some() && keys[0] == keys[1], "{keys:?}");
    let created = outcome.expect("the retry is answered with the original 201");
    assert_eq!((created.status, created.replayed), (201, true));
    let tasks = server
        .client()
        .list_tasks(&queue, &Default::default(), &ListOptions::default())
        .await
        .unwrap()
        .value;
    assert_eq!(tasks.items.len(), 1);
    assert_eq!(
        tasks.items[0]
            .target
            .as_ref()
            .unwrap()
            .body_base64
            .as_deref(),
        Some("AAEC/w==")
    );
}

#[tokio::test]
async fn unavailable_is_retried_after_the_servers_retry_after() {
    let server = Server::start(Backend::Sqlite).await;
    let proxy = through(
        &server,
        vec![Fault::Answer(
            503,
            "retry-after: 1\r\ncontent-type: application/problem+json\r\n",
            UNAVAILABLE,
        )],
    )
    .await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let name = unique("q");
    let started = Instant::now();
    let created = c.create_queue(&NewQueue::new(&name)).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 was not honoured ({:?}); the backoff alone is 50 ms at most",
        started.elapsed()
    );
    assert_eq!(
        (created.status, created.replayed, created.attempts),
        (201, false, 2)
    );
    let keys = keys(&proxy);
    assert!(keys[0].is_some() && keys[0] == keys[1], "{keys:?}");
    assert_eq!(queues_named(&server, &name).await, 1);
}

#[tokio::test]
async fn rate_limits_server_errors_and_in_progress_keys_are_retried() {
    let server = Server::start(Backend::Sqlite).await;
    let faults = vec![
        Fault::Answer(
            429,
            PROBLEM,
            r#"{"type":"RATE_LIMITED","title":"Too Many Requests","status":429,"detail":"slow down"}"#,
        ),
        Fault::Answer(502, "", "bad gateway"),
        Fault::Answer(
            409,
            "retry-after: 0\r\ncontent-type: application/problem+json\r\n",
            r#"{"type":"IDEMPOTENCY_KEY_IN_PROGRESS","title":"Conflict","status":409,"detail":"the original is running"}"#,
        ),
    ];
    let proxy = through(&server, faults).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let name = unique("q");
    let created = c.create_queue(&NewQueue::new(&name)).await.unwrap();
    assert_eq!((created.status, created.attempts), (201, 4));
    let keys = keys(&proxy);
    assert_eq!(keys.len(), 4);
    assert!(
        keys.iter().all(|k| k.is_some() && *k == keys[0]),
        "{keys:?}"
    );
}

#[tokio::test]
async fn timeouts_are_retried_with_the_same_key() {
    let server = Server::start(Backend::Sqlite).await;
    let proxy = through(&server, vec![Fault::Silence]).await;
    let policy = RetryPolicy {
        attempt_timeout: Duration::from_millis(500),
        ..quick_retries()
    };
    let c = client(&proxy.base, &server.admin_key, policy);
    let name = unique("q");
    let created = c.create_queue(&NewQueue::new(&name)).await.unwrap();
    assert_eq!(
        (created.status, created.replayed, created.attempts),
        (201, false, 2)
    );
    let keys = keys(&proxy);
    assert!(
        keys.len() == 2 && keys[0].is_some() && keys[0] == keys[1],
        "{keys:?}"
    );
}

/// 4xx answers other than 429 and IDEMPOTENCY_KEY_IN_PROGRESS describe the
/// request, not the moment: sending it again would get the same answer.
#[tokio::test]
async fn other_client_errors_are_returned_after_one_attempt() {
    let server = Server::start(Backend::Sqlite).await;
    for (status, code) in [
        (400, "INVALID_ARGUMENT"),
        (401, "UNAUTHENTICATED"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (409, "QUEUE_ALREADY_EXISTS"),
        (410, "IDEMPOTENT_RESOURCE_GONE"),
        (422, "IDEMPOTENCY_KEY_MISMATCH"),
    ] {
        let body: &'static str = Box::leak(
            format!(r#"{{"type":"{code}","title":"x","status":{status},"detail":"injected","request_id":"r-{status}"}}"#)
                .into_boxed_str(),
        );
        let proxy = through(&server, vec![Fault::Answer(status, PROBLEM, body)]).await;
        let c = client(&proxy.base, &server.admin_key, quick_retries());
        let err = c
            .create_queue(&NewQueue::new(unique("q")))
            .await
            .unwrap_err();
        let problem = err.problem().unwrap_or_else(|| panic!("{status}: {err}"));
        assert_eq!((problem.status, problem.code.as_str()), (status, code));
        assert_eq!(
            problem.request_id.as_deref(),
            Some(format!("r-{status}").as_str())
        );
        assert_eq!(proxy.seen().len(), 1, "{code} was retried");
    }
    // And a real one from the server.
    let proxy = through(&server, vec![]).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let name = unique("q");
    c.create_queue(&NewQueue::new(&name)).await.unwrap();
    let err = c.create_queue(&NewQueue::new(&name)).await.unwrap_err();
    assert_eq!(err.code(), Some("QUEUE_ALREADY_EXISTS"));
    assert_eq!(proxy.seen().len(), 2);
}

#[tokio::test]
async fn attempts_are_bounded() {
    let server = Server::start(Backend::Sqlite).await;
    let always = (0..10)
        .map(|_| Fault::Answer(503, PROBLEM, UNAVAILABLE))
        .collect();
    let proxy = through(&server, always).await;
    let c = client(
        &proxy.base,
        &server.admin_key,
        RetryPolicy {
            max_attempts: 3,
            ..quick_retries()
        },
    );
    let err = c
        .create_queue(&NewQueue::new(unique("q")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("UNAVAILABLE"), "{err}");
    assert_eq!(proxy.seen().len(), 3);
}

#[tokio::test]
async fn total_time_is_bounded_even_against_a_long_retry_after() {
    let server = Server::start(Backend::Sqlite).await;
    let proxy = through(
        &server,
        vec![Fault::Answer(
            503,
            "retry-after: 30\r\ncontent-type: application/problem+json\r\n",
            UNAVAILABLE,
        )],
    )
    .await;
    let c = client(
        &proxy.base,
        &server.admin_key,
        RetryPolicy {
            max_elapsed: Duration::from_secs(2),
            ..quick_retries()
        },
    );
    let started = Instant::now();
    let err = c.get_queue("anything").await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let problem = err.problem().expect("the last answer");
    assert_eq!(problem.retry_after, Some(Duration::from_secs(30)));
    assert_eq!(proxy.seen().len(), 1);
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported() {
    // A port nobody listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = client(
        &format!("http://127.0.0.1:{port}"),
        "idem_x",
        quick_retries(),
    );
    let err = c.create_queue(&NewQueue::new("q")).await.unwrap_err();
    match err {
        Error::Transport { attempts, .. } => assert_eq!(attempts, 4),
        other => panic!("expected a transport error, got {other}"),
    }
}

#[tokio::test]
async fn a_given_key_is_sent_on_every_attempt() {
    let server = Server::start(Backend::Sqlite).await;
    let queue = unique("q");
    server
        .client()
        .create_queue(&NewQueue::new(&queue))
        .await
        .unwrap();
    let proxy = through(&server, vec![Fault::Answer(503, PROBLEM, UNAVAILABLE)]).await;
    let c = client(&proxy.base, &server.admin_key, quick_retries());
    let options = idem_client::CreateOptions {
        idempotency_key: Some("my-key-1".into()),
        wait: None,
    };
    let task = NewTask::new(NewTarget::new("http://127.0.0.1:9/hook")).task_id("t1");
    let created = c.create_task_with(&queue, &task, &options).await.unwrap();
    assert_eq!(created.idempotency_key.as_deref(), Some("my-key-1"));
    assert_eq!(
        keys(&proxy),
        [Some("my-key-1".to_string()), Some("my-key-1".to_string())]
    );
    let bad = idem_client::CreateOptions {
        idempotency_key: Some(String::new()),
        wait: None,
    };
    let err = c.create_task_with(&queue, &task, &bad).await.unwrap_err();
    assert!(matches!(err, Error::InvalidRequest(_)), "{err}");
    assert_eq!(
        proxy.seen().len(),
        2,
        "an invalid key is refused before sending"
    );
}

/// The answer to an organization's creation is lost after the server
/// committed it: the client's retry, with the same key, gets the new
/// organization's admin key again, and that key works.
#[tokio::test]
async fn lost_answer_of_an_organization_creation_is_recovered_with_its_key() {
    for kind in [Backend::Sqlite, Backend::Postgres] {
        let server = Server::start(kind).await;
        let proxy = through(&server, vec![Fault::ForwardThenDrop]).await;
        let c = client(&proxy.base, &server.admin_key, quick_retries());
        let name = unique("org");
        let created = c
            .create_organization(&name)
            .await
            .expect("the retry recovers the organization");
        assert_eq!(
            (created.status, created.replayed, created.attempts),
            (201, true, 2)
        );
        assert_eq!(created.value.name, name);
        let admin = client(server.base(), &created.value.admin_key, quick_retries());
        let q = unique("q");
        admin
            .create_queue(&NewQueue::new(&q))
            .await
            .expect("the recovered admin key works");

        // The same for an API key of a principal.
        let proxy = through(&server, vec![Fault::ForwardThenDrop]).await;
        let c = client(&proxy.base, &server.admin_key, quick_retries());
        let key = c
            .create_api_key("admin")
            .await
            .expect("the retry recovers the key");
        assert!(key.replayed);
        let again = client(server.base(), &key.value.key, quick_retries());
        again
            .list_queues(&ListOptions::limit(1))
            .await
            .expect("the recovered key works");
    }
}
