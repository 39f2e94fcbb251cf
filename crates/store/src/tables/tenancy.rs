//! Organizations, principals, API keys and signing secrets.

use super::idempotency::Keyed;
use super::{after, counted, limit, not_found, released, within_quota};
use crate::driver::{Conn, args};
use crate::quotas::{Quota, Quotas};
use crate::records::*;
use crate::sql::{self as rows, Row};
use crate::{Error, Result};
use idem_core::clock::from_micros;
use idem_core::secrets::generate_signing_secret;
use idem_core::tenancy::{ADMIN_PRINCIPAL, DEFAULT_ORGANIZATION, PrincipalKind, Role, generate_id};

/// Makes sure organization `default` exists and an admin of it holds a
/// key: creates it on an empty store, gives `key` to its principal `admin`
/// when no admin holds one, and otherwise changes nothing. On PostgreSQL the
/// caller serializes racing nodes first.
pub(crate) async fn bootstrap<C: Conn>(c: &C, key: &NewApiKey, now: i64) -> Result<Bootstrap> {
    if !lock_organization(c, DEFAULT_ORGANIZATION).await? {
        organization_create(c, DEFAULT_ORGANIZATION, key, now).await?;
        return Ok(Bootstrap::Created);
    }
    if has_usable_admin(c, DEFAULT_ORGANIZATION).await? {
        return Ok(Bootstrap::Unchanged);
    }
    let (kind, role) = (PrincipalKind::Person.as_str(), Role::Admin.as_str());
    // Inserted or made an admin again, in two statements, so that only a
    // principal that is new is counted.
    let inserted = c
        .execute(
            "INSERT INTO principals (org, name, kind, role, created_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org, name) DO NOTHING",
            &args![DEFAULT_ORGANIZATION, ADMIN_PRINCIPAL, kind, role, now],
        )
        .await?;
    if inserted == 0 {
        c.execute(
            "UPDATE principals SET kind = $1, role = $2 WHERE org = $3 AND name = $4",
            &args![kind, role, DEFAULT_ORGANIZATION, ADMIN_PRINCIPAL],
        )
        .await?;
    }
    insert_key(c, DEFAULT_ORGANIZATION, ADMIN_PRINCIPAL, key, now).await?;
    if inserted > 0 {
        counted(c, Quota::Principals, DEFAULT_ORGANIZATION).await?;
    }
    counted(c, Quota::ApiKeys, DEFAULT_ORGANIZATION).await?;
    Ok(Bootstrap::Restored)
}

/// Locks the organization's row, so that the changes that could leave it
/// without an admin key (a demotion, a revocation) run one at a time and
/// each sees what the one before committed; `false` if there is none. A
/// `NO KEY` lock, so that it does not hold up rows that refer to it.
pub(crate) async fn lock_organization<C: Conn>(c: &C, org: &str) -> Result<bool> {
    let sql = format!(
        "SELECT 1 FROM organizations WHERE name = $1 {}",
        c.lock("FOR NO KEY UPDATE")
    );
    Ok(c.query_opt(&sql, &args![org], |_| Ok(())).await?.is_some())
}

/// Whether an admin of the organization who is a person holds a key:
/// without one, nobody can manage its principals, keys or secrets any more
/// (a service admin cannot take the person-only operations, among them
/// every change of a role, so it could not make another admin).
async fn has_usable_admin<C: Conn>(c: &C, org: &str) -> Result<bool> {
    let found = c
        .query_opt(
            "SELECT 1 FROM api_keys k JOIN principals p ON p.org = k.org AND p.name = k.principal \
             WHERE k.org = $1 AND p.role = $2 AND p.kind = $3 LIMIT 1",
            &args![org, Role::Admin.as_str(), PrincipalKind::Person.as_str()],
            |_| Ok(()),
        )
        .await?;
    Ok(found.is_some())
}

/// Refuses a change, made in the current transaction, that left the
/// organization without an admin holding a key; the caller's error rolls
/// it back.
async fn keep_an_admin<C: Conn>(c: &C, org: &str, what: &str) -> Result<()> {
    if has_usable_admin(c, org).await? {
        return Ok(());
    }
    Err(Error::FailedPrecondition(format!(
        "{what} would leave the organization without an admin who is a person and \
         holds an API key, and nobody could manage it any more; give another person \
         the admin role and a key first"
    )))
}

/// The organization with its admin principal, key and signing secret.
pub(crate) async fn organization_create<C: Conn>(
    c: &C,
    name: &str,
    key: &NewApiKey,
    now: i64,
) -> Result<()> {
    let n = c
        .execute(
            "INSERT INTO organizations (name, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &args![name, now],
        )
        .await?;
    if n == 0 {
        return Err(Error::AlreadyExists {
            kind: "organization",
            id: name.to_string(),
        });
    }
    c.execute(
        "INSERT INTO principals (org, name, kind, role, created_at) VALUES ($1, $2, $3, $4, $5)",
        &args![
            name,
            ADMIN_PRINCIPAL,
            PrincipalKind::Person.as_str(),
            Role::Admin.as_str(),
            now
        ],
    )
    .await?;
    insert_key(c, name, ADMIN_PRINCIPAL, key, now).await?;
    insert_secret(c, name, now).await?;
    for quota in [Quota::Principals, Quota::ApiKeys, Quota::SigningSecrets] {
        counted(c, quota, name).await?;
    }
    Ok(())
}

/// A taken key ID (or hash) changes no row.
async fn insert_key<C: Conn>(
    c: &C,
    org: &str,
    principal: &str,
    key: &NewApiKey,
    now: i64,
) -> Result<()> {
    let n = c
        .execute(
            "INSERT INTO api_keys (id, org, principal, key_hash, created_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &args![&key.id, org, principal, &key.key_hash, now],
        )
        .await?;
    if n == 0 {
        return Err(Error::AlreadyExists {
            kind: "api_key",
            id: key.id.clone(),
        });
    }
    Ok(())
}

async fn insert_secret<C: Conn>(c: &C, org: &str, now: i64) -> Result<SigningSecret> {
    let secret = SigningSecret {
        id: generate_id("ss"),
        secret: generate_signing_secret(),
        created_at: from_micros(now),
    };
    c.execute(
        "INSERT INTO signing_secrets (org, id, secret, created_at) VALUES ($1, $2, $3, $4)",
        &args![org, &secret.id, &secret.secret, now],
    )
    .await?;
    Ok(secret)
}

pub(crate) async fn principal_create<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    kind: PrincipalKind,
    role: Role,
    quotas: &Quotas,
    now: i64,
) -> Result<Principal> {
    let sql = format!(
        "INSERT INTO principals (org, name, kind, role, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING {}",
        rows::PRINCIPAL_COLUMNS
    );
    let principal = c
        .query_opt(
            &sql,
            &args![org, name, kind.as_str(), role.as_str(), now],
            |r| rows::principal(r),
        )
        .await?
        .ok_or_else(|| Error::AlreadyExists {
            kind: "principal",
            id: name.to_string(),
        })?;
    within_quota(c, quotas, Quota::Principals, org).await?;
    Ok(principal)
}

pub(crate) async fn principal_get<C: Conn>(c: &C, org: &str, name: &str) -> Result<Principal> {
    let sql = format!(
        "SELECT {} FROM principals WHERE org = $1 AND name = $2",
        rows::PRINCIPAL_COLUMNS
    );
    c.query_opt(&sql, &args![org, name], |r| rows::principal(r))
        .await?
        .ok_or_else(|| not_found("principal", name))
}

pub(crate) async fn principal_list<C: Conn>(
    c: &C,
    org: &str,
    page: &PageRequest,
) -> Result<Page<Principal>> {
    let sql = format!(
        "SELECT {} FROM principals WHERE org = $1 AND name > $2 ORDER BY name LIMIT $3",
        rows::PRINCIPAL_COLUMNS
    );
    let items = c
        .query(&sql, &args![org, after(page), limit(page)], |r| {
            rows::principal(r)
        })
        .await?;
    Ok(Page::from_rows(items, page.limit, |p| p.name.clone()))
}

pub(crate) async fn principal_set_role<C: Conn>(
    c: &C,
    org: &str,
    name: &str,
    role: Role,
) -> Result<Principal> {
    lock_organization(c, org).await?;
    let sql = format!(
        "UPDATE principals SET role = $1 WHERE org = $2 AND name = $3 RETURNING {}",
        rows::PRINCIPAL_COLUMNS
    );
    let principal = c
        .query_opt(&sql, &args![role.as_str(), org, name], |r| {
            rows::principal(r)
        })
        .await?
        .ok_or_else(|| not_found("principal", name))?;
    if role != Role::Admin {
        keep_an_admin(c, org, &format!("making '{name}' a {}", role.as_str())).await?;
    }
    Ok(principal)
}

pub(crate) async fn api_key_create<C: Conn>(
    c: &C,
    org: &str,
    principal: &str,
    key: &NewApiKey,
    quotas: &Quotas,
    now: i64,
) -> Result<ApiKey> {
    principal_get(c, org, principal).await?;
    insert_key(c, org, principal, key, now).await?;
    within_quota(c, quotas, Quota::ApiKeys, org).await?;
    Ok(ApiKey {
        id: key.id.clone(),
        principal: principal.to_string(),
        created_at: from_micros(now),
        last_used_at: None,
    })
}

pub(crate) async fn api_key_list<C: Conn>(
    c: &C,
    org: &str,
    principal: &str,
    page: &PageRequest,
) -> Result<Page<ApiKey>> {
    principal_get(c, org, principal).await?;
    let sql = format!(
        "SELECT {} FROM api_keys WHERE org = $1 AND principal = $2 AND id > $3 \
         ORDER BY id LIMIT $4",
        rows::API_KEY_COLUMNS
    );
    let items = c
        .query(
            &sql,
            &args![org, principal, after(page), limit(page)],
            |r| rows::api_key(r),
        )
        .await?;
    Ok(Page::from_rows(items, page.limit, |k| k.id.clone()))
}

pub(crate) async fn api_key_get<C: Conn>(
    c: &C,
    org: &str,
    principal: &str,
    id: &str,
) -> Result<ApiKey> {
    let sql = format!(
        "SELECT {} FROM api_keys WHERE org = $1 AND principal = $2 AND id = $3",
        rows::API_KEY_COLUMNS
    );
    c.query_opt(&sql, &args![org, principal, id], |r| rows::api_key(r))
        .await?
        .ok_or_else(|| not_found("api_key", id))
}

pub(crate) async fn api_key_revoke<C: Conn>(
    c: &C,
    org: &str,
    principal: &str,
    id: &str,
) -> Result<()> {
    lock_organization(c, org).await?;
    principal_get(c, org, principal).await?;
    let n = c
        .execute(
            "DELETE FROM api_keys WHERE org = $1 AND principal = $2 AND id = $3",
            &args![org, principal, id],
        )
        .await?;
    if n == 0 {
        return Err(not_found("api_key", id));
    }
    keep_an_admin(c, org, &format!("revoking key '{id}' of '{principal}'")).await?;
    released(c, Quota::ApiKeys, org, n).await
}

pub(crate) async fn api_key_authenticate<C: Conn>(c: &C, key_hash: &str) -> Result<Option<Caller>> {
    c.query_opt(
        "SELECT k.org, k.principal, p.role, k.id, p.kind FROM api_keys k \
         JOIN principals p ON p.org = k.org AND p.name = k.principal \
         WHERE k.key_hash = $1",
        &args![key_hash],
        |r| caller(r),
    )
    .await
}

fn caller(r: &impl Row) -> Result<Caller> {
    let role = r.text(2)?;
    let kind = r.text(4)?;
    Ok(Caller {
        org: r.text(0)?,
        principal: r.text(1)?,
        kind: PrincipalKind::parse(&kind)
            .ok_or_else(|| Error::Internal(format!("unreadable principal kind {kind:?}")))?,
        role: Role::parse(&role)
            .ok_or_else(|| Error::Internal(format!("unreadable role {role:?}")))?,
        key_id: r.text(3)?,
    })
}

pub(crate) async fn api_key_touch<C: Conn>(c: &C, id: &str, now: i64) -> Result<()> {
    c.execute(
        "UPDATE api_keys SET last_used_at = $1 WHERE id = $2",
        &args![now, id],
    )
    .await?;
    Ok(())
}

pub(crate) async fn signing_secret_list<C: Conn>(c: &C, org: &str) -> Result<Vec<SigningSecret>> {
    c.query(
        "SELECT id, secret, created_at FROM signing_secrets WHERE org = $1 \
         ORDER BY created_at DESC, id DESC",
        &args![org],
        |r| rows::signing_secret(r),
    )
    .await
}

/// The record of a keyed rotation names the new secret.
pub(crate) async fn signing_secret_rotate<C: Conn>(
    c: &C,
    org: &str,
    quotas: &Quotas,
    now: i64,
    keyed: &mut Keyed,
) -> Result<SigningSecret> {
    let secret = insert_secret(c, org, now).await?;
    within_quota(c, quotas, Quota::SigningSecrets, org).await?;
    keyed.set_resource_id(|| secret.id.clone());
    Ok(secret)
}

/// Refuses to delete the organization's last secret.
pub(crate) async fn signing_secret_delete<C: Conn>(c: &C, org: &str, id: &str) -> Result<()> {
    // Locking the organization's secrets makes two concurrent deletes of
    // its last two secrets see each other.
    let sql = format!(
        "SELECT id FROM signing_secrets WHERE org = $1 {}",
        c.lock("FOR UPDATE")
    );
    let ids = c.query(&sql, &args![org], |r| r.text(0)).await?;
    if !ids.iter().any(|i| i == id) {
        return Err(not_found("signing_secret", id));
    }
    if ids.len() <= 1 {
        return Err(Error::FailedPrecondition(
            "the organization's only signing secret cannot be deleted; rotate first".into(),
        ));
    }
    let n = c
        .execute(
            "DELETE FROM signing_secrets WHERE org = $1 AND id = $2",
            &args![org, id],
        )
        .await?;
    released(c, Quota::SigningSecrets, org, n).await
}
