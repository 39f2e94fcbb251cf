//! The outbound HTTP side: one pooled keep-alive client for every target,
//! and the classification of what a target did with an attempt.

use http::{HeaderMap, StatusCode};
use std::sync::Once;
use std::time::{Duration, SystemTime};

/// Most response body bytes read before the connection is given up: reading
/// the body lets a keep-alive connection be reused, but Idem keeps none of
/// it, so a huge answer is not worth downloading.
const MAX_DRAINED_BODY: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
#[error("cannot build the outbound HTTP client: {0}")]
pub struct BuildError(#[from] reqwest::Error);

/// The client every attempt goes through. Redirects are not followed: a
/// 3xx is "any other status", a failure, as for Cloud Tasks.
pub fn build() -> Result<reqwest::Client, BuildError> {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        // Fails only when a provider is installed already, which serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        .user_agent(concat!("idem/", env!("CARGO_PKG_VERSION")))
        .build()?)
}

/// What the target did with one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub retry_after: Option<Duration>,
}

impl Answer {
    fn failed(error: String) -> Answer {
        Answer {
            status_code: None,
            error: Some(error),
            retry_after: None,
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
        let mut drained = 0usize;
        while drained <= MAX_DRAINED_BODY {
            match response.chunk().await? {
                Some(chunk) => drained += chunk.len(),
                None => break,
            }
        }
        Ok::<_, reqwest::Error>(Answer {
            status_code: Some(status.as_u16()),
            error: None,
            retry_after,
        })
    };
    match tokio::time::timeout(deadline, exchange).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => Answer::failed(describe(&e)),
        Err(_) => Answer::failed(format!(
            "no answer within the dispatch deadline of {} s",
            deadline.as_secs()
        )),
    }
}

/// The error with its causes: reqwest's own message alone ("error sending
/// request") does not say whether the connection was refused or reset.
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
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
}
