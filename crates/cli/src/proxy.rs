//! `idem proxy`: the idem-guard reverse proxy (API.md §6) in front of a
//! service that cannot deduplicate deliveries itself.

use crate::serve::{ConnectionArgs, DatabaseTimeoutArgs, parse_duration, parse_header_name};
use anyhow::Context;
use clap::Args;
use idem_guard::proxy::{ProxyConfig, serve};
use idem_guard::{Scope, SigningSecret};
use reqwest::Url;
use reqwest::header::{HeaderName, HeaderValue};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ProxyArgs {
    #[command(flatten)]
    logs: crate::logs::LogArgs,
    #[command(flatten)]
    traces: crate::traces::TraceArgs,
    /// Address to listen on.
    #[arg(long, env = "IDEM_LISTEN", default_value = "127.0.0.1:7071")]
    listen: String,
    /// Base URL requests are forwarded to (the request path is appended).
    #[arg(long, env = "IDEM_UPSTREAM", value_parser = parse_upstream)]
    upstream: Url,
    /// Where claims are kept: `memory`, `sqlite://PATH`, `postgres://…`
    /// (TLS per its `sslmode` and `sslrootcert`, as in libpq), `redis://…`
    /// or `rediss://…` (TLS).
    #[arg(long, env = "IDEM_STORE", hide_env_values = true)]
    store: String,
    /// For a `rediss://` store: a PEM file of the CA certificates its
    /// server's certificate must chain to, instead of the system's.
    #[arg(long, env = "IDEM_REDIS_CA_FILE", value_name = "PATH")]
    redis_ca_file: Option<std::path::PathBuf>,
    /// Makes a valid Standard Webhooks signature by this secret
    /// (`whsec_…`) mandatory; repeatable, any one verifies. In the
    /// environment, comma-separated.
    #[arg(
        long = "signing-secret",
        env = "IDEM_SIGNING_SECRET",
        hide_env_values = true,
        value_delimiter = ',',
        value_parser = parse_secret
    )]
    signing_secrets: Vec<SigningSecret>,
    /// Makes an OIDC ID token of this issuer mandatory (`Authorization:
    /// Bearer …`): its discovery document and JWKS are fetched from the
    /// URL and cached. Idem's issuer is its --public-url; Google's is
    /// https://accounts.google.com.
    #[arg(long, env = "IDEM_OIDC_ISSUER", requires = "oidc_audiences")]
    oidc_issuer: Option<String>,
    /// The `aud` a token must carry (repeatable, any one matches).
    #[arg(
        long = "oidc-audience",
        env = "IDEM_OIDC_AUDIENCE",
        value_delimiter = ',',
        requires = "oidc_issuer"
    )]
    oidc_audiences: Vec<String>,
    /// Accepts only tokens with this `sub` (repeatable; Idem's are
    /// `org/<organization>`). --oidc-issuer needs it, --oidc-email or
    /// --oidc-any-subject.
    #[arg(
        long = "oidc-subject",
        env = "IDEM_OIDC_SUBJECT",
        value_delimiter = ',',
        requires = "oidc_issuer"
    )]
    oidc_subjects: Vec<String>,
    /// Accepts only tokens with this verified `email` (repeatable), such
    /// as the service account a Cloud Scheduler job sends as.
    #[arg(
        long = "oidc-email",
        env = "IDEM_OIDC_EMAIL",
        value_delimiter = ',',
        requires = "oidc_issuer"
    )]
    oidc_emails: Vec<String>,
    /// Accepts a token of any subject of the issuer for the audience:
    /// every organization of a shared Idem, every Google service account.
    /// Without it, --oidc-issuer refuses to start unless --oidc-subject or
    /// --oidc-email names the senders.
    #[arg(
        long,
        env = "IDEM_OIDC_ANY_SUBJECT",
        requires = "oidc_issuer",
        conflicts_with_all = ["oidc_subjects", "oidc_emails"]
    )]
    oidc_any_subject: bool,
    /// Starts without any way to authenticate senders (no signing secret):
    /// anyone who can reach the proxy can then make the upstream run work
    /// under a key of their choosing. Without a signing secret the proxy
    /// refuses to start unless this is given.
    #[arg(long, env = "IDEM_INSECURE_NO_AUTH")]
    insecure_no_auth: bool,
    /// A header that carries a delivery's identity, such as
    /// `X-Idempotency-Key`; repeatable, tried in order before
    /// `Idempotency-Key` and the Cloud Scheduler and Cloud Tasks headers.
    /// In the environment, comma-separated.
    #[arg(
        long = "identity-header",
        env = "IDEM_IDENTITY_HEADER",
        value_delimiter = ',',
        value_parser = parse_header_name
    )]
    identity_headers: Vec<HeaderName>,
    /// How long a claim survives a proxy that died (a crash, a lost
    /// network): the run stays blocked that long before a retry may take it
    /// over. While the upstream works, the proxy renews the lease every
    /// third of it, so this does not bound the upstream's time.
    #[arg(long, env = "IDEM_LEASE", default_value = "5m", value_parser = parse_duration)]
    lease: Duration,
    /// How long the upstream is given to answer, body included; past it
    /// the proxy answers 504 and releases the run. The default is the
    /// longest attempt deadline Idem, Cloud Tasks or Cloud Scheduler sets.
    #[arg(
        long,
        env = "IDEM_UPSTREAM_TIMEOUT",
        default_value = "30m",
        value_parser = parse_duration
    )]
    upstream_timeout: Duration,
    /// How long a completed run is remembered.
    #[arg(long, env = "IDEM_RETENTION", default_value = "24h", value_parser = parse_duration)]
    retention: Duration,
    /// A header whose value joins the run key (project, tenant); repeatable.
    /// In the environment, comma-separated.
    #[arg(
        long = "scope-header",
        env = "IDEM_SCOPE_HEADER",
        value_delimiter = ',',
        value_parser = parse_header_name
    )]
    scope_headers: Vec<HeaderName>,
    /// A path segment (0-based: in `/projects/acme/run`, 1 is `acme`) whose
    /// value joins the run key; repeatable.
    #[arg(
        long = "scope-path-segment",
        env = "IDEM_SCOPE_PATH_SEGMENT",
        value_delimiter = ','
    )]
    scope_path_segments: Vec<usize>,
    /// A query parameter whose (percent-decoded) value joins the run key;
    /// repeatable. In the environment, comma-separated.
    #[arg(long = "scope-query", env = "IDEM_SCOPE_QUERY", value_delimiter = ',')]
    scope_query: Vec<String>,
    /// Also adds the run key to the JSON body sent upstream at this dotted
    /// path (`argument.idempotency_key`), for upstreams that read only their
    /// payload. A member holding a JSON string is descended into; a body
    /// that is not a JSON object, or that already has the path's last
    /// member, is answered 400 and not forwarded.
    #[arg(long, env = "IDEM_RUN_KEY_JSON_FIELD")]
    run_key_json_field: Option<String>,
    /// Largest request body accepted, in bytes (413 above it).
    #[arg(long, env = "IDEM_MAX_BODY_BYTES", default_value_t = 10 << 20)]
    max_body_bytes: usize,
    /// How often expired claim records are swept.
    #[arg(long, env = "IDEM_SWEEP_INTERVAL", default_value = "1m", value_parser = parse_duration)]
    sweep_interval: Duration,
    #[command(flatten)]
    connections: ConnectionArgs,
    /// Longest a sender may take to send a request's body; past it the
    /// proxy answers 408 without claiming. The upstream's own time is
    /// bounded by --upstream-timeout.
    #[arg(long, env = "IDEM_REQUEST_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    request_timeout: Duration,
    /// Refuses (401) a signed delivery without an `Idem-Target-Signature`
    /// of the method, path and query it was received with, so that a
    /// captured delivery cannot be re-sent to another route. Without it the
    /// header is checked when present. Needs --signing-secret.
    #[arg(
        long,
        env = "IDEM_REQUIRE_TARGET_SIGNATURE",
        requires = "signing_secrets"
    )]
    require_target_signature: bool,
    /// Passes the sender's `Authorization` header on to the upstream. By
    /// default it is removed: a token meant for the proxy is not the
    /// upstream's to see (or to replay).
    #[arg(long, env = "IDEM_FORWARD_AUTHORIZATION")]
    forward_authorization: bool,
    /// A header set on every request sent upstream, `'NAME: VALUE'`
    /// (repeatable), replacing the sender's of that name: the proxy's own
    /// credential, such as an API key of a least-privilege identity.
    #[arg(
        long = "upstream-header",
        env = "IDEM_UPSTREAM_HEADER",
        hide_env_values = true,
        value_delimiter = '\n',
        value_parser = parse_upstream_header
    )]
    upstream_headers: Vec<(HeaderName, HeaderValue)>,
    /// A file holding a bearer token sent upstream as `Authorization:
    /// Bearer …`; re-read when it changes, so a rotated token is used
    /// without a restart.
    #[arg(long, env = "IDEM_UPSTREAM_BEARER_FILE", value_name = "PATH")]
    upstream_bearer_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    database: DatabaseTimeoutArgs,
}

fn parse_upstream_header(s: &str) -> Result<(HeaderName, HeaderValue), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?} must be 'NAME: VALUE'"))?;
    let name = parse_header_name(name.trim())?;
    let mut value = HeaderValue::from_str(value.trim())
        .map_err(|_| format!("the value of {name} is not a valid header value"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

fn parse_upstream(s: &str) -> Result<Url, String> {
    let url = Url::parse(s).map_err(|e| format!("{s:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(format!("{s:?} must be an http:// or https:// URL"));
    }
    Ok(url)
}

fn parse_secret(s: &str) -> Result<SigningSecret, String> {
    SigningSecret::parse(s).map_err(|e| e.to_string())
}

pub async fn run(args: ProxyArgs) -> anyhow::Result<()> {
    let (exporter, spans) = args.traces.exporter()?.unzip();
    args.logs.init(spans);
    // The store is opened only once the configuration passed its checks;
    // until then an in-memory one holds its place.
    let mut config = ProxyConfig::new(args.upstream, Arc::new(idem_guard::MemoryStore::new()));
    config.signing_secrets = args.signing_secrets;
    config.insecure_no_auth = args.insecure_no_auth;
    config.oidc_any_subject = args.oidc_any_subject;
    config.oidc = args.oidc_issuer.map(|issuer| {
        idem_guard::OidcVerifier::new(issuer, args.oidc_audiences)
            .with_subjects(args.oidc_subjects)
            .with_emails(args.oidc_emails)
    });
    config.lease = args.lease;
    config.upstream_timeout = args.upstream_timeout;
    config.retention = args.retention;
    config.identity_headers = args.identity_headers;
    // Scopes join the key in this order: headers, path segments, query
    // parameters. The order is part of the key, so it never changes.
    config.scopes = args
        .scope_headers
        .into_iter()
        .map(Scope::Header)
        .chain(args.scope_path_segments.into_iter().map(Scope::PathSegment))
        .chain(args.scope_query.into_iter().map(Scope::QueryParam))
        .collect();
    config.run_key_json_field = args.run_key_json_field;
    config.max_body_bytes = args.max_body_bytes;
    config.sweep_interval = args.sweep_interval;
    config.connections = args.connections.limits();
    config.request_timeout = args.request_timeout;
    config.require_target_signature = args.require_target_signature;
    if exporter.is_some() {
        config.tracing = Some(Arc::new(crate::traces::ProxyTracing));
    }
    config.upstream_auth = idem_guard::UpstreamAuth {
        forward_authorization: args.forward_authorization,
        headers: args.upstream_headers,
        bearer_file: args.upstream_bearer_file,
    };
    // Refused before the store is opened or the port bound, so that a
    // misconfigured proxy never answers a single request.
    config.check()?;
    let postgres = args.database.timeouts();
    config.store =
        idem_guard::open_store_with(&args.store, postgres, args.redis_ca_file.as_deref())
            .await
            .context("opening the guard store")?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let addr = listener.local_addr()?;
    println!("idem proxy listening on http://{addr}");
    std::io::stdout().flush()?;
    serve(config, listener, crate::serve::shutdown_signal()).await?;
    tracing::info!("stopped");
    if let Some(exporter) = exporter {
        exporter.shutdown();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_validated_when_parsed() {
        assert!(parse_upstream("http://127.0.0.1:9000/base").is_ok());
        assert!(parse_upstream("ftp://x/").is_err());
        assert!(parse_upstream("127.0.0.1:9000").is_err());
        assert!(parse_secret("whsec_c2VjcmV0").is_ok());
        assert!(parse_secret("secret").is_err());
        assert_eq!(parse_header_name("X-Tenant").unwrap().as_str(), "x-tenant");
        assert!(parse_header_name("bad header").is_err());
        let (name, value) = parse_upstream_header("X-Api-Key: k1:2").unwrap();
        assert_eq!(
            (name.as_str(), value.to_str().unwrap()),
            ("x-api-key", "k1:2")
        );
        assert!(parse_upstream_header("X-Api-Key k1").is_err());
        assert!(parse_upstream_header("bad header: v").is_err());
    }
}
