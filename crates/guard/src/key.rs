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
    /// `X-CloudScheduler-ScheduleTime` names no instant (RFC 3339).
    #[error("X-CloudScheduler-ScheduleTime {0:?} is not an RFC 3339 instant")]
    InvalidScheduleTime(String),
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
                match job.zip(at) {
                    Some((job, at)) => {
                        let at = schedule_instant(&at)?;
                        Some(tagged("cloud-scheduler", vec![job, at]))
                    }
                    None => None,
                }
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
    /// The body, or a member on the path, is not a JSON object (nor a JSON
    /// string holding one), so there is no member to set. Names the member,
    /// empty for the body itself.
    #[error("{} must be a JSON object to carry the run key in {path:?}", described(.at))]
    NotAnObject {
        /// The member that is not an object, empty for the body itself.
        at: String,
        /// The configured path.
        path: String,
    },
    /// The path's last member is already in the body: the run key is never
    /// written over what the sender sent.
    #[error("{0:?} is already in the request body; the run key is never written over it")]
    Exists(String),
}

fn described(at: &str) -> String {
    if at.is_empty() {
        "the request body".into()
    } else {
        format!("member {at:?} of the request body")
    }
}

/// Whether `path` can name a member: dot-separated, no member empty.
pub fn valid_json_path(path: &str) -> bool {
    path.split('.').all(|member| !member.is_empty())
}

/// Adds the run key to a JSON object body at the dotted `path`
/// (`argument.idempotency_key`), for upstreams that read only their
/// payload. Missing objects on the way are created; a member holding a JSON
/// string (Workflows' `argument`) is parsed, given the key and written back
/// as a string. Nothing the sender wrote changes: every other value is
/// carried as its original text (numbers of any size included), and a path
/// whose last member exists is refused rather than overwritten.
pub fn inject_run_key_json(body: &[u8], path: &str, key: &RunKey) -> Result<Vec<u8>, InjectError> {
    let members: Vec<&str> = path.split('.').collect();
    let value = serde_json::Value::String(key.as_str().to_owned()).to_string();
    set_member(body, &members, 0, path, &value)
}

/// Sets `members[depth..]` inside the JSON object `doc` to the JSON text
/// `value`.
fn set_member(
    doc: &[u8],
    members: &[&str],
    depth: usize,
    path: &str,
    value: &str,
) -> Result<Vec<u8>, InjectError> {
    use serde_json::value::RawValue;
    let not_object = || InjectError::NotAnObject {
        at: members[..depth].join("."),
        path: path.to_owned(),
    };
    let mut object: std::collections::BTreeMap<String, Box<RawValue>> =
        serde_json::from_slice(doc).map_err(|_| not_object())?;
    let raw = |text: String| RawValue::from_string(text).expect("JSON text this function wrote");
    let member = members[depth];
    if depth + 1 == members.len() {
        if object.contains_key(member) {
            return Err(InjectError::Exists(path.to_owned()));
        }
        object.insert(member.to_owned(), raw(value.to_owned()));
    } else {
        let updated = match object.get(member).map(|v| v.get()) {
            None => set_member(b"{}", members, depth + 1, path, value)?,
            Some(text) if text.starts_with('"') => {
                let inner: String = serde_json::from_str(text).expect("a JSON string");
                let updated = set_member(inner.as_bytes(), members, depth + 1, path, value)?;
                let updated = String::from_utf8(updated).expect("JSON is UTF-8");
                serde_json::Value::String(updated).to_string().into_bytes()
            }
            Some(text) => set_member(text.as_bytes(), members, depth + 1, path, value)?,
        };
        let updated = String::from_utf8(updated).expect("JSON is UTF-8");
        object.insert(member.to_owned(), raw(updated));
    }
    Ok(serde_json::to_vec(&object).expect("a JSON object serializes"))
}

/// A ScheduleTime as the instant it names: spellings of one instant (an
/// offset instead of `Z`, fractional zeros) are one run. Written as UTC RFC
/// 3339, which leaves the usual `…T12:00:00Z` as it came, so keys of runs
/// claimed before this normalization are unchanged.
fn schedule_instant(value: &[u8]) -> Result<Vec<u8>, KeyError> {
    let invalid = || KeyError::InvalidScheduleTime(String::from_utf8_lossy(value).into_owned());
    let text = std::str::from_utf8(value).map_err(|_| invalid())?;
    let instant: jiff::Timestamp = text.parse().map_err(|_| invalid())?;
    Ok(instant.to_string().into_bytes())
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
    fn spellings_of_one_schedule_instant_are_one_run() {
        let config = KeyConfig::new();
        let at = |time: &str| {
            config.derive(&parts(
                "/",
                &[
                    ("X-CloudScheduler-JobName", "projects/p/locations/l/jobs/j"),
                    ("X-CloudScheduler-ScheduleTime", time),
                ],
            ))
        };
        let utc = at("2026-10-16T12:00:00Z").unwrap();
        for same in [
            "2026-10-16T05:00:00-07:00",
            "2026-10-16T12:00:00.000Z",
            "2026-10-16T14:00:00.000000+02:00",
            "2026-10-16t12:00:00z",
        ] {
            assert_eq!(at(same).unwrap(), utc, "{same}");
        }
        assert_ne!(at("2026-10-16T12:00:00.5Z").unwrap(), utc);
        assert_ne!(at("2026-10-16T12:00:01Z").unwrap(), utc);
        // The key of the usual spelling is the one earlier versions gave it.
        assert_eq!(
            utc,
            RunKey::from_parts([
                &b"cloud-scheduler"[..],
                b"projects/p/locations/l/jobs/j",
                b"2026-10-16T12:00:00Z"
            ])
        );
        assert_eq!(
            at("yesterday"),
            Err(KeyError::InvalidScheduleTime("yesterday".into()))
        );
    }

    #[test]
    fn sources_do_not_collide_with_each_other() {
        let config = KeyConfig::new();
        let scheduler = parts(
            "/",
            &[
                ("x-cloudscheduler-jobname", "a"),
                ("x-cloudscheduler-scheduletime", "2026-10-16T12:00:00Z"),
            ],
        );
        let tasks = parts(
            "/",
            &[
                ("x-cloudtasks-queuename", "a"),
                ("x-cloudtasks-taskname", "2026-10-16T12:00:00Z"),
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
    fn the_run_key_is_added_to_a_json_object_body() {
        let key = RunKey::from_parts(["k"]);
        let inject = |body: &str, path: &str| {
            inject_run_key_json(body.as_bytes(), path, &key)
                .map(|out| serde_json::from_slice::<serde_json::Value>(&out).unwrap())
        };
        assert_eq!(
            inject(r#"{"amount": 100}"#, "run_key").unwrap(),
            serde_json::json!({"amount": 100, "run_key": key.as_str()})
        );
        assert_eq!(
            inject(r#"{"a": {"b": 1}}"#, "a.run_key").unwrap(),
            serde_json::json!({"a": {"b": 1, "run_key": key.as_str()}})
        );
        assert_eq!(
            inject(r#"{"a": 1}"#, "meta.run.key").unwrap(),
            serde_json::json!({"a": 1, "meta": {"run": {"key": key.as_str()}}}),
            "missing objects on the way are made"
        );
        for body in [&b"[1]"[..], b"\"text\"", b"not json", b""] {
            assert_eq!(
                inject_run_key_json(body, "run_key", &key),
                Err(InjectError::NotAnObject {
                    at: String::new(),
                    path: "run_key".into()
                })
            );
        }
        assert_eq!(
            inject(r#"{"a": [1]}"#, "a.k"),
            Err(InjectError::NotAnObject {
                at: "a".into(),
                path: "a.k".into()
            })
        );
        assert_eq!(
            inject(r#"{"a": "not json"}"#, "a.k"),
            Err(InjectError::NotAnObject {
                at: "a".into(),
                path: "a.k".into()
            })
        );
    }

    #[test]
    fn the_run_key_never_overwrites_what_was_sent() {
        let key = RunKey::from_parts(["k"]);
        for (body, path) in [
            (r#"{"run_key": "forged"}"#, "run_key"),
            (r#"{"run_key": null}"#, "run_key"),
            (r#"{"a": {"k": 1}}"#, "a.k"),
            (r#"{"argument": "{\"k\": 2}"}"#, "argument.k"),
        ] {
            assert_eq!(
                inject_run_key_json(body.as_bytes(), path, &key),
                Err(InjectError::Exists(path.into())),
                "{body}"
            );
        }
    }

    #[test]
    fn a_json_string_member_is_descended_into_and_written_back() {
        let key = RunKey::from_parts(["k"]);
        // Google Workflows' execution request: the argument is a string.
        let body = r#"{"argument":"{\"order\":42,\"big\":123456789012345678901234567890}","callLogLevel":"LOG_ALL_CALLS"}"#;
        let out = inject_run_key_json(body.as_bytes(), "argument.idempotency_key", &key).unwrap();
        let out: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(out["callLogLevel"], "LOG_ALL_CALLS");
        let argument = out["argument"].as_str().expect("still a string");
        assert_eq!(
            argument,
            format!(
                r#"{{"big":123456789012345678901234567890,"idempotency_key":"{}","order":42}}"#,
                key.as_str()
            ),
            "the payload kept whole, numbers as written"
        );
    }

    #[test]
    fn json_paths_name_members() {
        assert!(valid_json_path("run_key"));
        assert!(valid_json_path("argument.idempotency_key"));
        for bad in ["", ".a", "a.", "a..b"] {
            assert!(!valid_json_path(bad), "{bad:?}");
        }
    }

    #[test]
    fn percent_decoding_handles_malformed_escapes() {
        assert_eq!(percent_decode("a%2Fb+c"), b"a/b c");
        assert_eq!(percent_decode("100%"), b"100%");
        assert_eq!(percent_decode("%zz"), b"%zz");
    }
}
