//! Each sslmode against a real PostgreSQL with `ssl=on` and a certificate
//! signed by a CA of the test's own.

use idem_postgres_tls::connect_params;
use idem_testkit::tls::{TestCa, TlsPostgres};

/// Connects to `url` and answers whether the session is encrypted, as the
/// server sees it.
async fn ssl_in_use(url: &str) -> Result<bool, String> {
    let (config, tls) = connect_params(url).map_err(|e| e.to_string())?;
    let (client, connection) = config
        .connect(tls)
        .await
        .map_err(|e| idem_postgres_tls::describe(&e))?;
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(row.get(0))
}

#[tokio::test]
async fn each_sslmode_does_what_libpq_does() {
    let ca = TestCa::new();
    let pg = TlsPostgres::start(&ca);
    let ca_file = ca.ca_file.display().to_string();

    assert_eq!(ssl_in_use(&pg.url("sslmode=disable")).await, Ok(false));
    assert_eq!(
        ssl_in_use(&pg.url("")).await,
        Ok(true),
        "prefer is the default"
    );
    assert_eq!(ssl_in_use(&pg.url("sslmode=require")).await, Ok(true));
    let full = format!("sslmode=verify-full&sslrootcert={ca_file}");
    assert_eq!(ssl_in_use(&pg.url(&full)).await, Ok(true));
    let chain = format!("sslmode=verify-ca&sslrootcert={ca_file}");
    assert_eq!(ssl_in_use(&pg.url(&chain)).await, Ok(true));
}

#[tokio::test]
async fn verification_refuses_a_certificate_no_trusted_root_signed() {
    let ca = TestCa::new();
    let pg = TlsPostgres::start(&ca);

    // The system's trust store does not hold the test's CA.
    let err = ssl_in_use(&pg.url("sslmode=verify-full"))
        .await
        .unwrap_err();
    assert!(err.contains("invalid peer certificate"), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");

    // Nor does another CA.
    let other = TestCa::new();
    let url = pg.url(&format!(
        "sslmode=verify-ca&sslrootcert={}",
        other.ca_file.display()
    ));
    let err = ssl_in_use(&url).await.unwrap_err();
    assert!(err.contains("invalid peer certificate"), "{err}");

    // A root file makes require check the chain, as in libpq.
    let url = pg.url(&format!(
        "sslmode=require&sslrootcert={}",
        other.ca_file.display()
    ));
    let err = ssl_in_use(&url).await.unwrap_err();
    assert!(err.contains("invalid peer certificate"), "{err}");
}

#[tokio::test]
async fn verify_full_checks_the_host_name_and_verify_ca_does_not() {
    let ca = TestCa::new();
    let pg = TlsPostgres::start(&ca);
    let ca_file = ca.ca_file.display().to_string();
    // The certificate names localhost and 127.0.0.1; this name reaches the
    // same server through hostaddr.
    let url = |mode: &str| {
        format!(
            "postgres://postgres@not-the-certificate.invalid:{}/postgres?hostaddr=127.0.0.1&sslmode={mode}&sslrootcert={ca_file}",
            pg.port
        )
    };
    let err = ssl_in_use(&url("verify-full")).await.unwrap_err();
    assert!(
        err.contains("certificate not valid for name \"not-the-certificate.invalid\""),
        "{err}"
    );
    assert_eq!(ssl_in_use(&url("verify-ca")).await, Ok(true));
    assert_eq!(
        ssl_in_use(&pg.url(&format!("sslmode=verify-full&sslrootcert={ca_file}"))).await,
        Ok(true)
    );
}
