//! Organizations, principals, API keys and signing secrets (admin routes).

use super::extract::{Json, ListParams};
use super::idempotency::{Keyed, stash_secret};
use super::problem::{ApiResult, Problem};
use super::views;
use super::{Created, CreatedWithoutLocation, NoContent, location};
use crate::App;
use crate::auth::{Admin, Auth, require_person};
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use idem_api::{
    ApiKey, CreateOrganization, CreatePrincipal, List, NewApiKey, Organization, Principal,
    SigningSecret, SigningSecrets, UpdatePrincipal,
};
use idem_core::FieldErrors;
use idem_core::names::{check_organization_name, check_principal_name};
use idem_core::tenancy::{
    DEFAULT_ORGANIZATION, PrincipalKind, Role, generate_api_key, generate_id, hash_api_key,
};
use std::sync::Arc;

/// A fresh key: the plaintext for the caller, the hash for the store.
fn fresh_key() -> (String, idem_store::NewApiKey) {
    let key = generate_api_key();
    let stored = idem_store::NewApiKey {
        id: generate_id("key"),
        key_hash: hash_api_key(&key),
    };
    (key, stored)
}

pub async fn create_principal(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Json(req): Json<CreatePrincipal>,
) -> ApiResult<Created<Principal>> {
    if req.role == Role::Admin {
        require_person(&auth.caller, "creating an admin principal")?;
    }
    check_principal_name("name", &req.name).map_err(|e| Problem::fields(e.into()))?;
    let done = keyed.completion(
        &app,
        &auth.caller,
        StatusCode::CREATED,
        "principal",
        &req.name,
    );
    let p = app
        .store
        .principal_create(&auth.caller.org, &req.name, req.kind, req.role, done)
        .await?;
    Ok(Created(
        location(&["principals", &p.name]),
        views::principal(p),
    ))
}

pub async fn list_principals(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<Principal>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app
        .store
        .principal_list(&auth.caller.org, &params.page)
        .await?;
    Ok(axum::Json(views::list(page, views::principal)))
}

pub async fn update_principal(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(name): Path<String>,
    Json(req): Json<UpdatePrincipal>,
) -> ApiResult<axum::Json<Principal>> {
    let done = keyed.completion(&app, &auth.caller, StatusCode::OK, "principal", &name);
    let p = app
        .store
        .principal_set_role(&auth.caller.org, &name, req.role, done)
        .await?;
    app.auth.clear();
    Ok(axum::Json(views::principal(p)))
}

pub async fn create_key(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Path(principal): Path<String>,
) -> ApiResult<Created<NewApiKey>> {
    // A key for an admin is an admin's power; a service may hand out only
    // lesser keys. A promotion racing this read is harmless: it is a
    // person's decision, and makes every key of the principal an admin's
    // anyway.
    if auth.caller.kind != PrincipalKind::Person
        && app
            .store
            .principal_get(&auth.caller.org, &principal)
            .await?
            .role
            == Role::Admin
    {
        require_person(&auth.caller, "creating a key for an admin")?;
    }
    let (key, stored) = fresh_key();
    let mut done = keyed.completion(
        &app,
        &auth.caller,
        StatusCode::CREATED,
        "api_key",
        format!("{principal}/{}", stored.id),
    );
    stash_secret(&mut done, "key", &key);
    let created = app
        .store
        .api_key_create(&auth.caller.org, &principal, stored, done)
        .await?;
    Ok(Created(
        location(&["principals", &principal, "keys", &created.id]),
        NewApiKey {
            id: created.id,
            key,
            principal: created.principal,
            created_at: created.created_at,
        },
    ))
}

pub async fn list_keys(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path(principal): Path<String>,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<List<ApiKey>>> {
    let params = ListParams::parse(query.as_deref())?;
    let page = app
        .store
        .api_key_list(&auth.caller.org, &principal, &params.page)
        .await?;
    Ok(axum::Json(views::list(page, views::api_key)))
}

pub async fn get_key(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path((principal, id)): Path<(String, String)>,
) -> ApiResult<axum::Json<ApiKey>> {
    let key = app
        .store
        .api_key_get(&auth.caller.org, &principal, &id)
        .await?;
    Ok(axum::Json(views::api_key(key)))
}

pub async fn revoke_key(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path((principal, id)): Path<(String, String)>,
) -> ApiResult<NoContent> {
    app.store
        .api_key_revoke(&auth.caller.org, &principal, &id)
        .await?;
    app.auth.clear();
    Ok(NoContent)
}

pub async fn create_organization(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
    Json(req): Json<CreateOrganization>,
) -> ApiResult<CreatedWithoutLocation<Organization>> {
    if auth.caller.org != DEFAULT_ORGANIZATION {
        return Err(Problem::permission_denied(
            "only admins of the organization 'default' create organizations",
        ));
    }
    let mut errors = FieldErrors::new();
    if let Err(e) = check_organization_name("name", &req.name) {
        errors.0.push(e);
    }
    errors.into_result().map_err(Problem::fields)?;
    let (key, stored) = fresh_key();
    let mut done = keyed.completion(
        &app,
        &auth.caller,
        StatusCode::CREATED,
        "organization",
        &req.name,
    );
    stash_secret(&mut done, "admin_key", &key);
    app.store
        .organization_create(&req.name, stored, done)
        .await?;
    // No Location: an organization is not a resource its creator reads
    // back; its admin key is how it is used.
    Ok(CreatedWithoutLocation(Organization {
        name: req.name,
        admin_key: key,
    }))
}

pub async fn list_secrets(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
) -> ApiResult<axum::Json<SigningSecrets>> {
    let secrets = app.store.signing_secret_list(&auth.caller.org).await?;
    Ok(axum::Json(SigningSecrets {
        secrets: secrets.into_iter().map(views::signing_secret).collect(),
    }))
}

pub async fn get_secret(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<SigningSecret>> {
    let secrets = app.store.signing_secret_list(&auth.caller.org).await?;
    let secret = secrets
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| Problem::not_found(format!("signing secret '{id}' not found")))?;
    Ok(axum::Json(views::signing_secret(secret)))
}

pub async fn rotate_secret(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    keyed: Keyed,
) -> ApiResult<Created<SigningSecret>> {
    // The store fills in the new secret's ID.
    let done = keyed.completion(
        &app,
        &auth.caller,
        StatusCode::CREATED,
        "signing_secret",
        "",
    );
    let secret = app
        .store
        .signing_secret_rotate(&auth.caller.org, done)
        .await?;
    Ok(Created(
        location(&["signing-secrets", &secret.id]),
        views::signing_secret(secret),
    ))
}

pub async fn delete_secret(
    State(app): State<Arc<App>>,
    auth: Auth<Admin>,
    Path(id): Path<String>,
) -> ApiResult<NoContent> {
    app.store
        .signing_secret_delete(&auth.caller.org, &id)
        .await?;
    Ok(NoContent)
}
