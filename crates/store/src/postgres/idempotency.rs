//! Idempotency records on PostgreSQL: the in-progress row is the lock that
//! every node sees.

use super::{PostgresStore, execute, query_opt};
use crate::Result;
use crate::idempotency::{self, *};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;

/// Writes `done` as completed inside the current transaction.
pub(super) async fn complete<C: GenericClient>(
    c: &C,
    done: Option<&Completion>,
    now: i64,
) -> Result<()> {
    let Some(d) = done else { return Ok(()) };
    let n = execute(
        c,
        idempotency::SQL_COMPLETE,
        &[
            &d.org,
            &d.principal,
            &d.key,
            &d.fingerprint,
            &d.token,
            &i64::from(d.status),
            &d.resource_kind,
            &d.resource_id,
            &d.body,
            &now,
            &now.saturating_add(idempotency::micros(d.retain_for)),
        ],
    )
    .await?;
    if n == 0 {
        return Err(idempotency::lost(&d.key));
    }
    Ok(())
}

const SQL_BEGIN: &str = "INSERT INTO idempotency_keys (org, principal, key, fingerprint, state, \
     token, created_at, locked_until, expires_at) \
     VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7, $8) \
     ON CONFLICT (org, principal, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     state = 'in_progress', token = excluded.token, status = NULL, resource_kind = NULL, \
     resource_id = NULL, body = NULL, created_at = excluded.created_at, \
     locked_until = excluded.locked_until, expires_at = excluded.expires_at \
     WHERE idempotency_keys.expires_at <= excluded.created_at \
     OR (idempotency_keys.state = 'in_progress' \
         AND idempotency_keys.locked_until <= excluded.created_at) \
     RETURNING token";

#[async_trait]
impl IdempotencyStore for PostgresStore {
    async fn idempotency_begin(&self, b: &IdempotencyBegin) -> Result<Begun> {
        let token = uuid::Uuid::now_v7().simple().to_string();
        let select = format!(
            "SELECT {} FROM idempotency_keys WHERE org = $1 AND principal = $2 AND key = $3",
            idempotency::RECORD_COLUMNS
        );
        // The row is gone between a failed insert and the select only when
        // its holder released it; one more round settles it.
        for _ in 0..3 {
            let now = self.now();
            let client = self.lock_pool.get().await?;
            let lock_for = idempotency::micros(b.lock_for);
            let retain = idempotency::micros(b.retain_for.max(b.lock_for));
            let won = query_opt(
                &client,
                SQL_BEGIN,
                &[
                    &b.org,
                    &b.principal,
                    &b.key,
                    &b.fingerprint,
                    &token,
                    &now,
                    &now.saturating_add(lock_for),
                    &now.saturating_add(retain),
                ],
            )
            .await?;
            if won.is_some() {
                return Ok(Begun::Started(token));
            }
            if let Some(row) = query_opt(&client, &select, &[&b.org, &b.principal, &b.key]).await? {
                return Ok(Begun::Existing(idempotency::record(&row)?));
            }
        }
        Err(crate::Error::Unavailable(
            "the Idempotency-Key changed hands repeatedly; retry".into(),
        ))
    }

    async fn idempotency_release(
        &self,
        org: &str,
        principal: &str,
        key: &str,
        token: &str,
    ) -> Result<()> {
        let client = self.lock_pool.get().await?;
        execute(
            &client,
            "DELETE FROM idempotency_keys WHERE org = $1 AND principal = $2 AND key = $3 \
             AND token = $4 AND state = 'in_progress'",
            &[&org, &principal, &key, &token],
        )
        .await?;
        Ok(())
    }

    async fn idempotency_get(
        &self,
        org: &str,
        principal: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>> {
        let client = self.pool.get().await?;
        let sql = format!(
            "SELECT {} FROM idempotency_keys WHERE org = $1 AND principal = $2 AND key = $3 \
             AND expires_at > $4 AND (state = 'completed' OR locked_until > $4)",
            idempotency::RECORD_COLUMNS
        );
        query_opt(&client, &sql, &[&org, &principal, &key, &self.now()])
            .await?
            .map(|r| idempotency::record(&r))
            .transpose()
    }

    async fn idempotency_sweep(&self, limit: u32) -> Result<u64> {
        let client = self.pool.get().await?;
        execute(
            &client,
            "DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys \
             WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)",
            &[&self.now(), &i64::from(limit)],
        )
        .await
    }
}
