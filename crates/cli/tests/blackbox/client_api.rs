//! idem-client against a real `idem serve`: every route, typed answers,
//! and problem documents.

use crate::harness::{Backend, Server, unique};
use idem_client::{
    Body, Client, Error, ListOptions, NewPrincipal, NewQueue, NewTarget, NewTask, PrincipalKind,
    QueueConfigPatch, QueueState, RetryConfigPatch, Role, TaskFilter, TaskState, Timestamp,
};
use jiff::SignedDuration;

fn in_an_hour() -> Timestamp {
    Timestamp::now() + SignedDuration::from_hours(1)
}

fn hook() -> NewTarget {
    NewTarget::new("http://127.0.0.1:9/hook")
}

#[tokio::test]
async fn queue_routes() {
    let server = Server::start(Backend::Sqlite).await;
    let c = server.client();
    let name = unique("q");
    let mut new = NewQueue::new(&name);
    new.config.retry_config = Some(RetryConfigPatch {
        max_attempts: Some(7),
        ..Default::default()
    });
    new.config.dedup_window_s = Some(60);
    let created = c.create_queue(&new).await.unwrap();
    assert_eq!((created.status, created.replayed), (201, false));
    assert!(created.request_id.is_some());
    let q = created.value;
    assert_eq!(
        (q.name.as_str(), q.state),
        (name.as_str(), QueueState::Running)
    );
    assert_eq!((q.retry_config.max_attempts, q.dedup_window_s), (7, 60));
    assert_eq!(
        q.retry_config.min_backoff_ms, 100,
        "unset fields take defaults"
    );

    let got = c.get_queue(&name).await.unwrap();
    assert_eq!(got.value, q);
    assert!(got.idempotency_key.is_none(), "reads carry no key");
    let listed = c.list_queues(&ListOptions::default()).await.unwrap().value;
    assert!(listed.items.iter().any(|x| x.name == name));

    let updated = c
        .update_queue(
            &name,
            &QueueConfigPatch {
                dispatch_deadline_s: Some(30),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .value;
    assert_eq!(
        (updated.dispatch_deadline_s, updated.dedup_window_s),
        (30, 60)
    );

    assert_eq!(
        c.pause_queue(&name).await.unwrap().value.state,
        QueueState::Paused
    );
    assert_eq!(
        c.resume_queue(&name).await.unwrap().value.state,
        QueueState::Running
    );
    for id in ["a", "b"] {
        let task = NewTask::new(hook()).task_id(id).schedule_time(in_an_hour());
        c.create_task(&name, &task).await.unwrap();
    }
    assert_eq!(c.purge_queue(&name).await.unwrap().value.cancelled, 2);

    let deleted = c.delete_queue(&name).await.unwrap();
    assert_eq!(deleted.status, 204);
    let err = c.get_queue(&name).await.unwrap_err();
    let p = err.problem().expect("a problem document");
    assert_eq!((p.status, p.code.as_str()), (404, "NOT_FOUND"));
    assert!(p.request_id.as_deref().is_some_and(|id| !id.is_empty()));
    assert_eq!(
        p.instance.as_deref(),
        Some(format!("/v1/queues/{name}").as_str())
    );
}

#[tokio::test]
async fn task_routes() {
    let server = Server::start(Backend::Sqlite).await;
    let c = server.client();
    let queue = unique("q");
    c.create_queue(&NewQueue::new(&queue)).await.unwrap();

    let task = NewTask::new(
        hook()
            .method("PUT")
            .header("X-Trace", "t1")
            .body(Body::json_text(r#"{"amount": 100.0}"#).unwrap()),
    )
    .task_id("pay-1")
    .schedule_time(in_an_hour());
    let created = c.create_task(&queue, &task).await.unwrap();
    assert_eq!(created.status, 201);
    let t = created.value;
    assert_eq!(
        (t.task_id.as_str(), t.state),
        ("pay-1", TaskState::Scheduled)
    );
    assert_eq!(t.target.as_ref().unwrap().method, "PUT");
    assert_eq!(
        t.target.as_ref().unwrap().json.as_ref().unwrap().get(),
        r#"{"amount": 100.0}"#
    );
    assert_eq!(
        t.target
            .as_ref()
            .unwrap()
            .headers
            .get("X-Trace")
            .map(String::as_str),
        Some("t1")
    );

    let dup = c.create_task(&queue, &task).await.unwrap_err();
    let p = dup.problem().unwrap();
    assert_eq!((p.status, p.code.as_str()), (409, "TASK_ALREADY_EXISTS"));
    assert_eq!(p.extensions.as_ref().unwrap()["task"]["id"], "pay-1");

    c.create_task(
        &queue,
        &NewTask::new(hook().body(Body::Text("hello".into()))).task_id("now-1"),
    )
    .await
    .unwrap();
    let scheduled = c
        .list_tasks(
            &queue,
            &TaskFilter {
                state: Some(TaskState::Scheduled),
                ..TaskFilter::default()
            },
            &ListOptions::default(),
        )
        .await
        .unwrap()
        .value;
    assert_eq!(
        scheduled
            .items
            .iter()
            .map(|t| t.task_id.as_str())
            .collect::<Vec<_>>(),
        ["pay-1"]
    );
    let page = c
        .list_tasks(&queue, &TaskFilter::default(), &ListOptions::limit(1))
        .await
        .unwrap()
        .value;
    assert_eq!(page.items.len(), 1);
    let next = ListOptions {
        limit: Some(1),
        page_token: page.next_page_token.clone(),
    };
    assert!(next.page_token.is_some());
    let second = c
        .list_tasks(&queue, &TaskFilter::default(), &next)
        .await
        .unwrap()
        .value;
    assert_ne!(second.items[0].task_id, page.items[0].task_id);

    assert_eq!(
        c.get_task(&queue, "pay-1").await.unwrap().value.task_id,
        "pay-1"
    );
    assert!(
        c.task_attempts(&queue, "pay-1", &Default::default())
            .await
            .unwrap()
            .value
            .items
            .is_empty()
    );
    // Run one scheduled task now; cancel another that stays scheduled (a
    // running one could not be cancelled).
    c.create_task(
        &queue,
        &NewTask::new(hook())
            .task_id("pay-2")
            .schedule_time(in_an_hour()),
    )
    .await
    .unwrap();
    let ran = c.run_task(&queue, "pay-2").await.unwrap().value;
    assert_ne!(ran.state, TaskState::Scheduled);
    let cancelled = c.cancel_task(&queue, "pay-1").await.unwrap().value;
    assert_eq!(cancelled.state, TaskState::Cancelled);
    let missing = c.get_task(&queue, "nope").await.unwrap_err();
    assert_eq!(missing.code(), Some("NOT_FOUND"));
}

#[tokio::test]
async fn uploads_are_sent_as_multipart_and_become_the_body() {
    let server = Server::start(Backend::Sqlite).await;
    let c = server.client();
    let queue = unique("q");
    c.create_queue(&NewQueue::new(&queue)).await.unwrap();
    // Not UTF-8, so it can only arrive intact as bytes.
    let bytes = vec![0u8, 1, 2, 255, 254, 0];
    let task = NewTask::new(hook().body(Body::upload(bytes, Some("image/png"))))
        .task_id("img")
        .schedule_time(in_an_hour());
    let t = c.create_task(&queue, &task).await.unwrap().value;
    assert_eq!(
        t.target.as_ref().unwrap().body_base64.as_deref(),
        Some("AAEC//4A")
    );
    assert_eq!(
        t.target
            .as_ref()
            .unwrap()
            .headers
            .get("Content-Type")
            .map(String::as_str),
        Some("image/png")
    );
}

#[tokio::test]
async fn tenancy_routes() {
    let server = Server::start(Backend::Sqlite).await;
    let c = server.client();
    let name = unique("svc");
    let p = c
        .create_principal(&NewPrincipal {
            name: name.clone(),
            kind: PrincipalKind::Service,
            role: Role::Reader,
        })
        .await
        .unwrap();
    assert_eq!((p.status, p.value.role), (201, Role::Reader));
    let listed = c
        .list_principals(&ListOptions::default())
        .await
        .unwrap()
        .value;
    assert!(listed.items.iter().any(|x| x.name == name));

    let key = c.create_api_key(&name).await.unwrap().value;
    assert_eq!(key.principal, name);
    let as_reader = Client::new(server.base(), &key.key).unwrap();
    let denied = as_reader
        .create_queue(&NewQueue::new(unique("q")))
        .await
        .unwrap_err();
    assert_eq!(
        (denied.status(), denied.code()),
        (Some(403), Some("PERMISSION_DENIED"))
    );

    let promoted = c
        .set_principal_role(&name, Role::Admin)
        .await
        .unwrap()
        .value;
    assert_eq!(promoted.role, Role::Admin);
    as_reader
        .create_queue(&NewQueue::new(unique("q")))
        .await
        .unwrap();

    let keys = c
        .list_api_keys(&name, &ListOptions::default())
        .await
        .unwrap()
        .value;
    assert_eq!(
        keys.items.iter().map(|k| &k.id).collect::<Vec<_>>(),
        [&key.id]
    );
    assert_eq!(c.revoke_api_key(&name, &key.id).await.unwrap().status, 204);
    let revoked = as_reader
        .list_queues(&ListOptions::default())
        .await
        .unwrap_err();
    assert_eq!(revoked.code(), Some("UNAUTHENTICATED"));

    let org = c.create_organization(&unique("org")).await.unwrap().value;
    let other = Client::new(server.base(), &org.admin_key).unwrap();
    assert!(
        other
            .list_queues(&ListOptions::default())
            .await
            .unwrap()
            .value
            .items
            .is_empty()
    );

    let before = c.list_signing_secrets().await.unwrap().value.secrets;
    let rotated = c.rotate_signing_secret().await.unwrap();
    assert_eq!(rotated.status, 201);
    assert!(rotated.value.secret.starts_with("whsec_"));
    let after = c.list_signing_secrets().await.unwrap().value.secrets;
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(after[0].id, rotated.value.id, "newest first");
    c.delete_signing_secret(&rotated.value.id).await.unwrap();
    assert_eq!(
        c.list_signing_secrets().await.unwrap().value.secrets,
        before
    );
}

#[tokio::test]
async fn problems_carry_the_servers_document() {
    let server = Server::start(Backend::Sqlite).await;
    let err = server
        .client()
        .create_queue(&NewQueue::new("not a name!"))
        .await
        .unwrap_err();
    let p = err.problem().expect("problem");
    assert_eq!(
        (p.status, p.code.as_str(), p.title.as_str()),
        (400, "INVALID_ARGUMENT", "Bad Request")
    );
    assert_eq!(p.extensions.as_ref().unwrap()["errors"][0]["field"], "name");
    assert!(
        err.to_string().starts_with("INVALID_ARGUMENT (400): "),
        "{err}"
    );

    let anonymous = Client::builder(server.base()).build().unwrap();
    let err = anonymous
        .list_queues(&ListOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        (err.status(), err.code()),
        (Some(401), Some("UNAUTHENTICATED"))
    );

    let err = Client::new(server.base().replace("http://", "ftp://"), "k").unwrap_err();
    assert!(matches!(err, Error::InvalidUrl { .. }), "{err}");
}
