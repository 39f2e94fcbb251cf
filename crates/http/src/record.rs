//! What the layer remembers of a keyed request, and the store contract
//! that keeps it.

use crate::fingerprint::Fingerprint;
use async_trait::async_trait;
use bytes::Bytes;
use std::time::Duration;

/// Whose key it is. Two scopes that send the same key make unrelated
/// requests; Idem uses `"<organization>/<principal>"`.
pub type Scope = String;

/// The resource a completed request created or changed, for replays that
/// re-read it instead of repeating a stored body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRef {
    /// `queue`, `task`, … — the application's vocabulary.
    pub kind: String,
    /// The resource's identifier within its kind.
    pub id: String,
}

/// A response kept whole, for applications that replay stored responses
/// (the non-atomic mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    /// Status code of the original answer.
    pub status: u16,
    /// Headers worth replaying (content type and location).
    pub headers: Vec<(String, String)>,
    /// The original body.
    pub body: Bytes,
}

/// A request that ran to success under its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedRecord {
    /// Fingerprint of the original request.
    pub fingerprint: Fingerprint,
    /// Status code of the original answer.
    pub status: u16,
    /// What it created or changed, when the application records that.
    pub resource: Option<ResourceRef>,
    /// The original answer, when the application stores answers.
    pub response: Option<StoredResponse>,
    /// When the record was completed, when the store knows: in the atomic
    /// mode, the instant of the effect's own commit. A resource created
    /// after it is not the one this request made (it was deleted and made
    /// again under the same name), and a replay must not show it.
    pub completed_at: Option<std::time::SystemTime>,
}

/// Asks to run a keyed request.
#[derive(Debug, Clone)]
pub struct BeginRequest {
    /// Whose key.
    pub scope: Scope,
    /// The key as sent (unquoted).
    pub key: String,
    /// The request's fingerprint.
    pub fingerprint: Fingerprint,
    /// How long the in-progress lock lasts if its holder never finishes
    /// (a crashed process).
    pub lock_for: Duration,
    /// How long a completed record is kept.
    pub retain_for: Duration,
}

/// The store's answer to [`BeginRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// No live record: the caller holds the lock under `token` and runs the
    /// request.
    Started {
        /// Proves ownership to `complete` and `release`.
        token: String,
    },
    /// Another request with this key is running.
    InProgress {
        /// That request's fingerprint.
        fingerprint: Fingerprint,
    },
    /// The key's request already succeeded.
    Completed(CompletedRecord),
}

/// A failure of the record store itself.
#[derive(Debug, thiserror::Error)]
#[error("idempotency store: {0}")]
pub struct StoreError(pub String);

/// Keeps idempotency records.
///
/// `begin` must be atomic: of many concurrent calls with one scope and key,
/// exactly one gets [`Begin::Started`] while no live record exists.
#[async_trait]
pub trait RecordStore: Send + Sync + 'static {
    /// Takes the key's lock, or reports the record that holds it.
    async fn begin(&self, request: BeginRequest) -> Result<Begin, StoreError>;
    /// Records success, unless `token` no longer holds the lock. Only the
    /// non-atomic mode calls it; in the atomic mode the application's own
    /// transaction completes the record together with its effect.
    async fn complete(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        completed: CompletedRecord,
    ) -> Result<(), StoreError>;
    /// Forgets a failed attempt so the next retry runs afresh; a no-op
    /// unless `token` still holds the lock.
    async fn release(&self, scope: &str, key: &str, token: &str) -> Result<(), StoreError>;
    /// The live record holding the key, without taking it: what a claiming
    /// route ([`IdempotencyLayer::claiming`]) answers from when its handler
    /// failed before its write looked at the key. `None` by default, for
    /// stores that serve no claiming route.
    ///
    /// [`IdempotencyLayer::claiming`]: crate::IdempotencyLayer::claiming
    async fn peek(&self, scope: &str, key: &str) -> Result<Option<Begin>, StoreError> {
        let _ = (scope, key);
        Ok(None)
    }
}
