//! Idempotency records on SQLite.
//!
//! One process owns the database file, so a request's in-progress lock
//! lives in memory: taking it costs no write and no fsync, and a crash
//! releases it with the process. Only completed records reach the file,
//! written by the effect's own transaction ([`complete`]).

use super::SqliteStore;
use crate::Result;
use crate::idempotency::{self, *};
use async_trait::async_trait;
use idem_core::clock::{from_micros, to_micros};
use jiff::{SignedDuration, Timestamp};
use rusqlite::{Connection, OptionalExtension, params};

/// A request holding its key.
pub(super) struct Lock {
    token: String,
    fingerprint: String,
    created_at: Timestamp,
    locked_until: Timestamp,
}

pub(super) type LockId = (String, String, String);

/// Writes `done` as completed inside the current transaction.
pub(super) fn complete(conn: &Connection, done: Option<&Completion>, now: i64) -> Result<()> {
    let Some(d) = done else { return Ok(()) };
    let n = conn
        .prepare_cached(idempotency::SQL_COMPLETE)?
        .execute(params![
            d.org,
            d.principal,
            d.key,
            d.fingerprint,
            d.token,
            d.status,
            d.resource_kind,
            d.resource_id,
            d.body,
            now,
            now.saturating_add(idempotency::micros(d.retain_for)),
        ])?;
    if n == 0 {
        return Err(idempotency::lost(&d.key));
    }
    Ok(())
}

/// Fails when another request has taken `done`'s key over (its lock expired
/// while this request was still running). A missing lock is not a takeover:
/// the completion's own upsert then decides.
pub(super) fn check_still_held(
    locks: &std::sync::Mutex<std::collections::HashMap<LockId, Lock>>,
    done: &Completion,
) -> Result<()> {
    let id = lock_id(&done.org, &done.principal, &done.key);
    match locks.lock().expect("idempotency locks").get(&id) {
        Some(held) if held.token != done.token => Err(idempotency::lost(&done.key)),
        _ => Ok(()),
    }
}

fn lock_id(org: &str, principal: &str, key: &str) -> LockId {
    (org.to_string(), principal.to_string(), key.to_string())
}

impl SqliteStore {
    /// Drops the in-memory lock a committed completion made redundant.
    pub(super) fn unlock(&self, done: Option<&Completion>) {
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

fn get_record(
    conn: &Connection,
    org: &str,
    principal: &str,
    key: &str,
    now: i64,
) -> Result<Option<IdempotencyRecord>> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM idempotency_keys WHERE org = $1 AND principal = $2 AND key = $3 \
         AND expires_at > $4 AND state = 'completed'",
        idempotency::RECORD_COLUMNS
    ))?
    .query_row(params![org, principal, key, now], |r| {
        Ok(idempotency::record(r))
    })
    .optional()?
    .transpose()
}

#[async_trait]
impl IdempotencyStore for SqliteStore {
    async fn idempotency_begin(&self, b: &IdempotencyBegin) -> Result<Begun> {
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
                return Ok(Begun::Existing(IdempotencyRecord {
                    key: b.key.clone(),
                    fingerprint: held.fingerprint.clone(),
                    state: RecordState::InProgress,
                    status: None,
                    resource_kind: None,
                    resource_id: None,
                    body: None,
                    created_at: held.created_at,
                    expires_at: held.locked_until,
                }));
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
            .read(move |conn, now| get_record(conn, &org, &principal, &key, now))
            .await;
        match existing {
            Ok(None) => Ok(Begun::Started(token)),
            Ok(Some(record)) => {
                self.drop_lock(&id, &token);
                Ok(Begun::Existing(record))
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
            .read(move |conn, now| get_record(conn, &o, &p, &k, now))
            .await?
        {
            return Ok(Some(record));
        }
        let locks = self.inner.locks.lock().expect("idempotency locks");
        Ok(locks
            .get(&id)
            .filter(|l| l.locked_until > now)
            .map(|l| IdempotencyRecord {
                key: key.to_string(),
                fingerprint: l.fingerprint.clone(),
                state: RecordState::InProgress,
                status: None,
                resource_kind: None,
                resource_id: None,
                body: None,
                created_at: l.created_at,
                expires_at: l.locked_until,
            }))
    }

    async fn idempotency_sweep(&self, limit: u32) -> Result<u64> {
        let now = to_micros(self.now());
        {
            let mut locks = self.inner.locks.lock().expect("idempotency locks");
            let now = from_micros(now);
            locks.retain(|_, l| l.locked_until > now);
        }
        self.write(move |conn, _| {
            let n = conn
                .prepare_cached(
                    "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM \
                     idempotency_keys WHERE expires_at <= $1 LIMIT $2)",
                )?
                .execute(params![now, limit])?;
            Ok(n as u64)
        })
        .await
    }
}
