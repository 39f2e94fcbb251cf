//! What a call can fail with.

use idem_api::ProblemCode;
use std::fmt;
use std::ops::Deref;
use std::time::Duration;

/// An RFC 9457 problem document as received (API.md §1), with the answer's
/// `Retry-After`. Its fields (`code`, `status`, `detail`, …) are the
/// document's, reached through `Deref`.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The document.
    pub document: idem_api::Problem,
    /// The answer's `Retry-After`, when it had one.
    pub retry_after: Option<Duration>,
}

impl Deref for Problem {
    type Target = idem_api::Problem;

    fn deref(&self) -> &idem_api::Problem {
        &self.document
    }
}

impl fmt::Display for Problem {
    /// `TASK_ALREADY_EXISTS (409): task 'x' exists (queued) [request 0190…]`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.code, self.status)?;
        match self.detail.as_deref().filter(|d| !d.is_empty()) {
            Some(detail) => write!(f, ": {detail}")?,
            None if !self.title.is_empty() => write!(f, ": {}", self.title)?,
            None => {}
        }
        if let Some(id) = &self.request_id {
            write!(f, " [request {id}]")?;
        }
        Ok(())
    }
}

/// Why a call failed.
///
/// A call that the retry layer retried reports the last attempt's failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with a problem document.
    #[error("{0}")]
    Problem(Box<Problem>),
    /// The server answered with an error status but no problem document
    /// (typically a proxy in between).
    #[error("unexpected answer {status}{}: {body}", request_suffix(.request_id))]
    UnexpectedStatus {
        /// The HTTP status code.
        status: u16,
        /// The `Idem-Request-Id` header, if any.
        request_id: Option<String>,
        /// The start of the body, for the message.
        body: String,
    },
    /// No answer: connecting, sending or reading failed, or the attempt
    /// timed out, on every attempt the retry policy allowed. A write may
    /// still have taken effect; calling again with the same idempotency key
    /// is safe.
    #[error("no answer after {attempts} attempt(s): {}", with_causes(.source))]
    Transport {
        /// The last attempt's error.
        #[source]
        source: reqwest::Error,
        /// Attempts made.
        attempts: u32,
    },
    /// A success answer whose body is not the expected resource.
    #[error("decoding the {status} answer{}: {source}", request_suffix(.request_id))]
    Decode {
        /// The HTTP status code.
        status: u16,
        /// The `Idem-Request-Id` header, if any.
        request_id: Option<String>,
        /// What did not fit.
        #[source]
        source: serde_json::Error,
    },
    /// The base URL cannot be used: not `http://` or `https://`, no host,
    /// or a query.
    #[error("invalid base URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// The request could not be built from the arguments given (a header
    /// value that is not visible ASCII, an empty idempotency key, …); nothing
    /// was sent.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The CA file given to [`crate::ClientBuilder::ca_file`] cannot be
    /// read or holds no certificate.
    #[error("CA file {path:?}: {reason}")]
    CaFile {
        /// The file as given.
        path: std::path::PathBuf,
        /// Why it was refused.
        reason: String,
    },
    /// The HTTP client could not be created.
    #[error("building the HTTP client: {0}")]
    Build(#[source] reqwest::Error),
}

/// The error with its causes: reqwest's own message ("error sending
/// request") does not say whether the connection was refused or the
/// server's certificate was.
fn with_causes(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    for cause in causes(e).skip(1) {
        let cause = cause.to_string();
        if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// `e` and its causes, looking inside `io::Error`s, whose `source` skips
/// the error they wrap (where a TLS failure is).
pub(crate) fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |e| match e.downcast_ref::<std::io::Error>() {
        Some(io) => io
            .get_ref()
            .map(|inner| inner as &(dyn std::error::Error + 'static)),
        None => e.source(),
    })
}

fn request_suffix(id: &Option<String>) -> String {
    id.as_ref()
        .map(|id| format!(" [request {id}]"))
        .unwrap_or_default()
}

impl Error {
    /// The problem document, when the server sent one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Problem(p) => Some(p),
            _ => None,
        }
    }

    /// The HTTP status of the server's answer, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Problem(p) => Some(p.status),
            Error::UnexpectedStatus { status, .. } | Error::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The problem's code (`type`), when the server sent a problem document.
    pub fn code(&self) -> Option<&str> {
        self.problem().map(|p| p.code.as_str())
    }

    /// The problem's code in the catalogue, when the server sent a problem
    /// document with a code this version knows.
    pub fn problem_code(&self) -> Option<ProblemCode> {
        self.problem().and_then(|p| p.known_code())
    }
}
