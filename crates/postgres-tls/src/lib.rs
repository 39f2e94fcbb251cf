//! PostgreSQL connection URLs as libpq reads them, over rustls.
//!
//! tokio-postgres knows `sslmode` `disable`, `prefer` and `require` only,
//! verifies nothing itself, and refuses `sslrootcert`. [`connect_params`]
//! takes those two parameters out of the URL, hands the rest to
//! tokio-postgres, and returns a TLS connector that does what libpq does
//! for the mode:
//!
//! | `sslmode` | TLS | certificate check |
//! | --- | --- | --- |
//! | `disable` | never | none |
//! | `prefer` (the default) | if the server offers it | none |
//! | `require` | always | none; with `sslrootcert`, as `verify-ca` |
//! | `verify-ca` | always | chain to a trusted root |
//! | `verify-full` | always | chain, and the host name given in the URL |
//!
//! The trusted roots are the certificates of the PEM file `sslrootcert`
//! names, and only those (as in libpq), or, without it (or with
//! `sslrootcert=system`), the system's trust store.
//!
//! The rustls crypto provider is ring, chosen here: nothing needs to be
//! installed process-wide first.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use tokio_postgres::config::SslMode;

pub use tokio_postgres_rustls::MakeRustlsConnect;

/// Why a connection URL cannot be used; the message names the parameter.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("sslmode {0:?} is not one of disable, prefer, require, verify-ca, verify-full")]
    SslMode(String),
    #[error("sslrootcert {path:?}: {reason}")]
    RootCert { path: String, reason: String },
    #[error("no system trust store for sslmode {mode}: {reason}; name a CA file with sslrootcert")]
    SystemRoots { mode: &'static str, reason: String },
    #[error("{0}")]
    Url(#[from] tokio_postgres::Error),
    #[error("TLS configuration: {0}")]
    Tls(String),
}

/// `e` with its causes, for messages: tokio-postgres says only "error
/// performing TLS handshake", and the reason (a certificate no trusted root
/// signed, a name it does not hold) is two causes down, inside an
/// `io::Error`, whose `source` skips the error it wraps.
pub fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = next_cause(e);
    while let Some(c) = cause {
        let part = c.to_string();
        if !text.ends_with(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = next_cause(c);
    }
    text
}

fn next_cause<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    match e.downcast_ref::<std::io::Error>() {
        Some(io) => io
            .get_ref()
            .map(|inner| inner as &(dyn std::error::Error + 'static)),
        None => e.source(),
    }
}

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Encryption without authentication (`prefer`, `require`).
    Nothing,
    /// The chain to a trusted root, whatever host it names (`verify-ca`).
    Chain,
    /// The chain and the host name (`verify-full`).
    Full,
}

/// `sslmode` and `sslrootcert` as the URL gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsParams {
    pub mode: SslMode,
    pub verify: Verify,
    /// `None`: the system's trust store.
    pub root_cert: Option<String>,
}

/// The tokio-postgres configuration of `url` (`postgres://…` or libpq's
/// `key=value` form) and the TLS connector its `sslmode` and `sslrootcert`
/// ask for.
pub fn connect_params(url: &str) -> Result<(tokio_postgres::Config, MakeRustlsConnect), Error> {
    let (rest, params) = split_tls_params(url)?;
    let mut config = tokio_postgres::Config::from_str(&rest)?;
    config.ssl_mode(params.mode);
    // A connection whose server went away without a word (a partition, a
    // host gone) is otherwise noticed only after the system's two hours of
    // TCP keepalive: a statement waiting on it would wait that long. Probes
    // after 30 s idle, every 10 s, 3 unanswered: about a minute. A URL
    // that names its own keepalive settings keeps them.
    if !rest.contains("keepalives") {
        config
            .keepalives(true)
            .keepalives_idle(std::time::Duration::from_secs(30))
            .keepalives_interval(std::time::Duration::from_secs(10))
            .keepalives_retries(3);
    }
    Ok((config, connector(&params)?))
}

/// How long a PostgreSQL store waits for a pooled connection, and how long
/// one statement may run. Either running out is a store failure answered
/// 503 `UNAVAILABLE`, rather than a request that waits without end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Longest wait for a pooled connection, or for a new one to be made.
    pub acquire_timeout: std::time::Duration,
    /// `statement_timeout` of every pooled connection, and how long one of
    /// them may sit idle inside a transaction; zero turns both off.
    pub statement_timeout: std::time::Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            acquire_timeout: std::time::Duration::from_secs(5),
            statement_timeout: std::time::Duration::from_secs(30),
        }
    }
}

/// `config` with `settings` (`-c name=value …`, sent at connect time)
/// appended to the server options its URL already holds.
pub fn with_server_options(
    config: &tokio_postgres::Config,
    settings: &str,
) -> tokio_postgres::Config {
    let mut config = config.clone();
    let options = match config.get_options() {
        Some(o) => format!("{o} {settings}"),
        None => settings.to_string(),
    };
    config.options(&options);
    config
}

/// The server options setting `statement_timeout` and, to the same limit,
/// `idle_in_transaction_session_timeout` (zero turns both off). The second
/// is for a client that vanished mid-transaction without the server
/// hearing of it (its node killed while the network dropped packets): its
/// session would otherwise hold the transaction's row locks, such as a
/// queue's during a claim, until the server's TCP keepalive gives up,
/// hours later, and every other node's work behind them would wait.
pub fn statement_timeout(limit: std::time::Duration) -> String {
    let ms = limit.as_millis();
    format!("-c statement_timeout={ms} -c idle_in_transaction_session_timeout={ms}")
}

/// Takes `sslmode` and `sslrootcert` out of `url`: what stays is for
/// tokio-postgres, which would refuse both of them in some form.
pub fn split_tls_params(url: &str) -> Result<(String, TlsParams), Error> {
    let mut mode = None;
    let mut root_cert = None;
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            None => url.to_string(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&') {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    match key {
                        "sslmode" => mode = Some(decode(value)),
                        "sslrootcert" => root_cert = Some(decode(value)),
                        _ => kept.push(pair),
                    }
                }
                if kept.is_empty() {
                    base.to_string()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        // The key=value form: only unquoted `key=value` words are read;
        // anything else is left for tokio-postgres to judge.
        let mut kept = Vec::new();
        for word in url.split_whitespace() {
            match word.split_once('=') {
                Some(("sslmode", value)) => mode = Some(value.to_string()),
                Some(("sslrootcert", value)) => root_cert = Some(value.to_string()),
                _ => kept.push(word),
            }
        }
        kept.join(" ")
    };
    let (mode, mut verify) = match mode.as_deref().unwrap_or("prefer") {
        "disable" => (SslMode::Disable, Verify::Nothing),
        "prefer" => (SslMode::Prefer, Verify::Nothing),
        "require" => (SslMode::Require, Verify::Nothing),
        "verify-ca" => (SslMode::Require, Verify::Chain),
        "verify-full" => (SslMode::Require, Verify::Full),
        other => return Err(Error::SslMode(other.to_string())),
    };
    let root_cert = root_cert.filter(|path| path != "system");
    // libpq: "if a root CA file exists, the behavior of sslmode=require
    // will be the same as that of verify-ca".
    if mode == SslMode::Require && verify == Verify::Nothing && root_cert.is_some() {
        verify = Verify::Chain;
    }
    Ok((
        rest,
        TlsParams {
            mode,
            verify,
            root_cert,
        },
    ))
}

fn decode(value: &str) -> String {
    percent_encoding::percent_decode_str(value)
        .decode_utf8_lossy()
        .into_owned()
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The connector for `params`. The root file is read here, once, so that
/// a missing or empty file is an error at start rather than at the first
/// connection.
pub fn connector(params: &TlsParams) -> Result<MakeRustlsConnect, Error> {
    let provider = provider();
    let verifier: Arc<dyn ServerCertVerifier> = match params.verify {
        Verify::Nothing => Arc::new(AnyCertificate(provider.clone())),
        Verify::Chain | Verify::Full => {
            let roots = match &params.root_cert {
                Some(path) => roots_from_file(path)?,
                None => system_roots(params.verify)?,
            };
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| Error::Tls(e.to_string()))?;
            if params.verify == Verify::Full {
                webpki
            } else {
                Arc::new(AnyName(webpki))
            }
        }
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // What libpq 17 sends; PostgreSQL 17 requires it for direct TLS.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(MakeRustlsConnect::new(config))
}

/// The certificates of the PEM file at `path`.
pub fn roots_from_file(path: &str) -> Result<RootCertStore, Error> {
    let failed = |reason: String| Error::RootCert {
        path: path.to_string(),
        reason,
    };
    let pem = std::fs::read(Path::new(path)).map_err(|e| failed(e.to_string()))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| failed(format!("not a PEM certificate file: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| failed(format!("not a CA certificate: {e}")))?;
    }
    if roots.is_empty() {
        return Err(failed("holds no PEM certificate".into()));
    }
    Ok(roots)
}

fn system_roots(verify: Verify) -> Result<RootCertStore, Error> {
    let mode = if verify == Verify::Full {
        "verify-full"
    } else {
        "verify-ca"
    };
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let reason = found
            .errors
            .first()
            .map(ToString::to_string)
            .unwrap_or_else(|| "it holds no certificate".into());
        return Err(Error::SystemRoots { mode, reason });
    }
    Ok(roots)
}

/// `prefer` and `require`: the channel is encrypted, and the handshake
/// signature still has to match the certificate sent, but no one vouches
/// for that certificate (libpq's behaviour).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the whole check but the name, which rustls makes last, so
/// a name error means everything before it passed.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(url: &str) -> (String, TlsParams) {
        split_tls_params(url).unwrap()
    }

    /// A silent server is probed within a minute, unless the URL says
    /// otherwise; and a transaction may not sit idle past the statement
    /// timeout.
    #[test]
    fn connections_probe_a_silent_server_and_end_idle_transactions() {
        let (config, _) = connect_params("postgres://u@h/db").unwrap();
        assert!(config.get_keepalives());
        assert_eq!(
            config.get_keepalives_idle(),
            std::time::Duration::from_secs(30)
        );
        assert_eq!(config.get_keepalives_retries(), Some(3));
        let (config, _) = connect_params("postgres://u@h/db?keepalives_idle=300").unwrap();
        assert_eq!(
            config.get_keepalives_idle(),
            std::time::Duration::from_secs(300)
        );
        assert_eq!(
            statement_timeout(std::time::Duration::from_secs(30)),
            "-c statement_timeout=30000 -c idle_in_transaction_session_timeout=30000"
        );
    }

    #[test]
    fn the_default_is_prefer_without_verification() {
        let (rest, params) = split("postgres://u@h/db");
        assert_eq!(rest, "postgres://u@h/db");
        assert_eq!(params.mode, SslMode::Prefer);
        assert_eq!(params.verify, Verify::Nothing);
        assert_eq!(params.root_cert, None);
    }

    #[test]
    fn verify_modes_require_tls_and_keep_other_parameters() {
        let (rest, params) = split(
            "postgres://u@h/db?application_name=x&sslmode=verify-full&sslrootcert=%2Ftmp%2Fca%20dir%2Fca.pem&connect_timeout=5",
        );
        assert_eq!(
            rest,
            "postgres://u@h/db?application_name=x&connect_timeout=5"
        );
        assert_eq!(params.mode, SslMode::Require);
        assert_eq!(params.verify, Verify::Full);
        assert_eq!(params.root_cert.as_deref(), Some("/tmp/ca dir/ca.pem"));
        let (rest, params) = split("postgresql://h/db?sslmode=verify-ca");
        assert_eq!(rest, "postgresql://h/db");
        assert_eq!(
            (params.mode, params.verify),
            (SslMode::Require, Verify::Chain)
        );
    }

    #[test]
    fn require_with_a_root_file_verifies_the_chain_as_libpq_does() {
        let (_, params) = split("postgres://h/db?sslmode=require&sslrootcert=/ca.pem");
        assert_eq!(params.verify, Verify::Chain);
        let (_, params) = split("postgres://h/db?sslmode=require");
        assert_eq!(params.verify, Verify::Nothing);
        let (_, params) = split("postgres://h/db?sslmode=disable");
        assert_eq!(params.mode, SslMode::Disable);
        let (_, params) = split("postgres://h/db?sslmode=verify-full&sslrootcert=system");
        assert_eq!((params.verify, params.root_cert), (Verify::Full, None));
    }

    #[test]
    fn the_key_value_form_is_read_too() {
        let (rest, params) =
            split("host=h user=u sslmode=verify-full sslrootcert=/ca.pem dbname=d");
        assert_eq!(rest, "host=h user=u dbname=d");
        assert_eq!(params.verify, Verify::Full);
        assert_eq!(params.root_cert.as_deref(), Some("/ca.pem"));
    }

    #[test]
    fn an_unknown_mode_or_unreadable_root_file_is_named() {
        let err = split_tls_params("postgres://h/db?sslmode=allow").unwrap_err();
        assert!(err.to_string().contains("sslmode \"allow\""), "{err}");
        let err = connect_params("postgres://h/db?sslmode=verify-full&sslrootcert=/no/such.pem")
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("sslrootcert \"/no/such.pem\""),
            "{err}"
        );
        let dir = std::env::temp_dir().join(format!("idem-pgtls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate").unwrap();
        let url = format!(
            "postgres://h/db?sslmode=verify-ca&sslrootcert={}",
            empty.display()
        );
        let err = connect_params(&url).err().unwrap();
        assert!(
            err.to_string().contains("holds no PEM certificate"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
