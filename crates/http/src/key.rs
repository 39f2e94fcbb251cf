//! The `Idempotency-Key` request header: syntax and parsing.
//!
//! # Accepted syntax
//!
//! A key is 1 to [`MAX_LEN`] printable ASCII characters (0x20–0x7E). The
//! header value may carry the key either
//!
//! * **bare**: `Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324`, or
//! * **as a Structured-Fields string** (RFC 8941 §3.3.3, the form used by the
//!   IETF Idempotency-Key draft): `Idempotency-Key: "8e03978e-40d5"`. The
//!   string is unquoted first (`\"` and `\\` are its only escapes), and the
//!   unquoted text must itself be a valid key. Parameters after the string
//!   (`"abc";p=1`) are not accepted.
//!
//! # Rejected values
//!
//! An empty value, a value with bytes outside 0x20–0x7E, a key longer than
//! [`MAX_LEN`], a malformed quoted string, a list, and a header sent more than
//! once are all errors ([`KeyError`]); the caller answers 400
//! `IDEMPOTENCY_KEY_INVALID` and runs nothing.
//!
//! A bare value containing a comma is treated as a list: intermediaries may
//! fold repeated header lines into one, joined by commas, and a key that
//! silently became `k1, k2` must not be mistaken for a single new key. A key
//! that really contains a comma can be sent quoted (`"a,b"`).
//!
//! # Whitespace
//!
//! Leading and trailing spaces and tabs around the field value are optional
//! whitespace in HTTP (RFC 9110 §5.5), not part of the value, so they are
//! stripped before parsing; most HTTP stacks already strip them. Spaces inside
//! a bare key (`my key`) and anywhere inside a quoted string (`" my key "`)
//! are part of the key. Tabs are never part of a key.

use std::fmt;
use std::str::FromStr;

use http::header::{HeaderMap, HeaderName, HeaderValue};

use crate::trim_ows;

/// The header name, `idempotency-key` (header names are case-insensitive).
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The longest key accepted, in characters (= bytes, keys being ASCII).
pub const MAX_LEN: usize = 255;

/// A syntactically valid idempotency key: 1 to [`MAX_LEN`] printable ASCII
/// characters, already unquoted if it was sent as a Structured-Fields string.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Reads the key from request headers.
    ///
    /// Returns `Ok(None)` when the header is absent, and an error when it is
    /// present more than once or its value is not a valid key (see the
    /// [module documentation](self) for the syntax).
    pub fn from_headers(headers: &HeaderMap) -> Result<Option<Self>, KeyError> {
        let mut values = headers.get_all(&IDEMPOTENCY_KEY).iter();
        let Some(first) = values.next() else {
            return Ok(None);
        };
        let extra = values.count();
        if extra > 0 {
            return Err(KeyError::Repeated { count: extra + 1 });
        }
        Self::from_header_value(first).map(Some)
    }

    /// Parses one header value, bare or as a Structured-Fields string.
    pub fn from_header_value(value: &HeaderValue) -> Result<Self, KeyError> {
        Self::parse_field_value(value.as_bytes())
    }

    /// Validates an already unquoted key, as it appears in a URL path or in
    /// storage. No unquoting and no whitespace trimming happen here, and a
    /// comma is an ordinary character (no header folding can have produced
    /// it): the text must be the key itself.
    pub fn new(key: impl Into<String>) -> Result<Self, KeyError> {
        let key = key.into();
        validate_bare(key.as_bytes(), false)?;
        Ok(Self(key))
    }

    /// The key's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key's text, owned.
    pub fn into_string(self) -> String {
        self.0
    }

    fn parse_field_value(raw: &[u8]) -> Result<Self, KeyError> {
        let value = trim_ows(raw);
        if value.is_empty() {
            return Err(KeyError::Empty);
        }
        let key = if value[0] == b'"' {
            unquote_sf_string(value)?
        } else {
            validate_bare(value, true)?;
            value.to_vec()
        };
        // Every byte was checked to be printable ASCII, so byte-to-char is
        // exact.
        Ok(Self(key.iter().map(|&b| char::from(b)).collect()))
    }
}

impl FromStr for IdempotencyKey {
    type Err = KeyError;

    /// Parses header-value syntax (bare or quoted), like
    /// [`IdempotencyKey::from_header_value`].
    fn from_str(s: &str) -> Result<Self, KeyError> {
        Self::parse_field_value(s.as_bytes())
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IdempotencyKey").field(&self.0).finish()
    }
}

impl AsRef<str> for IdempotencyKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Serialized as the key's text.
impl serde::Serialize for IdempotencyKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Deserialized with [`IdempotencyKey::new`]: stored keys are already
/// unquoted.
impl<'de> serde::Deserialize<'de> for IdempotencyKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::new(text).map_err(serde::de::Error::custom)
    }
}

impl From<IdempotencyKey> for String {
    fn from(key: IdempotencyKey) -> String {
        key.0
    }
}

/// Why an `Idempotency-Key` header was rejected. Every variant means the
/// request is answered with 400 `IDEMPOTENCY_KEY_INVALID`; the message is
/// written for the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The value is empty, or only whitespace, or an empty quoted string.
    #[error("Idempotency-Key is empty; it must be 1 to 255 printable ASCII characters")]
    Empty,
    /// The key is longer than [`MAX_LEN`].
    #[error("Idempotency-Key is {len} characters long; at most 255 are allowed")]
    TooLong {
        /// Length of the (unquoted) key.
        len: usize,
    },
    /// A byte outside printable ASCII (0x20–0x7E).
    #[error(
        "Idempotency-Key contains {} 0x{byte:02X} at offset {offset}; only printable ASCII (0x20-0x7E) is allowed",
        if *byte >= 0x80 { "the non-ASCII byte" } else { "the control character" }
    )]
    InvalidByte {
        /// The offending byte.
        byte: u8,
        /// Its offset in the header value (after whitespace trimming) or key.
        offset: usize,
    },
    /// The value is a comma-separated list rather than one key.
    #[error(
        "Idempotency-Key is a list (it contains a comma, as happens when a proxy joins repeated header lines); send exactly one key, or quote a key that contains a comma"
    )]
    List,
    /// The header appeared more than once.
    #[error("Idempotency-Key header was sent {count} times; send it exactly once")]
    Repeated {
        /// How many times it appeared.
        count: usize,
    },
    /// The value starts with `"` but is not a valid Structured-Fields string.
    #[error("Idempotency-Key is not a valid quoted string: {reason}")]
    MalformedQuoted {
        /// What is wrong with it.
        reason: &'static str,
    },
}

fn is_printable(b: u8) -> bool {
    (0x20..=0x7E).contains(&b)
}

/// Checks a bare key. `comma_is_list` is false for keys that did not come
/// from a header field, where a comma cannot be the result of folding.
fn validate_bare(key: &[u8], comma_is_list: bool) -> Result<(), KeyError> {
    if key.is_empty() {
        return Err(KeyError::Empty);
    }
    if let Some(offset) = key.iter().position(|&b| !is_printable(b)) {
        return Err(KeyError::InvalidByte {
            byte: key[offset],
            offset,
        });
    }
    if comma_is_list && key.contains(&b',') {
        return Err(KeyError::List);
    }
    if key.len() > MAX_LEN {
        return Err(KeyError::TooLong { len: key.len() });
    }
    Ok(())
}

/// Unquotes an RFC 8941 sf-string occupying the whole (trimmed) value.
fn unquote_sf_string(value: &[u8]) -> Result<Vec<u8>, KeyError> {
    debug_assert_eq!(value.first(), Some(&b'"'));
    let mut out = Vec::with_capacity(value.len());
    let mut i = 1;
    loop {
        let Some(&b) = value.get(i) else {
            return Err(KeyError::MalformedQuoted {
                reason: "the closing double quote is missing",
            });
        };
        match b {
            b'"' => break,
            b'\\' => match value.get(i + 1) {
                Some(&c @ (b'"' | b'\\')) => {
                    out.push(c);
                    i += 2;
                    continue;
                }
                Some(_) => {
                    return Err(KeyError::MalformedQuoted {
                        reason: "a backslash may only escape '\"' or '\\'",
                    });
                }
                None => {
                    return Err(KeyError::MalformedQuoted {
                        reason: "the closing double quote is missing",
                    });
                }
            },
            b if !is_printable(b) => {
                return Err(KeyError::InvalidByte { byte: b, offset: i });
            }
            b => out.push(b),
        }
        i += 1;
    }
    let rest = trim_ows(&value[i + 1..]);
    match rest.first() {
        None => {}
        Some(b',') => return Err(KeyError::List),
        Some(_) => {
            return Err(KeyError::MalformedQuoted {
                reason: "unexpected characters after the closing double quote",
            });
        }
    }
    if out.is_empty() {
        return Err(KeyError::Empty);
    }
    if out.len() > MAX_LEN {
        return Err(KeyError::TooLong { len: out.len() });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(IDEMPOTENCY_KEY, HeaderValue::from_bytes(v).unwrap());
        }
        map
    }

    fn parse(v: &[u8]) -> Result<Option<IdempotencyKey>, KeyError> {
        IdempotencyKey::from_headers(&headers(&[v]))
    }

    fn key(v: &[u8]) -> String {
        parse(v).unwrap().unwrap().into_string()
    }

    #[test]
    fn absent_header_is_none() {
        assert_eq!(IdempotencyKey::from_headers(&HeaderMap::new()), Ok(None));
        let mut other = HeaderMap::new();
        other.insert("x-request-id", HeaderValue::from_static("abc"));
        assert_eq!(IdempotencyKey::from_headers(&other), Ok(None));
    }

    #[test]
    fn header_name_is_case_insensitive() {
        let mut map = HeaderMap::new();
        map.insert(
            HeaderName::from_bytes(b"Idempotency-Key").unwrap(),
            HeaderValue::from_static("k1"),
        );
        assert_eq!(
            IdempotencyKey::from_headers(&map)
                .unwrap()
                .unwrap()
                .as_str(),
            "k1"
        );
    }

    #[test]
    fn bare_keys() {
        assert_eq!(
            key(b"8e03978e-40d5-43e8-bc93-6894a57f9324"),
            "8e03978e-40d5-43e8-bc93-6894a57f9324"
        );
        assert_eq!(key(b"a"), "a");
        assert_eq!(key(b"my key with spaces"), "my key with spaces");
        assert_eq!(
            key(b"!#$%&'()*+-./:;<=>?@[]^_`{|}~"),
            "!#$%&'()*+-./:;<=>?@[]^_`{|}~"
        );
        // A quote that does not start the value is an ordinary character.
        assert_eq!(key(br#"ab"c"#), r#"ab"c"#);
        assert_eq!(key(br#"abc""#), r#"abc""#);
        assert_eq!(key(br"back\slash"), r"back\slash");
    }

    #[test]
    fn surrounding_whitespace_is_stripped() {
        assert_eq!(key(b"  abc\t "), "abc");
        assert_eq!(key(b" \"abc\" "), "abc");
    }

    #[test]
    fn length_limits() {
        let max = vec![b'k'; MAX_LEN];
        assert_eq!(key(&max).len(), MAX_LEN);
        let over = vec![b'k'; MAX_LEN + 1];
        assert_eq!(parse(&over), Err(KeyError::TooLong { len: 256 }));
        // The limit applies to the unquoted key, not the header value.
        let mut quoted = vec![b'"'];
        quoted.extend(std::iter::repeat_n(b'k', MAX_LEN - 1));
        quoted.extend(br#"\""#);
        quoted.push(b'"');
        assert_eq!(key(&quoted).len(), MAX_LEN);
        let mut quoted_over = vec![b'"'];
        quoted_over.extend(std::iter::repeat_n(b'k', MAX_LEN + 1));
        quoted_over.push(b'"');
        assert_eq!(parse(&quoted_over), Err(KeyError::TooLong { len: 256 }));
    }

    #[test]
    fn empty_values() {
        assert_eq!(parse(b""), Err(KeyError::Empty));
        assert_eq!(parse(b"   "), Err(KeyError::Empty));
        assert_eq!(parse(b"\"\""), Err(KeyError::Empty));
        assert_eq!(IdempotencyKey::new(""), Err(KeyError::Empty));
    }

    #[test]
    fn quoted_keys_are_unquoted() {
        assert_eq!(key(br#""abc""#), "abc");
        assert_eq!(key(br#""a\"b""#), r#"a"b"#);
        assert_eq!(key(br#""a\\b""#), r"a\b");
        assert_eq!(key(br#"" inner spaces ""#), " inner spaces ");
        // Inside a string a comma is data, not a list separator.
        assert_eq!(key(br#""a,b""#), "a,b");
        // The same key, bare or quoted, is the same key.
        assert_eq!(parse(br#""k-1""#), parse(b"k-1"));
    }

    #[test]
    fn malformed_quoted_strings() {
        let malformed = |v: &[u8]| matches!(parse(v), Err(KeyError::MalformedQuoted { .. }));
        assert!(malformed(br#""abc"#));
        assert!(malformed(br#"""#));
        assert!(malformed(br#""abc\"#));
        assert!(malformed(br#""a\nb""#));
        assert!(malformed(br#""a\'b""#));
        assert!(malformed(br#""abc"def"#));
        assert!(malformed(br#""abc";p=1"#));
        assert!(malformed(br#""abc" "def""#));
    }

    #[test]
    fn lists_are_rejected() {
        assert_eq!(parse(b"a,b"), Err(KeyError::List));
        assert_eq!(parse(b"k1, k2"), Err(KeyError::List));
        assert_eq!(parse(b"k1,"), Err(KeyError::List));
        assert_eq!(parse(b","), Err(KeyError::List));
        assert_eq!(parse(br#""k1", "k2""#), Err(KeyError::List));
        assert_eq!(parse(br#""k1","#), Err(KeyError::List));
    }

    #[test]
    fn repeated_header_is_rejected() {
        let map = headers(&[b"k1", b"k1"]);
        assert_eq!(
            IdempotencyKey::from_headers(&map),
            Err(KeyError::Repeated { count: 2 })
        );
        let map = headers(&[b"k1", b"k2", b"k3"]);
        assert_eq!(
            IdempotencyKey::from_headers(&map),
            Err(KeyError::Repeated { count: 3 })
        );
        // Even an empty second line counts: the client sent two.
        let map = headers(&[b"k1", b""]);
        assert_eq!(
            IdempotencyKey::from_headers(&map),
            Err(KeyError::Repeated { count: 2 })
        );
    }

    #[test]
    fn non_printable_bytes_are_rejected() {
        assert_eq!(
            parse(b"caf\xc3\xa9"),
            Err(KeyError::InvalidByte {
                byte: 0xC3,
                offset: 3
            })
        );
        assert_eq!(
            parse(b"a\tb"),
            Err(KeyError::InvalidByte {
                byte: b'\t',
                offset: 1
            })
        );
        assert_eq!(
            parse(b"\"a\xffb\""),
            Err(KeyError::InvalidByte {
                byte: 0xFF,
                offset: 2
            })
        );
        assert_eq!(
            parse(b"\"a\tb\""),
            Err(KeyError::InvalidByte {
                byte: b'\t',
                offset: 2
            })
        );
        assert_eq!(
            // HeaderValue cannot hold DEL; other sources of a value can.
            "a\x7fb".parse::<IdempotencyKey>(),
            Err(KeyError::InvalidByte {
                byte: 0x7F,
                offset: 1
            })
        );
    }

    #[test]
    fn messages_say_what_is_wrong() {
        let msg = |v: &[u8]| parse(v).unwrap_err().to_string();
        assert!(msg(b"").contains("empty"));
        assert!(msg(b"a,b").contains("list"));
        assert!(msg(&[b'x'; 300]).contains("300 characters"));
        assert!(msg(b"caf\xc3\xa9").contains("non-ASCII byte 0xC3 at offset 3"));
        let control = "a\x01".parse::<IdempotencyKey>().unwrap_err().to_string();
        assert!(control.contains("control character 0x01"), "{control}");
        assert!(msg(br#""abc"#).contains("closing double quote is missing"));
        let repeated = IdempotencyKey::from_headers(&headers(&[b"a", b"b"]))
            .unwrap_err()
            .to_string();
        assert!(repeated.contains("sent 2 times"));
    }

    #[test]
    fn new_validates_without_unquoting() {
        assert_eq!(IdempotencyKey::new("abc").unwrap().as_str(), "abc");
        // A literal key may contain quotes and commas: no header folding
        // happened to it.
        assert_eq!(IdempotencyKey::new("\"a,b\"").unwrap().as_str(), "\"a,b\"");
        assert_eq!(
            IdempotencyKey::new(" abc").unwrap().as_str(),
            " abc",
            "no trimming"
        );
        assert!(matches!(
            IdempotencyKey::new("é"),
            Err(KeyError::InvalidByte {
                byte: 0xC3,
                offset: 0
            })
        ));
        assert_eq!(
            IdempotencyKey::new("k".repeat(256)),
            Err(KeyError::TooLong { len: 256 })
        );
    }

    #[test]
    fn serde_round_trip() {
        let key = IdempotencyKey::new("a \"quoted\", key").unwrap();
        let json = serde_json::to_string(&key).unwrap();
        assert_eq!(json, r#""a \"quoted\", key""#);
        assert_eq!(serde_json::from_str::<IdempotencyKey>(&json).unwrap(), key);
        let err = serde_json::from_str::<IdempotencyKey>(r#""""#).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        assert!(serde_json::from_str::<IdempotencyKey>(r#""caf\u00e9""#).is_err());
    }

    #[test]
    fn from_str_uses_header_syntax() {
        assert_eq!("\"abc\"".parse::<IdempotencyKey>().unwrap().as_str(), "abc");
        assert_eq!("a,b".parse::<IdempotencyKey>(), Err(KeyError::List));
    }
}
