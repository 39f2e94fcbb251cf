//! Tasks: their states, targets and the validation of a create request.

use crate::field::FieldErrors;
use crate::queue::{MAX_DEADLINE_S, MIN_DEADLINE_S};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// A task's state as the API shows it.
///
/// The store keeps `pending` for both `scheduled` and `queued`: which one a
/// pending task is depends on the clock, so it is decided when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Its schedule time has not come yet.
    Scheduled,
    /// Due, waiting for the dispatcher (also between retries).
    Queued,
    /// An attempt is in flight.
    Running,
    Succeeded,
    /// Attempts or retry duration exhausted.
    Failed,
    /// Deleted or purged before it could finish.
    Cancelled,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Scheduled,
            Self::Queued,
            Self::Running,
            Self::Succeeded,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }

    pub fn is_final(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Cancelled)
    }
}

/// Headers Idem sets on every delivery; a target may not set them itself,
/// so that identity and signature cannot be forged or confused.
pub const RESERVED_HEADERS: &[&str] = &[
    "idem-queue",
    "idem-task-id",
    "idempotency-key",
    "idem-schedule-time",
    "idem-retry-count",
    "idem-previous-response",
    "idem-job",
    "idem-run-kind",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
];

/// Headers that describe the connection or the framing rather than the
/// request; the HTTP client sets them.
pub const TRANSPORT_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
];

/// Most headers a target may carry, and most bytes their names and values
/// may total: every delivery sends them, and a proxy or server on the way
/// refuses much more (HTTP servers commonly stop at 100 headers or 8–16 KiB).
pub const MAX_TARGET_HEADERS: usize = 64;
pub const MAX_TARGET_HEADER_BYTES: usize = 16 * 1024;

pub const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// How a target's body was given, kept so it reads back the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyForm {
    Text,
    Base64,
    Json,
}

impl BodyForm {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Base64 => "base64",
            Self::Json => "json",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "text" => Some(Self::Text),
            "base64" => Some(Self::Base64),
            "json" => Some(Self::Json),
            _ => None,
        }
    }
}

/// The HTTP request a task or job delivers, as sent in a create request.
// A request body, yet kept here rather than in `idem-api` (as are the job
// bodies that contain it, `CreateJob` and `UpdateJob`): they are the inputs
// of the rules that resolve them, and the store's suites build job
// configurations from them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// UTF-8 text body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Binary body, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
    /// Any JSON value (`null` included), sent as `application/json`.
    #[serde(
        default,
        deserialize_with = "present_json",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub json: Option<Box<RawValue>>,
    /// Sends an OIDC ID token signed by the organization as
    /// `Authorization: Bearer …` with each delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcSpec>,
    /// Headers whose values are never shown again once created (beside
    /// `Authorization`, `Cookie` and `Proxy-Authorization`, which never
    /// are); deliveries still send them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_headers: Vec<String>,
}

// `RawValue` has no `PartialEq`: a JSON body compares by its text.
impl PartialEq for TargetSpec {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
            && self.method == other.method
            && self.headers == other.headers
            && self.body == other.body
            && self.body_base64 == other.body_base64
            && self.json.as_ref().map(|j| j.get()) == other.json.as_ref().map(|j| j.get())
            && self.oidc == other.oidc
            && self.secret_headers == other.secret_headers
    }
}

/// A target's request for an OIDC ID token, as sent in a create request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct OidcSpec {
    /// The token's `aud`; by default the target URL's origin
    /// (`https://example.com:8443`). At most 512 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
}

/// The ID token a target receives with each delivery, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Oidc {
    /// The token's `aud`.
    pub audience: String,
}

/// Longest audience a target may ask for, in characters: it travels in
/// every token.
pub const MAX_OIDC_AUDIENCE_CHARS: usize = 512;

/// `Some` whenever the field is present, so that `"json": null` is the JSON
/// value null rather than an absent body.
fn present_json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// A validated target: what the dispatcher sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub url: String,
    pub method: String,
    pub headers: BTreeMap<String, String>,
    pub body: Option<(BodyForm, Vec<u8>)>,
    /// Whether deliveries carry an ID token, and for which audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<Oidc>,
    /// The target's own secret headers, lowercase (see
    /// [`Target::is_secret_header`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_headers: Vec<String>,
    /// The trace context of the request that created the task: its
    /// attempts join that trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TraceContext>,
}

/// Headers whose values are credentials whatever the target says: never
/// shown after creation.
pub const ALWAYS_SECRET_HEADERS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

/// What a secret header's value is shown as.
pub const REDACTED: &str = "<redacted>";

/// Whether the value of header `name` of a target whose own secret
/// headers are `secret_headers` is a secret the API and the console never
/// show.
pub fn is_secret_header(secret_headers: &[String], name: &str) -> bool {
    ALWAYS_SECRET_HEADERS
        .iter()
        .copied()
        .chain(secret_headers.iter().map(String::as_str))
        .any(|s| s.eq_ignore_ascii_case(name))
}

impl Target {
    /// What a pull task stores in place of a target: its payload alone,
    /// with no URL, which is what tells a pull task apart.
    pub fn payload(body: Option<(BodyForm, Vec<u8>)>) -> Target {
        Target {
            url: String::new(),
            method: String::new(),
            headers: BTreeMap::new(),
            body,
            oidc: None,
            secret_headers: Vec::new(),
            trace: None,
        }
    }
}

/// A pull task's payload as sent: at most one of text, base64 bytes and
/// any JSON value, which the worker that claims it reads back as given.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PayloadSpec {
    /// UTF-8 text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Bytes, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
    /// Any JSON value (`null` included).
    #[serde(
        default,
        deserialize_with = "present_json",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub json: Option<Box<RawValue>>,
}

impl PayloadSpec {
    /// Validates the payload; `prefix` is its field path (`payload`).
    pub fn resolve(self, prefix: &str, errors: &mut FieldErrors) -> Option<(BodyForm, Vec<u8>)> {
        let given: Vec<&str> = [
            self.body.as_ref().map(|_| "body"),
            self.body_base64.as_ref().map(|_| "body_base64"),
            self.json.as_ref().map(|_| "json"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if given.len() > 1 {
            errors.push(
                format!("{prefix}.{}", given[1]),
                format!(
                    "give at most one of body, body_base64 and json (got {})",
                    given.join(", ")
                ),
            );
            return None;
        }
        if let Some(text) = self.body {
            return Some((BodyForm::Text, text.into_bytes()));
        }
        if let Some(b64) = self.body_base64 {
            return match STANDARD.decode(b64.as_bytes()) {
                Ok(bytes) => Some((BodyForm::Base64, bytes)),
                Err(e) => {
                    errors.push(
                        format!("{prefix}.body_base64"),
                        format!("is not base64: {e}"),
                    );
                    None
                }
            };
        }
        self.json
            .map(|json| (BodyForm::Json, json.get().as_bytes().to_vec()))
    }
}

impl TargetSpec {
    /// Validates and resolves the target; `prefix` is the field path of the
    /// target in the request (`target`).
    pub fn resolve(self, prefix: &str, errors: &mut FieldErrors) -> Option<Target> {
        let ok_before = errors.0.len();
        check_url(&format!("{prefix}.url"), &self.url, errors);
        let method = self
            .method
            .as_deref()
            .unwrap_or("POST")
            .to_ascii_uppercase();
        if !METHODS.contains(&method.as_str()) {
            errors.push(
                format!("{prefix}.method"),
                format!("must be one of {}", METHODS.join(", ")),
            );
        }
        let header_bytes: usize = self.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
        if self.headers.len() > MAX_TARGET_HEADERS {
            errors.push(
                format!("{prefix}.headers"),
                format!(
                    "at most {MAX_TARGET_HEADERS} headers, got {}",
                    self.headers.len()
                ),
            );
        } else if header_bytes > MAX_TARGET_HEADER_BYTES {
            errors.push(
                format!("{prefix}.headers"),
                format!(
                    "names and values may total at most {MAX_TARGET_HEADER_BYTES} bytes, got {header_bytes}"
                ),
            );
        }
        // Past the bounds, one error says it all: naming each of thousands
        // of headers would only make the answer as large as the request.
        let headers_checked = if self.headers.len() > MAX_TARGET_HEADERS {
            0
        } else {
            self.headers.len()
        };
        for (name, value) in self.headers.iter().take(headers_checked) {
            let field = format!("{prefix}.headers.{name}");
            let lower = name.to_ascii_lowercase();
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                errors.push(field, "is not a valid header name");
            } else if RESERVED_HEADERS.contains(&lower.as_str()) || lower.starts_with("idem-") {
                errors.push(field, "is reserved: Idem sets it on every delivery");
            } else if TRANSPORT_HEADERS.contains(&lower.as_str()) {
                errors.push(field, "is set by the HTTP client and may not be given");
            } else if self.oidc.is_some() && lower == "authorization" {
                errors.push(
                    field,
                    "conflicts with oidc, which sends the Authorization header",
                );
            } else if !value
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
            {
                errors.push(field, "value must be visible ASCII, spaces or tabs");
            }
        }
        let given: Vec<&str> = [
            self.body.as_ref().map(|_| "body"),
            self.body_base64.as_ref().map(|_| "body_base64"),
            self.json.as_ref().map(|_| "json"),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut body = None;
        if given.len() > 1 {
            errors.push(
                format!("{prefix}.{}", given[1]),
                format!(
                    "give at most one of body, body_base64 and json (got {})",
                    given.join(", ")
                ),
            );
        } else if let Some(text) = self.body {
            body = Some((BodyForm::Text, text.into_bytes()));
        } else if let Some(b64) = self.body_base64 {
            match STANDARD.decode(b64.as_bytes()) {
                Ok(bytes) => body = Some((BodyForm::Base64, bytes)),
                Err(e) => errors.push(
                    format!("{prefix}.body_base64"),
                    format!("is not base64: {e}"),
                ),
            }
        } else if let Some(json) = self.json {
            let content_type = self
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-type"));
            if let Some((k, v)) = content_type
                && !is_json_media_type(v)
            {
                errors.push(
                    format!("{prefix}.headers.{k}"),
                    "conflicts with json, which is sent as application/json",
                );
            }
            body = Some((BodyForm::Json, json.get().as_bytes().to_vec()));
        }
        if body.is_some() && matches!(method.as_str(), "GET" | "HEAD") {
            errors.push(
                format!("{prefix}.{}", given[0]),
                format!("a {method} request has no body"),
            );
        }
        let oidc = self
            .oidc
            .and_then(|spec| resolve_oidc(spec, &self.url, prefix, errors));
        // Repeats are kept once (a set: the request's size limit is the
        // list's only bound); stored sorted.
        let mut secret_headers = std::collections::BTreeSet::new();
        for (i, name) in self.secret_headers.iter().enumerate() {
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                errors.push(
                    format!("{prefix}.secret_headers[{i}]"),
                    "is not a valid header name",
                );
            } else {
                secret_headers.insert(name.to_ascii_lowercase());
            }
        }
        let mut headers = self.headers;
        // A JSON body says so, unless the target chose a `+json` type.
        if let Some((BodyForm::Json, _)) = &body
            && !headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("content-type"))
        {
            headers.insert("Content-Type".into(), "application/json".into());
        }
        (errors.0.len() == ok_before).then_some(Target {
            url: self.url,
            method,
            headers,
            body,
            oidc,
            secret_headers: secret_headers.into_iter().collect(),
            trace: None,
        })
    }
}

/// The audience given, or the URL's origin.
fn resolve_oidc(spec: OidcSpec, url: &str, prefix: &str, errors: &mut FieldErrors) -> Option<Oidc> {
    let field = format!("{prefix}.oidc.audience");
    let audience = match spec.audience {
        Some(audience) => audience,
        // A URL that does not parse was named already.
        None => return url_origin(url).map(|audience| Oidc { audience }),
    };
    // U+FEFF counts as a blank, as JSON Schema's `\s` says.
    if audience
        .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .is_empty()
    {
        errors.push(field, "must not be empty");
    } else if audience.chars().count() > MAX_OIDC_AUDIENCE_CHARS {
        errors.push(
            field,
            format!(
                "at most {MAX_OIDC_AUDIENCE_CHARS} characters, got {}",
                audience.chars().count()
            ),
        );
    } else if audience.chars().any(char::is_control) {
        errors.push(field, "must not contain control characters");
    } else {
        return Some(Oidc { audience });
    }
    None
}

/// `scheme://host[:port]` as RFC 6454 serializes an origin: lowercase, the
/// scheme's default port left out.
pub fn url_origin(url: &str) -> Option<String> {
    let uri: http::Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let host = uri.host().filter(|h| !h.is_empty())?.to_ascii_lowercase();
    let port = uri
        .port_u16()
        .filter(|p| !matches!((scheme.as_str(), p), ("http", 80) | ("https", 443)));
    Some(match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

fn is_json_media_type(v: &str) -> bool {
    let essence = v
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

fn check_url(field: &str, url: &str, errors: &mut FieldErrors) {
    match url.parse::<http::Uri>() {
        Ok(uri) => {
            let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
            if !scheme_ok {
                errors.push(field, "must be an absolute http or https URL");
            } else if uri.host().is_none_or(str::is_empty) {
                errors.push(field, "must name a host");
            }
        }
        Err(e) => errors.push(field, format!("is not a valid URL: {e}")),
    }
}

/// Checks a task's own `dispatch_deadline_s`, when it sets one; the queue's
/// is checked with the rest of the queue's configuration.
pub fn validate_dispatch_deadline(deadline_s: Option<u32>, errors: &mut FieldErrors) {
    if let Some(d) = deadline_s {
        errors.range("dispatch_deadline_s", d, MIN_DEADLINE_S, MAX_DEADLINE_S);
    }
}

/// The latest schedule time, exclusive: the year 3000 in any offset.
/// Every instant a task's life adds to its schedule time (deadlines,
/// backoff, dedup windows) then stays far inside the stores' microsecond
/// range.
pub const SCHEDULE_TIME_END: Timestamp = Timestamp::constant(32_503_766_400, 0);

/// What the OpenAPI document says of `schedule_time` beside its format:
/// a year before 3000, which with any offset is before
/// [`SCHEDULE_TIME_END`].
pub const SCHEDULE_TIME_PATTERN: &str = "^[0-2][0-9]{3}-";

/// Checks a task's `schedule_time`, when it sets one, and returns the time
/// it is due: an instant before the year 3000; a time in the past (the Unix
/// epoch and before included) is due at once, and one before the epoch is
/// taken as the epoch.
pub fn resolve_schedule_time(at: Option<Timestamp>, errors: &mut FieldErrors) -> Option<Timestamp> {
    let at = at?;
    if at >= SCHEDULE_TIME_END {
        errors.push("schedule_time", "must be before the year 3000");
    }
    Some(at.max(Timestamp::UNIX_EPOCH))
}

/// One delivery attempt as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attempt {
    /// 1-based.
    pub attempt: u32,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub started_at: Timestamp,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub finished_at: Option<Timestamp>,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: Option<u64>,
    /// What the target answered to a failed attempt (null for a success,
    /// an attempt without an answer, and a pull worker's attempt).
    #[serde(default)]
    pub response: Option<AttemptResponse>,
}

/// The start of a target's non-2xx answer, kept so that the attempt says
/// why the target refused, not only that it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptResponse {
    /// The answer's `Content-Type`, as sent (at most 200 characters).
    pub content_type: Option<String>,
    /// The first 1 KiB of the answer's body as text; bytes that are not
    /// UTF-8 read as U+FFFD.
    pub body: String,
    /// The body went on past what `body` holds.
    pub truncated: bool,
}

impl AttemptResponse {
    /// The most of a body kept.
    pub const MAX_BODY: usize = 1024;
    /// The most of a content type kept.
    pub const MAX_CONTENT_TYPE: usize = 200;

    /// Keeps the start of an answer: `head` is its first bytes (at least
    /// [`Self::MAX_BODY`] when there were that many), `more` whether the
    /// body went on past them. A character cut by the limit is dropped
    /// whole rather than kept as U+FFFD.
    pub fn keep(content_type: Option<&str>, head: &[u8], more: bool) -> AttemptResponse {
        let cut = head.len().min(Self::MAX_BODY);
        let kept = &head[..cut];
        let kept = match std::str::from_utf8(kept) {
            Err(e) if e.error_len().is_none() && cut < head.len() => &kept[..e.valid_up_to()],
            _ => kept,
        };
        AttemptResponse {
            content_type: content_type.map(|t| t.chars().take(Self::MAX_CONTENT_TYPE).collect()),
            body: String::from_utf8_lossy(kept).into_owned(),
            truncated: more || cut < head.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> TargetSpec {
        serde_json::from_str(json).unwrap()
    }

    fn fields(errors: &FieldErrors) -> Vec<&str> {
        errors.0.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn an_oidc_audience_defaults_to_the_target_s_origin() {
        let mut errors = FieldErrors::new();
        for (url, origin) in [
            (
                "https://Run.Example.com/hook?x=1",
                "https://run.example.com",
            ),
            (
                "https://run.example.com:443/hook",
                "https://run.example.com",
            ),
            ("http://127.0.0.1:8080/a/b", "http://127.0.0.1:8080"),
            ("http://[::1]:80/", "http://[::1]"),
        ] {
            let t = spec(&format!(r#"{{"url":"{url}","oidc":{{}}}}"#))
                .resolve("target", &mut errors)
                .unwrap();
            assert_eq!(t.oidc.unwrap().audience, origin, "{url}");
        }
        let t = spec(r#"{"url":"http://a/","oidc":{"audience":"api://orders"}}"#)
            .resolve("target", &mut errors)
            .unwrap();
        assert_eq!(t.oidc.unwrap().audience, "api://orders");
        assert!(errors.is_empty());
        let t = spec(r#"{"url":"http://a/"}"#)
            .resolve("target", &mut errors)
            .unwrap();
        assert_eq!(t.oidc, None);
    }

    /// HTTP lets a header value carry bytes above 0x7E (obs-text); what a
    /// target sends is held to visible ASCII, spaces and tabs, as the
    /// OpenAPI document says.
    #[test]
    fn header_values_are_visible_ascii_spaces_and_tabs() {
        for (value, ok) in [
            (r"a b\tc~", true),
            (r"caf\u00e9", false),
            (r"\u0084", false),
            (r"a\u007f", false),
        ] {
            let json = format!(r#"{{"url":"http://a/","headers":{{"X-V":"{value}"}}}}"#);
            let mut errors = FieldErrors::new();
            spec(&json).resolve("target", &mut errors);
            let expected: &[&str] = if ok { &[] } else { &["target.headers.X-V"] };
            assert_eq!(fields(&errors), expected, "{value:?}");
        }
    }

    #[test]
    fn a_bad_oidc_audience_is_named() {
        let long = "é".repeat(MAX_OIDC_AUDIENCE_CHARS + 1);
        for audience in ["", "  ", "\u{feff}", long.as_str(), r"a\u0000b"] {
            let mut errors = FieldErrors::new();
            let json = format!(r#"{{"url":"http://a/","oidc":{{"audience":"{audience}"}}}}"#);
            assert!(spec(&json).resolve("target", &mut errors).is_none());
            assert_eq!(fields(&errors), ["target.oidc.audience"], "{audience:?}");
        }
        let mut errors = FieldErrors::new();
        let json = r#"{"url":"http://a/","oidc":{"aud":"x"}}"#;
        assert!(serde_json::from_str::<TargetSpec>(json).is_err());
        let json = r#"{"url":"http://a/","headers":{"Authorization":"Bearer x"},"oidc":{}}"#;
        assert!(spec(json).resolve("target", &mut errors).is_none());
        assert_eq!(fields(&errors), ["target.headers.Authorization"]);
    }

    #[test]
    fn defaults_to_post_and_keeps_json_text_as_sent() {
        let mut errors = FieldErrors::new();
        let t = spec(r#"{"url":"http://10.0.0.1:8080/x","json":{"b":1.0,"a":[1e0]}}"#)
            .resolve("target", &mut errors)
            .unwrap();
        assert!(errors.is_empty());
        assert_eq!(t.method, "POST");
        let (form, bytes) = t.body.unwrap();
        assert_eq!(form, BodyForm::Json);
        assert_eq!(bytes, br#"{"b":1.0,"a":[1e0]}"#);
    }

    #[test]
    fn rejects_bad_scheme_reserved_headers_and_two_bodies() {
        let mut errors = FieldErrors::new();
        let t = spec(
            r#"{"url":"ftp://x/y","headers":{"Idempotency-Key":"k","webhook-signature":"s","Idem-Custom":"v","X-Ok":"fine"},
                "body":"a","json":1}"#,
        )
        .resolve("target", &mut errors);
        assert!(t.is_none());
        assert_eq!(
            fields(&errors),
            [
                "target.url",
                "target.headers.Idem-Custom",
                "target.headers.Idempotency-Key",
                "target.headers.webhook-signature",
                "target.json"
            ]
        );
    }

    #[test]
    fn rejects_relative_urls_bad_base64_and_get_bodies() {
        for (json, field) in [
            (r#"{"url":"/relative"}"#, "target.url"),
            (
                r#"{"url":"http://h/","body_base64":"!!"}"#,
                "target.body_base64",
            ),
            (
                r#"{"url":"http://h/","method":"GET","body":"x"}"#,
                "target.body",
            ),
            (r#"{"url":"http://h/","method":"BREW"}"#, "target.method"),
            (
                r#"{"url":"http://h/","headers":{"Content-Length":"3"}}"#,
                "target.headers.Content-Length",
            ),
            (
                r#"{"url":"http://h/","json":{},"headers":{"content-type":"text/plain"}}"#,
                "target.headers.content-type",
            ),
        ] {
            let mut errors = FieldErrors::new();
            assert!(
                spec(json).resolve("target", &mut errors).is_none(),
                "{json}"
            );
            assert_eq!(fields(&errors), [field], "{json}");
        }
    }

    #[test]
    fn header_count_and_size_are_bounded() {
        let with = |headers: BTreeMap<String, String>| TargetSpec {
            url: "http://h/".into(),
            headers,
            ..Default::default()
        };
        let many: BTreeMap<String, String> = (0..30_000)
            .map(|i| (format!("X-H{i}"), "v".to_string()))
            .collect();
        let mut errors = FieldErrors::new();
        assert!(with(many).resolve("target", &mut errors).is_none());
        assert_eq!(fields(&errors), ["target.headers"]);

        let at_limit: BTreeMap<String, String> = (0..MAX_TARGET_HEADERS)
            .map(|i| (format!("X-H{i}"), "v".to_string()))
            .collect();
        let mut errors = FieldErrors::new();
        assert!(with(at_limit).resolve("target", &mut errors).is_some());

        let large = BTreeMap::from([("X-Big".to_string(), "v".repeat(MAX_TARGET_HEADER_BYTES))]);
        let mut errors = FieldErrors::new();
        assert!(with(large).resolve("target", &mut errors).is_none());
        assert_eq!(fields(&errors), ["target.headers"]);
    }

    #[test]
    fn schedule_times_end_before_the_year_3000_and_start_at_the_epoch() {
        assert_eq!(
            SCHEDULE_TIME_END,
            "3000-01-02T00:00:00Z".parse::<Timestamp>().unwrap()
        );
        for (at, due) in [
            ("2030-06-01T00:00:00Z", Some("2030-06-01T00:00:00Z")),
            ("2999-12-31T23:59:59-23:59", Some("3000-01-01T23:58:59Z")),
            ("1969-12-31T23:59:59Z", Some("1970-01-01T00:00:00Z")),
            ("0000-01-01T00:00:00+01:00", Some("1970-01-01T00:00:00Z")),
            ("3000-01-02T00:00:00Z", None),
            ("9999-01-01T00:00:00Z", None),
        ] {
            let mut errors = FieldErrors::new();
            let resolved = resolve_schedule_time(Some(at.parse().unwrap()), &mut errors);
            match due {
                Some(due) => {
                    assert!(errors.is_empty(), "{at}");
                    assert_eq!(resolved, Some(due.parse().unwrap()), "{at}");
                }
                None => assert_eq!(fields(&errors), ["schedule_time"], "{at}"),
            }
        }
    }

    #[test]
    fn state_names_round_trip() {
        for s in [
            "scheduled",
            "queued",
            "running",
            "succeeded",
            "failed",
            "cancelled",
        ] {
            assert_eq!(TaskState::parse(s).unwrap().as_str(), s);
        }
        assert!(TaskState::Cancelled.is_final() && !TaskState::Running.is_final());
    }

    #[test]
    fn an_answer_keeps_its_first_kibibyte_and_whole_characters() {
        let short = AttemptResponse::keep(Some("text/plain"), b"no such account", false);
        assert_eq!(short.body, "no such account");
        assert!(!short.truncated);
        assert_eq!(short.content_type.as_deref(), Some("text/plain"));

        // 1023 ASCII bytes, then a two-byte character the limit cuts.
        let mut long = vec![b'a'; 1023];
        long.extend("é and more".as_bytes());
        let kept = AttemptResponse::keep(None, &long, false);
        assert_eq!(kept.body.len(), 1023);
        assert!(kept.body.bytes().all(|b| b == b'a'));
        assert!(kept.truncated);

        let binary = AttemptResponse::keep(None, &[0xff, b'x'], true);
        assert_eq!(binary.body, "\u{fffd}x");
        assert!(binary.truncated, "the reader said more followed");

        let odd_type = "x".repeat(500);
        let kept = AttemptResponse::keep(Some(&odd_type), b"", false);
        assert_eq!(kept.content_type.map(|t| t.len()), Some(200));
    }
}
