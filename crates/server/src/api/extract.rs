//! Request extractors that answer bad input with problem documents naming
//! the field: JSON bodies, list parameters, page tokens.

use super::objects::Objects;
use super::problem::{ApiResult, Problem};
use crate::App;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use http::header;
use idem_store::PageRequest;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::sync::Arc;

/// Reads the whole body, refusing more than the configured limit with 413.
///
/// An oversized body is still read to its end (up to a bound) before the
/// refusal: a client that is still sending when the answer comes sees a
/// broken pipe instead of the 413.
pub async fn read_body(req: Request, limit: usize) -> ApiResult<Bytes> {
    use http_body_util::BodyExt;
    let mut body = req.into_body();
    let mut buf = bytes::BytesMut::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(Problem::invalid("the request body could not be read"));
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen = seen.saturating_add(data.len());
        if seen <= limit {
            buf.extend_from_slice(&data);
        } else if seen > DRAIN_LIMIT {
            break;
        }
    }
    if seen > limit {
        return Err(Problem::payload_too_large(limit));
    }
    Ok(buf.freeze())
}

/// Most bytes of an oversized body read (and dropped) before answering.
const DRAIN_LIMIT: usize = 64 << 20;

/// The media type of a request, lowercased, without parameters.
pub fn media_type(req: &Request) -> Option<String> {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
}

/// The value of query parameter `name`, matched after percent-decoding as
/// any form decoder would (`wait%5Fms` is `wait_ms`); the first if repeated.
pub fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

pub fn is_json(media_type: &str) -> bool {
    media_type == "application/json" || media_type.ends_with("+json")
}

/// Parses JSON, mapping serde's errors to the dotted path of the field.
/// An array is never taken for an object ([`Objects`]), and nothing may
/// follow the value.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> ApiResult<T> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(Objects(&mut *de));
    if value.is_ok()
        && let Err(e) = de.end()
    {
        return Err(Problem::invalid(format!("malformed JSON body: {e}")));
    }
    value.map_err(|e| {
        let inner = e.inner();
        if inner.is_syntax() || inner.is_eof() {
            return Problem::invalid(format!("malformed JSON body: {inner}"));
        }
        let path = e.path().to_string();
        let message = inner.to_string();
        // serde reports unknown and missing fields at the enclosing object;
        // name the field itself.
        let named = ["unknown field `", "missing field `"]
            .iter()
            .find_map(|p| message.strip_prefix(p))
            .and_then(|rest| rest.split('`').next());
        let field = match (named, path.as_str()) {
            (Some(name), "." | "") => name.to_string(),
            // Unknown fields are reported at their own path, missing ones
            // at the enclosing object's.
            (Some(name), p) if p == name || p.ends_with(&format!(".{name}")) => p.to_string(),
            (Some(name), p) => format!("{p}.{name}"),
            (None, p) => p.trim_start_matches('.').to_string(),
        };
        let message = strip_position(&message);
        Problem::field(if field.is_empty() { "body" } else { &field }, message)
    })
}

fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// A JSON request body; 415 for another media type, 413 over the limit,
/// 400 naming the field for anything that does not fit `T`.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Arc<App>> for Json<T> {
    type Rejection = Problem;

    async fn from_request(req: Request, app: &Arc<App>) -> ApiResult<Self> {
        match media_type(&req) {
            Some(m) if is_json(&m) => {}
            Some(m) => {
                return Err(Problem::unsupported_media_type(format!(
                    "expected application/json, got {m}"
                )));
            }
            None => {
                return Err(Problem::unsupported_media_type(
                    "expected a Content-Type of application/json",
                ));
            }
        }
        let bytes = read_body(req, app.options.max_body_bytes).await?;
        parse_json(&bytes).map(Json)
    }
}

/// A JSON request body that may be left out: no bytes at all give `T`'s
/// defaults. Anything else is read as [`Json`] reads it, so a body of
/// whitespace is malformed JSON, not an absent body.
pub struct OptionalJson<T>(pub T);

impl<T: DeserializeOwned + Default> FromRequest<Arc<App>> for OptionalJson<T> {
    type Rejection = Problem;

    async fn from_request(req: Request, app: &Arc<App>) -> ApiResult<Self> {
        let media = media_type(&req);
        let bytes = read_body(req, app.options.max_body_bytes).await?;
        if bytes.is_empty() {
            return Ok(OptionalJson(T::default()));
        }
        match media {
            Some(m) if is_json(&m) => parse_json(&bytes).map(OptionalJson),
            _ => Err(Problem::unsupported_media_type(
                "expected a Content-Type of application/json",
            )),
        }
    }
}

/// `?limit=` and `?page_token=`, plus any other parameters for the caller.
pub struct ListParams {
    pub page: PageRequest,
    pub rest: HashMap<String, String>,
}

pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 1000;

impl ListParams {
    pub fn parse(query: Option<&str>) -> ApiResult<Self> {
        let mut rest: HashMap<String, String> = HashMap::new();
        for (k, v) in form_pairs(query.unwrap_or("")) {
            rest.insert(k, v);
        }
        let limit = match rest.remove("limit") {
            None => DEFAULT_LIMIT,
            Some(v) => v
                .parse::<u32>()
                .ok()
                .filter(|l| (1..=MAX_LIMIT).contains(l))
                .ok_or_else(|| {
                    Problem::field("limit", format!("must be an integer from 1 to {MAX_LIMIT}"))
                })?,
        };
        let after = match rest.remove("page_token") {
            None => None,
            Some(t) if t.is_empty() => None,
            Some(t) => Some(decode_page_token(&t).ok_or_else(|| {
                Problem::field("page_token", "must not contain control characters")
            })?),
        };
        Ok(ListParams {
            page: PageRequest { limit, after },
            rest,
        })
    }
}

fn form_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|s| !s.is_empty()).map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode_component(k), decode_component(v))
    })
}

fn decode_component(s: &str) -> String {
    let s = s.replace('+', " ");
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (
                (bytes[i + 1] as char).to_digit(16),
                (bytes[i + 2] as char).to_digit(16),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Page tokens are the key a list continues after, as it orders its items:
/// a name or ID, `<created µs>:<task ID>` for tasks by creation time,
/// `<schedule µs>/<run ID>` for a job's runs, an attempt's number. Any
/// string without control characters is a position in a list ordered by
/// name or ID, so every token the document's pattern allows is answered
/// with a page.
pub fn encode_page_token(after: &str) -> String {
    after.to_owned()
}

fn decode_page_token(token: &str) -> Option<String> {
    (!token.chars().any(|c| c.is_ascii_control())).then(|| token.to_owned())
}

/// The `page_token` patterns of the document, by list.
pub const PAGE_TOKEN_PATTERN: &str = "^[^\\x00-\\x1F\\x7F]*$";
pub const ATTEMPTS_PAGE_TOKEN_PATTERN: &str = "^[0-9]{0,9}$";
pub const RUNS_PAGE_TOKEN_PATTERN: &str = "^(?:-?[0-9]{1,18}/[^\\x00-\\x1F\\x7F]*)?$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_tokens_are_positions_without_control_characters() {
        let t = encode_page_token("1733333333000000:payment-12345");
        assert_eq!(
            decode_page_token(&t).as_deref(),
            Some("1733333333000000:payment-12345")
        );
        assert_eq!(decode_page_token("any name"), Some("any name".into()));
        assert_eq!(decode_page_token("a\u{0}b"), None);
        let p = ListParams::parse(Some("page_token=a%0Ab")).err().unwrap();
        assert_eq!(p.extensions.unwrap()["errors"][0]["field"], "page_token");
    }

    #[test]
    fn list_params_validate_limit() {
        assert_eq!(ListParams::parse(None).unwrap().page.limit, 50);
        assert_eq!(
            ListParams::parse(Some("limit=1000")).unwrap().page.limit,
            1000
        );
        for bad in ["limit=0", "limit=1001", "limit=x"] {
            let p = ListParams::parse(Some(bad)).err().unwrap();
            assert_eq!(p.extensions.unwrap()["errors"][0]["field"], "limit");
        }
        let p = ListParams::parse(Some("state=queued&x=%41+b")).unwrap();
        assert_eq!(p.rest["state"], "queued");
        assert_eq!(p.rest["x"], "A b");
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
    }
    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        n: u32,
    }

    fn field_of(json: &str) -> String {
        let p = parse_json::<Outer>(json.as_bytes()).unwrap_err();
        p.extensions.unwrap()["errors"][0]["field"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn json_errors_name_the_field() {
        assert_eq!(field_of(r#"{"inner":{"n":1,"bogus":2}}"#), "inner.bogus");
        assert_eq!(field_of(r#"{"inner":{}}"#), "inner.n");
        assert_eq!(field_of(r#"{"inner":{"n":"x"}}"#), "inner.n");
        assert_eq!(field_of(r#"{"other":1}"#), "other");
        let malformed = parse_json::<Outer>(b"{").unwrap_err();
        assert_eq!(malformed.code.as_str(), "INVALID_ARGUMENT");
        assert!(malformed.extensions.is_none());
    }
}
