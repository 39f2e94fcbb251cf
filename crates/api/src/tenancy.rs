//! Principals, API keys, organizations and signing secrets.

use idem_core::tenancy::{PrincipalKind, Role};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `POST /v1/principals`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreatePrincipal {
    /// Unique per organization.
    pub name: String,
    /// `service` or `person`.
    pub kind: PrincipalKind,
    /// What it may do.
    pub role: Role,
}

/// `PATCH /v1/principals/{name}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdatePrincipal {
    /// The new role.
    pub role: Role,
}

/// `POST /v1/organizations`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateOrganization {
    /// Its name.
    pub name: String,
}

/// A principal: who an API key acts as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PrincipalView))]
pub struct Principal {
    /// Unique per organization.
    pub name: String,
    /// `service` or `person`.
    pub kind: PrincipalKind,
    /// What it may do.
    pub role: Role,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
}

/// An API key as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ApiKeyView))]
pub struct ApiKey {
    /// The key's ID (`key_…`), used to revoke it.
    pub id: String,
    /// The principal it acts as.
    pub principal: String,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    /// When it last authenticated a request.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_used_at: Option<Timestamp>,
}

/// A new API key, with its secret: shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = NewApiKeyView))]
pub struct NewApiKey {
    /// The key's ID.
    pub id: String,
    /// The secret to send as `Authorization: Bearer …`.
    pub key: String,
    /// The principal it acts as.
    pub principal: String,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
}

/// A new organization with its first admin key, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = OrganizationView))]
pub struct Organization {
    /// Its name.
    pub name: String,
    /// The organization's first admin key, shown once.
    pub admin_key: String,
}

/// A secret Idem signs deliveries with (`whsec_…`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = SigningSecretView))]
pub struct SigningSecret {
    /// Its ID, used to delete it.
    pub id: String,
    /// The secret.
    pub secret: String,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
}

/// The organization's signing secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = SigningSecretsView))]
pub struct SigningSecrets {
    /// Newest first; the newest signs, every one verifies.
    pub secrets: Vec<SigningSecret>,
}
