//! Idempotency-Key locks on PostgreSQL: the in-progress row is the lock
//! that every node sees. Completing it is shared ([`Keyed`]).
//!
//! [`Keyed`]: crate::tables::idempotency::Keyed

use super::{Pg, PostgresStore};
use crate::driver::{Conn, args};
use crate::idempotency::*;
use crate::tables::idempotency::{RECORD_COLUMNS, SQL_LOCK, live, micros, record};
use crate::{Error, Result};
use async_trait::async_trait;

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
                    SQL_LOCK,
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
        self.read(async |c, now| live(c, org, principal, key, now).await)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postgres::testing::record_xmax;
    use idem_core::{Clock, ManualClock};
    use idem_testkit::TestDatabase;
    use jiff::SignedDuration;
    use std::sync::Arc;
    use std::time::Duration;

    /// A begin on a key another request holds is answered from the row
    /// without locking it (a lock is a write: each replay wrote WAL, and
    /// concurrent ones waited for each other); once the lock has run out
    /// the key is taken over.
    #[tokio::test]
    async fn a_held_key_is_answered_without_locking_its_row() {
        let db = TestDatabase::create().await;
        let clock = ManualClock::new("2026-10-16T12:00:00Z".parse().unwrap());
        let store = PostgresStore::open(
            &db.url,
            4,
            Arc::new(clock.clone()) as Arc<dyn Clock>,
            crate::events::unrendered(),
        )
        .await
        .unwrap();
        let begin = IdempotencyBegin {
            org: "acme".into(),
            principal: "admin".into(),
            key: "k".into(),
            fingerprint: "fp".into(),
            lock_for: Duration::from_secs(60),
            retain_for: Duration::from_secs(3600),
        };
        let first = match store.idempotency_begin(&begin).await.unwrap() {
            LockOutcome::Started(token) => token,
            other => panic!("{other:?}"),
        };
        for _ in 0..2 {
            match store.idempotency_begin(&begin).await.unwrap() {
                LockOutcome::Existing(r) => assert_eq!(r.state, RecordState::InProgress),
                other => panic!("{other:?}"),
            }
            assert_eq!(record_xmax(&store, "k").await, "0");
        }
        clock.advance(SignedDuration::from_secs(61));
        match store.idempotency_begin(&begin).await.unwrap() {
            LockOutcome::Started(token) => assert_ne!(token, first),
            other => panic!("{other:?}"),
        }
    }
}
