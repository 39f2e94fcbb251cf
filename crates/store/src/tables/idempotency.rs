//! `idempotency_keys`: the completed record a keyed write commits with its
//! effect. Taking and releasing a key's lock is each backend's own (a row
//! every node sees on PostgreSQL, memory on SQLite).

use crate::driver::{Conn, args};
use crate::idempotency::{IdempotencyRecord, KeyCompletion, RecordState};
use crate::sql::Row;
use crate::{Error, Result};
use idem_core::clock::from_micros;
use std::time::Duration;

/// A write's Idempotency-Key record, if the request carried a key. The
/// backends' transaction helpers take it and complete it after the body, in
/// the same transaction: a body cannot skip the completion, only fill in
/// what it alone knows (a generated ID, a response body).
pub(crate) struct Keyed(Option<KeyCompletion>);

impl Keyed {
    pub(crate) fn new(key: Option<KeyCompletion>) -> Keyed {
        Keyed(key)
    }

    /// The ID of the resource the write created, known only once it has.
    pub(crate) fn set_resource_id(&mut self, id: impl FnOnce() -> String) {
        if let Some(k) = &mut self.0 {
            k.resource_id = id();
        }
    }

    /// A response body kept for replays that cannot re-read a resource.
    pub(crate) fn set_body(&mut self, body: impl FnOnce() -> String) {
        if let Some(k) = &mut self.0 {
            k.body = Some(body());
        }
    }

    /// Writes the completed record in the current transaction. Matching no
    /// row means the lock was taken over: the error rolls the effect back.
    pub(crate) async fn complete<C: Conn>(&self, c: &C, now: i64) -> Result<()> {
        let Some(k) = &self.0 else { return Ok(()) };
        let n = c
            .execute(
                SQL_COMPLETE,
                &args![
                    &k.org,
                    &k.principal,
                    &k.key,
                    &k.fingerprint,
                    &k.token,
                    i64::from(k.status),
                    k.resource_kind,
                    &k.resource_id,
                    &k.body,
                    now,
                    now.saturating_add(micros(k.retain_for)),
                ],
            )
            .await?;
        if n == 0 {
            return Err(lost(&k.key));
        }
        Ok(())
    }
}

/// Columns of `idempotency_keys` in the order [`record`] reads them.
pub(crate) const RECORD_COLUMNS: &str = "key, fingerprint, state, status, resource_kind, \
     resource_id, body, created_at, expires_at, locked_until";

pub(crate) fn record(r: &impl Row) -> Result<IdempotencyRecord> {
    let state = r.text(2)?;
    let completed = state == "completed";
    Ok(IdempotencyRecord {
        key: r.text(0)?,
        fingerprint: r.text(1)?,
        state: match state.as_str() {
            "completed" => RecordState::Completed,
            _ => RecordState::InProgress,
        },
        status: r.opt_i64(3)?.map(|s| s as u16),
        resource_kind: r.opt_text(4)?,
        resource_id: r.opt_text(5)?,
        body: r.opt_text(6)?,
        created_at: from_micros(r.i64(7)?),
        // Every completion, in the shared statement below and in
        // PostgreSQL's one-statement keyed create, sets `locked_until` to
        // the effect's own `now`: that is when it committed.
        completed_at: completed.then(|| r.i64(9)).transpose()?.map(from_micros),
        expires_at: from_micros(r.i64(8)?),
    })
}

/// Writes a completed record, replacing the request's own in-progress row
/// (same token) or an expired one; its `locked_until` becomes the instant
/// of the effect's commit, which replays compare with the resource's own; matches nothing when another request
/// holds the key. Parameters: org, principal, key, fingerprint, token,
/// status, kind, id, body, now, expires_at.
const SQL_COMPLETE: &str = "INSERT INTO idempotency_keys (org, principal, key, \
     fingerprint, state, token, status, resource_kind, resource_id, body, created_at, \
     locked_until, expires_at) \
     VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, $8, $9, $10, $10, $11) \
     ON CONFLICT (org, principal, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     state = 'completed', token = excluded.token, status = excluded.status, \
     resource_kind = excluded.resource_kind, resource_id = excluded.resource_id, \
     body = excluded.body, locked_until = excluded.locked_until, \
     expires_at = excluded.expires_at \
     WHERE idempotency_keys.token = excluded.token \
     OR idempotency_keys.expires_at <= excluded.created_at \
     OR (idempotency_keys.state = 'in_progress' \
         AND idempotency_keys.locked_until <= excluded.created_at)";

pub(crate) fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The error of a completion that matched no row: the lock was lost.
pub(crate) fn lost(key: &str) -> Error {
    Error::KeyLost(format!(
        "the Idempotency-Key '{key}' was taken over by another request; nothing was changed"
    ))
}
