//! Building blocks of the canonical encodings: domain-separated SHA-256 with
//! tags and big-endian length prefixes.

use sha2::{Digest as _, Sha256};

use super::Digest;

/// SHA-256 of `bytes`, as a fixed-size array.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Finishes a running hash.
pub(crate) fn finish(hasher: Sha256) -> [u8; 32] {
    hasher.finalize().into()
}

/// Writes a length as 8 bytes, big-endian.
pub(crate) fn put_len(hasher: &mut Sha256, len: usize) {
    // usize is at most 64 bits on every supported target.
    hasher.update((len as u64).to_be_bytes());
}

/// Writes a length-prefixed byte string.
pub(crate) fn put_bytes(hasher: &mut Sha256, bytes: &[u8]) {
    put_len(hasher, bytes.len());
    hasher.update(bytes);
}

/// Writes an optional byte string: `0x00`, or `0x01` and the string.
pub(crate) fn put_opt(hasher: &mut Sha256, bytes: Option<&[u8]>) {
    match bytes {
        None => hasher.update([0u8]),
        Some(b) => {
            hasher.update([1u8]);
            put_bytes(hasher, b);
        }
    }
}

/// A hash over one part of the fingerprint, opened with its domain string
/// and a NUL so that no two parts (or versions) can produce the same input.
pub(crate) struct Encoder(Sha256);

impl Encoder {
    pub(crate) fn new(domain: &str) -> Self {
        let mut h = Sha256::new();
        h.update(domain.as_bytes());
        h.update([0u8]);
        Self(h)
    }

    pub(crate) fn hasher(&mut self) -> &mut Sha256 {
        &mut self.0
    }

    pub(crate) fn finish(self) -> Digest {
        Digest::from_bytes(finish(self.0))
    }
}
