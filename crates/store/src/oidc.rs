//! The records of organizations' OIDC signing keys (`tables/oidc_keys.rs`).

use jiff::Timestamp;

/// A key the server generated, for the store to keep as the organization's
/// current one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOidcKey {
    /// Unique over every organization: one JWKS publishes them all.
    pub kid: String,
    /// The JOSE algorithm (`ES256`).
    pub algorithm: String,
    /// The private key, PKCS#8 DER in base64.
    pub private_key: String,
    /// The public key as a JWK (JSON text).
    pub public_jwk: String,
}

/// A stored signing key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcKey {
    pub org: String,
    pub kid: String,
    pub algorithm: String,
    pub private_key: String,
    pub public_jwk: String,
    pub created_at: Timestamp,
}

/// What the JWKS publishes of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcPublicKey {
    pub kid: String,
    pub public_jwk: String,
    pub created_at: Timestamp,
}
