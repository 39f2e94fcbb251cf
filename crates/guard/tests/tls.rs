//! The guard's network stores over TLS, against servers of the test's own
//! whose certificates a test CA signed. (The whole conformance suite also
//! runs on Redis over TLS: `conformance::rediss`.)

use std::time::Duration;

use idem_guard::{ClaimOutcome, ClaimTerms, FinishResult, GuardStore, HandlerOutcome, RunKey};
use idem_testkit::tls::{TestCa, TlsPostgres, TlsRedis};

const TERMS: ClaimTerms = ClaimTerms {
    lease: Duration::from_secs(60),
    retention: Duration::from_secs(3600),
};

/// A run claimed, completed, then answered as completed.
async fn runs_once(store: &dyn GuardStore) {
    let key = RunKey::from_parts(["tls", "run"]);
    let ClaimOutcome::Claimed(claim) = store.claim(&key, TERMS).await.unwrap() else {
        panic!("a first claim must win");
    };
    assert_eq!(
        store.finish(&claim, HandlerOutcome::Success).await.unwrap(),
        FinishResult::Applied
    );
    assert_eq!(
        store.claim(&key, TERMS).await.unwrap(),
        ClaimOutcome::Completed
    );
}

#[tokio::test]
async fn postgres_store_verifies_the_server_with_sslrootcert() {
    let ca = TestCa::new();
    let pg = TlsPostgres::start(&ca);
    let url = pg.url(&format!(
        "sslmode=verify-full&sslrootcert={}&application_name=guard-tls",
        ca.ca_file.display()
    ));
    let store = idem_guard::open_store(&url).await.unwrap();
    runs_once(store.as_ref()).await;

    // The server saw the store's connections encrypted.
    let (encrypted, all) = pg.encrypted_connections("guard-tls").await;
    assert!(all > 0, "the store holds no connection");
    assert_eq!(encrypted, all);

    // Without the CA file the system's roots are used, and they do not
    // hold the test's CA.
    let err = idem_guard::open_store(&pg.url("sslmode=verify-full"))
        .await
        .map(|_| ())
        .expect_err("an unknown issuer is refused");
    assert!(
        err.to_string().contains("invalid peer certificate"),
        "{err}"
    );
}

#[tokio::test]
async fn rediss_needs_the_ca_that_signed_the_server() {
    let ca = TestCa::new();
    let redis = TlsRedis::start(&ca);
    let store = idem_guard::open_store_with(
        &redis.url(),
        idem_guard::PostgresLimits::default(),
        Some(&ca.ca_file),
    )
    .await
    .unwrap();
    runs_once(store.as_ref()).await;

    let err = tokio::time::timeout(
        Duration::from_secs(30),
        idem_guard::open_store(&redis.url()),
    )
    .await
    .expect("a refused certificate fails promptly")
    .map(|_| ())
    .expect_err("an unknown issuer is refused");
    assert!(err.to_string().contains("certificate"), "{err}");

    let other = TestCa::new();
    let err = idem_guard::open_store_with(
        &redis.url(),
        idem_guard::PostgresLimits::default(),
        Some(&other.ca_file),
    )
    .await
    .map(|_| ())
    .expect_err("another CA is refused");
    assert!(err.to_string().contains("certificate"), "{err}");
}

#[tokio::test]
async fn a_redis_ca_file_applies_to_rediss_only() {
    let ca = TestCa::new();
    let err = idem_guard::open_store_with(
        "redis://127.0.0.1:6379",
        idem_guard::PostgresLimits::default(),
        Some(&ca.ca_file),
    )
    .await
    .map(|_| ())
    .expect_err("refused");
    assert!(err.to_string().contains("rediss:// store only"), "{err}");
    let err = idem_guard::open_store_with(
        "rediss://127.0.0.1:1",
        idem_guard::PostgresLimits::default(),
        Some(std::path::Path::new("/no/such/ca.pem")),
    )
    .await
    .map(|_| ())
    .expect_err("refused");
    assert!(err.to_string().contains("/no/such/ca.pem"), "{err}");
}
