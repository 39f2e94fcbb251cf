//! `idempotency_keys`: the completed record a keyed write commits with its
//! effect. Taking and releasing a key's lock ahead of the write is each
//! backend's own (a row every node sees on PostgreSQL, memory on SQLite);
//! a write that claims its key instead does it here, in its transaction.

use crate::driver::{Conn, Dialect, args};
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

    /// For a key the write claims ([`KeyCompletion::claim`]), before its
    /// body: takes the key in the current transaction, or stops the write
    /// with [`Error::KeyHeld`] and the live record holding it.
    ///
    /// On PostgreSQL the key's row is inserted in progress under the
    /// request's token ([`SQL_LOCK`]), so that concurrent claims and locks
    /// of the key wait for this transaction and then see its outcome;
    /// [`Self::complete`] turns it into the record. SQLite's single writer
    /// runs one write at a time, so a read of the live record is enough (a
    /// lock in memory is checked by the backend before).
    pub(crate) async fn claim<C: Conn>(&self, c: &C, now: i64) -> Result<()> {
        let Some(k) = self.0.as_ref().filter(|k| k.claim) else {
            return Ok(());
        };
        if C::DIALECT == Dialect::Sqlite {
            return match live(c, &k.org, &k.principal, &k.key, now).await? {
                Some(record) => Err(Error::KeyHeld(Box::new(record))),
                None => Ok(()),
            };
        }
        let expires_at = now.saturating_add(micros(k.retain_for));
        // The row is gone between a refused insert and the read only when
        // its holder released it; one more round settles it.
        for _ in 0..3 {
            let won = c
                .query_opt(
                    SQL_LOCK,
                    &args![
                        &k.org,
                        &k.principal,
                        &k.key,
                        &k.fingerprint,
                        &k.token,
                        now,
                        expires_at,
                        expires_at,
                    ],
                    |_| Ok(()),
                )
                .await?;
            if won.is_some() {
                return Ok(());
            }
            if let Some(record) = live(c, &k.org, &k.principal, &k.key, now).await? {
                return Err(Error::KeyHeld(Box::new(record)));
            }
        }
        Err(Error::Unavailable(
            "the Idempotency-Key changed hands repeatedly; retry".into(),
        ))
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

/// The condition on a record `$r` that it holds its key at `$now`:
/// completed and not expired, or in progress with its lock running. The
/// conflict clauses that replace a record take over exactly the others
/// (`NOT (…)` of the same text), so a statement that skips a live record
/// before its insert and its conflict clause never disagree.
macro_rules! live_record {
    ($r:literal, $now:literal) => {
        concat!(
            $r,
            ".expires_at > ",
            $now,
            " AND (",
            $r,
            ".state = 'completed' OR ",
            $r,
            ".locked_until > ",
            $now,
            ")"
        )
    };
}
pub(crate) use live_record;

/// The in-progress row that holds a key: inserted, or replacing a record
/// that expired or a lock that ran out; `RETURNING` a row only then.
/// Parameters: org, principal, key, fingerprint, token, now, locked_until,
/// expires_at (PostgreSQL only).
///
/// A key whose live record the statement's snapshot sees is left alone
/// before the insert ([`live_record!`]): `ON CONFLICT DO UPDATE` locks the
/// row it meets even when its `WHERE` keeps it, and that lock is a write,
/// so every replay wrote WAL (and a transaction committing synchronously,
/// as a claim's does, waited for its flush), and concurrent replays of one
/// key waited for each other. A record committed after the snapshot still
/// meets the conflict clause, which decides on its newest version.
pub(crate) const SQL_LOCK: &str = concat!(
    "INSERT INTO idempotency_keys AS i (org, principal, key, \
     fingerprint, state, token, created_at, locked_until, expires_at) \
     SELECT $1::text, $2::text, $3::text, $4::text, 'in_progress', $5::text, $6::bigint, \
     $7::bigint, $8::bigint \
     WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys l \
     WHERE l.org = $1 AND l.principal = $2 AND l.key = $3 AND ",
    live_record!("l", "$6"),
    ") ON CONFLICT (org, principal, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     state = 'in_progress', token = excluded.token, status = NULL, resource_kind = NULL, \
     resource_id = NULL, body = NULL, created_at = excluded.created_at, \
     locked_until = excluded.locked_until, expires_at = excluded.expires_at \
     WHERE NOT (",
    live_record!("i", "excluded.created_at"),
    ") RETURNING token"
);

/// The live record of a key at `now`: completed and not expired, or in
/// progress with its lock running.
pub(crate) async fn live<C: Conn>(
    c: &C,
    org: &str,
    principal: &str,
    key: &str,
    now: i64,
) -> Result<Option<IdempotencyRecord>> {
    let sql = format!(
        concat!(
            "SELECT {} FROM idempotency_keys r WHERE org = $1 AND principal = $2 \
             AND key = $3 AND ",
            live_record!("r", "$4")
        ),
        RECORD_COLUMNS
    );
    c.query_opt(&sql, &args![org, principal, key, now], |r| record(r))
        .await
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
const SQL_COMPLETE: &str = concat!(
    "INSERT INTO idempotency_keys (org, principal, key, \
     fingerprint, state, token, status, resource_kind, resource_id, body, created_at, \
     locked_until, expires_at) \
     VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, $8, $9, $10, $10, $11) \
     ON CONFLICT (org, principal, key) DO UPDATE SET fingerprint = excluded.fingerprint, \
     state = 'completed', token = excluded.token, status = excluded.status, \
     resource_kind = excluded.resource_kind, resource_id = excluded.resource_id, \
     body = excluded.body, locked_until = excluded.locked_until, \
     expires_at = excluded.expires_at \
     WHERE idempotency_keys.token = excluded.token OR NOT (",
    live_record!("idempotency_keys", "excluded.created_at"),
    ")"
);

pub(crate) fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The error of a completion that matched no row: the lock was lost.
pub(crate) fn lost(key: &str) -> Error {
    Error::KeyLost(format!(
        "the Idempotency-Key '{key}' was taken over by another request; nothing was changed"
    ))
}
