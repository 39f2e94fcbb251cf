//! The outbound HTTP side: one pooled keep-alive client for every target,
//! the target policy on the addresses it connects to, and the
//! classification of what a target did with an attempt.

use http::{HeaderMap, StatusCode};
use idem_core::target_policy::{self, Mode, TargetPolicy};
use idem_core::task::AttemptResponse;
use std::net::SocketAddr;
use std::sync::{Arc, Once};
use std::time::{Duration, SystemTime};

/// Most response body bytes read before the connection is given up: reading
/// the body lets a keep-alive connection be reused, but Idem keeps at most
/// the start of a failure's, so a huge answer is not worth downloading.
const MAX_DRAINED_BODY: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
#[error("cannot build the outbound HTTP client: {0}")]
pub struct BuildError(#[from] reqwest::Error);

/// The client every attempt goes through. Redirects are not followed: a
/// 3xx is "any other status", a failure, as for Cloud Tasks.
///
/// Under `deny-private` every name is resolved by [`PolicyResolver`], so
/// the policy judges the addresses the connection will use (an answer that
/// changes between a check and the connection, DNS rebinding, cannot slip
/// through), and no proxy from the environment is used: through a proxy
/// the connected address would be the proxy's, and the target's would go
/// unjudged. URLs with IP literals never reach a resolver; the attempt
/// judges them before sending.
pub fn build(policy: &Arc<TargetPolicy>) -> Result<reqwest::Client, BuildError> {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        // Fails only when a provider is installed already, which serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        .user_agent(concat!("idem/", env!("CARGO_PKG_VERSION")));
    if policy.mode() == Mode::DenyPrivate {
        builder = builder.no_proxy().dns_resolver(PolicyResolver {
            policy: policy.clone(),
        });
    }
    Ok(builder.build()?)
}

/// Resolves a target's name, then keeps only the addresses the policy
/// permits; with none left, the connection is refused.
struct PolicyResolver {
    policy: Arc<TargetPolicy>,
}

/// The resolver's refusal, recognised in the error chain of the request.
#[derive(Debug, thiserror::Error)]
#[error("refused by target policy")]
struct Refused;

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = if policy.permits_every_address_of(&host) {
                found
            } else {
                found
                    .into_iter()
                    .filter(|a| policy.permits_address(a.ip()))
                    .collect()
            };
            if kept.is_empty() {
                return Err(Box::new(Refused) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// What the target did with one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub retry_after: Option<Duration>,
    /// The failure is one no retry can change: the target policy refused
    /// the address.
    pub give_up: bool,
    /// The start of a non-2xx answer.
    pub response: Option<AttemptResponse>,
}

impl Answer {
    pub(super) fn failed(error: impl Into<String>) -> Answer {
        Answer {
            status_code: None,
            error: Some(error.into()),
            retry_after: None,
            give_up: false,
            response: None,
        }
    }

    pub(super) fn refused() -> Answer {
        Answer {
            give_up: true,
            ..Answer::failed(target_policy::REFUSED)
        }
    }
}

/// Sends `request` and waits at most `deadline` for the complete answer.
pub async fn send(
    client: &reqwest::Client,
    request: reqwest::Request,
    deadline: Duration,
) -> Answer {
    let exchange = async {
        let mut response = client.execute(request).await?;
        let status = response.status();
        let retry_after = match status {
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
                retry_after(response.headers(), SystemTime::now())
            }
            _ => None,
        };
        // A success's body is read only to free the connection; a
        // failure's start is kept, past it just one byte more to learn
        // whether it went on.
        let keep = if status.is_success() {
            0
        } else {
            AttemptResponse::MAX_BODY + 1
        };
        let content_type = (keep > 0)
            .then(|| response.headers().get(http::header::CONTENT_TYPE))
            .flatten()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let mut head = Vec::new();
        let mut drained = 0usize;
        let mut ended = false;
        while drained <= MAX_DRAINED_BODY {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = keep.saturating_sub(head.len()).min(chunk.len());
                    head.extend_from_slice(&chunk[..room]);
                    drained += chunk.len();
                }
                Ok(None) => {
                    ended = true;
                    break;
                }
                // An answer that breaks off mid-body still answered: its
                // status stands, and what came of its body is kept.
                Err(e) if keep > 0 => {
                    tracing::debug!(error = %full_text(&e), "failure's body broke off");
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        let response = (keep > 0).then(|| {
            let more = !ended && head.len() <= AttemptResponse::MAX_BODY;
            AttemptResponse::keep(content_type.as_deref(), &head, more)
        });
        Ok::<_, reqwest::Error>(Answer {
            status_code: Some(status.as_u16()),
            error: None,
            retry_after,
            give_up: false,
            response,
        })
    };
    match tokio::time::timeout(deadline, exchange).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) if refused(&e) => Answer::refused(),
        Ok(Err(e)) => {
            tracing::debug!(error = %full_text(&e), "attempt failed");
            Answer::failed(describe(&e))
        }
        Err(_) => Answer::failed(format!(
            "no answer within the dispatch deadline of {} s",
            deadline.as_secs()
        )),
    }
}

fn causes<'a>(
    e: &'a reqwest::Error,
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(std::error::Error::source(e), |c| c.source())
}

fn refused(e: &reqwest::Error) -> bool {
    causes(e).any(|c| c.is::<Refused>())
}

/// The error with all its causes, for the node's own log.
fn full_text(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    for cause in causes(e) {
        text.push_str(": ");
        text.push_str(&cause.to_string());
    }
    text
}

/// What a failed exchange is called in the attempt a tenant reads: the kind
/// of failure, without the internals the full chain shows (which address
/// answered, the resolver's or the TLS library's wording), since under a
/// shared server those belong to its operator. The log has the rest.
fn describe(e: &reqwest::Error) -> &'static str {
    use std::io::ErrorKind;
    if e.is_dns() {
        return "could not resolve the host";
    }
    for cause in causes(e) {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            match io.kind() {
                ErrorKind::ConnectionRefused => return "connection refused",
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe => {
                    return "connection reset";
                }
                ErrorKind::TimedOut => return "connection timed out",
                ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => {
                    return "host unreachable";
                }
                ErrorKind::UnexpectedEof => return "connection closed before the answer",
                _ => {}
            }
        }
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            return match tls {
                rustls::Error::InvalidCertificate(_) => "TLS certificate not accepted",
                _ => "TLS handshake failed",
            };
        }
        if let Some(h) = cause.downcast_ref::<hyper::Error>() {
            if h.is_incomplete_message() || h.is_closed() || h.is_canceled() {
                return "connection closed before the answer";
            }
            if h.is_parse() || h.is_parse_status() || h.is_parse_too_large() {
                return "the answer is not valid HTTP";
            }
        }
    }
    if e.is_connect() {
        "connection failed"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "connection failed while reading the answer"
    } else {
        "request failed"
    }
}

/// `Retry-After` as delay-seconds or an HTTP date; a date in the past
/// means no wait.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(value)
        .ok()?;
    let now = jiff::Timestamp::try_from(now).ok()?;
    Some(Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::RETRY_AFTER,
            HeaderValue::from_str(value).unwrap(),
        );
        h
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480); // 2015-10-21T07:28:00Z
        assert_eq!(
            retry_after(&with("120"), now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            retry_after(&with("Wed, 21 Oct 2015 07:28:30 GMT"), now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            retry_after(&with("Wed, 21 Oct 2015 07:00:00 GMT"), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&with("soon"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    /// Serves one connection with `raw` as the whole answer, then closes it.
    async fn answering(raw: &'static [u8]) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf).await;
            stream.write_all(raw).await.unwrap();
        });
        url
    }

    async fn answer_to(raw: &'static [u8]) -> Answer {
        let url = answering(raw).await;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let request = client.post(url).build().unwrap();
        send(&client, request, Duration::from_secs(5)).await
    }

    #[tokio::test]
    async fn a_refusal_whose_body_breaks_off_keeps_its_status_and_what_came() {
        let answer = answer_to(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
              content-length: 100\r\n\r\nbusy, try",
        )
        .await;
        assert_eq!(answer.status_code, Some(503));
        assert_eq!(answer.error, None);
        let kept = answer.response.expect("the start of the answer");
        assert_eq!(kept.body, "busy, try");
        assert_eq!(kept.content_type.as_deref(), Some("text/plain"));
        assert!(kept.truncated, "the body promised more than came");
    }

    #[tokio::test]
    async fn a_success_whose_body_breaks_off_is_a_failure_and_keeps_nothing() {
        let answer = answer_to(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nhalf").await;
        assert_eq!(answer.status_code, None);
        assert!(answer.error.is_some());
        assert_eq!(answer.response, None);
    }

    #[tokio::test]
    async fn a_whole_refusal_is_kept_untruncated_and_a_success_keeps_nothing() {
        let refused = answer_to(b"HTTP/1.1 409 Conflict\r\ncontent-length: 4\r\n\r\nheld").await;
        let kept = refused.response.expect("the answer");
        assert_eq!((kept.body.as_str(), kept.truncated), ("held", false));
        assert_eq!(kept.content_type, None);
        let ok = answer_to(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await;
        assert_eq!(ok.status_code, Some(200));
        assert_eq!(ok.response, None);
    }
}
