//! An in-process store, for tests and single-process deployments that accept
//! losing records on restart.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use super::{
    Claim, ClaimOutcome, ClaimTerms, FinishResult, GuardStore, HandlerOutcome, RecordView,
    RenewResult, RunState, StoreError, Swept, existing_blocks, next_fence,
};
use crate::clock::{Clock, SystemClock, duration_micros, micros};
use crate::key::RunKey;

#[derive(Debug, Clone)]
struct Record {
    state: RunState,
    attempt_id: Uuid,
    fence: i64,
    lease_expires_us: i64,
    expire_at_us: i64,
}

#[derive(Debug, Clone, Copy)]
struct Watermark {
    fence: i64,
    expire_at_us: i64,
}

#[derive(Debug, Clone)]
struct Binding {
    key: RunKey,
    expire_at_us: i64,
}

#[derive(Debug, Default)]
struct Tables {
    records: HashMap<RunKey, Record>,
    fences: HashMap<RunKey, Watermark>,
    tokens: HashMap<String, Binding>,
}

/// Claims kept in a mutex-protected map; one lock makes each claim atomic.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    tables: Arc<Mutex<Tables>>,
    clock: Arc<dyn Clock>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store on the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store reading `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self {
            tables: Arc::default(),
            clock,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        // A panic while holding the lock cannot leave a half-applied claim:
        // every mutation below is a single map operation.
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl GuardStore for MemoryStore {
    async fn claim(&self, key: &RunKey, terms: ClaimTerms) -> Result<ClaimOutcome, StoreError> {
        let now = micros(self.clock.now());
        let mut tables = self.lock();
        if let Some(r) = tables.records.get(key)
            && let Some(blocked) = existing_blocks(r.state, r.lease_expires_us, r.expire_at_us, now)
        {
            return Ok(blocked);
        }
        let expire_at_us = now.saturating_add(duration_micros(terms.effective_retention()));
        let watermark = tables.fences.get(key).map(|w| w.fence);
        let fence = next_fence(watermark, now);
        let attempt_id = Uuid::now_v7();
        let old_expiry = tables.fences.get(key).map_or(i64::MIN, |w| w.expire_at_us);
        tables.fences.insert(
            key.clone(),
            Watermark {
                fence,
                expire_at_us: expire_at_us.max(old_expiry),
            },
        );
        tables.records.insert(
            key.clone(),
            Record {
                state: RunState::InProgress,
                attempt_id,
                fence,
                lease_expires_us: now.saturating_add(duration_micros(terms.lease)),
                expire_at_us,
            },
        );
        Ok(ClaimOutcome::Claimed(Claim {
            key: key.clone(),
            attempt_id,
            fence: super::fence_from_db(fence)?,
        }))
    }

    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        let mut tables = self.lock();
        let holds = tables
            .records
            .get(&claim.key)
            .is_some_and(|r| r.attempt_id == claim.attempt_id && r.state == RunState::InProgress);
        if !holds {
            return Ok(FinishResult::Stale);
        }
        match outcome {
            HandlerOutcome::Success => {
                if let Some(r) = tables.records.get_mut(&claim.key) {
                    r.state = RunState::Completed;
                }
            }
            HandlerOutcome::Failure => {
                tables.records.remove(&claim.key);
            }
        }
        Ok(FinishResult::Applied)
    }

    async fn renew(&self, claim: &Claim, terms: ClaimTerms) -> Result<RenewResult, StoreError> {
        let now = micros(self.clock.now());
        let mut tables = self.lock();
        match tables.records.get_mut(&claim.key) {
            Some(r)
                if r.attempt_id == claim.attempt_id
                    && r.state == RunState::InProgress
                    && r.expire_at_us > now =>
            {
                let lease_expires_us = now.saturating_add(duration_micros(terms.lease));
                let expire_at_us = now.saturating_add(duration_micros(terms.effective_retention()));
                r.lease_expires_us = r.lease_expires_us.max(lease_expires_us);
                r.expire_at_us = r.expire_at_us.max(expire_at_us);
                Ok(RenewResult::Renewed)
            }
            _ => Ok(RenewResult::Lost),
        }
    }

    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError> {
        let now = micros(self.clock.now());
        let mut tables = self.lock();
        let records: Vec<RunKey> = tables
            .records
            .iter()
            .filter(|(_, r)| r.expire_at_us <= now)
            .map(|(k, _)| k.clone())
            .take(limit)
            .collect();
        for k in &records {
            tables.records.remove(k);
        }
        let fences: Vec<RunKey> = tables
            .fences
            .iter()
            .filter(|(_, w)| w.expire_at_us <= now)
            .map(|(k, _)| k.clone())
            .take(limit)
            .collect();
        for k in &fences {
            tables.fences.remove(k);
        }
        let tokens: Vec<String> = tables
            .tokens
            .iter()
            .filter(|(_, b)| b.expire_at_us <= now)
            .map(|(t, _)| t.clone())
            .take(limit)
            .collect();
        for t in &tokens {
            tables.tokens.remove(t);
        }
        Ok(Swept {
            records: records.len(),
            fences: fences.len(),
            tokens: tokens.len(),
        })
    }

    async fn bind_token(
        &self,
        token: &str,
        key: &RunKey,
        ttl: Duration,
    ) -> Result<RunKey, StoreError> {
        let now = micros(self.clock.now());
        let mut tables = self.lock();
        if let Some(b) = tables.tokens.get(token)
            && b.expire_at_us > now
        {
            return Ok(b.key.clone());
        }
        tables.tokens.insert(
            token.to_owned(),
            Binding {
                key: key.clone(),
                expire_at_us: now.saturating_add(duration_micros(ttl)),
            },
        );
        Ok(key.clone())
    }

    async fn inspect(&self, key: &RunKey) -> Result<Option<RecordView>, StoreError> {
        let now = micros(self.clock.now());
        let tables = self.lock();
        match tables.records.get(key) {
            Some(r) if r.expire_at_us > now => Ok(Some(RecordView {
                state: r.state,
                attempt_id: r.attempt_id,
                fence: super::fence_from_db(r.fence)?,
            })),
            _ => Ok(None),
        }
    }
}
