//! OIDC bearer tokens: the verifier against an issuer served by the test
//! (its discovery document and JWKS over HTTP), and the layer in front of a
//! handler. Keys are the committed RSA test key and P-256 keys made here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, HeaderValue, Request, StatusCode};
use idem_guard::{OidcError, OidcVerifier, VerifiedToken};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use tower::ServiceExt;

const RSA_DER: &[u8] = include_bytes!("../testdata/rsa-test-key.der");
const RSA_JWK: &str = include_str!("../testdata/rsa-test-key.jwk.json");
const AUDIENCE: &str = "https://orders.example";

fn rsa_key() -> EncodingKey {
    EncodingKey::from_rsa_der(RSA_DER)
}

/// A new P-256 key: its signing half and its JWK.
fn ec_key(kid: &str) -> (EncodingKey, Value) {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let point = pair.public_key().as_ref();
    let jwk = json!({
        "kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    });
    (EncodingKey::from_ec_der(pkcs8.as_ref()), jwk)
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

fn sign(alg: Algorithm, kid: &str, key: &EncodingKey, claims: Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, &claims, key).unwrap()
}

/// An issuer on 127.0.0.1 serving its discovery document and a JWKS the
/// test may change, counting the JWKS fetches.
struct Issuer {
    url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct Served {
    url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
}

impl Issuer {
    async fn start(keys: Vec<Value>) -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let served = Served {
            url: url.clone(),
            keys: Arc::new(Mutex::new(keys)),
            fetches: Arc::new(AtomicUsize::new(0)),
        };
        let app = Router::new()
            .route(
                "/.well-known/openid-configuration",
                get(|State(s): State<Served>| async move {
                    axum::Json(json!({"issuer": s.url, "jwks_uri": format!("{}/keys", s.url)}))
                }),
            )
            .route(
                "/keys",
                get(|State(s): State<Served>| async move {
                    s.fetches.fetch_add(1, Ordering::SeqCst);
                    let keys = s.keys.lock().unwrap().clone();
                    axum::Json(json!({ "keys": keys }))
                }),
            )
            .with_state(served.clone());
        let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Issuer {
            url,
            keys: served.keys,
            fetches: served.fetches,
            task,
        }
    }

    fn verifier(&self) -> OidcVerifier {
        OidcVerifier::new(&self.url, vec![AUDIENCE.to_string()])
    }

    fn claims(&self) -> Value {
        json!({"iss": self.url, "aud": AUDIENCE, "sub": "org/acme",
               "iat": now(), "exp": now() + 300})
    }

    fn with(&self, changes: Value) -> Value {
        let mut claims = self.claims();
        for (k, v) in changes.as_object().unwrap() {
            if v.is_null() {
                claims.as_object_mut().unwrap().remove(k);
            } else {
                claims[k] = v.clone();
            }
        }
        claims
    }
}

fn rsa_jwk() -> Value {
    serde_json::from_str(RSA_JWK).unwrap()
}

fn bearer(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    headers
}

#[tokio::test]
async fn good_rs256_and_es256_tokens_are_accepted() {
    let (ec, ec_jwk) = ec_key("ec-1");
    let issuer = Issuer::start(vec![rsa_jwk(), ec_jwk]).await;
    let verifier = issuer.verifier();
    let rs = sign(Algorithm::RS256, "test-rsa-1", &rsa_key(), issuer.claims());
    let verified = verifier.verify(&bearer(&rs)).await.unwrap();
    assert_eq!(verified.subject.as_deref(), Some("org/acme"));
    let es = sign(Algorithm::ES256, "ec-1", &ec, issuer.claims());
    verifier.verify(&bearer(&es)).await.unwrap();
    // A token with several audiences names ours among them.
    let many = sign(
        Algorithm::ES256,
        "ec-1",
        &ec,
        issuer.with(json!({"aud": ["https://other.example", AUDIENCE]})),
    );
    verifier.verify(&bearer(&many)).await.unwrap();
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1, "keys are cached");
}

#[tokio::test]
async fn missing_expired_early_wrong_audience_wrong_issuer_and_forged_tokens_are_refused() {
    let (ec, ec_jwk) = ec_key("ec-1");
    let (forger, _) = ec_key("ec-1");
    let issuer = Issuer::start(vec![rsa_jwk(), ec_jwk]).await;
    let verifier = issuer.verifier();
    let refused = |r: Result<VerifiedToken, OidcError>, what: &str| match r {
        Ok(_) => panic!("{what} was accepted"),
        Err(e) => e,
    };
    let e = refused(verifier.verify(&HeaderMap::new()).await, "no token");
    assert!(matches!(e, OidcError::Missing));
    let mut basic = HeaderMap::new();
    basic.insert("authorization", HeaderValue::from_static("Basic dTpw"));
    refused(verifier.verify(&basic).await, "basic auth");
    refused(verifier.verify(&bearer("not.a.jwt")).await, "garbage");

    let cases = [
        ("expired", issuer.with(json!({"exp": now() - 120}))),
        (
            "not yet valid",
            issuer.with(json!({"nbf": now() + 600, "exp": now() + 900})),
        ),
        ("without exp", issuer.with(json!({"exp": null}))),
        (
            "for another audience",
            issuer.with(json!({"aud": "https://elsewhere.example"})),
        ),
        ("without aud", issuer.with(json!({"aud": null}))),
        (
            "of another issuer",
            issuer.with(json!({"iss": "https://evil.example"})),
        ),
    ];
    for (what, claims) in cases {
        let token = sign(Algorithm::ES256, "ec-1", &ec, claims);
        let e = refused(verifier.verify(&bearer(&token)).await, what);
        assert!(matches!(e, OidcError::Invalid(_)), "{what}: {e:?}");
        assert_eq!(e.response().status(), StatusCode::UNAUTHORIZED);
    }
    // Within the leeway, a just-expired token still passes.
    let late = sign(
        Algorithm::ES256,
        "ec-1",
        &ec,
        issuer.with(json!({"exp": now() - 5})),
    );
    verifier.verify(&bearer(&late)).await.unwrap();

    let forged = sign(Algorithm::ES256, "ec-1", &forger, issuer.claims());
    let e = refused(verifier.verify(&bearer(&forged)).await, "a forged token");
    assert!(matches!(e, OidcError::Invalid(_)), "{e:?}");
    // An RSA signature under an EC key's ID: the key decides the algorithm.
    let confused = sign(Algorithm::RS256, "ec-1", &rsa_key(), issuer.claims());
    refused(
        verifier.verify(&bearer(&confused)).await,
        "an algorithm swap",
    );
    // HMAC with the public key as secret, the classic confusion.
    let hs = sign(
        Algorithm::HS256,
        "test-rsa-1",
        &EncodingKey::from_secret(RSA_JWK.as_bytes()),
        issuer.claims(),
    );
    let e = refused(verifier.verify(&bearer(&hs)).await, "HS256");
    assert!(matches!(e, OidcError::Malformed(_)), "{e:?}");
}

#[tokio::test]
async fn an_unknown_kid_fetches_the_keys_again_at_most_once_per_interval() {
    let (old, old_jwk) = ec_key("old");
    let (new, new_jwk) = ec_key("new");
    let issuer = Issuer::start(vec![old_jwk.clone()]).await;
    let verifier = issuer
        .verifier()
        .with_refetch_interval(Duration::from_millis(300));
    let token = |key: &EncodingKey, kid: &str| sign(Algorithm::ES256, kid, key, issuer.claims());
    verifier.verify(&bearer(&token(&old, "old"))).await.unwrap();
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);

    // Made-up key IDs within the interval cost no fetch.
    for i in 0..20 {
        let made_up = token(&new, &format!("made-up-{i}"));
        assert!(matches!(
            verifier.verify(&bearer(&made_up)).await,
            Err(OidcError::UnknownKey(_))
        ));
    }
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);

    // The issuer rotates: its new key is found once the interval passed,
    // and the old one, still published, keeps verifying.
    *issuer.keys.lock().unwrap() = vec![new_jwk, old_jwk];
    tokio::time::sleep(Duration::from_millis(400)).await;
    verifier.verify(&bearer(&token(&new, "new"))).await.unwrap();
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
    verifier.verify(&bearer(&token(&old, "old"))).await.unwrap();
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn allowed_subjects_and_verified_emails_narrow_who_may_send() {
    let (ec, ec_jwk) = ec_key("ec-1");
    let issuer = Issuer::start(vec![ec_jwk]).await;
    let verifier = issuer
        .verifier()
        .with_subjects(vec!["org/acme".into()])
        .with_emails(vec!["scheduler@project.iam.example".into()]);
    let token = |changes: Value| sign(Algorithm::ES256, "ec-1", &ec, issuer.with(changes));
    verifier.verify(&bearer(&token(json!({})))).await.unwrap();
    let other = token(json!({"sub": "org/other"}));
    assert!(matches!(
        verifier.verify(&bearer(&other)).await,
        Err(OidcError::NotAllowed)
    ));
    let by_email = token(
        json!({"sub": "1234", "email": "scheduler@project.iam.example",
                                "email_verified": true}),
    );
    verifier.verify(&bearer(&by_email)).await.unwrap();
    let unverified = token(
        json!({"sub": "1234", "email": "scheduler@project.iam.example",
                                  "email_verified": false}),
    );
    assert!(matches!(
        verifier.verify(&bearer(&unverified)).await,
        Err(OidcError::NotAllowed)
    ));
}

#[tokio::test]
async fn an_unreachable_issuer_is_unavailable_not_a_verdict() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let verifier = OidcVerifier::new(&url, vec![AUDIENCE.into()]);
    let token = sign(
        Algorithm::RS256,
        "test-rsa-1",
        &rsa_key(),
        json!({"iss": url, "aud": AUDIENCE, "exp": now() + 60}),
    );
    let e = verifier.verify(&bearer(&token)).await.unwrap_err();
    assert!(matches!(e, OidcError::Unavailable(_)), "{e:?}");
    assert_eq!(e.response().status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn the_layer_refuses_before_the_handler_and_hands_it_the_token() {
    let issuer = Issuer::start(vec![rsa_jwk()]).await;
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = reached.clone();
    let app = Router::new()
        .route(
            "/run",
            post(
                move |axum::Extension(token): axum::Extension<VerifiedToken>| async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    token.subject.unwrap_or_default()
                },
            ),
        )
        .layer(issuer.verifier().layer());
    let call = |auth: Option<String>| {
        let mut request = Request::post("/run");
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        app.clone().oneshot(request.body(Body::empty()).unwrap())
    };
    let refused = call(None).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.headers()["content-type"],
        "application/problem+json"
    );
    let expired = sign(
        Algorithm::RS256,
        "test-rsa-1",
        &rsa_key(),
        issuer.with(json!({"exp": now() - 120})),
    );
    let refused = call(Some(format!("Bearer {expired}"))).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(reached.load(Ordering::SeqCst), 0, "the handler never ran");

    let good = sign(Algorithm::RS256, "test-rsa-1", &rsa_key(), issuer.claims());
    let ok = call(Some(format!("bearer {good}"))).await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let body = axum::body::to_bytes(ok.into_body(), 1024).await.unwrap();
    assert_eq!(&body[..], b"org/acme");
    assert_eq!(reached.load(Ordering::SeqCst), 1);
}

/// `n - s` for the order `n` of P-256: with `r`, another valid signature of
/// the same message.
fn p256_negate(s: &[u8]) -> Vec<u8> {
    const N: [u8; 32] = [
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xff, 0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63,
        0x25, 0x51,
    ];
    let mut out = vec![0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut d = i16::from(N[i]) - i16::from(s[i]) - borrow;
        borrow = i16::from(d < 0);
        if d < 0 {
            d += 256;
        }
        out[i] = d as u8;
    }
    out
}

/// A token reports the run it names, its expiry, and a digest of what was
/// signed: the same token with its signature re-encoded has the same
/// digest, so it cannot pass for a new token where one run per token is
/// enforced.
#[tokio::test]
async fn a_token_reports_its_run_its_expiry_and_a_digest_of_what_was_signed() {
    let (key, jwk) = ec_key("ec-run");
    let issuer = Issuer::start(vec![jwk]).await;
    let verifier = issuer.verifier();
    let exp = now() + 300;
    let named = sign(
        Algorithm::ES256,
        "ec-run",
        &key,
        issuer.with(json!({"idem_run": "run-1", "exp": exp})),
    );
    let verified = verifier.verify(&bearer(&named)).await.unwrap();
    assert_eq!(verified.idem_run.as_deref(), Some("run-1"));
    assert_eq!(verified.expires_at.as_second(), exp);

    let plain = sign(Algorithm::ES256, "ec-run", &key, issuer.claims());
    let unnamed = verifier.verify(&bearer(&plain)).await.unwrap();
    assert_eq!(unnamed.idem_run, None);
    assert_ne!(unnamed.digest, verified.digest);
    assert_eq!(unnamed.digest.len(), 64);

    let (signed, signature) = plain.rsplit_once('.').unwrap();
    let raw = URL_SAFE_NO_PAD.decode(signature).unwrap();
    let mut twin_signature = raw[..32].to_vec();
    twin_signature.extend(p256_negate(&raw[32..]));
    let twin = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(twin_signature));
    assert_ne!(twin, plain);
    match verifier.verify(&bearer(&twin)).await {
        Ok(token) => assert_eq!(token.digest, unnamed.digest),
        // A verifier that takes only one of the two encodings is as good.
        Err(error) => assert!(matches!(error, OidcError::Invalid(_)), "{error:?}"),
    }

    let empty = sign(
        Algorithm::ES256,
        "ec-run",
        &key,
        issuer.with(json!({"idem_run": ""})),
    );
    let refused = verifier.verify(&bearer(&empty)).await.unwrap_err();
    assert!(matches!(refused, OidcError::Invalid(_)), "{refused:?}");
}
