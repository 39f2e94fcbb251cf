//! `idem proxy`: the idem-guard reverse proxy (SPEC 6) in front of a
//! service that cannot deduplicate deliveries itself.

use crate::serve::parse_duration;
use anyhow::Context;
use clap::Args;
use idem_guard::SigningSecret;
use idem_guard::proxy::{ProxyConfig, serve};
use reqwest::Url;
use reqwest::header::HeaderName;
use std::io::Write;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ProxyArgs {
    /// Address to listen on.
    #[arg(long, env = "IDEM_LISTEN", default_value = "127.0.0.1:7071")]
    listen: String,
    /// Base URL requests are forwarded to (the request path is appended).
    #[arg(long, env = "IDEM_UPSTREAM", value_parser = parse_upstream)]
    upstream: Url,
    /// Where claims are kept: `memory`, `sqlite://PATH`, `postgres://…` or
    /// `redis://…`.
    #[arg(long, env = "IDEM_STORE", hide_env_values = true)]
    store: String,
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
    /// How long a claim holds its run key; also the upstream's time to
    /// answer. At least the sender's attempt deadline.
    #[arg(long, env = "IDEM_LEASE", default_value = "5m", value_parser = parse_duration)]
    lease: Duration,
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
    /// Largest request body accepted, in bytes (413 above it).
    #[arg(long, env = "IDEM_MAX_BODY_BYTES", default_value_t = 10 << 20)]
    max_body_bytes: usize,
    /// How often expired claim records are swept.
    #[arg(long, env = "IDEM_SWEEP_INTERVAL", default_value = "1m", value_parser = parse_duration)]
    sweep_interval: Duration,
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

fn parse_header_name(s: &str) -> Result<HeaderName, String> {
    HeaderName::from_bytes(s.trim().as_bytes()).map_err(|_| format!("{s:?} is not a header name"))
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("IDEM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

pub async fn run(args: ProxyArgs) -> anyhow::Result<()> {
    init_logging();
    let store = idem_guard::open_store(&args.store)
        .await
        .context("opening the guard store")?;
    let mut config = ProxyConfig::new(args.upstream, store);
    config.signing_secrets = args.signing_secrets;
    config.lease = args.lease;
    config.retention = args.retention;
    config.scope_headers = args.scope_headers;
    config.max_body_bytes = args.max_body_bytes;
    config.sweep_interval = args.sweep_interval;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let addr = listener.local_addr()?;
    println!("idem proxy listening on http://{addr}");
    std::io::stdout().flush()?;
    serve(config, listener, crate::serve::shutdown_signal()).await?;
    tracing::info!("stopped");
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
    }
}
