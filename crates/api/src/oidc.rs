//! The OpenID Provider side of Idem: the discovery document and the JWKS
//! that targets verify Idem's ID tokens with.

use serde::{Deserialize, Serialize};

/// `GET /.well-known/openid-configuration` (OpenID Connect Discovery 1.0),
/// as much of it as a verifier of ID tokens reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OpenIdConfiguration {
    /// The `iss` of every token: the server's public URL.
    pub issuer: String,
    /// Where the keys of every organization are published.
    pub jwks_uri: String,
    /// `["id_token"]`: Idem issues tokens only for its own deliveries.
    pub response_types_supported: Vec<String>,
    /// `["public"]`: `sub` is `org/<organization>`.
    pub subject_types_supported: Vec<String>,
    /// `["ES256"]`.
    pub id_token_signing_alg_values_supported: Vec<String>,
    /// The claims a token carries.
    pub claims_supported: Vec<String>,
}

/// A JSON Web Key Set (RFC 7517): every organization's public keys that
/// signed tokens which may not have expired yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Jwks {
    pub keys: Vec<Jwk>,
}

/// One public key: an elliptic-curve key on P-256 for ES256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Jwk {
    /// `EC`.
    pub kty: String,
    /// `P-256`.
    pub crv: String,
    /// The point's x coordinate, base64url.
    pub x: String,
    /// The point's y coordinate, base64url.
    pub y: String,
    /// The key's ID, named by the `kid` header of the tokens it signed.
    pub kid: String,
    /// `ES256`.
    pub alg: String,
    /// `sig`.
    #[serde(rename = "use")]
    pub use_: String,
}
