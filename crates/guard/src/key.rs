//! Run keys: the identity of one logical delivery, the same on every retry.

use std::fmt;
use std::sync::Arc;

use http::header::{HeaderMap, HeaderName};
use http::request::Parts;
use sha2::{Digest, Sha256};

/// `Idempotency-Key`, sent by Idem and by many other senders.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// Cloud Scheduler's job name header.
pub const CLOUD_SCHEDULER_JOB_NAME: HeaderName =
    HeaderName::from_static("x-cloudscheduler-jobname");
/// Cloud Scheduler's scheduled-instant header.
pub const CLOUD_SCHEDULER_SCHEDULE_TIME: HeaderName =
    HeaderName::from_static("x-cloudscheduler-scheduletime");
/// Cloud Tasks' queue name header.
pub const CLOUD_TASKS_QUEUE_NAME: HeaderName = HeaderName::from_static("x-cloudtasks-queuename");
/// Cloud Tasks' task name header.
pub const CLOUD_TASKS_TASK_NAME: HeaderName = HeaderName::from_static("x-cloudtasks-taskname");

/// Bumped whenever the encoding below changes, so that keys from two
/// encodings can never collide.
const KEY_DOMAIN: &[u8] = b"idem-guard/run-key/v1";

/// The fixed-length identity of a run: lowercase hex SHA-256 (64 characters).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunKey(String);

impl RunKey {
    /// Hashes an ordered list of parts into a key.
    ///
    /// Each part is length-prefixed (and the list is prefixed by its length),
    /// so `["ab", "c"]` and `["a", "bc"]` give different keys whatever bytes
    /// the parts contain.
    pub fn from_parts<I, P>(parts: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<[u8]>,
    {
        let parts: Vec<P> = parts.into_iter().collect();
        let mut hasher = Sha256::new();
        hasher.update((KEY_DOMAIN.len() as u64).to_be_bytes());
        hasher.update(KEY_DOMAIN);
        hasher.update((parts.len() as u64).to_be_bytes());
        for part in &parts {
            let part = part.as_ref();
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
        RunKey(hex::encode(hasher.finalize()))
    }

    /// Accepts a key that is already 64 lowercase hex characters, as
    /// forwarded by the proxy or read back from a store.
    pub fn parse(hex_key: &str) -> Option<Self> {
        let ok = hex_key.len() == 64
            && hex_key
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| RunKey(hex_key.to_owned()))
    }

    /// The key of a message whose signature was verified: its signed
    /// `webhook-id` alone. Nothing that travels unsigned beside the message
    /// (identity headers, scopes from headers, path or query) joins it, so
    /// one signed message can never be made into a second run. Encoded as
    /// the unscoped `Idempotency-Key` source is, because Idem sends its run
    /// key as both headers: its deliveries keep the key they had before
    /// signatures were required.
    pub fn of_signed_message(webhook_id: &[u8]) -> Self {
        RunKey::from_parts([&b"idempotency-key"[..], webhook_id])
    }

    /// The key as 64 lowercase hex characters.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why no run key could be derived from a request. Each answers 400: the
/// handler does not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// None of the configured identity sources was complete.
    #[error("no run identity: expected {expected}")]
    MissingIdentity {
        /// The sources that were looked for, for the error message.
        expected: String,
    },
    /// An identity or scope header appeared more than once, which would make
    /// the key depend on how intermediaries fold repeated headers.
    #[error("header {0} is sent more than once")]
    RepeatedHeader(HeaderName),
    /// A configured scope (header, path segment, query parameter) is absent.
    #[error("scope {0} is missing from the request")]
    MissingScope(String),
    /// A query parameter used as scope appears more than once.
    #[error("query parameter {0:?} is sent more than once")]
    RepeatedQueryParameter(String),
}

/// A user-supplied function that finds a run identity in a request.
type ExtractFn = dyn Fn(&Parts) -> Option<String> + Send + Sync;

/// Where the identity of a delivery comes from.
#[derive(Clone)]
pub enum IdentitySource {
    /// Idem's (and many others') `Idempotency-Key` header.
    IdempotencyKey,
    /// `X-CloudScheduler-JobName` + `X-CloudScheduler-ScheduleTime`.
    CloudScheduler,
    /// `X-CloudTasks-QueueName` + `X-CloudTasks-TaskName`.
    CloudTasks,
    /// A header of the application's choosing that carries a delivery's
    /// identity, such as `X-Idempotency-Key`.
    Header(HeaderName),
    /// A custom extractor; `None` means "not present in this request".
    Custom {
        /// A stable name; it is hashed into the key so that a custom identity
        /// never collides with a header-derived one.
        name: Arc<str>,
        /// The extractor.
        extract: Arc<ExtractFn>,
    },
}

impl IdentitySource {
    /// A custom source from a function of the request head.
    pub fn custom<F>(name: &str, extract: F) -> Self
    where
        F: Fn(&Parts) -> Option<String> + Send + Sync + 'static,
    {
        IdentitySource::Custom {
            name: Arc::from(name),
            extract: Arc::new(extract),
        }
    }

    fn describe(&self) -> String {
        match self {
            IdentitySource::IdempotencyKey => "Idempotency-Key".into(),
            IdentitySource::CloudScheduler => {
                "X-CloudScheduler-JobName with X-CloudScheduler-ScheduleTime".into()
            }
            IdentitySource::CloudTasks => {
                "X-CloudTasks-QueueName with X-CloudTasks-TaskName".into()
            }
            IdentitySource::Header(name) => format!("header {name}"),
            IdentitySource::Custom { name, .. } => format!("custom identity {name:?}"),
        }
    }

    /// `Ok(None)` when this source is absent (or incomplete), so the next
    /// source may be tried.
    fn extract(&self, parts: &Parts) -> Result<Option<Vec<Vec<u8>>>, KeyError> {
        let headers = &parts.headers;
        let tagged = |tag: &str, values: Vec<Vec<u8>>| {
            let mut out = Vec::with_capacity(values.len() + 1);
            out.push(tag.as_bytes().to_vec());
            out.extend(values);
            out
        };
        Ok(match self {
            IdentitySource::IdempotencyKey => single_header(headers, &IDEMPOTENCY_KEY)?
                .map(|k| tagged("idempotency-key", vec![k])),
            IdentitySource::CloudScheduler => {
                let job = single_header(headers, &CLOUD_SCHEDULER_JOB_NAME)?;
                let at = single_header(headers, &CLOUD_SCHEDULER_SCHEDULE_TIME)?;
                job.zip(at)
                    .map(|(job, at)| tagged("cloud-scheduler", vec![job, at]))
            }
            IdentitySource::CloudTasks => {
                let queue = single_header(headers, &CLOUD_TASKS_QUEUE_NAME)?;
                let task = single_header(headers, &CLOUD_TASKS_TASK_NAME)?;
                queue
                    .zip(task)
                    .map(|(queue, task)| tagged("cloud-tasks", vec![queue, task]))
            }
            IdentitySource::Header(name) => {
                single_header(headers, name)?.map(|v| tagged(&format!("header:{name}"), vec![v]))
            }
            IdentitySource::Custom { name, extract } => extract(parts)
                .filter(|v| !v.is_empty())
                .map(|v| tagged(&format!("custom:{name}"), vec![v.into_bytes()])),
        })
    }
}

impl fmt::Debug for IdentitySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Extra context joined into the key, because names repeat across projects,
/// regions and tenants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The value of a request header.
    Header(HeaderName),
    /// The n-th segment (0-based) of the request path: in
    /// `/projects/acme/run`, segment 1 is `acme`.
    PathSegment(usize),
    /// The (percent-decoded) value of a query parameter.
    QueryParam(String),
}

impl Scope {
    fn label(&self) -> String {
        match self {
            Scope::Header(name) => format!("header:{name}"),
            Scope::PathSegment(i) => format!("path:{i}"),
            Scope::QueryParam(name) => format!("query:{name}"),
        }
    }

    fn extract(&self, parts: &Parts) -> Result<Vec<u8>, KeyError> {
        let value = match self {
            Scope::Header(name) => single_header(&parts.headers, name)?,
            Scope::PathSegment(i) => parts
                .uri
                .path()
                .split('/')
                .skip(1)
                .nth(*i)
                .filter(|s| !s.is_empty())
                .map(|s| s.as_bytes().to_vec()),
            Scope::QueryParam(name) => {
                let mut found = None;
                for pair in parts.uri.query().unwrap_or("").split('&') {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    if percent_decode(k) == name.as_bytes() {
                        if found.is_some() {
                            return Err(KeyError::RepeatedQueryParameter(name.clone()));
                        }
                        found = Some(percent_decode(v));
                    }
                }
                found.filter(|v| !v.is_empty())
            }
        };
        value.ok_or_else(|| KeyError::MissingScope(self.label()))
    }
}

/// How run keys are derived from requests: identity sources tried in order
/// (the first complete one wins), then every scope, all hashed together.
#[derive(Debug, Clone)]
pub struct KeyConfig {
    sources: Vec<IdentitySource>,
    scopes: Vec<Scope>,
}

impl Default for KeyConfig {
    fn default() -> Self {
        Self {
            sources: vec![
                IdentitySource::IdempotencyKey,
                IdentitySource::CloudScheduler,
                IdentitySource::CloudTasks,
            ],
            scopes: Vec::new(),
        }
    }
}

impl KeyConfig {
    /// `Idempotency-Key`, then Cloud Scheduler, then Cloud Tasks headers; no
    /// scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the identity sources (tried in the given order).
    pub fn with_sources(mut self, sources: Vec<IdentitySource>) -> Self {
        self.sources = sources;
        self
    }

    /// Adds a scope; scopes are joined into the key in the order added, and a
    /// request without one of them is rejected.
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scopes.push(scope);
        self
    }

    /// Derives the run key of a request. A request whose signature
    /// [`VerifySignatureLayer`](crate::signature::VerifySignatureLayer)
    /// verified is keyed by its signed `webhook-id` alone: sources and
    /// scopes are unsigned, and must not give one signed message a second
    /// run.
    pub fn derive(&self, parts: &Parts) -> Result<RunKey, KeyError> {
        if let Some(signed) = parts.extensions.get::<crate::signature::VerifiedMessage>() {
            return Ok(RunKey::of_signed_message(signed.id.as_bytes()));
        }
        let mut identity = None;
        for source in &self.sources {
            if let Some(found) = source.extract(parts)? {
                identity = Some(found);
                break;
            }
        }
        let Some(mut key_parts) = identity else {
            let expected = self
                .sources
                .iter()
                .map(IdentitySource::describe)
                .collect::<Vec<_>>()
                .join(", or ");
            return Err(KeyError::MissingIdentity { expected });
        };
        for scope in &self.scopes {
            key_parts.push(scope.label().into_bytes());
            key_parts.push(scope.extract(parts)?);
        }
        Ok(RunKey::from_parts(key_parts))
    }
}

/// Why a run key could not be written into a request body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InjectError {
    /// The body is not a JSON object, so there is no field to set.
    #[error("the request body must be a JSON object to carry the run key in {0:?}")]
    NotAnObject(String),
}

/// Sets the top-level `field` of a JSON object body to the run key, for
/// upstreams that read only their payload. The rest of the object is kept
/// as sent (a field of that name already present is replaced), so the
/// upstream sees the sender's document plus the key it can deduplicate on.
pub fn inject_run_key_json(body: &[u8], field: &str, key: &RunKey) -> Result<Vec<u8>, InjectError> {
    let not_object = || InjectError::NotAnObject(field.to_owned());
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|_| not_object())?;
    let serde_json::Value::Object(mut object) = value else {
        return Err(not_object());
    };
    object.insert(
        field.to_owned(),
        serde_json::Value::String(key.as_str().to_owned()),
    );
    Ok(serde_json::to_vec(&object).expect("a JSON object serializes"))
}

/// The one value of a header, `None` when absent or blank; an error when it
/// is repeated.
fn single_header(headers: &HeaderMap, name: &HeaderName) -> Result<Option<Vec<u8>>, KeyError> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(KeyError::RepeatedHeader(name.clone()));
    }
    let trimmed = first.as_bytes().trim_ascii();
    Ok((!trimmed.is_empty()).then(|| trimmed.to_vec()))
}

/// Decodes `%XX` escapes and `+` (form encoding) so that equivalent spellings
/// of a query value give one scope.
fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|h| {
                    std::str::from_utf8(h)
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                });
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Request;

    fn parts(uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut builder = Request::builder().uri(uri);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[test]
    fn key_is_64_lowercase_hex_and_encoding_is_unambiguous() {
        let a = RunKey::from_parts(["ab", "c"]);
        let b = RunKey::from_parts(["a", "bc"]);
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 64);
        assert!(RunKey::parse(a.as_str()).is_some());
        assert!(RunKey::parse(&a.as_str().to_uppercase()).is_none());
        assert_ne!(RunKey::from_parts(["a"]), RunKey::from_parts(["a", ""]));
    }

    #[test]
    fn idempotency_key_wins_over_cloud_scheduler_headers() {
        let config = KeyConfig::new();
        let with_both = parts(
            "/",
            &[
                ("Idempotency-Key", "k1"),
                ("X-CloudScheduler-JobName", "job"),
                ("X-CloudScheduler-ScheduleTime", "2026-10-16T12:00:00Z"),
            ],
        );
        let only_key = parts("/", &[("idempotency-key", "k1")]);
        assert_eq!(
            config.derive(&with_both).unwrap(),
            config.derive(&only_key).unwrap()
        );
    }

    #[test]
    fn sources_do_not_collide_with_each_other() {
        let config = KeyConfig::new();
        let scheduler = parts(
            "/",
            &[
                ("x-cloudscheduler-jobname", "a"),
                ("x-cloudscheduler-scheduletime", "b"),
            ],
        );
        let tasks = parts(
            "/",
            &[
                ("x-cloudtasks-queuename", "a"),
                ("x-cloudtasks-taskname", "b"),
            ],
        );
        assert_ne!(
            config.derive(&scheduler).unwrap(),
            config.derive(&tasks).unwrap()
        );
    }

    #[test]
    fn incomplete_or_missing_identity_is_rejected() {
        let config = KeyConfig::new();
        let half = parts("/", &[("X-CloudScheduler-JobName", "job")]);
        assert!(matches!(
            config.derive(&half),
            Err(KeyError::MissingIdentity { .. })
        ));
        let blank = parts("/", &[("Idempotency-Key", "  ")]);
        assert!(matches!(
            config.derive(&blank),
            Err(KeyError::MissingIdentity { .. })
        ));
        let mut twice = parts("/", &[("Idempotency-Key", "a")]);
        twice
            .headers
            .append(IDEMPOTENCY_KEY, http::HeaderValue::from_static("b"));
        assert_eq!(
            config.derive(&twice),
            Err(KeyError::RepeatedHeader(IDEMPOTENCY_KEY))
        );
    }

    #[test]
    fn scopes_separate_equal_identities() {
        let by_path = KeyConfig::new().with_scope(Scope::PathSegment(1));
        let acme = parts("/projects/acme/run", &[("Idempotency-Key", "k")]);
        let other = parts("/projects/other/run", &[("Idempotency-Key", "k")]);
        assert_ne!(
            by_path.derive(&acme).unwrap(),
            by_path.derive(&other).unwrap()
        );
        let no_segment = parts("/projects", &[("Idempotency-Key", "k")]);
        assert_eq!(
            by_path.derive(&no_segment),
            Err(KeyError::MissingScope("path:1".into()))
        );

        let by_query = KeyConfig::new().with_scope(Scope::QueryParam("region".into()));
        let eu = parts("/?region=eu-west&x=1", &[("Idempotency-Key", "k")]);
        let eu_encoded = parts("/?x=2&region=eu%2Dwest", &[("Idempotency-Key", "k")]);
        let us = parts("/?region=us", &[("Idempotency-Key", "k")]);
        assert_eq!(
            by_query.derive(&eu).unwrap(),
            by_query.derive(&eu_encoded).unwrap()
        );
        assert_ne!(by_query.derive(&eu).unwrap(), by_query.derive(&us).unwrap());
        let repeated = parts("/?region=a&region=b", &[("Idempotency-Key", "k")]);
        assert!(matches!(
            by_query.derive(&repeated),
            Err(KeyError::RepeatedQueryParameter(_))
        ));

        let by_header =
            KeyConfig::new().with_scope(Scope::Header(HeaderName::from_static("x-project")));
        let p1 = parts("/", &[("Idempotency-Key", "k"), ("X-Project", "p1")]);
        let p2 = parts("/", &[("Idempotency-Key", "k"), ("x-project", "p2")]);
        assert_ne!(
            by_header.derive(&p1).unwrap(),
            by_header.derive(&p2).unwrap()
        );
        let unscoped = KeyConfig::new();
        assert_ne!(
            unscoped.derive(&p1).unwrap(),
            by_header.derive(&p1).unwrap()
        );
    }

    #[test]
    fn custom_extractor_is_used_and_tagged() {
        let config = KeyConfig::new().with_sources(vec![IdentitySource::custom("delivery", |p| {
            p.headers
                .get("x-delivery")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })]);
        let a = parts("/", &[("X-Delivery", "d1")]);
        let key = config.derive(&a).unwrap();
        assert_ne!(
            key,
            KeyConfig::new()
                .derive(&parts("/", &[("Idempotency-Key", "d1")]))
                .unwrap()
        );
        assert!(
            config
                .derive(&parts("/", &[("Idempotency-Key", "d1")]))
                .is_err()
        );
    }

    #[test]
    fn a_signed_message_key_is_the_unscoped_idempotency_key_of_its_id() {
        let plain = KeyConfig::new()
            .derive(&parts("/", &[("Idempotency-Key", "msg_1")]))
            .unwrap();
        assert_eq!(RunKey::of_signed_message(b"msg_1"), plain);
        assert_ne!(RunKey::of_signed_message(b"msg_2"), plain);
    }

    #[test]
    fn a_named_identity_header_is_its_own_source() {
        let header = HeaderName::from_static("x-idempotency-key");
        let config = KeyConfig::new().with_sources(vec![IdentitySource::Header(header.clone())]);
        let a = config
            .derive(&parts("/", &[("X-Idempotency-Key", "d1")]))
            .unwrap();
        assert_eq!(
            a,
            config
                .derive(&parts("/", &[("x-idempotency-key", " d1 ")]))
                .unwrap()
        );
        assert_ne!(
            a,
            KeyConfig::new()
                .derive(&parts("/", &[("Idempotency-Key", "d1")]))
                .unwrap(),
            "a named header never collides with Idempotency-Key"
        );
        assert!(matches!(
            config.derive(&parts("/", &[("Idempotency-Key", "d1")])),
            Err(KeyError::MissingIdentity { .. })
        ));
        let mut twice = parts("/", &[("X-Idempotency-Key", "a")]);
        twice
            .headers
            .append(&header, http::HeaderValue::from_static("b"));
        assert_eq!(config.derive(&twice), Err(KeyError::RepeatedHeader(header)));
    }

    #[test]
    fn the_run_key_is_written_into_a_json_object_body() {
        let key = RunKey::from_parts(["k"]);
        let out = inject_run_key_json(br#"{"amount": 100, "run_key": "forged"}"#, "run_key", &key)
            .unwrap();
        let out: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            out,
            serde_json::json!({"amount": 100, "run_key": key.as_str()})
        );
        for body in [&b"[1]"[..], b"\"text\"", b"not json", b""] {
            assert_eq!(
                inject_run_key_json(body, "run_key", &key),
                Err(InjectError::NotAnObject("run_key".into()))
            );
        }
    }

    #[test]
    fn percent_decoding_handles_malformed_escapes() {
        assert_eq!(percent_decode("a%2Fb+c"), b"a/b c");
        assert_eq!(percent_decode("100%"), b"100%");
        assert_eq!(percent_decode("%zz"), b"%zz");
    }
}
