//! Organizations, principals, roles and API keys (API.md §1, "Authentication").

use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The organization created on first start.
pub const DEFAULT_ORGANIZATION: &str = "default";
/// The admin principal created with every organization.
pub const ADMIN_PRINCIPAL: &str = "admin";

/// What a principal may do. Ordered: each role includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads everything in its organization.
    Reader,
    /// Also creates, updates, deletes and runs tasks and jobs.
    Writer,
    /// Also manages queues, principals, keys and signing secrets.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reader => "reader",
            Self::Writer => "writer",
            Self::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "reader" => Some(Self::Reader),
            "writer" => Some(Self::Writer),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }
}

/// Whether a principal is a program or a person. Operations a security
/// review wants a human to take (`x-person-only` in the OpenAPI document)
/// refuse services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PrincipalKind {
    Service,
    Person,
}

impl PrincipalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Service => "service",
            Self::Person => "person",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "service" => Some(Self::Service),
            "person" => Some(Self::Person),
            _ => None,
        }
    }
}

/// A fresh API key as shown to its owner, once. 256 random bits make a
/// fast hash sufficient for storage: there is nothing to brute-force.
pub fn generate_api_key() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("idem_{}", hex::encode(bytes))
}

/// What the store keeps of an API key.
pub fn hash_api_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// A short random identifier with a kind prefix (`key_…`, `ss_…`).
pub fn generate_id(prefix: &str) -> String {
    let mut bytes = [0u8; 10];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}_{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_by_power() {
        assert!(Role::Reader < Role::Writer && Role::Writer < Role::Admin);
        for r in [Role::Reader, Role::Writer, Role::Admin] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("root"), None);
    }

    #[test]
    fn keys_are_unique_and_hash_stably() {
        let a = generate_api_key();
        let b = generate_api_key();
        assert_ne!(a, b);
        assert!(a.starts_with("idem_") && a.len() == 5 + 64);
        assert_eq!(hash_api_key(&a), hash_api_key(&a));
        assert_ne!(hash_api_key(&a), hash_api_key(&b));
    }
}
