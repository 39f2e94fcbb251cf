//! Idempotency records on SQLite.
//!
//! One process owns the database file, so a request's in-progress lock
//! lives in memory: taking it costs no write and no fsync, and a crash
//! releases it with the process. Only completed records reach the file,
//! written by the effect's own transaction ([`Keyed`]).
//!
//! [`Keyed`]: crate::tables::idempotency::Keyed

use super::{Lite, SqliteStore};
use crate::Result;
use crate::driver::{Conn, args};
use crate::idempotency::*;
use crate::tables::idempotency::{RECORD_COLUMNS, lost, record};
use async_trait::async_trait;
use idem_core::clock::{from_micros, to_micros};
use jiff::{SignedDuration, Timestamp};

/// A request holding its key.
pub(super) struct Lock {
    token: String,
    fingerprint: String,
    created_at: Timestamp,
    locked_until: Timestamp,
}

pub(super) type LockId = (String, String, String);

/// Fails when another request has taken `done`'s key over (its lock expired
/// while this request was still running). A missing lock is not a takeover:
/// the completion's own upsert then decides. A write that claims its key
/// holds no lock: any live lock is another request's, which holds the key.
pub(super) fn check_still_held(
    locks: &std::sync::Mutex<std::collections::HashMap<LockId, Lock>>,
    done: &KeyCompletion,
    now: i64,
) -> Result<()> {
    let id = lock_id(&done.org, &done.principal, &done.key);
    let locks = locks.lock().expect("idempotency locks");
    match locks.get(&id) {
        Some(held) if done.claim && to_micros(held.locked_until) > now => {
            Err(crate::Error::KeyHeld(Box::new(held.record(&done.key))))
        }
        Some(held) if !done.claim && held.token != done.token => Err(lost(&done.key)),
        _ => Ok(()),
    }
}

impl Lock {
    /// The in-progress record this lock stands for.
    fn record(&self, key: &str) -> IdempotencyRecord {
        IdempotencyRecord {
            key: key.to_string(),
            fingerprint: self.fingerprint.clone(),
            state: RecordState::InProgress,
            status: None,
            resource_kind: None,
            resource_id: None,
            body: None,
            created_at: self.created_at,
            completed_at: None,
            expires_at: self.locked_until,
        }
    }
}

fn lock_id(org: &str, principal: &str, key: &str) -> LockId {
    (org.to_string(), principal.to_string(), key.to_string())
}

impl SqliteStore {
    /// Drops the in-memory lock a committed completion made redundant.
    pub(super) fn unlock(&self, done: Option<&KeyCompletion>) {
        if let Some(d) = done {
            self.drop_lock(&lock_id(&d.org, &d.principal, &d.key), &d.token);
        }
    }

    fn drop_lock(&self, id: &LockId, token: &str) {
        let mut locks = self.inner.locks.lock().expect("idempotency locks");
        if locks.get(id).is_some_and(|l| l.token == token) {
            locks.remove(id);
        }
    }
}

async fn get_record(
    c: &Lite<'_>,
    org: &str,
    principal: &str,
    key: &str,
    now: i64,
) -> Result<Option<IdempotencyRecord>> {
    let sql = format!(
        "SELECT {RECORD_COLUMNS} FROM idempotency_keys WHERE org = $1 AND principal = $2 \
         AND key = $3 AND expires_at > $4 AND state = 'completed'"
    );
    c.query_opt(&sql, &args![org, principal, key, now], |r| record(r))
        .await
}

#[async_trait]
impl IdempotencyStore for SqliteStore {
    async fn idempotency_begin(&self, b: &IdempotencyBegin) -> Result<LockOutcome> {
        let now = self.now();
        let id = lock_id(&b.org, &b.principal, &b.key);
        let token = uuid::Uuid::now_v7().simple().to_string();
        // Lock first, then look for a completed record: a request that
        // completes and unlocks in between is then seen as completed.
        {
            let mut locks = self.inner.locks.lock().expect("idempotency locks");
            if let Some(held) = locks.get(&id)
                && held.locked_until > now
            {
                return Ok(LockOutcome::Existing(held.record(&b.key)));
            }
            let lock_for = SignedDuration::try_from(b.lock_for).unwrap_or(SignedDuration::MAX);
            locks.insert(
                id.clone(),
                Lock {
                    token: token.clone(),
                    fingerprint: b.fingerprint.clone(),
                    created_at: now,
                    locked_until: now.checked_add(lock_for).unwrap_or(Timestamp::MAX),
                },
            );
        }
        let (org, principal, key) = id.clone();
        let existing = self
            .read(async move |c, now| get_record(c, &org, &principal, &key, now).await)
            .await;
        match existing {
            Ok(None) => Ok(LockOutcome::Started(token)),
            Ok(Some(record)) => {
                self.drop_lock(&id, &token);
                Ok(LockOutcome::Existing(record))
            }
            Err(e) => {
                self.drop_lock(&id, &token);
                Err(e)
            }
        }
    }

    async fn idempotency_release(
        &self,
        org: &str,
        principal: &str,
        key: &str,
        token: &str,
    ) -> Result<()> {
        self.drop_lock(&lock_id(org, principal, key), token);
        Ok(())
    }

    async fn idempotency_get(
        &self,
        org: &str,
        principal: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>> {
        let now = self.now();
        let id = lock_id(org, principal, key);
        let (o, p, k) = id.clone();
        if let Some(record) = self
            .read(async move |c, now| get_record(c, &o, &p, &k, now).await)
            .await?
        {
            return Ok(Some(record));
        }
        let locks = self.inner.locks.lock().expect("idempotency locks");
        Ok(locks
            .get(&id)
            .filter(|l| l.locked_until > now)
            .map(|l| l.record(key)))
    }

    async fn idempotency_sweep(&self, limit: u32) -> Result<u64> {
        let now = to_micros(self.now());
        {
            let mut locks = self.inner.locks.lock().expect("idempotency locks");
            let now = from_micros(now);
            locks.retain(|_, l| l.locked_until > now);
        }
        self.write(None, async move |c, _, _| {
            c.execute(
                "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM \
                 idempotency_keys WHERE expires_at <= $1 LIMIT $2)",
                &args![now, i64::from(limit)],
            )
            .await
        })
        .await
    }
}
