//! Organizations' keys for the OIDC ID tokens their deliveries carry.
//!
//! A key signs for one rotation period from its creation, and stays
//! published (in the server's JWKS) for `keep`, which the server sets to the
//! rotation period plus the longest token lifetime: every token a key signed
//! has expired before it leaves the JWKS. The store decides nothing about
//! cryptography; it keeps what the server generated.

use super::idempotency::micros;
use super::tenancy::lock_organization;
use crate::Result;
use crate::driver::{Conn, args};
use crate::oidc::{NewOidcKey, OidcKey, OidcPublicKey};
use crate::sql::Row;
use idem_core::clock::from_micros;
use std::time::Duration;

const KEY_COLUMNS: &str = "org, kid, algorithm, private_key, public_jwk, created_at";

fn key(r: &impl Row) -> Result<OidcKey> {
    Ok(OidcKey {
        org: r.text(0)?,
        kid: r.text(1)?,
        algorithm: r.text(2)?,
        private_key: r.text(3)?,
        public_jwk: r.text(4)?,
        created_at: from_micros(r.i64(5)?),
    })
}

/// The organization's newest key younger than `rotation`, or `candidate`
/// inserted as its new one. The organization's row is locked first, so
/// nodes asking at once make one key, and the keys past `keep` go in the
/// same transaction.
pub(crate) async fn current<C: Conn>(
    c: &C,
    org: &str,
    rotation: Duration,
    keep: Duration,
    candidate: NewOidcKey,
    now: i64,
) -> Result<OidcKey> {
    lock_organization(c, org).await?;
    let sql = format!(
        "SELECT {KEY_COLUMNS} FROM oidc_keys WHERE org = $1 AND created_at > $2 \
         ORDER BY created_at DESC, kid DESC LIMIT 1"
    );
    let young = now.saturating_sub(micros(rotation));
    if let Some(found) = c.query_opt(&sql, &args![org, young], |r| key(r)).await? {
        return Ok(found);
    }
    c.execute(
        "DELETE FROM oidc_keys WHERE org = $1 AND created_at <= $2",
        &args![org, now.saturating_sub(micros(keep))],
    )
    .await?;
    c.execute(
        "INSERT INTO oidc_keys (org, kid, algorithm, private_key, public_jwk, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        &args![
            org,
            &candidate.kid,
            &candidate.algorithm,
            &candidate.private_key,
            &candidate.public_jwk,
            now
        ],
    )
    .await?;
    Ok(OidcKey {
        org: org.to_string(),
        kid: candidate.kid,
        algorithm: candidate.algorithm,
        private_key: candidate.private_key,
        public_jwk: candidate.public_jwk,
        created_at: from_micros(now),
    })
}

/// Every organization's keys younger than `keep`, newest first.
pub(crate) async fn published<C: Conn>(
    c: &C,
    keep: Duration,
    now: i64,
) -> Result<Vec<OidcPublicKey>> {
    c.query(
        "SELECT kid, public_jwk, created_at FROM oidc_keys WHERE created_at > $1 \
         ORDER BY created_at DESC, kid DESC",
        &args![now.saturating_sub(micros(keep))],
        |r| {
            Ok(OidcPublicKey {
                kid: r.text(0)?,
                public_jwk: r.text(1)?,
                created_at: from_micros(r.i64(2)?),
            })
        },
    )
    .await
}
