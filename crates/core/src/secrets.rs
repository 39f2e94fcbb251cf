//! Signing secrets for Standard Webhooks signatures (API.md §4, "Signing").

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;

/// A new secret in the Standard Webhooks form, `whsec_<base64 of 32 bytes>`.
pub fn generate_signing_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// The HMAC key inside a `whsec_` secret.
pub fn signing_key(secret: &str) -> Option<Vec<u8>> {
    STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_decode_to_32_bytes() {
        let s = generate_signing_secret();
        assert!(s.starts_with("whsec_"));
        assert_eq!(signing_key(&s).unwrap().len(), 32);
        assert_ne!(s, generate_signing_secret());
    }
}
