//! Principals, API keys, organizations and signing secrets (API.md §1,
//! "Tenancy routes"; admin only).

use crate::client::{Call, Client, Payload, Response};
use crate::error::Error;
use crate::list::ListOptions;
use idem_api::{
    ApiKey, CreateOrganization, CreatePrincipal, List, NewApiKey, Organization, Principal, Role,
    SigningSecret, SigningSecrets, UpdatePrincipal,
};
use reqwest::Method;

/// Tenancy operations.
impl Client {
    /// `POST /v1/principals`: 201, or 409 `PRINCIPAL_ALREADY_EXISTS`.
    pub async fn create_principal(
        &self,
        principal: &CreatePrincipal,
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
            .payload(Payload::json(&UpdatePrincipal { role })?);
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
            .payload(Payload::json(&CreateOrganization { name: name.into() })?);
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
