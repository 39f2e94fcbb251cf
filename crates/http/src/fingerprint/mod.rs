//! Request fingerprints: what makes a retry "the same request".
//!
//! A [`Fingerprint`] holds one SHA-256 [`Digest`] per part of the request —
//! method, path, query and body — and the [`Version`] of the canonicalization
//! that produced them. Keeping the parts apart lets a mismatch name what
//! differs ([`Fingerprint::differs`]); keeping the version lets a later
//! release change the canonicalization without turning retries of requests
//! recorded under the old rules into mismatches.
//!
//! # Comparing across versions
//!
//! Digests of different versions are never compared. A record stores its
//! fingerprint's version; a retry is fingerprinted under that version, which
//! every release keeps implementing:
//!
//! ```
//! # async fn check(stored: &str, method: &http::Method, uri: &http::Uri,
//! #     content_type: Option<&http::HeaderValue>, body: bytes::Bytes)
//! #     -> Result<(), Box<dyn std::error::Error>> {
//! use idem_http::fingerprint::{Fingerprint, Version};
//!
//! let stored: Fingerprint = stored.parse()?;
//! // Fails only for a version newer than this build knows.
//! let version = Version::try_from(stored.version)?;
//! let retry = Fingerprint::of_request_bytes(version, method, uri, content_type, body).await?;
//! let differs = stored.differs(&retry); // empty: same request
//! # Ok(()) }
//! ```
//!
//! New requests use [`Version::CURRENT`]. If asked anyway,
//! [`Fingerprint::differs`] reports all four parts for fingerprints of
//! different versions, because nothing can be concluded from their digests.
//!
//! # Stored form
//!
//! `v<version>:<method>:<path>:<query>:<body>`, each digest 64 lowercase hex
//! digits (262 characters for version 1). This is the [`Display`](fmt::Display)
//! / [`FromStr`] form and the serde form. The overall digest shown to users
//! ([`Fingerprint::digest`]) is the SHA-256 of this string.
//!
//! # Version 1 canonicalization
//!
//! Every part digest is SHA-256 over a domain string, a NUL byte, then the
//! part's encoding. Notation: `len(n)` is n as 8 bytes big-endian;
//! `bytes(b)` is `len(b.len())` followed by b; `opt(b)` is `0x00` when absent,
//! else `0x01 bytes(b)`; quoted characters are single ASCII bytes.
//!
//! * **method** — domain `idem-fp/v1/method`: `bytes(method)`, the method
//!   exactly as sent. Methods are case-sensitive (RFC 9110 §9.1); standard
//!   ones are uppercase.
//! * **path** — domain `idem-fp/v1/path`: `bytes(path)` after RFC 3986
//!   §6.2.2 normalization: `%XX` escapes of unreserved characters
//!   (`A-Z a-z 0-9 - . _ ~`) are decoded, the hex digits of every other
//!   escape are uppercased, all other bytes (including `%` not followed by two
//!   hex digits) are kept. Dot segments are not resolved and `%2F` is not `/`.
//! * **query** — domain `idem-fp/v1/query`: `len(count)` then, for every
//!   parameter, `bytes(name) bytes(value)`. Parameters are split on `&`,
//!   empty ones dropped, name and value split at the first `=` (none: empty
//!   value), both decoded as `application/x-www-form-urlencoded` (`+` is a
//!   space, `%XX` a byte, a stray `%` itself) to bytes. They are then sorted
//!   by name bytes with a stable sort: names may come in any order, values of
//!   one name keep theirs. No query and an empty query are the same.
//! * **body** — domain `idem-fp/v1/body`, then by case:
//!   * empty body (zero bytes, whatever the `Content-Type`): `"E"`;
//!   * JSON (media type `application/json` or any `+json` suffix):
//!     `"J"` then the JSON encoding of the document below;
//!   * `multipart/form-data`: `"M" len(count)` then, for every part in order
//!     of field name (stable, like query parameters), `opt(name)
//!     opt(file name) opt(content type)` and the 32-byte SHA-256 of the part's
//!     content. The part's content type has its `type/subtype` lowercased and
//!     trimmed and its parameters kept as sent. The boundary, preamble,
//!     epilogue and other part headers are not included;
//!   * anything else: `"B" bytes(media type)` and the 32-byte SHA-256 of the
//!     body. The media type is the `Content-Type` up to its first `;`,
//!     trimmed and lowercased (empty without the header).
//!
//!   Media type parameters never matter for the body: JSON is UTF-8 by
//!   definition (RFC 8259), a multipart boundary only frames the parts, and
//!   for other bodies the bytes are compared exactly.
//!
//! The JSON encoding of a value:
//!
//! * `null`, `true`, `false`: `"n"`, `"t"`, `"f"`;
//! * number: `"#" bytes(text)`, the number's text as sent;
//! * string: `"s" bytes(utf8)`, the unescaped UTF-8;
//! * array: `"["`, the encoding of each element in order, `"]"`;
//! * object: `"{" len(count)`, then for each member in order of unescaped key
//!   bytes: `bytes(key)` and the 32-byte SHA-256 of the value's encoding.
//!
//! Numbers are kept as text because their spelling is part of what the client
//! sent: `1`, `1.0`, `1e0` and `1E0` may mean the same number to one reader
//! and not to another (an integer column, a decimal amount, a big number
//! beyond `f64`), and a retry sends exactly the same text anyway. Parsing
//! them into floats (as `serde_json` does) or re-serializing them (as RFC 8785
//! does) would make different requests look alike.
//!
//! Invalid JSON, duplicate object keys (after unescaping, so `{"a":1,
//! "\u0061":2}` is a duplicate) and nesting deeper than [`MAX_DEPTH`] are
//! errors ([`JsonError`]); the caller answers 400.

mod encode;
mod json;
mod multipart;
mod uri;

use std::fmt;
use std::pin::pin;
use std::str::FromStr;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt as _, TryStreamExt as _, stream};
use http::{HeaderValue, Method, Uri};
use sha2::{Digest as _, Sha256};

use encode::{Encoder, put_bytes, put_len, sha256};
pub use json::{JsonError, MAX_DEPTH, Position};

/// The error type a body stream may fail with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A version of the canonicalization rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Version {
    /// The rules described in the [module documentation](self).
    V1,
}

impl Version {
    /// The version new fingerprints are computed with.
    pub const CURRENT: Version = Version::V1;

    /// Every version this build can compute.
    pub const ALL: &'static [Version] = &[Version::V1];

    /// The version's number, as stored.
    pub const fn number(self) -> u32 {
        match self {
            Version::V1 => 1,
        }
    }
}

impl TryFrom<u32> for Version {
    type Error = UnsupportedVersion;

    fn try_from(number: u32) -> Result<Self, UnsupportedVersion> {
        Version::ALL
            .iter()
            .copied()
            .find(|v| v.number() == number)
            .ok_or(UnsupportedVersion(number))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.number())
    }
}

/// A fingerprint version this build does not implement (written by a newer
/// release).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("fingerprint version {0} is not supported by this build")]
pub struct UnsupportedVersion(pub u32);

/// A SHA-256 digest. Displayed, parsed and serialized as 64 lowercase hex
/// digits (parsing also accepts uppercase).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// Wraps raw digest bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw digest bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// SHA-256 of `data`.
    pub fn of(data: &[u8]) -> Self {
        Self(sha256(data))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl FromStr for Digest {
    type Err = ParseFingerprintError;

    fn from_str(s: &str) -> Result<Self, ParseFingerprintError> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(s, &mut bytes).map_err(|_| ParseFingerprintError {
            reason: "a digest must be 64 hex digits",
        })?;
        Ok(Self(bytes))
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(FromStrVisitor::<Digest>::new("64 hex digits"))
    }
}

/// A stored fingerprint that could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fingerprint: {reason}")]
pub struct ParseFingerprintError {
    reason: &'static str,
}

/// One digest per part of a request, and the version that computed them.
/// See the [module documentation](self) for what each part covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// The canonicalization version ([`Version::number`]). Kept as a number
    /// so that a fingerprint written by a newer release can still be parsed,
    /// stored and shown.
    pub version: u32,
    /// Digest of the method.
    pub method: Digest,
    /// Digest of the normalized path.
    pub path: Digest,
    /// Digest of the query parameters.
    pub query: Digest,
    /// Digest of the body.
    pub body: Digest,
}

impl Fingerprint {
    /// Names of the parts, in the order [`Fingerprint::differs`] reports them.
    pub const PARTS: [&'static str; 4] = ["method", "path", "query", "body"];

    /// Fingerprints a request whose body arrives as a stream, consuming it.
    ///
    /// `uri` supplies the path and query; pass the URI the client used (for
    /// example axum's `OriginalUri` behind nested routers). See
    /// [`body_digest`] for how the body is read.
    pub async fn of_request<S, B, E>(
        version: Version,
        method: &Method,
        uri: &Uri,
        content_type: Option<&HeaderValue>,
        body: S,
    ) -> Result<Self, BodyError>
    where
        S: Stream<Item = Result<B, E>> + Send,
        B: Into<Bytes> + 'static,
        E: Into<BoxError>,
    {
        let body = body_digest(version, content_type, body).await?;
        Ok(Self::from_parts(version, method, uri, body))
    }

    /// Fingerprints a request whose body is already in memory.
    pub async fn of_request_bytes(
        version: Version,
        method: &Method,
        uri: &Uri,
        content_type: Option<&HeaderValue>,
        body: Bytes,
    ) -> Result<Self, BodyError> {
        let body = body_digest_bytes(version, content_type, body).await?;
        Ok(Self::from_parts(version, method, uri, body))
    }

    /// Assembles a fingerprint from a body digest computed separately with
    /// [`body_digest`] under the same `version`.
    pub fn from_parts(version: Version, method: &Method, uri: &Uri, body: Digest) -> Self {
        Self {
            version: version.number(),
            method: method_digest(version, method),
            path: path_digest(version, uri.path()),
            query: query_digest(version, uri.query()),
            body,
        }
    }

    /// The parts that differ, out of `"method"`, `"path"`, `"query"`,
    /// `"body"`, in that order. Empty when the requests are the same.
    ///
    /// Fingerprints of different versions cannot be compared; all four parts
    /// are reported for them. Fingerprint a retry under the stored version
    /// instead (see the [module documentation](self)).
    pub fn differs(&self, other: &Fingerprint) -> Vec<&'static str> {
        if self.version != other.version {
            return Self::PARTS.to_vec();
        }
        let same = [
            self.method == other.method,
            self.path == other.path,
            self.query == other.query,
            self.body == other.body,
        ];
        Self::PARTS
            .iter()
            .zip(same)
            .filter(|(_, same)| !same)
            .map(|(name, _)| *name)
            .collect()
    }

    /// Whether `other` is the same request: same version, all parts equal.
    pub fn matches(&self, other: &Fingerprint) -> bool {
        self == other
    }

    /// One digest for display: the SHA-256 of the stored form.
    pub fn digest(&self) -> Digest {
        Digest::of(self.to_string().as_bytes())
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "v{}:{}:{}:{}:{}",
            self.version, self.method, self.path, self.query, self.body
        )
    }
}

impl FromStr for Fingerprint {
    type Err = ParseFingerprintError;

    /// Parses the stored form. Any version number is accepted here; whether
    /// this build can compute it is [`Version::try_from`]'s question.
    fn from_str(s: &str) -> Result<Self, ParseFingerprintError> {
        let shape = ParseFingerprintError {
            reason: "expected v<version>:<method>:<path>:<query>:<body>",
        };
        let mut fields = s.split(':');
        let version = fields
            .next()
            .and_then(|v| v.strip_prefix('v'))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or(ParseFingerprintError {
                reason: "the version must be 'v' and a decimal number",
            })?;
        let mut digest = || -> Result<Digest, ParseFingerprintError> {
            fields.next().ok_or(shape.clone())?.parse()
        };
        let fingerprint = Self {
            version,
            method: digest()?,
            path: digest()?,
            query: digest()?,
            body: digest()?,
        };
        if fields.next().is_some() {
            return Err(shape);
        }
        Ok(fingerprint)
    }
}

impl serde::Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Fingerprint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(FromStrVisitor::<Fingerprint>::new(
            "a fingerprint v<version>:<method>:<path>:<query>:<body>",
        ))
    }
}

struct FromStrVisitor<T> {
    expecting: &'static str,
    _marker: std::marker::PhantomData<T>,
}

impl<T> FromStrVisitor<T> {
    fn new(expecting: &'static str) -> Self {
        Self {
            expecting,
            _marker: std::marker::PhantomData,
        }
    }
}

impl<T> serde::de::Visitor<'_> for FromStrVisitor<T>
where
    T: FromStr<Err = ParseFingerprintError>,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }
}

/// Digest of the request method.
pub fn method_digest(version: Version, method: &Method) -> Digest {
    match version {
        Version::V1 => {
            let mut enc = Encoder::new("idem-fp/v1/method");
            put_bytes(enc.hasher(), method.as_str().as_bytes());
            enc.finish()
        }
    }
}

/// Digest of the request path (without the query).
pub fn path_digest(version: Version, path: &str) -> Digest {
    match version {
        Version::V1 => {
            let mut enc = Encoder::new("idem-fp/v1/path");
            put_bytes(enc.hasher(), &uri::canonical_path(path));
            enc.finish()
        }
    }
}

/// Digest of the query string (without the `?`); `None` and `Some("")` are
/// the same.
pub fn query_digest(version: Version, query: Option<&str>) -> Digest {
    match version {
        Version::V1 => {
            let pairs = uri::canonical_query(query.unwrap_or(""));
            let mut enc = Encoder::new("idem-fp/v1/query");
            let h = enc.hasher();
            put_len(h, pairs.len());
            for (name, value) in &pairs {
                put_bytes(h, name);
                put_bytes(h, value);
            }
            enc.finish()
        }
    }
}

/// Why a body could not be fingerprinted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// A JSON body is not valid JSON, has a duplicate key or nests too deep.
    /// The client's fault: 400.
    #[error(transparent)]
    Json(#[from] JsonError),
    /// A `multipart/form-data` body (or its `Content-Type`) is malformed.
    /// The client's fault: 400.
    #[error("invalid multipart/form-data body: {reason}")]
    Multipart {
        /// What is wrong with it.
        reason: String,
    },
    /// Reading the body stream failed (the connection dropped, a size limit
    /// tripped, …). The body's syntax is not in question; the caller decides
    /// the answer from the source error.
    #[error("failed to read the request body")]
    Read(#[source] BoxError),
}

impl BodyError {
    /// True when the body itself is malformed (answer 400), false when it
    /// could not be read.
    pub fn is_invalid_body(&self) -> bool {
        !matches!(self, Self::Read(_))
    }
}

/// How a body is fingerprinted, decided by its `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyKind {
    /// `application/json` or a `+json` media type.
    Json,
    /// `multipart/form-data`, with its boundary.
    Multipart {
        /// The boundary parameter, unquoted.
        boundary: String,
    },
    /// Anything else: compared as media type and bytes.
    Other {
        /// The media type, lowercased, without parameters; empty when the
        /// request has no `Content-Type`. Bytes, because a header value need
        /// not be text.
        media_type: Vec<u8>,
    },
}

impl BodyKind {
    /// Classifies a body by its `Content-Type`. Fails only for
    /// `multipart/form-data` without a usable boundary.
    pub fn from_content_type(content_type: Option<&HeaderValue>) -> Result<Self, BodyError> {
        let Some(value) = content_type else {
            return Ok(Self::Other {
                media_type: Vec::new(),
            });
        };
        let raw = value.as_bytes();
        let essence = raw.split(|&b| b == b';').next().unwrap_or(raw);
        let essence = crate::trim_ows(essence).to_ascii_lowercase();
        if essence == b"multipart/form-data" {
            let boundary = value
                .to_str()
                .ok()
                .and_then(|ct| multer::parse_boundary(ct).ok())
                .filter(|b| !b.is_empty())
                .ok_or_else(|| BodyError::Multipart {
                    reason: "the Content-Type has no boundary parameter".to_owned(),
                })?;
            return Ok(Self::Multipart { boundary });
        }
        let is_json = essence == b"application/json"
            || essence
                .iter()
                .position(|&b| b == b'/')
                .is_some_and(|slash| slash > 0 && essence[slash + 1..].ends_with(b"+json"));
        if is_json {
            Ok(Self::Json)
        } else {
            Ok(Self::Other {
                media_type: essence,
            })
        }
    }
}

/// Digest of a JSON document given as bytes, as [`body_digest`] computes it
/// for a non-empty JSON body.
pub fn json_digest(version: Version, json: &[u8]) -> Result<Digest, JsonError> {
    match version {
        Version::V1 => {
            let mut enc = Encoder::new("idem-fp/v1/body");
            enc.hasher().update(b"J");
            json::canonicalize(json, enc.hasher())?;
            Ok(enc.finish())
        }
    }
}

fn empty_body_digest(version: Version) -> Digest {
    match version {
        Version::V1 => {
            let mut enc = Encoder::new("idem-fp/v1/body");
            enc.hasher().update(b"E");
            enc.finish()
        }
    }
}

/// Digest of a request body, read from a stream of chunks.
///
/// * An empty body (no chunk, or only empty chunks) has its own digest, for
///   any `Content-Type`.
/// * `multipart/form-data` is parsed as it streams; only the part being read
///   and a 32-byte digest per part are held in memory.
/// * Other non-JSON bodies are hashed as they stream.
/// * A JSON body is collected first, since the canonicalizer needs all of it;
///   bound its size before calling (Idem's API limits bodies to 1 MiB).
///
/// Stream errors come back as [`BodyError::Read`].
pub async fn body_digest<S, B, E>(
    version: Version,
    content_type: Option<&HeaderValue>,
    body: S,
) -> Result<Digest, BodyError>
where
    S: Stream<Item = Result<B, E>> + Send,
    B: Into<Bytes> + 'static,
    E: Into<BoxError>,
{
    let mut body = pin!(
        body.map_ok(Into::into)
            .map_err(|e| -> BoxError { e.into() })
    );
    let first = loop {
        match body.next().await {
            None => return Ok(empty_body_digest(version)),
            Some(Err(e)) => return Err(BodyError::Read(e)),
            Some(Ok(chunk)) if chunk.is_empty() => continue,
            Some(Ok(chunk)) => break chunk,
        }
    };
    match version {
        Version::V1 => {
            let mut enc = Encoder::new("idem-fp/v1/body");
            match BodyKind::from_content_type(content_type)? {
                BodyKind::Json => {
                    let mut buf = BytesMut::from(&first[..]);
                    while let Some(chunk) = body.next().await {
                        buf.extend_from_slice(&chunk.map_err(BodyError::Read)?);
                    }
                    enc.hasher().update(b"J");
                    json::canonicalize(&buf, enc.hasher())?;
                }
                BodyKind::Multipart { boundary } => {
                    enc.hasher().update(b"M");
                    let whole = stream::once(async { Ok(first) }).chain(body);
                    multipart::canonicalize(whole, boundary, enc.hasher()).await?;
                }
                BodyKind::Other { media_type } => {
                    let mut content = Sha256::new();
                    content.update(&first);
                    while let Some(chunk) = body.next().await {
                        content.update(chunk.map_err(BodyError::Read)?);
                    }
                    let h = enc.hasher();
                    h.update(b"B");
                    put_bytes(h, &media_type);
                    h.update(encode::finish(content));
                }
            }
            Ok(enc.finish())
        }
    }
}

/// Digest of a request body already in memory; the same digest
/// [`body_digest`] gives for it. Async only because multipart parsing is.
pub async fn body_digest_bytes(
    version: Version,
    content_type: Option<&HeaderValue>,
    body: Bytes,
) -> Result<Digest, BodyError> {
    let once = stream::iter([Ok::<Bytes, std::convert::Infallible>(body)]);
    body_digest(version, content_type, once).await
}

#[cfg(test)]
mod tests;
