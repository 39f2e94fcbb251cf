//! Principals, API keys, organizations and signing secrets (SPEC 1,
//! "Tenancy routes"; admin only).

use crate::client::{Call, Client, Payload, Response};
use crate::error::Error;
use crate::list::{List, ListOptions};
use idem_core::tenancy::{PrincipalKind, Role};
use jiff::Timestamp;
use reqwest::Method;
use serde::{Deserialize, Serialize};

/// A principal: who an API key acts as.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Principal {
    /// Unique per organization.
    pub name: String,
    /// `service` or `person`.
    pub kind: PrincipalKind,
    /// What it may do.
    pub role: Role,
    /// When it was created.
    pub created_at: Timestamp,
}

/// A principal to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewPrincipal {
    /// Its name.
    pub name: String,
    /// `service` or `person`.
    pub kind: PrincipalKind,
    /// Its role.
    pub role: Role,
}

/// An API key as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ApiKey {
    /// The key's ID (`key_…`), used to revoke it.
    pub id: String,
    /// The principal it acts as.
    pub principal: String,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last authenticated a request.
    #[serde(default)]
    pub last_used_at: Option<Timestamp>,
}

/// A new API key, with its secret: shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NewApiKey {
    /// The key's ID.
    pub id: String,
    /// The secret to send as `Authorization: Bearer …`.
    pub key: String,
    /// The principal it acts as.
    pub principal: String,
    /// When it was created.
    pub created_at: Timestamp,
}

/// A new organization with its first admin key, shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Organization {
    /// Its name.
    pub name: String,
    /// The API key of its principal `admin`.
    pub admin_key: String,
}

/// A secret Idem signs deliveries with (`whsec_…`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SigningSecret {
    /// Its ID, used to delete it.
    pub id: String,
    /// The secret.
    pub secret: String,
    /// When it was created.
    pub created_at: Timestamp,
}

/// The organization's signing secrets, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SigningSecrets {
    /// Newest first; the newest signs, every one verifies.
    pub secrets: Vec<SigningSecret>,
}

#[derive(Serialize)]
struct RoleChange {
    role: Role,
}

#[derive(Serialize)]
struct NewOrganization<'a> {
    name: &'a str,
}

/// Tenancy operations.
impl Client {
    /// `POST /v1/principals`: 201, or 409 `PRINCIPAL_ALREADY_EXISTS`.
    pub async fn create_principal(
        &self,
        principal: &NewPrincipal,
    ) -> Result<Response<Principal>, Error> {
        let call = Call::new(Method::POST, ["principals"]).payload(Payload::json(principal)?);
        self.execute(call).await
    }

    /// `GET /v1/principals`: one page of principals.
    pub async fn list_principals(
        &self,
        page: &ListOptions,
    ) -> Result<Response<List<Principal>>, Error> {
        self.execute(page.apply(Call::new(Method::GET, ["principals"])))
            .await
    }

    /// `PATCH /v1/principals/{name}`: changes the principal's role.
    pub async fn set_principal_role(
        &self,
        name: &str,
        role: Role,
    ) -> Result<Response<Principal>, Error> {
        let call = Call::new(Method::PATCH, ["principals", name])
            .payload(Payload::json(&RoleChange { role })?);
        self.execute(call).await
    }

    /// `POST /v1/principals/{name}/keys`: a new key for the principal.
    pub async fn create_api_key(&self, principal: &str) -> Result<Response<NewApiKey>, Error> {
        self.execute(Call::new(Method::POST, ["principals", principal, "keys"]))
            .await
    }

    /// `GET /v1/principals/{name}/keys`: one page of the principal's keys.
    pub async fn list_api_keys(
        &self,
        principal: &str,
        page: &ListOptions,
    ) -> Result<Response<List<ApiKey>>, Error> {
        let call = Call::new(Method::GET, ["principals", principal, "keys"]);
        self.execute(page.apply(call)).await
    }

    /// `DELETE /v1/principals/{name}/keys/{id}`: revokes a key at once.
    pub async fn revoke_api_key(&self, principal: &str, id: &str) -> Result<Response<()>, Error> {
        self.execute(Call::new(
            Method::DELETE,
            ["principals", principal, "keys", id],
        ))
        .await
    }

    /// `POST /v1/organizations` (admins of `default` only): a new
    /// organization and its admin key.
    pub async fn create_organization(&self, name: &str) -> Result<Response<Organization>, Error> {
        let call = Call::new(Method::POST, ["organizations"])
            .payload(Payload::json(&NewOrganization { name })?);
        self.execute(call).await
    }

    /// `GET /v1/signing-secrets`.
    pub async fn list_signing_secrets(&self) -> Result<Response<SigningSecrets>, Error> {
        self.execute(Call::new(Method::GET, ["signing-secrets"]))
            .await
    }

    /// `POST /v1/signing-secrets/rotate`: adds a secret that signs from now
    /// on; the older ones stay valid until deleted.
    pub async fn rotate_signing_secret(&self) -> Result<Response<SigningSecret>, Error> {
        self.execute(Call::new(Method::POST, ["signing-secrets", "rotate"]))
            .await
    }

    /// `DELETE /v1/signing-secrets/{id}`.
    pub async fn delete_signing_secret(&self, id: &str) -> Result<Response<()>, Error> {
        self.execute(Call::new(Method::DELETE, ["signing-secrets", id]))
            .await
    }
}
