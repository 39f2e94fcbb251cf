//! What the upstream sees of who is calling it: the proxy's own credential,
//! never the sender's.
//!
//! A sender's `Authorization` is meant for the proxy (an OIDC token minted
//! for its audience); passed on, it would let the upstream, or whatever logs
//! its requests, replay it against the proxy. So it is dropped unless the
//! operator says otherwise, and the proxy calls the upstream with headers
//! of its own: fixed ones (`--upstream-header`) and a bearer token read
//! from a file (`--upstream-bearer-file`), re-read when the file changes so
//! that a rotated credential is used without a restart.

use http::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// How the proxy authenticates to its upstream.
#[derive(Debug, Clone, Default)]
pub struct UpstreamAuth {
    /// Passes the sender's `Authorization` on (off by default).
    pub forward_authorization: bool,
    /// Set on every forwarded request, replacing the sender's of that name.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// A file holding a bearer token for `Authorization: Bearer …`.
    pub bearer_file: Option<PathBuf>,
}

/// Why the upstream credentials cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamAuthError {
    /// A fixed header and the bearer file would both set `Authorization`.
    #[error("--upstream-header {0} and --upstream-bearer-file both set Authorization")]
    TwoAuthorizations(HeaderName),
    /// The bearer file cannot be read.
    #[error("reading the upstream bearer token from {path}: {error}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The bearer file holds no token that can be sent in a header.
    #[error("the upstream bearer token in {0} is empty or not a header value")]
    Invalid(String),
}

impl UpstreamAuth {
    /// Every check that needs no network: a proxy whose credential cannot
    /// be read does not start.
    pub(crate) fn check(&self) -> Result<(), UpstreamAuthError> {
        let Some(path) = &self.bearer_file else {
            return Ok(());
        };
        if let Some((name, _)) = self.headers.iter().find(|(n, _)| n == AUTHORIZATION) {
            return Err(UpstreamAuthError::TwoAuthorizations(name.clone()));
        }
        read_token(path).map(|_| ())
    }
}

/// The credentials applied to each forwarded request.
pub(crate) struct Credentials {
    config: UpstreamAuth,
    bearer: Option<BearerFile>,
}

impl Credentials {
    /// Reads the bearer file once.
    pub(crate) fn load(config: UpstreamAuth) -> Result<Self, UpstreamAuthError> {
        config.check()?;
        let bearer = config
            .bearer_file
            .as_deref()
            .map(BearerFile::open)
            .transpose()?;
        Ok(Self { config, bearer })
    }

    /// Rewrites the headers sent upstream.
    pub(crate) fn apply(&self, headers: &mut HeaderMap) {
        if !self.config.forward_authorization {
            headers.remove(AUTHORIZATION);
        }
        for (name, value) in &self.config.headers {
            headers.insert(name.clone(), value.clone());
        }
        if let Some(bearer) = &self.bearer {
            headers.insert(AUTHORIZATION, bearer.current());
        }
    }
}

/// A bearer token file, re-read when its modification time or length
/// changes. A read that fails keeps the last good token (a rotation that
/// replaces the file is seen on a later request) and says so in the log.
struct BearerFile {
    path: PathBuf,
    cached: Mutex<Cached>,
}

struct Cached {
    stamp: Option<(SystemTime, u64)>,
    value: HeaderValue,
}

fn stamp(path: &Path) -> std::io::Result<(SystemTime, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.modified()?, meta.len()))
}

fn read_token(path: &Path) -> Result<HeaderValue, UpstreamAuthError> {
    let text = std::fs::read_to_string(path).map_err(|error| UpstreamAuthError::Unreadable {
        path: path.display().to_string(),
        error,
    })?;
    let token = text.trim();
    let invalid = || UpstreamAuthError::Invalid(path.display().to_string());
    if token.is_empty() {
        return Err(invalid());
    }
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| invalid())?;
    value.set_sensitive(true);
    Ok(value)
}

impl BearerFile {
    fn open(path: &Path) -> Result<Self, UpstreamAuthError> {
        let stamp = stamp(path).ok();
        let value = read_token(path)?;
        Ok(Self {
            path: path.to_owned(),
            cached: Mutex::new(Cached { stamp, value }),
        })
    }

    /// The token, re-read first if the file changed. One `stat` per
    /// request: far below the cost of the upstream call it goes with.
    fn current(&self) -> HeaderValue {
        let now = stamp(&self.path).ok();
        let mut cached = self.cached.lock().expect("bearer token cache");
        if now.is_some() && now != cached.stamp {
            match read_token(&self.path) {
                Ok(value) => {
                    tracing::info!(path = %self.path.display(), "upstream bearer token re-read");
                    cached.value = value;
                    cached.stamp = now;
                }
                Err(error) => {
                    tracing::warn!(%error, "keeping the previous upstream bearer token");
                }
            }
        }
        cached.value.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_senders_authorization_stays_with_the_proxy() {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sender"));
        headers.insert("x-other", HeaderValue::from_static("kept"));
        let plain = Credentials::load(UpstreamAuth::default()).unwrap();
        let mut sent = headers.clone();
        plain.apply(&mut sent);
        assert!(sent.get(AUTHORIZATION).is_none());
        assert_eq!(sent["x-other"], "kept");

        let forwarding = Credentials::load(UpstreamAuth {
            forward_authorization: true,
            ..UpstreamAuth::default()
        })
        .unwrap();
        let mut sent = headers.clone();
        forwarding.apply(&mut sent);
        assert_eq!(sent[AUTHORIZATION], "Bearer sender");
    }

    #[test]
    fn the_bearer_file_is_re_read_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "first\n").unwrap();
        let credentials = Credentials::load(UpstreamAuth {
            headers: vec![(
                HeaderName::from_static("x-api-key"),
                HeaderValue::from_static("k"),
            )],
            bearer_file: Some(path.clone()),
            ..UpstreamAuth::default()
        })
        .unwrap();
        let sent = || {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sender"));
            credentials.apply(&mut headers);
            headers
        };
        assert_eq!(sent()[AUTHORIZATION], "Bearer first");
        assert_eq!(sent()["x-api-key"], "k");
        // A different length: seen even where the clock's resolution hides
        // the new modification time.
        std::fs::write(&path, "second-token").unwrap();
        assert_eq!(sent()[AUTHORIZATION], "Bearer second-token");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(sent()[AUTHORIZATION], "Bearer second-token", "kept");
    }

    #[test]
    fn credentials_that_cannot_be_used_are_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let missing = UpstreamAuth {
            bearer_file: Some(dir.path().join("absent")),
            ..UpstreamAuth::default()
        };
        assert!(matches!(
            Credentials::load(missing),
            Err(UpstreamAuthError::Unreadable { .. })
        ));
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "  \n").unwrap();
        let blank = UpstreamAuth {
            bearer_file: Some(empty.clone()),
            ..UpstreamAuth::default()
        };
        assert!(matches!(
            Credentials::load(blank),
            Err(UpstreamAuthError::Invalid(_))
        ));
        std::fs::write(&empty, "t").unwrap();
        let both = UpstreamAuth {
            headers: vec![(AUTHORIZATION, HeaderValue::from_static("Basic x"))],
            bearer_file: Some(empty),
            ..UpstreamAuth::default()
        };
        assert!(matches!(
            Credentials::load(both),
            Err(UpstreamAuthError::TwoAuthorizations(_))
        ));
    }
}
