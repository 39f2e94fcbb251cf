//! Operations only a person may take: every operation the OpenAPI document
//! marks `x-person-only` refuses a service's key with 403
//! `USER_IDENTITY_REQUIRED` whatever its role, and takes a person's; a
//! service admin hands out only lesser principals and keys; an organization
//! keeps an admin who is a person and holds a key.

use crate::harness::{Api, Server, unique};
use reqwest::Method;
use serde_json::{Value, json};

idem_testkit::store_tests!(
    Server::start;
    a_service_key_is_refused_every_person_only_operation,
    a_person_key_takes_every_person_only_operation,
    a_service_admin_creates_only_lesser_principals_and_keys,
    the_first_admins_are_persons_and_a_service_admin_cannot_replace_the_last,
);

/// `(method, path, operation ID)` of every operation marked person-only.
async fn person_only_operations(s: &Server) -> Vec<(Method, String, String)> {
    let doc = s
        .anonymous()
        .get("/openapi.json")
        .await
        .ok(200)
        .json
        .clone();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            if op.get("x-person-only") == Some(&json!(true)) {
                let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
                let id = op["operationId"].as_str().expect("operationId");
                out.push((method, path.clone(), id.to_string()));
            }
        }
    }
    let ids: Vec<&str> = out.iter().map(|(_, _, id)| id.as_str()).collect();
    for expected in [
        "createOrganization",
        "rotateSigningSecret",
        "deleteSigningSecret",
        "updatePrincipal",
    ] {
        assert!(
            ids.contains(&expected),
            "{expected} is not person-only: {ids:?}"
        );
    }
    out
}

/// A key of a new principal of this kind and role.
async fn key_of(s: &Server, kind: &str, role: &str) -> (String, Api) {
    let name = unique(kind);
    s.post(
        "/v1/principals",
        json!({"name": name, "kind": kind, "role": role}),
    )
    .await
    .ok(201);
    let key = s
        .post_empty(&format!("/v1/principals/{name}/keys"))
        .await
        .ok(201)
        .json["key"]
        .as_str()
        .expect("key")
        .to_string();
    (name, s.with_key(&key))
}

async fn send(api: &Api, method: &Method, path: &str, body: Value) -> crate::harness::Resp {
    let mut req = api
        .request(method.clone(), path)
        .header("Idempotency-Key", &unique("k"));
    if *method != Method::GET && *method != Method::DELETE {
        req = req.json(&body);
    }
    req.send().await
}

/// What the tests can see of everything a person-only operation changes.
async fn tenancy_state(s: &Server) -> Value {
    json!({
        "secrets": s.get("/v1/signing-secrets").await.ok(200).json["secrets"],
        "principals": s.collect_pages("/v1/principals?limit=100").await,
    })
}

async fn a_service_key_is_refused_every_person_only_operation(s: Server) {
    let ops = person_only_operations(&s).await;
    let (_, service_admin) = key_of(&s, "service", "admin").await;
    let (_, service_reader) = key_of(&s, "service", "reader").await;
    let (_, person_reader) = key_of(&s, "person", "reader").await;
    let secret = s.get("/v1/signing-secrets").await.ok(200).json["secrets"][0]["id"]
        .as_str()
        .expect("secret id")
        .to_string();
    let before = tenancy_state(&s).await;
    for (method, template, id) in &ops {
        // Real names where the path has them, so that only the caller's
        // kind stands between the request and its effect.
        let path = template
            .replace("{name}", "admin")
            .replace("{id}", &secret)
            .replace(['{', '}'], "");
        let body = json!({"name": unique("org"), "role": "writer"});
        let refused = send(&service_admin, method, &path, body.clone()).await;
        let doc = refused.problem(403, "USER_IDENTITY_REQUIRED");
        assert!(
            doc["detail"].as_str().unwrap_or("").contains("person"),
            "{id}: {doc}"
        );
        // A caller without the role, person or service, is told about the
        // role, as everywhere.
        for api in [&person_reader, &service_reader] {
            send(api, method, &path, body.clone())
                .await
                .problem(403, "PERMISSION_DENIED");
        }
    }
    assert_eq!(
        tenancy_state(&s).await,
        before,
        "a refused operation changed something"
    );
}

async fn a_person_key_takes_every_person_only_operation(s: Server) {
    let (_, person) = key_of(&s, "person", "admin").await;
    for (method, _, id) in person_only_operations(&s).await {
        match id.as_str() {
            "createOrganization" => {
                let org = unique("org");
                let made = send(&person, &method, "/v1/organizations", json!({"name": org})).await;
                let key = made.ok(201).json["admin_key"].as_str().expect("admin_key");
                s.with_key(key).get("/v1/principals").await.ok(200);
            }
            "rotateSigningSecret" => {
                send(&person, &method, "/v1/signing-secrets/rotate", Value::Null)
                    .await
                    .ok(201);
            }
            "deleteSigningSecret" => {
                let new = person.post_empty("/v1/signing-secrets/rotate").await;
                let new_id = new.ok(201).json["id"].as_str().expect("id").to_string();
                let path = format!("/v1/signing-secrets/{new_id}");
                send(&person, &method, &path, Value::Null).await.ok(204);
                person.get(&path).await.problem(404, "NOT_FOUND");
            }
            "updatePrincipal" => {
                let (name, _) = key_of(&s, "service", "reader").await;
                let path = format!("/v1/principals/{name}");
                let changed = send(&person, &method, &path, json!({"role": "writer"})).await;
                assert_eq!(changed.ok(200).json["role"], "writer");
            }
            other => panic!(
                "person-only operation {other} has no case here: add one, so that a person \
                 is shown to be able to take it"
            ),
        }
    }
}

async fn a_service_admin_creates_only_lesser_principals_and_keys(s: Server) {
    let (me, service) = key_of(&s, "service", "admin").await;
    // Lesser principals and their keys, and revocations, are a service's
    // to manage.
    let writer = unique("w");
    service
        .post(
            "/v1/principals",
            json!({"name": writer, "kind": "service", "role": "writer"}),
        )
        .await
        .ok(201);
    let key = service
        .post_empty(&format!("/v1/principals/{writer}/keys"))
        .await
        .ok(201)
        .json
        .clone();
    s.with_key(key["key"].as_str().unwrap())
        .get("/v1/queues")
        .await
        .ok(200);
    service
        .delete(&format!(
            "/v1/principals/{writer}/keys/{}",
            key["id"].as_str().unwrap()
        ))
        .await
        .ok(204);

    // An admin principal, or a key for any admin (itself included), is not.
    let admin = unique("a");
    service
        .post(
            "/v1/principals",
            json!({"name": admin, "kind": "person", "role": "admin"}),
        )
        .await
        .problem(403, "USER_IDENTITY_REQUIRED");
    s.get(&format!("/v1/principals/{admin}/keys"))
        .await
        .problem(404, "NOT_FOUND");
    // The keys by ID: a key's `last_used_at` is recorded after its
    // request is answered, so the caller's own may change meanwhile.
    let key_ids = async |path: &str| -> Vec<Value> {
        s.collect_pages(&format!("{path}?limit=100"))
            .await
            .into_iter()
            .map(|k| k["id"].clone())
            .collect()
    };
    for holder in ["admin", me.as_str()] {
        let path = format!("/v1/principals/{holder}/keys");
        let before = key_ids(&path).await;
        service
            .post_empty(&path)
            .await
            .problem(403, "USER_IDENTITY_REQUIRED");
        assert_eq!(key_ids(&path).await, before);
    }
    // A person admin may do both.
    s.post(
        "/v1/principals",
        json!({"name": admin, "kind": "person", "role": "admin"}),
    )
    .await
    .ok(201);
    s.post_empty(&format!("/v1/principals/{me}/keys"))
        .await
        .ok(201);
}

async fn the_first_admins_are_persons_and_a_service_admin_cannot_replace_the_last(s: Server) {
    let principals = s.collect_pages("/v1/principals?limit=100").await;
    let admin = principals
        .iter()
        .find(|p| p["name"] == "admin")
        .expect("admin");
    assert_eq!(
        (&admin["kind"], &admin["role"]),
        (&json!("person"), &json!("admin"))
    );
    let org = unique("org");
    let made = s.post("/v1/organizations", json!({"name": org})).await;
    let first = s.with_key(made.ok(201).json["admin_key"].as_str().unwrap());
    let theirs = first.collect_pages("/v1/principals?limit=100").await;
    assert_eq!(theirs.len(), 1);
    assert_eq!(
        (&theirs[0]["kind"], &theirs[0]["role"]),
        (&json!("person"), &json!("admin"))
    );

    // A service admin with a key would leave nobody able to change a role
    // or make an admin: it does not count as the organization's admin.
    let (_, _service) = key_of(&s, "service", "admin").await;
    let ids: Vec<String> = s
        .collect_pages("/v1/principals/admin/keys?limit=100")
        .await
        .iter()
        .map(|k| k["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 1);
    s.patch("/v1/principals/admin", json!({"role": "writer"}))
        .await
        .problem(409, "FAILED_PRECONDITION");
    s.delete(&format!("/v1/principals/admin/keys/{}", ids[0]))
        .await
        .problem(409, "FAILED_PRECONDITION");
    // A second person admin with a key lets the first step down.
    let (_, person) = key_of(&s, "person", "admin").await;
    person
        .patch("/v1/principals/admin", json!({"role": "writer"}))
        .await
        .ok(200);
    person.get("/v1/principals").await.ok(200);
}
