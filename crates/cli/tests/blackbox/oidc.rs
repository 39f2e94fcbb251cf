//! OIDC both ways, on both stores: targets that ask for `oidc` receive an
//! ID token that verifies against Idem's own discovery document and JWKS,
//! fetched over HTTP as a target would; keys rotate and the old one stays
//! published; `idem proxy` with Idem as its issuer lets Idem's tokens
//! through and refuses missing, expired, wrong-audience, wrong-issuer and
//! forged ones before anything reaches its upstream. An OIDC token opens
//! one run: Idem's name it (`idem_run`), other issuers' are bound to the
//! first run they opened, on every store of the proxy.

use crate::guard_e2e::ProxyStore;
use crate::harness::target::{Received, Target, expected_run_key, wait_state};
use crate::harness::{Backend, PROXY_LISTENING_PREFIX, Process, Server, command, unique};
use axum::routing::get;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{Value, json};
use std::time::Duration;

const WITHIN: Duration = Duration::from_secs(15);
const RSA_DER: &[u8] = include_bytes!("../../../guard/testdata/rsa-test-key.der");
const RSA_JWK: &str = include_str!("../../../guard/testdata/rsa-test-key.jwk.json");

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// Idem's discovery document and JWKS, read anonymously over HTTP.
async fn discover(s: &Server) -> (Value, Vec<Jwk>) {
    let http = reqwest::Client::new();
    let config: Value = http
        .get(format!("{}/.well-known/openid-configuration", s.base()))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    let jwks: Value = http
        .get(config["jwks_uri"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| serde_json::from_value(k.clone()).unwrap())
        .collect();
    (config, keys)
}

fn token_of(r: &Received) -> String {
    r.header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_else(|| panic!("no bearer token in {r:?}"))
        .to_string()
}

/// What a target does: find the token's key by `kid` in the JWKS and check
/// the signature, the issuer and the audience. Returns the claims and kid.
fn verify(token: &str, keys: &[Jwk], issuer: &str, audience: &str) -> (Value, String) {
    let kid = jsonwebtoken::decode_header(token).unwrap().kid.unwrap();
    let jwk = keys
        .iter()
        .find(|k| k.common.key_id.as_deref() == Some(&kid))
        .unwrap_or_else(|| panic!("kid {kid} is not published"));
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[audience]);
    let claims =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_jwk(jwk).unwrap(), &validation)
            .unwrap_or_else(|e| panic!("Idem's token does not verify: {e}"))
            .claims;
    (claims, kid)
}

async fn targets_verify_idem_s_tokens_against_its_jwks_and_old_keys_stay_published(
    backend: Backend,
) {
    let s = Server::start_with(backend, &["--oidc-key-rotation", "2s"]).await;
    let target = Target::start().await;
    s.create_queue("q").await;
    s.create_task(
        "q",
        json!({"task_id": "by-origin", "target": {"url": target.url("/ok"), "oidc": {}}}),
    )
    .await;
    let named = s
        .create_task(
            "q",
            json!({"task_id": "by-name", "target": {"url": target.url("/ok"),
                   "oidc": {"audience": "api://orders"}}}),
        )
        .await;
    assert_eq!(named["target"]["oidc"]["audience"], "api://orders");
    assert_eq!(
        s.get_task("q", "by-origin").await["target"]["oidc"]["audience"],
        target.base.as_str(),
        "the audience defaults to the target's origin"
    );
    s.create_task(
        "q",
        json!({"task_id": "plain", "target": {"url": target.url("/ok")}}),
    )
    .await;

    let by_origin = token_of(&target.wait_for("by-origin", 1, WITHIN).await[0]);
    let by_name = token_of(&target.wait_for("by-name", 1, WITHIN).await[0]);
    let plain = &target.wait_for("plain", 1, WITHIN).await[0];
    assert_eq!(plain.header("authorization"), None, "no oidc, no token");
    let (config, keys) = discover(&s).await;
    assert_eq!(
        config["issuer"],
        s.base(),
        "the issuer defaults to the address served"
    );
    assert_eq!(
        config["jwks_uri"],
        format!("{}/.well-known/jwks.json", s.base())
    );
    assert_eq!(
        config["id_token_signing_alg_values_supported"],
        json!(["ES256"])
    );
    let (claims, first_kid) = verify(&by_origin, &keys, s.base(), &target.base);
    assert_eq!(claims["sub"], "org/default");
    let lifetime = claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap();
    assert_eq!(
        lifetime,
        600 + 60,
        "the attempt's deadline (the default) and a minute"
    );
    assert!(claims["idem_run"].is_string(), "{claims}");
    let (again, _) = verify(&by_name, &keys, s.base(), "api://orders");
    assert_ne!(
        again["idem_run"], claims["idem_run"],
        "one token per delivery, naming its own run"
    );
    assert!((claims["iat"].as_i64().unwrap() - now()).abs() < 60);
    let (_, kid) = verify(&by_name, &keys, s.base(), "api://orders");
    assert_eq!(kid, first_kid, "one key per organization");

    // Past the rotation period the next delivery is signed by a new key,
    // and the JWKS publishes both: tokens of the old one are still live.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    s.create_task(
        "q",
        json!({"task_id": "rotated", "target": {"url": target.url("/ok"), "oidc": {}}}),
    )
    .await;
    let rotated = token_of(&target.wait_for("rotated", 1, WITHIN).await[0]);
    let (_, keys) = discover(&s).await;
    let (_, new_kid) = verify(&rotated, &keys, s.base(), &target.base);
    assert_ne!(new_kid, first_kid, "the key rotated");
    verify(&by_origin, &keys, s.base(), &target.base);
    assert!(keys.len() >= 2);

    // Bad audiences are named, and nothing is written.
    for (oidc, field) in [
        (json!({"audience": ""}), "target.oidc.audience"),
        (json!({"audience": "a".repeat(513)}), "target.oidc.audience"),
    ] {
        s.post(
            "/v1/queues/q/tasks",
            json!({"task_id": "bad", "target": {"url": target.url("/ok"), "oidc": oidc}}),
        )
        .await
        .invalid(field);
    }
    s.post(
        "/v1/queues/q/tasks",
        json!({"task_id": "bad", "target": {"url": target.url("/ok"), "oidc": {},
               "headers": {"Authorization": "Bearer mine"}}}),
    )
    .await
    .invalid("target.headers.Authorization");
    s.get("/v1/queues/q/tasks/bad").await.ok(404);

    // The CLI asks for tokens on tasks and on jobs' runs.
    s.idem(&[
        "task",
        "create",
        "q",
        "--url",
        &target.url("/ok"),
        "--task-id",
        "from-cli",
        "--oidc-audience",
        "api://cli",
    ])
    .await
    .ok();
    let from_cli = token_of(&target.wait_for("from-cli", 1, WITHIN).await[0]);
    let (_, keys) = discover(&s).await;
    verify(&from_cli, &keys, s.base(), "api://cli");
    let job = unique("job");
    let created = s
        .idem(&[
            "job",
            "create",
            &job,
            "--schedule",
            "* * * * * *",
            "--url",
            &target.url("/ok"),
            "--oidc",
            "--json",
        ])
        .await
        .json();
    assert_eq!(created["target"]["oidc"]["audience"], target.base.as_str());
    let run = crate::harness::jobs::wait_runs_of(&target, &job, 1, WITHIN).await;
    let (_, keys) = discover(&s).await;
    verify(&token_of(&run[0]), &keys, s.base(), &target.base);
}

async fn proxy(args: &[&str]) -> Process {
    let mut cmd = command();
    cmd.arg("proxy").args(args);
    Process::run(cmd, PROXY_LISTENING_PREFIX).await
}

/// An issuer the test serves: the committed RSA test key's JWKS.
async fn test_issuer() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let discovery = json!({"issuer": url, "jwks_uri": format!("{url}/keys")});
    let jwk: Value = serde_json::from_str(RSA_JWK).unwrap();
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            get(move || async move { axum::Json(discovery) }),
        )
        .route(
            "/keys",
            get(move || async move { axum::Json(json!({ "keys": [jwk] })) }),
        );
    let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, task)
}

fn rsa_token(kid: &str, claims: Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_rsa_der(RSA_DER)).unwrap()
}

async fn send(proxy: &Process, token: Option<&str>, id: &str) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/ok", proxy.base))
        .header("Idempotency-Key", id)
        .header("Idem-Task-Id", id)
        .body("{}");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn the_proxy_takes_idem_s_tokens_and_refuses_the_rest(backend: Backend) {
    let s = Server::start(backend).await;
    let upstream = Target::start().await;
    let audience = "https://proxy.example";
    let p = proxy(&[
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream.base,
        "--store",
        "memory",
        "--oidc-issuer",
        s.base(),
        "--oidc-audience",
        audience,
        "--oidc-subject",
        "org/default",
    ])
    .await;
    s.create_queue_with(json!({"name": "q", "retry_config": {"max_attempts": 1}}))
        .await;
    s.create_task(
        "q",
        json!({"task_id": "good", "target": {"url": format!("{}/ok", p.base),
               "oidc": {"audience": audience}}}),
    )
    .await;
    let got = upstream.wait_for("good", 1, WITHIN).await;
    assert_eq!(got.len(), 1, "Idem's token passed: {}", p.stderr());
    s.create_task(
        "q",
        json!({"task_id": "elsewhere", "target": {"url": format!("{}/ok", p.base),
               "oidc": {"audience": "https://another.example"}}}),
    )
    .await;
    let failed = wait_final(&s, "elsewhere").await;
    assert_eq!(failed["state"], "failed");
    assert_eq!(failed["last_attempt"]["status_code"], 401);

    let (status, problem) = send(&p, None, "no-token").await;
    assert_eq!(status, 401);
    assert_eq!(problem["type"], "UNAUTHENTICATED");
    // The refusal names itself as the API's problems do.
    assert_eq!(problem["instance"], "/ok", "{problem}");
    assert!(
        problem["request_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty()),
        "{problem}"
    );

    let (_, keys) = discover(&s).await;
    let idem_kid = keys[0].common.key_id.clone().unwrap();
    let good_claims = json!({"iss": s.base(), "aud": audience, "sub": "org/default",
                             "iat": now(), "exp": now() + 300});
    // A forged token: Idem's key ID, signed by another key.
    let forged = rsa_token(&idem_kid, good_claims.clone());
    assert_eq!(send(&p, Some(&forged), "forged").await.0, 401);
    // A token of another issuer, signed by its own key.
    let (other_issuer, _served) = test_issuer().await;
    let mut foreign_claims = good_claims.clone();
    foreign_claims["iss"] = json!(other_issuer);
    let foreign = rsa_token("test-rsa-1", foreign_claims.clone());
    assert_eq!(send(&p, Some(&foreign), "foreign").await.0, 401);

    // Against an issuer whose key the test holds: the same token is good,
    // and expired, wrong-audience and wrong-issuer versions of it are not.
    let q = proxy(&[
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream.base,
        "--store",
        "memory",
        "--oidc-issuer",
        &other_issuer,
        "--oidc-audience",
        audience,
        "--oidc-any-subject",
    ])
    .await;
    assert_eq!(
        send(&q, Some(&foreign), "rs256").await.0,
        200,
        "{}",
        q.stderr()
    );
    let bad = [
        ("expired", json!({"exp": now() - 120, "iat": now() - 500})),
        ("wrong-audience", json!({"aud": "https://another.example"})),
        ("wrong-issuer", json!({"iss": s.base()})),
    ];
    for (id, changes) in bad {
        let mut claims = foreign_claims.clone();
        for (k, v) in changes.as_object().unwrap() {
            claims[k] = v.clone();
        }
        let (status, problem) = send(&q, Some(&rsa_token("test-rsa-1", claims)), id).await;
        assert_eq!(status, 401, "{id}: {problem}");
    }
    for id in [
        "no-token",
        "forged",
        "foreign",
        "expired",
        "wrong-audience",
        "wrong-issuer",
    ] {
        assert!(
            upstream.received_for(id).is_empty(),
            "{id} reached the upstream"
        );
    }
    assert_eq!(upstream.received_for("rs256").len(), 1);
    assert!(upstream.received_for("elsewhere").is_empty());
}

async fn wait_final(s: &Server, id: &str) -> Value {
    let until = std::time::Instant::now() + WITHIN;
    loop {
        let task = s.get_task("q", id).await;
        if matches!(task["state"].as_str(), Some("failed" | "succeeded")) {
            return task;
        }
        assert!(
            std::time::Instant::now() < until,
            "{id} never ended: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

idem_testkit::store_tests!(
    targets_verify_idem_s_tokens_against_its_jwks_and_old_keys_stay_published,
    the_proxy_takes_idem_s_tokens_and_refuses_the_rest,
);

/// An OIDC token opens one run, on every store of the proxy (modules named
/// after the store, beside the Idem backends' above).
mod one_run {
    use super::*;

    /// The claims of a token, read without checking it (the proxy did).
    fn claims_of(token: &str) -> Value {
        use base64::Engine;
        let payload = token.split('.').nth(1).expect("a JWT");
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .expect("base64url claims");
        serde_json::from_slice(&bytes).expect("JSON claims")
    }

    /// A proxy in front of `upstream` that takes tokens of `issuer` for
    /// `audience`, keeping its claims in `store`.
    async fn token_proxy(
        upstream: &Target,
        store: &ProxyStore,
        issuer: &str,
        who: &[&str],
    ) -> Process {
        let url = store.url();
        let mut args = vec![
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream.base,
            "--store",
            &url,
            "--oidc-issuer",
            issuer,
            "--oidc-audience",
            AUDIENCE,
        ];
        args.extend_from_slice(who);
        proxy(&args).await
    }

    const AUDIENCE: &str = "https://proxy.example";

    /// Idem's token names its run: captured from a delivery and sent again with
    /// new `Idempotency-Key`s and a forged body it is refused, and the upstream
    /// ran once; with its own run key it is that run's duplicate.
    async fn a_captured_idem_token_opens_only_its_own_run(store: ProxyStore) {
        let s = Server::start(Backend::Sqlite).await;
        let upstream = Target::start().await;
        let p = token_proxy(
            &upstream,
            &store,
            s.base(),
            // The upstream passes the token on to the test, which plays the
            // one who captured it.
            &["--oidc-subject", "org/default", "--forward-authorization"],
        )
        .await;
        s.create_queue("q").await;
        let id = unique("charge");
        let task = s
            .create_task(
                "q",
                json!({"task_id": id, "target": {"url": format!("{}/ok", p.base),
                       "json": {"amount": 100}, "oidc": {"audience": AUDIENCE}}}),
            )
            .await;
        let delivered = upstream.wait_for(&id, 1, WITHIN).await.remove(0);
        wait_state(&s, "q", &id, "succeeded", WITHIN).await;
        let token = token_of(&delivered);
        let run_key = expected_run_key("default", "q", &id, task["created_at"].as_str().unwrap());
        assert_eq!(claims_of(&token)["idem_run"], run_key.as_str());
        // Keyed as a signed delivery of the same run would be.
        assert_eq!(
            delivered.header("idempotency-key"),
            Some(idem_guard::RunKey::of_signed_message(run_key.as_bytes()).as_str())
        );

        let http = reqwest::Client::new();
        let replay = |key: Option<String>, body: &'static str| {
            let mut request = http
                .post(format!("{}/ok", p.base))
                .bearer_auth(&token)
                .header("Idem-Task-Id", &id)
                .header("Content-Type", "application/json")
                .body(body);
            if let Some(key) = key {
                request = request.header("Idempotency-Key", key);
            }
            request.send()
        };
        for n in 0..5 {
            let answer = replay(Some(unique("replay")), r#"{"amount":1000000}"#)
                .await
                .unwrap();
            assert_eq!(answer.status(), 401, "replay {n}: {}", p.stderr());
            let problem: Value = answer.json().await.unwrap();
            assert_eq!(problem["type"], "UNAUTHENTICATED");
        }
        for key in [Some(run_key.clone()), None] {
            let answer = replay(key.clone(), r#"{"amount":1000000}"#).await.unwrap();
            assert_eq!(answer.status(), 200, "{key:?}");
            assert_eq!(answer.headers()["idempotent-replayed"], "true");
        }
        assert_eq!(
            upstream.received_for(&id).len(),
            1,
            "the upstream ran once: {}",
            p.stderr()
        );
    }

    /// A token without `idem_run` (as Google's) opens the first run it is sent
    /// with, and no other until it expires; another token opens its own.
    async fn a_token_without_idem_run_is_bound_to_its_first_run(store: ProxyStore) {
        let upstream = Target::start().await;
        let (issuer, _served) = test_issuer().await;
        let p = token_proxy(&upstream, &store, &issuer, &["--oidc-any-subject"]).await;
        let claims = json!({"iss": issuer, "aud": AUDIENCE, "sub": "scheduler@example",
                            "iat": now(), "exp": now() + 300});
        let token = rsa_token("test-rsa-1", claims.clone());
        let (first, second) = (unique("first"), unique("second"));
        let (status, _) = send(&p, Some(&token), &first).await;
        assert_eq!(status, 200, "{}", p.stderr());
        let (status, problem) = send(&p, Some(&token), &second).await;
        assert_eq!(status, 401, "{problem}");
        assert_eq!(problem["type"], "UNAUTHENTICATED");
        // The same run again is its duplicate, as without a token.
        let (status, body) = send(&p, Some(&token), &first).await;
        assert_eq!(status, 200);
        assert_eq!(body["status"], "duplicate");
        let mut other = claims;
        other["jti"] = json!(unique("jti"));
        let (status, _) = send(&p, Some(&rsa_token("test-rsa-1", other)), &second).await;
        assert_eq!(status, 200, "another token opens another run");
        assert_eq!(upstream.received_for(&first).len(), 1);
        assert_eq!(upstream.received_for(&second).len(), 1);
    }

    idem_testkit::backend_tests! {
        memory: ProxyStore::Memory,
        sqlite: ProxyStore::sqlite().await,
        postgres: ProxyStore::postgres().await,
        redis: ProxyStore::Redis;
        a_captured_idem_token_opens_only_its_own_run,
        a_token_without_idem_run_is_bound_to_its_first_run,
    }
}
