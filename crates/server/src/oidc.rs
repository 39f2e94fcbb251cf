//! Idem as an OpenID Provider for its own deliveries: a target that asks
//! for `oidc` receives `Authorization: Bearer <ID token>` signed by its
//! organization's key, and verifies it against the discovery document and
//! JWKS served at `/.well-known/…` (API.md §4, "OIDC ID tokens").
//!
//! One issuer, one JWKS: every organization's public keys are published
//! together, each under its own `kid`, and `sub` (`org/<organization>`)
//! says which organization a token speaks for. A verifier therefore checks
//! `sub` as well as `aud` when several organizations share the server.
//!
//! Keys are ES256 (P-256) keys made with `ring`, lazily, the first time an
//! organization needs one and again once it is older than the rotation
//! period; the store keeps them (`oidc_keys`), so every node signs with the
//! same key and the JWKS is the same on every node. A key stays published
//! for the rotation period plus the longest token lifetime, so every token
//! it signed has expired before its key leaves the JWKS.
//!
//! A token is minted for each delivery attempt and names the run it opens
//! in the claim `idem_run` (the delivery's `Idempotency-Key`), so that a
//! receiver can refuse a captured token sent again under another key. It
//! lives for the attempt's deadline plus [`TOKEN_MARGIN`], at most the
//! configured lifetime: long enough to arrive, not to be kept.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use idem_core::Clock;
use idem_store::Store;
use idem_store::oidc::NewOidcKey;
use jiff::Timestamp;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The longest lifetime a token may have (SPEC: `exp` at most an hour after
/// `iat`).
pub const MAX_TOKEN_LIFETIME: Duration = Duration::from_secs(60 * 60);

/// Beyond the attempt's deadline, how long its token stays valid: the
/// request is sent at once, and this covers receivers whose clocks run a
/// little ahead.
pub const TOKEN_MARGIN: Duration = Duration::from_secs(60);

/// Beyond the longest lifetime, how long a retired key stays published:
/// nodes' clocks and a token's time in flight.
const PUBLISH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The path of the JWKS, below the issuer.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// How Idem issues ID tokens.
#[derive(Debug, Clone)]
pub struct OidcOptions {
    /// `iss` of every token and the base of the discovery URLs: the
    /// server's public URL, without a trailing slash.
    pub issuer: String,
    /// How long an organization's key signs before a new one is made.
    pub key_rotation: Duration,
    /// The longest `exp - iat` of a token, which otherwise lives for its
    /// attempt's deadline plus [`TOKEN_MARGIN`]; at most
    /// [`MAX_TOKEN_LIFETIME`].
    pub token_lifetime: Duration,
}

impl Default for OidcOptions {
    fn default() -> Self {
        OidcOptions {
            issuer: "http://127.0.0.1:7070".into(),
            key_rotation: Duration::from_secs(720 * 60 * 60),
            token_lifetime: MAX_TOKEN_LIFETIME,
        }
    }
}

impl OidcOptions {
    /// How long a key is published from its creation: it signs for the
    /// rotation period, and its last token lives at most the longest
    /// lifetime after that (whatever lifetime a node is set to).
    pub fn publish_for(&self) -> Duration {
        self.key_rotation + MAX_TOKEN_LIFETIME + PUBLISH_MARGIN
    }
}

/// An organization's current key, ready to sign.
struct SigningKey {
    kid: String,
    key: EncodingKey,
    /// When a new key replaces it.
    rotates_at: Timestamp,
}

/// Signs the ID tokens of deliveries.
pub struct Issuer {
    options: OidcOptions,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rng: SystemRandom,
    /// Held across the store call that finds or makes a key, so that one
    /// node asks once per organization and rotation.
    keys: tokio::sync::Mutex<HashMap<String, Arc<SigningKey>>>,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    sub: String,
    aud: &'a str,
    iat: i64,
    exp: i64,
    idem_run: &'a str,
}

impl Issuer {
    pub fn new(options: OidcOptions, store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Issuer {
        Issuer {
            options: OidcOptions {
                token_lifetime: options.token_lifetime.min(MAX_TOKEN_LIFETIME),
                ..options
            },
            store,
            clock,
            rng: SystemRandom::new(),
            keys: Default::default(),
        }
    }

    pub fn options(&self) -> &OidcOptions {
        &self.options
    }

    /// A new ID token for one attempt of the run `run_key` of `org`, with
    /// audience `audience`, valid for `deadline` (the attempt's) plus
    /// [`TOKEN_MARGIN`], at most the configured lifetime. Never reused: a
    /// token names its run.
    pub async fn token(
        &self,
        org: &str,
        audience: &str,
        run_key: &str,
        deadline: Duration,
    ) -> Result<String, String> {
        let now = self.clock.now();
        let key = self.signing_key(org, now).await?;
        let lifetime = (deadline + TOKEN_MARGIN).min(self.options.token_lifetime);
        let iat = now.as_second();
        let exp = iat + lifetime.as_secs() as i64;
        let claims = Claims {
            iss: &self.options.issuer,
            sub: format!("org/{org}"),
            aud: audience,
            iat,
            exp,
            idem_run: run_key,
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(key.kid.clone());
        jsonwebtoken::encode(&header, &claims, &key.key)
            .map_err(|e| format!("signing the OIDC token: {e}"))
    }

    async fn signing_key(&self, org: &str, now: Timestamp) -> Result<Arc<SigningKey>, String> {
        let mut keys = self.keys.lock().await;
        if let Some(key) = keys.get(org)
            && now < key.rotates_at
        {
            return Ok(key.clone());
        }
        let candidate = self.generate()?;
        let stored = self
            .store
            .oidc_key_current(
                org,
                self.options.key_rotation,
                self.options.publish_for(),
                candidate,
            )
            .await
            .map_err(|e| format!("reading the organization's OIDC key: {e}"))?;
        let der = STANDARD
            .decode(stored.private_key.as_bytes())
            .map_err(|e| format!("the stored OIDC key {} does not decode: {e}", stored.kid))?;
        let key = Arc::new(SigningKey {
            kid: stored.kid,
            key: EncodingKey::from_ec_der(&der),
            rotates_at: stored.created_at + self.options.key_rotation,
        });
        keys.insert(org.to_string(), key.clone());
        Ok(key)
    }

    /// A new P-256 key; its `kid` is its RFC 7638 thumbprint.
    fn generate(&self) -> Result<NewOidcKey, String> {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &self.rng)
            .map_err(|_| "generating an OIDC key failed".to_string())?;
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &self.rng)
                .map_err(|_| "reading a generated OIDC key failed".to_string())?;
        // An uncompressed point: 0x04, then x and y of 32 bytes each.
        let point = pair.public_key().as_ref();
        let (x, y) = (
            URL_SAFE_NO_PAD.encode(&point[1..33]),
            URL_SAFE_NO_PAD.encode(&point[33..65]),
        );
        let thumbprint_input = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let kid = URL_SAFE_NO_PAD.encode(Sha256::digest(thumbprint_input.as_bytes()));
        let jwk = idem_api::Jwk {
            kty: "EC".into(),
            crv: "P-256".into(),
            x,
            y,
            kid: kid.clone(),
            alg: "ES256".into(),
            use_: "sig".into(),
        };
        Ok(NewOidcKey {
            kid,
            algorithm: "ES256".into(),
            private_key: STANDARD.encode(pkcs8.as_ref()),
            public_jwk: serde_json::to_string(&jwk).expect("a JWK serializes"),
        })
    }

    /// The discovery document.
    pub fn configuration(&self) -> idem_api::OpenIdConfiguration {
        let issuer = self.options.issuer.clone();
        idem_api::OpenIdConfiguration {
            jwks_uri: format!("{issuer}{JWKS_PATH}"),
            issuer,
            response_types_supported: vec!["id_token".into()],
            subject_types_supported: vec!["public".into()],
            id_token_signing_alg_values_supported: vec!["ES256".into()],
            claims_supported: ["iss", "sub", "aud", "iat", "exp", "idem_run"]
                .map(String::from)
                .to_vec(),
        }
    }

    /// Every organization's keys whose tokens may still be live.
    pub async fn jwks(&self) -> idem_store::Result<idem_api::Jwks> {
        let published = self
            .store
            .oidc_key_published(self.options.publish_for())
            .await?;
        let keys = published
            .into_iter()
            .filter_map(|k| match serde_json::from_str(&k.public_jwk) {
                Ok(jwk) => Some(jwk),
                Err(error) => {
                    tracing::error!(kid = k.kid, %error, "a stored OIDC public key does not parse");
                    None
                }
            })
            .collect();
        Ok(idem_api::Jwks { keys })
    }
}

/// `--public-url` as the issuer: an absolute http(s) URL without query or
/// fragment, its trailing slash dropped (`iss` is compared as a string).
pub fn parse_issuer(url: &str) -> Result<String, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        return Err(format!("{url:?} must be an absolute http or https URL"));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(format!("{url:?} must have no query or fragment"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issuer_is_an_http_url_without_its_trailing_slash() {
        assert_eq!(
            parse_issuer("https://idem.example.com/").unwrap(),
            "https://idem.example.com"
        );
        assert_eq!(
            parse_issuer("http://10.0.0.1:7070/idem").unwrap(),
            "http://10.0.0.1:7070/idem"
        );
        for bad in [
            "idem.example.com",
            "ftp://x/",
            "https://x/?a=1",
            "https://x/#f",
        ] {
            assert!(parse_issuer(bad).is_err(), "{bad}");
        }
    }
}
