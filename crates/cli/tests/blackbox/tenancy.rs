//! Roles, principals, API keys, organizations and signing secrets.

use crate::harness::{Api, Server, parse_time, task, time_from_now, unique};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

idem_testkit::store_tests!(
    Server::start;
    reader_may_only_read,
    writer_manages_tasks_but_not_queues_or_tenancy,
    admin_manages_queues_and_tenancy,
    principal_is_created_listed_and_unique,
    principal_fields_are_validated,
    role_change_takes_effect_at_once,
    key_works_at_once_and_is_never_listed,
    revoked_key_is_unauthenticated,
    keys_of_unknown_principal_are_not_found,
    organization_gets_a_working_admin_key_and_is_isolated,
    other_organizations_resources_are_not_found,
    only_default_admins_create_organizations,
    organization_names_are_unique,
    organization_starts_with_a_signing_secret,
    signing_secrets_rotate_list_and_delete,
    last_signing_secret_cannot_be_deleted,
    key_is_revoked_only_through_its_own_principal,
    new_organization_lists_only_its_admin,
    principals_list_paginates,
);

fn assert_principal(p: &Value, name: &str, kind: &str, role: &str) {
    assert_eq!(p["name"], name, "principal: {p}");
    assert_eq!(p["kind"], kind, "principal: {p}");
    assert_eq!(p["role"], role, "principal: {p}");
    parse_time(&p["created_at"]);
}

async fn scheduled_task(api: &Api, queue: &str, id: &str) {
    let mut body = task(id);
    body["schedule_time"] = json!(time_from_now(3600));
    api.create_task(queue, body).await;
}

async fn reader_may_only_read(s: Server) {
    s.create_queue("q").await;
    scheduled_task(&s, "q", "t1").await;
    let reader = s.with_key(&s.key_with_role("reader").await);

    reader.get("/v1/queues").await.ok(200);
    reader.get("/v1/queues/q").await.ok(200);
    reader.get("/v1/queues/q/tasks").await.ok(200);
    reader.get("/v1/queues/q/tasks/t1").await.ok(200);
    reader.get("/v1/queues/q/tasks/t1/attempts").await.ok(200);

    let denied = [
        reader.post("/v1/queues/q/tasks", task("t2")).await,
        reader.delete("/v1/queues/q/tasks/t1").await,
        reader.post_empty("/v1/queues/q/tasks/t1/run").await,
        reader.post("/v1/queues", json!({"name": "r"})).await,
        reader
            .patch("/v1/queues/q", json!({"dispatch_deadline_s": 5}))
            .await,
        reader.post_empty("/v1/queues/q/pause").await,
        reader.post_empty("/v1/queues/q/purge").await,
        reader.delete("/v1/queues/q").await,
        reader
            .post(
                "/v1/principals",
                json!({"name": "x", "kind": "service", "role": "admin"}),
            )
            .await,
        reader.post_empty("/v1/signing-secrets/rotate").await,
        reader
            .post("/v1/organizations", json!({"name": unique("org")}))
            .await,
    ];
    for resp in &denied {
        resp.problem(403, "PERMISSION_DENIED");
    }
    // Nothing changed.
    s.get("/v1/queues/q/tasks/t2")
        .await
        .problem(404, "NOT_FOUND");
    let t1 = s.get_task("q", "t1").await;
    assert_eq!(t1["state"], "scheduled");
    let q = s.get_queue("q").await;
    assert_eq!(
        (q["state"].as_str(), q["dispatch_deadline_s"].as_i64()),
        (Some("running"), Some(600))
    );
    s.get("/v1/queues/r").await.problem(404, "NOT_FOUND");
    s.get("/v1/principals/x/keys")
        .await
        .problem(404, "NOT_FOUND");
}

async fn writer_manages_tasks_but_not_queues_or_tenancy(s: Server) {
    s.create_paused_queue("q").await;
    let writer = s.with_key(&s.key_with_role("writer").await);

    writer.get("/v1/queues/q").await.ok(200);
    scheduled_task(&writer, "q", "t1").await;
    let ran = writer.post_empty("/v1/queues/q/tasks/t1/run").await;
    ran.ok(200);
    assert_eq!(ran.json["state"], "queued");
    let cancelled = writer.delete("/v1/queues/q/tasks/t1").await;
    cancelled.ok(200);
    assert_eq!(cancelled.json["state"], "cancelled");
    writer.create_task("q", task("t2")).await;

    let denied = [
        writer.post("/v1/queues", json!({"name": "w"})).await,
        writer
            .patch("/v1/queues/q", json!({"dispatch_deadline_s": 5}))
            .await,
        writer.post_empty("/v1/queues/q/pause").await,
        writer.post_empty("/v1/queues/q/resume").await,
        writer.post_empty("/v1/queues/q/purge").await,
        writer.delete("/v1/queues/q").await,
        writer
            .post(
                "/v1/principals",
                json!({"name": "x", "kind": "service", "role": "admin"}),
            )
            .await,
        writer.post_empty("/v1/signing-secrets/rotate").await,
        writer
            .post("/v1/organizations", json!({"name": unique("org")}))
            .await,
    ];
    for resp in &denied {
        resp.problem(403, "PERMISSION_DENIED");
    }
    s.get("/v1/queues/w").await.problem(404, "NOT_FOUND");
    let q = s.get_queue("q").await;
    assert_eq!(
        (q["state"].as_str(), q["dispatch_deadline_s"].as_i64()),
        (Some("paused"), Some(600))
    );
    assert_eq!(s.get_task("q", "t2").await["state"], "queued");
    s.get("/v1/principals/x/keys")
        .await
        .problem(404, "NOT_FOUND");
}

async fn admin_manages_queues_and_tenancy(s: Server) {
    // A second admin principal, not the bootstrap one, has the full role.
    let admin = s.with_key(&s.key_with_role("admin").await);
    admin.create_queue("q").await;
    admin.create_task("q", task("t1")).await;
    admin
        .patch("/v1/queues/q", json!({"dispatch_deadline_s": 5}))
        .await
        .ok(200);
    admin.post_empty("/v1/queues/q/pause").await.ok(200);
    admin.post_empty("/v1/queues/q/resume").await.ok(200);
    admin.post_empty("/v1/queues/q/purge").await.ok(200);
    admin
        .post(
            "/v1/principals",
            json!({"name": "made-by-admin", "kind": "person", "role": "reader"}),
        )
        .await
        .ok(201);
    admin.get("/v1/principals").await.ok(200);
    admin.get("/v1/signing-secrets").await.ok(200);
    // Rotating is a person's (identity.rs); this admin is a service.
    admin
        .post_empty("/v1/signing-secrets/rotate")
        .await
        .problem(403, "USER_IDENTITY_REQUIRED");
    admin.delete("/v1/queues/q").await.ok(204);
}

async fn principal_is_created_listed_and_unique(s: Server) {
    let resp = s
        .post(
            "/v1/principals",
            json!({"name": "ci-bot", "kind": "service", "role": "writer"}),
        )
        .await;
    resp.ok(201);
    assert_principal(&resp.json, "ci-bot", "service", "writer");
    assert!(
        resp.json.get("key").is_none(),
        "a principal is not a key: {}",
        resp.json
    );

    s.post(
        "/v1/principals",
        json!({"name": "alice", "kind": "person", "role": "reader"}),
    )
    .await
    .ok(201);

    let dup = s
        .post(
            "/v1/principals",
            json!({"name": "ci-bot", "kind": "person", "role": "admin"}),
        )
        .await;
    dup.problem(409, "PRINCIPAL_ALREADY_EXISTS");

    let listed = s.collect_pages("/v1/principals").await;
    let find = |name: &str| {
        listed
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("principal {name} not listed in {listed:?}"))
            .clone()
    };
    // The duplicate changed nothing.
    assert_principal(&find("ci-bot"), "ci-bot", "service", "writer");
    assert_principal(&find("alice"), "alice", "person", "reader");
}

async fn principal_fields_are_validated(s: Server) {
    let cases = [
        (
            json!({"name": "p", "kind": "robot", "role": "reader"}),
            "kind",
        ),
        (
            json!({"name": "p", "kind": "service", "role": "owner"}),
            "role",
        ),
        (json!({"kind": "service", "role": "reader"}), "name"),
        (
            json!({"name": "p", "kind": "service", "role": "reader", "colour": "blue"}),
            "colour",
        ),
        (
            json!({"name": 7, "kind": "service", "role": "reader"}),
            "name",
        ),
    ];
    for (body, field) in cases {
        s.post("/v1/principals", body).await.invalid(field);
    }
    s.get("/v1/principals/p/keys")
        .await
        .problem(404, "NOT_FOUND");
    assert!(
        !s.collect_pages("/v1/principals")
            .await
            .iter()
            .any(|p| p["name"] == "p"),
        "a rejected principal was created"
    );

    s.post(
        "/v1/principals",
        json!({"name": "p", "kind": "service", "role": "reader"}),
    )
    .await
    .ok(201);
    s.patch("/v1/principals/p", json!({"role": "owner"}))
        .await
        .invalid("role");
    s.patch(
        "/v1/principals/p",
        json!({"role": "writer", "colour": "blue"}),
    )
    .await
    .invalid("colour");
    s.patch("/v1/principals/nobody", json!({"role": "writer"}))
        .await
        .problem(404, "NOT_FOUND");
    let listed = s.collect_pages("/v1/principals").await;
    let p = listed.iter().find(|p| p["name"] == "p").expect("p listed");
    assert_eq!(p["role"], "reader", "a rejected PATCH changed the role");
}

async fn role_change_takes_effect_at_once(s: Server) {
    s.create_queue("q").await;
    s.post(
        "/v1/principals",
        json!({"name": "svc", "kind": "service", "role": "reader"}),
    )
    .await
    .ok(201);
    let key = s.post_empty("/v1/principals/svc/keys").await.ok(201).json["key"]
        .as_str()
        .expect("key")
        .to_string();
    let svc = s.with_key(&key);
    svc.post("/v1/queues/q/tasks", task("t1"))
        .await
        .problem(403, "PERMISSION_DENIED");

    let promoted = s
        .patch("/v1/principals/svc", json!({"role": "writer"}))
        .await;
    promoted.ok(200);
    assert_principal(&promoted.json, "svc", "service", "writer");
    svc.create_task("q", task("t1")).await;
    svc.post_empty("/v1/queues/q/pause")
        .await
        .problem(403, "PERMISSION_DENIED");

    s.patch("/v1/principals/svc", json!({"role": "admin"}))
        .await
        .ok(200);
    svc.post_empty("/v1/queues/q/pause").await.ok(200);

    s.patch("/v1/principals/svc", json!({"role": "reader"}))
        .await
        .ok(200);
    svc.post("/v1/queues/q/tasks", task("t2"))
        .await
        .problem(403, "PERMISSION_DENIED");
    svc.get("/v1/queues/q/tasks/t1").await.ok(200);
}

async fn key_works_at_once_and_is_never_listed(s: Server) {
    s.post(
        "/v1/principals",
        json!({"name": "svc", "kind": "service", "role": "writer"}),
    )
    .await
    .ok(201);
    let created = s.post_empty("/v1/principals/svc/keys").await;
    created.ok(201);
    let key = created.json["key"].as_str().expect("key").to_string();
    let id = created.json["id"].clone();
    assert!(!key.is_empty());
    assert!(id.is_string() || id.is_number(), "key id: {}", created.json);
    assert_eq!(created.json["principal"], "svc");
    parse_time(&created.json["created_at"]);

    s.create_queue("q").await;
    s.with_key(&key).create_task("q", task("by-new-key")).await;
    s.with_key(&key)
        .post_empty("/v1/queues/q/pause")
        .await
        .problem(403, "PERMISSION_DENIED");

    let second = s.post_empty("/v1/principals/svc/keys").await;
    second.ok(201);
    let second_key = second.json["key"].as_str().expect("key").to_string();
    assert_ne!(second_key, key, "two keys share a secret");

    let listing = s.get("/v1/principals/svc/keys").await;
    listing.ok(200);
    assert!(
        !listing.text.contains(&key) && !listing.text.contains(&second_key),
        "the key listing reveals a secret: {}",
        listing.text
    );
    let items = listing.json["items"]
        .as_array()
        .unwrap_or_else(|| panic!("keys listing has no items: {}", listing.text));
    assert_eq!(items.len(), 2, "keys listed: {}", listing.text);
    for item in items {
        assert_eq!(item["principal"], "svc");
        parse_time(&item["created_at"]);
        assert!(
            item.get("last_used_at").is_some(),
            "listed key without last_used_at: {item}"
        );
        assert!(
            item.get("key").is_none(),
            "listed key with a key field: {item}"
        );
    }
    assert!(items.iter().any(|k| k["id"] == id), "key {id} not listed");
}

async fn revoked_key_is_unauthenticated(s: Server) {
    s.post(
        "/v1/principals",
        json!({"name": "svc", "kind": "service", "role": "reader"}),
    )
    .await
    .ok(201);
    let kept = s
        .post_empty("/v1/principals/svc/keys")
        .await
        .ok(201)
        .json
        .clone();
    let revoked = s
        .post_empty("/v1/principals/svc/keys")
        .await
        .ok(201)
        .json
        .clone();
    let revoked_key = revoked["key"].as_str().expect("key");
    let kept_key = kept["key"].as_str().expect("key");
    s.with_key(revoked_key).get("/v1/queues").await.ok(200);

    let id = match &revoked["id"] {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    };
    let deleted = s.delete(&format!("/v1/principals/svc/keys/{id}")).await;
    deleted.ok(204);
    assert!(deleted.text.is_empty(), "204 with a body: {}", deleted.text);

    s.with_key(revoked_key)
        .get("/v1/queues")
        .await
        .problem(401, "UNAUTHENTICATED");
    s.with_key(kept_key).get("/v1/queues").await.ok(200);
    let listed = s.get("/v1/principals/svc/keys").await.ok(200).json.clone();
    let ids: Vec<_> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|k| k["id"].clone())
        .collect();
    assert_eq!(ids, vec![kept["id"].clone()]);

    s.delete(&format!("/v1/principals/svc/keys/{id}"))
        .await
        .problem(404, "NOT_FOUND");
}

async fn keys_of_unknown_principal_are_not_found(s: Server) {
    s.post_empty("/v1/principals/ghost/keys")
        .await
        .problem(404, "NOT_FOUND");
    s.get("/v1/principals/ghost/keys")
        .await
        .problem(404, "NOT_FOUND");
}

async fn new_org(s: &Server) -> (String, Api) {
    let name = unique("org");
    let resp = s.post("/v1/organizations", json!({ "name": name })).await;
    resp.ok(201);
    assert_eq!(resp.json["name"], json!(name));
    let key = resp.json["admin_key"]
        .as_str()
        .unwrap_or_else(|| panic!("no admin_key in {}", resp.json))
        .to_string();
    (name, s.with_key(&key))
}

async fn organization_gets_a_working_admin_key_and_is_isolated(s: Server) {
    s.create_queue("shared-name").await;
    s.create_task("shared-name", task("t1")).await;
    s.create_queue("default-only").await;

    let (_, other) = new_org(&s).await;
    let queues = other.get("/v1/queues").await.ok(200).json.clone();
    assert_eq!(
        queues["items"],
        json!([]),
        "a new organization sees queues: {queues}"
    );
    assert_eq!(queues["next_page_token"], Value::Null);

    // Queue names are unique per organization only.
    other.create_queue("shared-name").await;
    assert!(other.all_tasks("shared-name", "").await.is_empty());
    other.create_task("shared-name", task("t1")).await;
    assert_eq!(s.all_tasks("shared-name", "").await.len(), 1);

    // Its admin is a full admin there.
    other
        .post(
            "/v1/principals",
            json!({"name": "their-bot", "kind": "service", "role": "writer"}),
        )
        .await
        .ok(201);
    assert!(
        !s.collect_pages("/v1/principals")
            .await
            .iter()
            .any(|p| p["name"] == "their-bot"),
        "another organization's principal is listed in default"
    );
    let names: Vec<_> = other
        .collect_pages("/v1/queues")
        .await
        .iter()
        .map(|q| q["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("shared-name")]);
}

async fn other_organizations_resources_are_not_found(s: Server) {
    s.create_queue("mine").await;
    let mut body = task("t1");
    body["schedule_time"] = json!(time_from_now(3600));
    s.create_task("mine", body).await;
    s.post(
        "/v1/principals",
        json!({"name": "svc", "kind": "service", "role": "reader"}),
    )
    .await
    .ok(201);
    let key = s
        .post_empty("/v1/principals/svc/keys")
        .await
        .ok(201)
        .json
        .clone();
    let key_id = match &key["id"] {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    };
    let secret_id = first_secret_id(&s).await;

    let (_, other) = new_org(&s).await;
    let attempts = [
        other.get("/v1/queues/mine").await,
        other
            .patch("/v1/queues/mine", json!({"dispatch_deadline_s": 5}))
            .await,
        other.post_empty("/v1/queues/mine/pause").await,
        other.post_empty("/v1/queues/mine/purge").await,
        other.get("/v1/queues/mine/tasks").await,
        other.get("/v1/queues/mine/tasks/t1").await,
        other.get("/v1/queues/mine/tasks/t1/attempts").await,
        other.post("/v1/queues/mine/tasks", task("t2")).await,
        other.post_empty("/v1/queues/mine/tasks/t1/run").await,
        other.delete("/v1/queues/mine/tasks/t1").await,
        other.delete("/v1/queues/mine").await,
        other
            .patch("/v1/principals/svc", json!({"role": "admin"}))
            .await,
        other.get("/v1/principals/svc/keys").await,
        other.post_empty("/v1/principals/svc/keys").await,
        other
            .delete(&format!("/v1/principals/svc/keys/{key_id}"))
            .await,
        other
            .delete(&format!("/v1/signing-secrets/{secret_id}"))
            .await,
    ];
    for resp in &attempts {
        resp.problem(404, "NOT_FOUND");
    }
    let q = s.get_queue("mine").await;
    assert_eq!(
        (q["state"].as_str(), q["dispatch_deadline_s"].as_i64()),
        (Some("running"), Some(600))
    );
    assert_eq!(s.get_task("mine", "t1").await["state"], "scheduled");
    s.get("/v1/queues/mine/tasks/t2")
        .await
        .problem(404, "NOT_FOUND");
    s.with_key(key["key"].as_str().expect("key"))
        .post("/v1/queues/mine/tasks", task("t3"))
        .await
        .problem(403, "PERMISSION_DENIED");
    let keys = s.get("/v1/principals/svc/keys").await.ok(200).json.clone();
    assert_eq!(keys["items"].as_array().map(Vec::len), Some(1));
    assert!(
        secrets(&s)
            .await
            .iter()
            .any(|x| id_string(&x["id"]) == secret_id),
        "another organization deleted a signing secret"
    );
}

async fn only_default_admins_create_organizations(s: Server) {
    let (_, other) = new_org(&s).await;
    other
        .post("/v1/organizations", json!({"name": unique("nested")}))
        .await
        .problem(403, "PERMISSION_DENIED");
    let writer = s.with_key(&s.key_with_role("writer").await);
    writer
        .post("/v1/organizations", json!({"name": unique("org")}))
        .await
        .problem(403, "PERMISSION_DENIED");
    s.post("/v1/organizations", json!({})).await.invalid("name");
    s.post(
        "/v1/organizations",
        json!({"name": unique("org"), "plan": "gold"}),
    )
    .await
    .invalid("plan");
}

async fn organization_names_are_unique(s: Server) {
    let (name, other) = new_org(&s).await;
    s.post("/v1/organizations", json!({ "name": name }))
        .await
        .problem(409, "ORGANIZATION_ALREADY_EXISTS");
    // The first organization's admin key still works.
    other.get("/v1/queues").await.ok(200);
    s.post("/v1/organizations", json!({ "name": "default" }))
        .await
        .problem(409, "ORGANIZATION_ALREADY_EXISTS");
}

fn id_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

async fn secrets(api: &Api) -> Vec<Value> {
    let resp = api.get("/v1/signing-secrets").await;
    resp.ok(200);
    let list = resp.json["secrets"]
        .as_array()
        .unwrap_or_else(|| panic!("no secrets array: {}", resp.text))
        .clone();
    for s in &list {
        let secret = s["secret"].as_str().unwrap_or("");
        let encoded = secret
            .strip_prefix("whsec_")
            .unwrap_or_else(|| panic!("secret is not whsec_<base64>: {s}"));
        assert!(
            STANDARD.decode(encoded).is_ok_and(|b| b.len() >= 16),
            "secret is not whsec_<base64> of at least 16 bytes: {s}"
        );
        parse_time(&s["created_at"]);
        assert!(!id_string(&s["id"]).is_empty(), "secret without id: {s}");
    }
    list
}

async fn first_secret_id(api: &Api) -> String {
    let list = secrets(api).await;
    let first = list.first().expect("at least one signing secret");
    id_string(&first["id"])
}

async fn organization_starts_with_a_signing_secret(s: Server) {
    assert_eq!(secrets(&s).await.len(), 1, "organization default");
    let (_, other) = new_org(&s).await;
    let theirs = secrets(&other).await;
    assert_eq!(theirs.len(), 1, "a new organization");
    assert_ne!(
        theirs[0]["secret"],
        secrets(&s).await[0]["secret"],
        "two organizations share a signing secret"
    );
}

async fn signing_secrets_rotate_list_and_delete(s: Server) {
    let before = secrets(&s).await;
    let rotated = s.post_empty("/v1/signing-secrets/rotate").await;
    rotated.ok(201);
    let new = rotated.json.clone();
    assert!(
        new["secret"]
            .as_str()
            .is_some_and(|x| x.starts_with("whsec_")),
        "rotate did not answer the new secret: {new}"
    );
    let after = secrets(&s).await;
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(
        after[0]["id"], new["id"],
        "the newest secret is not listed first"
    );
    assert_eq!(after[0]["secret"], new["secret"]);
    assert!(
        before
            .iter()
            .all(|old| after.iter().any(|a| a["id"] == old["id"])),
        "rotation removed an old secret"
    );

    let third = s
        .post_empty("/v1/signing-secrets/rotate")
        .await
        .ok(201)
        .json
        .clone();
    let listed = secrets(&s).await;
    let ids: Vec<_> = listed.iter().map(|x| x["id"].clone()).collect();
    assert_eq!(
        &ids[..2],
        &[third["id"].clone(), new["id"].clone()],
        "not newest first"
    );
    let times: Vec<_> = listed
        .iter()
        .map(|x| parse_time(&x["created_at"]))
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "not newest first: {listed:?}"
    );

    let deleted = s
        .delete(&format!("/v1/signing-secrets/{}", id_string(&new["id"])))
        .await;
    deleted.ok(204);
    let remaining = secrets(&s).await;
    assert_eq!(remaining.len(), listed.len() - 1);
    assert!(!remaining.iter().any(|x| x["id"] == new["id"]));
    s.delete(&format!("/v1/signing-secrets/{}", id_string(&new["id"])))
        .await
        .problem(404, "NOT_FOUND");
}

async fn last_signing_secret_cannot_be_deleted(s: Server) {
    s.post_empty("/v1/signing-secrets/rotate").await.ok(201);
    let mut list = secrets(&s).await;
    while list.len() > 1 {
        let oldest = list.pop().expect("secret");
        s.delete(&format!("/v1/signing-secrets/{}", id_string(&oldest["id"])))
            .await
            .ok(204);
    }
    let last = id_string(&list[0]["id"]);
    s.delete(&format!("/v1/signing-secrets/{last}"))
        .await
        .problem(409, "FAILED_PRECONDITION");
    let still = secrets(&s).await;
    assert_eq!(still.len(), 1);
    assert_eq!(id_string(&still[0]["id"]), last);
}

async fn key_is_revoked_only_through_its_own_principal(s: Server) {
    for name in ["alice", "bob"] {
        s.post(
            "/v1/principals",
            json!({"name": name, "kind": "person", "role": "reader"}),
        )
        .await
        .ok(201);
    }
    let bobs = s
        .post_empty("/v1/principals/bob/keys")
        .await
        .ok(201)
        .json
        .clone();
    s.post_empty("/v1/principals/alice/keys").await.ok(201);
    let id = id_string(&bobs["id"]);
    s.delete(&format!("/v1/principals/alice/keys/{id}"))
        .await
        .problem(404, "NOT_FOUND");
    s.with_key(bobs["key"].as_str().expect("key"))
        .get("/v1/queues")
        .await
        .ok(200);
    let alices = s
        .get("/v1/principals/alice/keys")
        .await
        .ok(200)
        .json
        .clone();
    let listed = alices["items"].as_array().expect("items");
    assert_eq!(listed.len(), 1, "alice's keys: {alices}");
    assert!(listed.iter().all(|k| k["principal"] == "alice"), "{alices}");
}

async fn new_organization_lists_only_its_admin(s: Server) {
    s.post(
        "/v1/principals",
        json!({"name": "ours", "kind": "service", "role": "reader"}),
    )
    .await
    .ok(201);
    let (_, other) = new_org(&s).await;
    let theirs = other.collect_pages("/v1/principals").await;
    assert_eq!(
        theirs.len(),
        1,
        "principals of a new organization: {theirs:?}"
    );
    assert_eq!(theirs[0]["role"], "admin");
    assert!(!theirs.iter().any(|p| p["name"] == "ours"));
}

async fn principals_list_paginates(s: Server) {
    for i in 0..4 {
        s.post(
            "/v1/principals",
            json!({"name": format!("p{i}"), "kind": "service", "role": "reader"}),
        )
        .await
        .ok(201);
    }
    let all = s.collect_pages("/v1/principals").await;
    let paged = s.collect_pages("/v1/principals?limit=1").await;
    let names = |list: &[Value]| {
        list.iter()
            .map(|p| p["name"].as_str().expect("name").to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(all.len(), 5, "the bootstrap admin and four more: {all:?}");
    let mut a = names(&all);
    let mut b = names(&paged);
    a.sort();
    b.sort();
    assert_eq!(a, b, "pages repeat or skip principals");
    s.get("/v1/principals?limit=0").await.invalid("limit");
}
