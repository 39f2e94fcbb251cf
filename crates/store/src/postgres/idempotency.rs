//! Idempotency-Key locks on PostgreSQL: the in-progress row is the lock
//! that every node sees. Completing it is shared ([`Keyed`]).
//!
//! [`Keyed`]: crate::tables::idempotency::Keyed

use super::{Pg, PostgresStore};
use crate::driver::{Conn, args};
use crate::idempotency::*;
use crate::tables::idempotency::{RECORD_COLUMNS, micros, record};
use crate::{Error, Result};
use async_trait::async_trait;

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
    async fn idempotency_begin(&self, b: &IdempotencyBegin) -> Result<LockOutcome> {
        let token = uuid::Uuid::now_v7().simple().to_string();
        let select = format!(
            "SELECT {RECORD_COLUMNS} FROM idempotency_keys \
             WHERE org = $1 AND principal = $2 AND key = $3"
        );
        // The row is gone between a failed insert and the select only when
        // its holder released it; one more round settles it.
        for _ in 0..3 {
            let now = self.now();
            let client = self.lock_pool.get().await?;
            let c = Pg(&client);
            let lock_for = micros(b.lock_for);
            let retain = micros(b.retain_for.max(b.lock_for));
            let won = c
                .query_opt(
                    SQL_BEGIN,
                    &args![
                        &b.org,
                        &b.principal,
                        &b.key,
                        &b.fingerprint,
                        &token,
                        now,
                        now.saturating_add(lock_for),
                        now.saturating_add(retain),
                    ],
                    |_| Ok(()),
                )
                .await?;
            if won.is_some() {
                return Ok(LockOutcome::Started(token));
            }
            let existing = c
                .query_opt(&select, &args![&b.org, &b.principal, &b.key], record)
                .await?;
            if let Some(record) = existing {
                return Ok(LockOutcome::Existing(record));
            }
        }
        Err(Error::Unavailable(
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
        Pg(&client)
            .execute(
                "DELETE FROM idempotency_keys WHERE org = $1 AND principal = $2 AND key = $3 \
                 AND token = $4 AND state = 'in_progress'",
                &args![org, principal, key, token],
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
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM idempotency_keys WHERE org = $1 AND principal = $2 \
             AND key = $3 AND expires_at > $4 AND (state = 'completed' OR locked_until > $4)"
        );
        self.read(async |c, now| {
            c.query_opt(&sql, &args![org, principal, key, now], record)
                .await
        })
        .await
    }

    async fn idempotency_sweep(&self, limit: u32) -> Result<u64> {
        self.read(async |c, now| {
            c.execute(
                "DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys \
                 WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)",
                &args![now, i64::from(limit)],
            )
            .await
        })
        .await
    }
}
