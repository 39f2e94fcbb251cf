//! `idem principal|key|org|secret …` against a real `idem serve`.

use crate::harness::{Backend, Server, unique};

#[tokio::test]
async fn principals_and_their_keys() {
    let s = Server::start(Backend::Sqlite).await;
    let name = unique("svc");
    let p = s
        .idem(&["principal", "create", &name, "--role", "reader", "--json"])
        .await
        .json();
    assert_eq!(
        (p["name"].as_str(), p["kind"].as_str(), p["role"].as_str()),
        (Some(name.as_str()), Some("service"), Some("reader"))
    );
    s.idem(&["principal", "create", &name, "--role", "reader"])
        .await
        .fails(5, "PRINCIPAL_ALREADY_EXISTS (409): ");
    s.idem(&["principal", "create", &unique("x"), "--role", "root"])
        .await
        .fails(2, "");
    let person = s
        .idem(&[
            "principal",
            "create",
            &unique("ann"),
            "--role",
            "writer",
            "--kind",
            "person",
        ])
        .await
        .ok();
    assert_eq!(person.field("kind"), "person");

    let table = s.idem(&["principal", "ls"]).await.ok();
    assert!(table.stdout.starts_with("NAME"), "{}", table.stdout);
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with(&name))
        .expect("listed");
    assert_eq!(row.split_whitespace().nth(2), Some("reader"));
    let listed = s.idem(&["principal", "ls", "--json"]).await.json();
    assert!(
        listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["name"] == name.as_str())
    );

    let created = s.idem(&["key", "create", &name]).await.ok();
    let key = created.field("key");
    let id = created.field("id");
    assert!(
        key.starts_with("idem_") && id.starts_with("key_"),
        "{}",
        created.stdout
    );
    assert!(created.stderr.contains("shown only this once"));
    s.idem_as(&key, &["queue", "create", &unique("q")])
        .await
        .fails(6, "PERMISSION_DENIED (403): ");

    let promoted = s
        .idem(&["principal", "set-role", &name, "admin", "--json"])
        .await
        .json();
    assert_eq!(promoted["role"], "admin");
    s.idem_as(&key, &["queue", "create", &unique("q")])
        .await
        .ok();
    s.idem(&["principal", "set-role", "nobody", "admin"])
        .await
        .fails(4, "NOT_FOUND (404): ");

    let keys = s.idem(&["key", "ls", &name, "--json"]).await.json();
    assert_eq!(keys["items"][0]["id"], id.as_str());
    assert!(
        keys["items"][0].get("key").is_none(),
        "secrets are never listed"
    );
    let keys = s.idem(&["key", "ls", &name]).await.ok();
    assert!(
        keys.stdout.lines().nth(1).unwrap().starts_with(&id),
        "{}",
        keys.stdout
    );

    let revoked = s.idem(&["key", "revoke", &name, &id]).await.ok();
    assert_eq!(revoked.stdout.trim(), format!("revoked key {id} of {name}"));
    s.idem_as(&key, &["queue", "ls"])
        .await
        .fails(6, "UNAUTHENTICATED (401): ");
    s.idem(&["key", "revoke", &name, &id])
        .await
        .fails(4, "NOT_FOUND (404): ");
}

#[tokio::test]
async fn organizations() {
    let s = Server::start(Backend::Sqlite).await;
    let org = unique("org");
    let created = s.idem(&["org", "create", &org, "--json"]).await.json();
    assert_eq!(created["name"], org.as_str());
    let admin = created["admin_key"].as_str().unwrap().to_string();
    let q = unique("q");
    s.idem_as(&admin, &["queue", "create", &q]).await.ok();
    // Another organization's queue is not visible.
    s.idem(&["queue", "get", &q])
        .await
        .fails(4, "NOT_FOUND (404): ");
    s.idem(&["org", "create", &org])
        .await
        .fails(5, "ORGANIZATION_ALREADY_EXISTS (409): ");
    s.idem_as(&admin, &["org", "create", &unique("org")])
        .await
        .fails(6, "PERMISSION_DENIED (403): ");
    let table = s.idem(&["org", "create", &unique("org")]).await.ok();
    assert!(table.field("admin key").starts_with("idem_"));
}

#[tokio::test]
async fn signing_secrets() {
    let s = Server::start(Backend::Sqlite).await;
    let before = s.idem(&["secret", "ls", "--json"]).await.json();
    let before = before["secrets"].as_array().unwrap().len();
    let rotated = s.idem(&["secret", "rotate", "--json"]).await.json();
    let id = rotated["id"].as_str().unwrap().to_string();
    assert!(rotated["secret"].as_str().unwrap().starts_with("whsec_"));
    let listed = s.idem(&["secret", "ls", "--json"]).await.json();
    assert_eq!(listed["secrets"].as_array().unwrap().len(), before + 1);
    assert_eq!(listed["secrets"][0]["id"], id.as_str());
    let table = s.idem(&["secret", "ls"]).await.ok();
    assert!(table.stdout.starts_with("ID"), "{}", table.stdout);
    assert!(table.stdout.lines().nth(1).unwrap().starts_with(&id));
    let table_rotate = s.idem(&["secret", "rotate"]).await.ok();
    assert!(table_rotate.field("secret").starts_with("whsec_"));

    let removed = s.idem(&["secret", "rm", &id]).await.ok();
    assert_eq!(
        removed.stdout.trim(),
        format!("deleted signing secret {id}")
    );
    s.idem(&["secret", "rm", &id])
        .await
        .fails(4, "NOT_FOUND (404): ");
}
