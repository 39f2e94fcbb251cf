//! An in-process [`RecordStore`], for tests and single-process applications
//! that accept losing their records on restart.

use crate::record::{Begin, BeginRequest, CompletedRecord, RecordStore, StoreError};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

enum State {
    InProgress {
        token: String,
        fingerprint: crate::Fingerprint,
        locked_until: Instant,
    },
    Completed(CompletedRecord),
}

struct Entry {
    state: State,
    expires_at: Instant,
}

/// Records in a mutex-guarded map; expired entries are dropped lazily.
#[derive(Default)]
pub struct MemoryRecordStore {
    entries: Mutex<HashMap<(String, String), Entry>>,
}

impl MemoryRecordStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

/// What a live entry for `id` tells a request: in progress or completed.
fn live(
    entries: &HashMap<(String, String), Entry>,
    id: &(String, String),
    now: Instant,
) -> Option<Begin> {
    match entries.get(id)? {
        e if e.expires_at <= now => None,
        Entry {
            state: State::InProgress { locked_until, .. },
            ..
        } if *locked_until <= now => None,
        Entry {
            state: State::Completed(record),
            ..
        } => Some(Begin::Completed(record.clone())),
        Entry {
            state: State::InProgress { fingerprint, .. },
            ..
        } => Some(Begin::InProgress {
            fingerprint: *fingerprint,
        }),
    }
}

#[async_trait]
impl RecordStore for MemoryRecordStore {
    async fn begin(&self, request: BeginRequest) -> Result<Begin, StoreError> {
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("record store");
        let id = (request.scope, request.key);
        match live(&entries, &id, now) {
            Some(found) => Ok(found),
            None => {
                let token = uuid::Uuid::new_v4().to_string();
                entries.insert(
                    id,
                    Entry {
                        state: State::InProgress {
                            token: token.clone(),
                            fingerprint: request.fingerprint,
                            locked_until: now + request.lock_for,
                        },
                        expires_at: now + request.retain_for.max(request.lock_for),
                    },
                );
                Ok(Begin::Started { token })
            }
        }
    }

    async fn complete(
        &self,
        scope: &str,
        key: &str,
        token: &str,
        completed: CompletedRecord,
    ) -> Result<(), StoreError> {
        let mut entries = self.entries.lock().expect("record store");
        if let Some(entry) = entries.get_mut(&(scope.to_string(), key.to_string()))
            && matches!(&entry.state, State::InProgress { token: t, .. } if t == token)
        {
            entry.state = State::Completed(completed);
        }
        Ok(())
    }

    async fn peek(&self, scope: &str, key: &str) -> Result<Option<Begin>, StoreError> {
        let entries = self.entries.lock().expect("record store");
        let id = (scope.to_string(), key.to_string());
        Ok(live(&entries, &id, Instant::now()))
    }

    async fn release(&self, scope: &str, key: &str, token: &str) -> Result<(), StoreError> {
        let mut entries = self.entries.lock().expect("record store");
        let id = (scope.to_string(), key.to_string());
        if matches!(entries.get(&id), Some(Entry { state: State::InProgress { token: t, .. }, .. }) if t == token)
        {
            entries.remove(&id);
        }
        Ok(())
    }
}
