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

#[async_trait]
impl RecordStore for MemoryRecordStore {
    async fn begin(&self, request: BeginRequest) -> Result<Begin, StoreError> {
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("record store");
        let id = (request.scope, request.key);
        let live = match entries.get(&id) {
            Some(e) if e.expires_at <= now => None,
            Some(Entry {
                state: State::InProgress { locked_until, .. },
                ..
            }) if *locked_until <= now => None,
            other => other,
        };
        match live {
            Some(Entry {
                state: State::Completed(record),
                ..
            }) => Ok(Begin::Completed(record.clone())),
            Some(Entry {
                state: State::InProgress { fingerprint, .. },
                ..
            }) => Ok(Begin::InProgress {
                fingerprint: *fingerprint,
            }),
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
