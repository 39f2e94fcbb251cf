//! The Standard Webhooks symmetric signature scheme, the one place Idem
//! implements it.
//!
//! A signed message carries an ID, a timestamp (Unix seconds) and a
//! signature list: space-separated `v1,<base64 HMAC-SHA256 of
//! "id.timestamp.body">`, one per secret the sender holds, so that a
//! receiver holding either the old or the new secret accepts it during a
//! rotation. Secrets are written `whsec_<base64 key>`.
//!
//! Idem's dispatcher signs with [`SigningSecret::sign`] and
//! [`signature_list`]; `idem-guard` checks with [`Verifier`]. Sharing the
//! code makes the two agree by construction, and keeps the guard usable
//! without the server: nothing here knows HTTP (the header names are plain
//! strings), a store or a runtime.
//!
//! ```
//! use idem_webhooks::{Signed, SigningSecret, Verifier};
//!
//! let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
//! let signature = secret.sign("msg_1", 1_700_000_000, b"{}");
//! let signed = Signed {
//!     id: "msg_1",
//!     timestamp: "1700000000",
//!     signatures: &signature,
//!     body: b"{}",
//! };
//! let secrets = [secret];
//! assert!(Verifier::new(&secrets).verify(&signed, 1_700_000_010).is_ok());
//! ```

#![deny(missing_docs)]

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The message ID header, `Webhook-Id` (lowercase, as HTTP/2 sends it).
pub const ID_HEADER: &str = "webhook-id";
/// The timestamp header, `Webhook-Timestamp`: Unix seconds.
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The signature list header, `Webhook-Signature`.
pub const SIGNATURE_HEADER: &str = "webhook-signature";

/// The target signature header, `Idem-Target-Signature`: a signature list
/// as `Webhook-Signature`'s, over the message's ID and timestamp, the
/// request's method, path and query, and the SHA-256 of its body
/// ([`SigningSecret::sign_target`]), so that a captured delivery cannot be
/// re-sent to another route of the same receiver.
pub const TARGET_SIGNATURE_HEADER: &str = "idem-target-signature";

/// How far a signature's timestamp may be from now, in either direction,
/// unless a [`Verifier`] is told otherwise.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5 * 60);

const SECRET_PREFIX: &str = "whsec_";
const VERSION_PREFIX: &str = "v1,";
/// The length of an HMAC-SHA256 tag: a candidate of any other length
/// cannot match, and costs no HMAC.
const TAG_LEN: usize = 32;

/// The longest signature list read. A sender holds one secret per rotation
/// step, and each `v1,` signature is 47 characters: this leaves room for
/// dozens, and refuses a list made to cost work before anything is known
/// of its sender.
pub const MAX_SIGNATURE_LIST_BYTES: usize = 4096;
/// The most signatures (of any version) one list may carry.
pub const MAX_SIGNATURES: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// A signing secret, written `whsec_<base64 key>`. The HMAC key is the
/// decoded part. Its `Debug` form does not show the key.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret {
    key: Arc<[u8]>,
}

/// Why a signing secret could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The secret does not start with `whsec_`.
    #[error("a signing secret starts with whsec_")]
    MissingPrefix,
    /// The part after `whsec_` is not base64.
    #[error("the part after whsec_ is not valid base64")]
    InvalidBase64,
    /// The key is empty.
    #[error("the signing key is empty")]
    Empty,
}

impl SigningSecret {
    /// Parses `whsec_<base64 key>`, ignoring surrounding whitespace.
    pub fn parse(text: &str) -> Result<Self, SecretError> {
        let encoded = text
            .trim()
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        let key = STANDARD
            .decode(encoded)
            .map_err(|_| SecretError::InvalidBase64)?;
        if key.is_empty() {
            return Err(SecretError::Empty);
        }
        Ok(Self { key: key.into() })
    }

    /// A secret from raw key bytes.
    pub fn from_key(key: impl Into<Vec<u8>>) -> Self {
        Self {
            key: key.into().into(),
        }
    }

    /// The secret written as `whsec_<base64 key>`.
    pub fn to_whsec(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.key))
    }

    /// The signature (`v1,<base64>`) of one message by this secret.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let tag = self
            .mac(id, &timestamp.to_string(), body)
            .finalize()
            .into_bytes();
        format!("{VERSION_PREFIX}{}", STANDARD.encode(tag))
    }

    /// The target signature (`v1,<base64>`) of one request by this secret:
    /// HMAC-SHA256 of `"id.timestamp.METHOD.path_and_query.hex(SHA-256(body))"`,
    /// with `path_and_query` as the request line carries it (`/a/b?x=1`).
    pub fn sign_target(&self, id: &str, timestamp: i64, target: &SignedTarget<'_>) -> String {
        let tag = self
            .target_mac(id, &timestamp.to_string(), target)
            .finalize()
            .into_bytes();
        format!("{VERSION_PREFIX}{}", STANDARD.encode(tag))
    }

    fn target_mac(&self, id: &str, timestamp: &str, target: &SignedTarget<'_>) -> HmacSha256 {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
        for part in [id, timestamp, target.method, target.path_and_query] {
            mac.update(part.as_bytes());
            mac.update(b".");
        }
        mac.update(hex::encode(target.body_sha256).as_bytes());
        mac
    }

    /// The HMAC state after `"id.timestamp.body"`: the one pass over the
    /// body that signing and verifying by this secret need.
    fn mac(&self, id: &str, timestamp: &str, body: &[u8]) -> HmacSha256 {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(body);
        mac
    }
}

impl FromStr for SigningSecret {
    type Err = SecretError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(redacted)")
    }
}

/// The signature list of one message: one `v1,<base64>` per secret, in the
/// secrets' order, space-separated. Empty without secrets.
pub fn signature_list(secrets: &[SigningSecret], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a target signature covers beside the message's ID and timestamp.
#[derive(Debug, Clone, Copy)]
pub struct SignedTarget<'a> {
    /// The method, as the request line carries it (`POST`).
    pub method: &'a str,
    /// The path and query, as the request line carries them (`/a?x=1`).
    pub path_and_query: &'a str,
    /// SHA-256 of the body ([`body_sha256`]).
    pub body_sha256: [u8; 32],
}

/// The SHA-256 of a body, as a target signature covers it.
pub fn body_sha256(body: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    Sha256::digest(body).into()
}

/// The target signature list of one request: one `v1,<base64>` per secret,
/// space-separated. Empty without secrets.
pub fn target_signature_list(
    secrets: &[SigningSecret],
    id: &str,
    timestamp: i64,
    target: &SignedTarget<'_>,
) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign_target(id, timestamp, target))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A received message, as sent: each field exactly as its header carried it
/// (the timestamp is signed as text, not as the number it parses to).
#[derive(Debug, Clone, Copy)]
pub struct Signed<'a> {
    /// The message ID.
    pub id: &'a str,
    /// The timestamp, Unix seconds.
    pub timestamp: &'a str,
    /// The signature list: whitespace-separated candidates, of which only
    /// the `v1,` ones that decode are considered.
    pub signatures: &'a str,
    /// The body.
    pub body: &'a [u8],
}

/// Why a message's signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The timestamp is not a number of seconds.
    #[error("the timestamp is not Unix seconds")]
    InvalidTimestamp,
    /// The timestamp is further from now than the tolerance.
    #[error("the timestamp is outside the tolerated window")]
    Stale,
    /// The signature list is longer than [`MAX_SIGNATURE_LIST_BYTES`] or
    /// holds more than [`MAX_SIGNATURES`] entries.
    #[error("the signature list is too long")]
    TooManySignatures,
    /// No `v1` signature matches any secret.
    #[error("no valid signature")]
    NoMatch,
}

/// What a message's headers claim, checked before its body is read: the
/// timestamp is within the tolerance and the signature list is within its
/// bounds. Only then is the body worth reading and hashing.
#[derive(Debug, Clone)]
pub struct Checked<'a> {
    id: &'a str,
    timestamp: &'a str,
    candidates: Vec<[u8; TAG_LEN]>,
}

impl Checked<'_> {
    /// The message ID, as signed once [`Self::verify_body`] succeeds.
    pub fn id(&self) -> &str {
        self.id
    }

    /// Whether any secret signed `target` under this head, with one of
    /// the `signatures` of its `Idem-Target-Signature` header. Check it
    /// after [`Self::verify_body`]: a head whose body is forged has nothing
    /// to say about its target.
    pub fn verify_target(
        &self,
        secrets: &[SigningSecret],
        signatures: &str,
        target: &SignedTarget<'_>,
    ) -> Result<(), VerifyError> {
        let tags = candidates(signatures)?;
        for secret in secrets {
            let mac = secret.target_mac(self.id, self.timestamp, target);
            if tags.iter().any(|tag| mac.clone().verify_slice(tag).is_ok()) {
                return Ok(());
            }
        }
        Err(VerifyError::NoMatch)
    }

    /// Whether any secret signed `body` under this head: each secret reads
    /// the body once, whatever the number of candidates, and every
    /// comparison is constant-time.
    pub fn verify_body(&self, secrets: &[SigningSecret], body: &[u8]) -> Result<(), VerifyError> {
        for secret in secrets {
            let mac = secret.mac(self.id, self.timestamp, body);
            if self
                .candidates
                .iter()
                .any(|tag| mac.clone().verify_slice(tag).is_ok())
            {
                return Ok(());
            }
        }
        Err(VerifyError::NoMatch)
    }
}

/// The `v1` tags of a signature list within its bounds; others are
/// skipped, and a list with none matches nothing.
fn candidates(signatures: &str) -> Result<Vec<[u8; TAG_LEN]>, VerifyError> {
    if signatures.len() > MAX_SIGNATURE_LIST_BYTES
        || signatures
            .split_ascii_whitespace()
            .nth(MAX_SIGNATURES)
            .is_some()
    {
        return Err(VerifyError::TooManySignatures);
    }
    let tags: Vec<[u8; TAG_LEN]> = signatures
        .split_ascii_whitespace()
        .filter_map(|candidate| candidate.strip_prefix(VERSION_PREFIX))
        .filter_map(|encoded| STANDARD.decode(encoded).ok())
        .filter_map(|tag| <[u8; TAG_LEN]>::try_from(tag).ok())
        .collect();
    if tags.is_empty() {
        return Err(VerifyError::NoMatch);
    }
    Ok(tags)
}

/// Checks messages against a set of secrets, any of which may have signed
/// (several are accepted, for rotation).
#[derive(Debug, Clone, Copy)]
pub struct Verifier<'s> {
    secrets: &'s [SigningSecret],
    tolerance: Duration,
}

impl<'s> Verifier<'s> {
    /// Accepts a signature by any of `secrets` within [`DEFAULT_TOLERANCE`]
    /// of now.
    pub fn new(secrets: &'s [SigningSecret]) -> Self {
        Self {
            secrets,
            tolerance: DEFAULT_TOLERANCE,
        }
    }

    /// Sets how far the timestamp may be from now, in either direction.
    pub fn with_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Checks what a message's headers say, before its body is read; `now`
    /// is in Unix seconds. Costs no HMAC: a stale, unreadable or oversized
    /// head is refused for the price of parsing it.
    pub fn check_head<'a>(
        &self,
        id: &'a str,
        timestamp: &'a str,
        signatures: &str,
        now: i64,
    ) -> Result<Checked<'a>, VerifyError> {
        let seconds: i64 = timestamp
            .parse()
            .map_err(|_| VerifyError::InvalidTimestamp)?;
        let tolerance = i64::try_from(self.tolerance.as_secs()).unwrap_or(i64::MAX);
        if now.abs_diff(seconds) > tolerance.unsigned_abs() {
            return Err(VerifyError::Stale);
        }
        let candidates = candidates(signatures)?;
        Ok(Checked {
            id,
            timestamp,
            candidates,
        })
    }

    /// Checks one message; `now` is in Unix seconds: [`Self::check_head`],
    /// then [`Checked::verify_body`].
    pub fn verify(&self, signed: &Signed<'_>, now: i64) -> Result<(), VerifyError> {
        self.check_head(signed.id, signed.timestamp, signed.signatures, now)?
            .verify_body(self.secrets, signed.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000;

    fn signed<'a>(
        id: &'a str,
        timestamp: &'a str,
        signatures: &'a str,
        body: &'a [u8],
    ) -> Signed<'a> {
        Signed {
            id,
            timestamp,
            signatures,
            body,
        }
    }

    #[test]
    fn a_target_signature_binds_method_path_query_and_body() {
        let old = SigningSecret::from_key(b"old-key".to_vec());
        let new = SigningSecret::from_key(b"new-key".to_vec());
        let target = |method, path_and_query, body: &[u8]| SignedTarget {
            method,
            path_and_query,
            body_sha256: body_sha256(body),
        };
        let sent = target("POST", "/charge?order=42", b"{}");
        let list = target_signature_list(&[old.clone(), new.clone()], "id", NOW, &sent);
        let now = NOW.to_string();
        let head = Verifier::new(&[])
            .check_head("id", &now, &new.sign("id", NOW, b"{}"), NOW)
            .unwrap();
        assert!(
            head.verify_target(std::slice::from_ref(&new), &list, &sent)
                .is_ok()
        );
        assert!(
            head.verify_target(std::slice::from_ref(&old), &list, &sent)
                .is_ok()
        );
        for moved in [
            target("POST", "/admin/refund-everything?all=1", b"{}"),
            target("POST", "/charge?order=43", b"{}"),
            target("POST", "/charge", b"{}"),
            target("PUT", "/charge?order=42", b"{}"),
            target("POST", "/charge?order=42", b"{\"amount\":1}"),
        ] {
            assert_eq!(
                head.verify_target(std::slice::from_ref(&new), &list, &moved),
                Err(VerifyError::NoMatch),
                "{moved:?}"
            );
        }
        let other = SigningSecret::from_key(b"other".to_vec());
        assert_eq!(
            head.verify_target(&[other], &list, &sent),
            Err(VerifyError::NoMatch)
        );
        // Another message's signature of the same target does not carry over.
        let later = Verifier::new(&[])
            .check_head("id2", &now, &new.sign("id2", NOW, b"{}"), NOW)
            .unwrap();
        assert_eq!(
            later.verify_target(&[new], &list, &sent),
            Err(VerifyError::NoMatch)
        );
    }

    #[test]
    fn any_listed_signature_and_any_secret_may_match() {
        let old = SigningSecret::from_key(b"old-key".to_vec());
        let new = SigningSecret::from_key(b"new-key".to_vec());
        let list = format!("v1a,ignored v1,AAAA v1,!! {}", new.sign("id", NOW, b"body"));
        let message = signed("id", "1700000000", &list, b"body");
        let both = [old.clone(), new];
        assert_eq!(Verifier::new(&both).verify(&message, NOW), Ok(()));
        assert_eq!(
            Verifier::new(std::slice::from_ref(&old)).verify(&message, NOW),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            Verifier::new(&[]).verify(&message, NOW),
            Err(VerifyError::NoMatch)
        );
    }

    #[test]
    fn body_id_and_timestamp_are_all_covered() {
        let secrets = [SigningSecret::from_key(b"k".to_vec())];
        let verifier = Verifier::new(&secrets);
        let sig = secrets[0].sign("id", NOW, b"body");
        for message in [
            signed("id", "1700000000", &sig, b"bodx"),
            signed("id2", "1700000000", &sig, b"body"),
            signed("id", "1700000001", &sig, b"body"),
            // The same number written differently is another message.
            signed("id", "+1700000000", &sig, b"body"),
        ] {
            assert_eq!(
                verifier.verify(&message, NOW),
                Err(VerifyError::NoMatch),
                "{message:?}"
            );
        }
    }

    #[test]
    fn the_tolerance_bounds_the_timestamp_either_way() {
        let secrets = [SigningSecret::from_key(b"k".to_vec())];
        for (tolerance, offset, ok) in [
            (DEFAULT_TOLERANCE, -301, false),
            (DEFAULT_TOLERANCE, -300, true),
            (DEFAULT_TOLERANCE, 300, true),
            (DEFAULT_TOLERANCE, 301, false),
            (Duration::from_secs(10), 11, false),
            (Duration::ZERO, 0, true),
        ] {
            let ts = NOW + offset;
            let sig = secrets[0].sign("id", ts, b"");
            let text = ts.to_string();
            let result = Verifier::new(&secrets)
                .with_tolerance(tolerance)
                .verify(&signed("id", &text, &sig, b""), NOW);
            let expected = if ok { Ok(()) } else { Err(VerifyError::Stale) };
            assert_eq!(result, expected, "tolerance {tolerance:?}, offset {offset}");
        }
    }

    #[test]
    fn an_unparsable_timestamp_is_refused_before_any_signature() {
        let secrets = [SigningSecret::from_key(b"k".to_vec())];
        assert_eq!(
            Verifier::new(&secrets).verify(&signed("id", "soon", "v1,x", b""), NOW),
            Err(VerifyError::InvalidTimestamp)
        );
    }

    #[test]
    fn an_oversized_signature_list_is_refused_before_any_signature() {
        let secret = SigningSecret::from_key(b"k".to_vec());
        let valid = secret.sign("m", NOW, b"{}");
        let secrets = [secret];
        let verifier = Verifier::new(&secrets);
        let within = format!("{} {valid}", vec!["v1,x"; MAX_SIGNATURES - 1].join(" "));
        assert!(
            verifier
                .verify(&signed("m", "1700000000", &within, b"{}"), NOW)
                .is_ok()
        );
        let one_more = format!("v1,x {within}");
        assert_eq!(
            verifier.verify(&signed("m", "1700000000", &one_more, b"{}"), NOW),
            Err(VerifyError::TooManySignatures)
        );
        let long = format!("{valid} v1,{}", "A".repeat(MAX_SIGNATURE_LIST_BYTES));
        assert_eq!(
            verifier.check_head("m", "1700000000", &long, NOW).err(),
            Some(VerifyError::TooManySignatures)
        );
    }

    #[test]
    fn a_signature_list_signs_with_every_secret_in_order() {
        let a = SigningSecret::from_key(b"a".to_vec());
        let b = SigningSecret::from_key(b"b".to_vec());
        let list = signature_list(&[a.clone(), b.clone()], "id", 1, b"body");
        assert_eq!(
            list,
            format!("{} {}", a.sign("id", 1, b"body"), b.sign("id", 1, b"body"))
        );
        assert_eq!(signature_list(&[], "id", 1, b"body"), "");
    }

    #[test]
    fn secrets_parse_only_in_whsec_form() {
        let secret = SigningSecret::parse("whsec_c2VjcmV0").unwrap();
        assert_eq!(secret, SigningSecret::from_key(b"secret".to_vec()));
        assert_eq!(secret.to_whsec(), "whsec_c2VjcmV0");
        assert_eq!(" whsec_c2VjcmV0\n".parse(), Ok(secret.clone()));
        assert_eq!(
            SigningSecret::parse("c2VjcmV0"),
            Err(SecretError::MissingPrefix)
        );
        assert_eq!(
            SigningSecret::parse("whsec_!!"),
            Err(SecretError::InvalidBase64)
        );
        assert_eq!(SigningSecret::parse("whsec_"), Err(SecretError::Empty));
        assert_eq!(format!("{secret:?}"), "SigningSecret(redacted)");
    }
}
