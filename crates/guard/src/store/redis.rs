//! Redis: each operation is one Lua script, which Redis runs without
//! interleaving any other command, and "now" is the server's `TIME`.
//!
//! Layout under a prefix `P`: the record `P run:<key>` and the fence
//! watermark `P fence:<key>` are hashes; `P runs-by-expiry` and
//! `P fences-by-expiry` are sorted sets scored by `expire_at`, so that a
//! sweep finds expired entries without scanning the keyspace. A token
//! binding `P token:<digest>` is a string holding the run key, set with
//! `NX` and Redis's own expiry, which is all a binding needs: nothing else
//! refers to it, so sweeps leave it alone. The scripts
//! name keys derived from the prefix, which is fine on a single Redis server
//! or a replica set, not on Redis Cluster.

use std::time::Duration;

use async_trait::async_trait;
use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use uuid::Uuid;

use super::{
    Claim, ClaimOutcome, ClaimTerms, Fence, FinishResult, GuardStore, HandlerOutcome, RecordView,
    RenewResult, StoreError, Swept, parse_attempt, parse_key, parse_state,
};
use crate::clock::duration_micros;
use crate::key::RunKey;

/// Records and watermarks also get a native expiry this long after their
/// `expire_at`, so that a deployment that never sweeps does not grow without
/// bound. Sweeping stays the primary mechanism: it is what honours `expire_at`
/// to the microsecond and keeps the expiry indexes small.
const BACKSTOP_MS: i64 = 60 * 60 * 1000;

// The scripts' text is in `scripts/`: the TypeScript and Python guards'
// tests hold their copies to it, so that all three share claims.
const LUA_NOW: &str = include_str!("scripts/now.lua");

// KEYS: run, fence, runs-by-expiry, fences-by-expiry
// ARGV: member (run key), attempt id, lease µs, retention µs, backstop ms
const CLAIM: &str = include_str!("scripts/claim.lua");

// KEYS: run, runs-by-expiry
// ARGV: attempt id, 'success' | 'failure', member
const FINISH: &str = include_str!("scripts/finish.lua");

// KEYS: run, runs-by-expiry
// ARGV: attempt id, lease µs, retention µs, backstop ms, member (run key)
const RENEW: &str = include_str!("scripts/renew.lua");

// KEYS: runs-by-expiry, fences-by-expiry
// ARGV: limit, run key prefix, fence key prefix
const SWEEP: &str = include_str!("scripts/sweep.lua");

// KEYS: token
// ARGV: run key, ttl ms
const BIND_TOKEN: &str = include_str!("scripts/bind_token.lua");

// KEYS: run
const INSPECT: &str = include_str!("scripts/inspect.lua");

/// A store in Redis, under a key prefix.
#[derive(Clone)]
pub struct RedisStore {
    conn: ConnectionManager,
    prefix: String,
    claim: Script,
    finish: Script,
    renew: Script,
    sweep: Script,
    inspect: Script,
    bind_token: Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Connects to `redis://…` (or `rediss://…`, TLS checked against the
    /// system's trust store) and keeps every key under `prefix`.
    ///
    /// The scripts are loaded at once, which doubles as a connectivity check.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, StoreError> {
        Self::connect_tls(url, prefix, None).await
    }

    /// [`RedisStore::connect`], where `root_ca_pem`, if given, holds the
    /// PEM certificates a `rediss://` server's certificate must chain to,
    /// instead of the system's.
    pub async fn connect_tls(
        url: &str,
        prefix: &str,
        root_ca_pem: Option<Vec<u8>>,
    ) -> Result<Self, StoreError> {
        if url.starts_with("rediss://") {
            // The redis crate builds its TLS configuration with the
            // process-wide rustls provider, and panics without one.
            if rustls::crypto::CryptoProvider::get_default().is_none() {
                let _ = rustls::crypto::ring::default_provider().install_default();
            }
        }
        let client = match root_ca_pem {
            Some(root_cert) => redis::Client::build_with_tls(
                url,
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(root_cert),
                },
            )?,
            None => redis::Client::open(url)?,
        };
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_number_of_retries(3);
        let mut conn = ConnectionManager::new_with_config(client, config).await?;
        let with_now = |body: &str| Script::new(&format!("{LUA_NOW}{body}"));
        let store = Self {
            prefix: prefix.to_owned(),
            claim: with_now(CLAIM),
            finish: Script::new(FINISH),
            renew: with_now(RENEW),
            sweep: with_now(SWEEP),
            inspect: with_now(INSPECT),
            bind_token: Script::new(BIND_TOKEN),
            conn: conn.clone(),
        };
        let scripts = [
            &store.claim,
            &store.finish,
            &store.renew,
            &store.sweep,
            &store.inspect,
            &store.bind_token,
        ];
        for script in scripts {
            script.prepare_invoke().load_async(&mut conn).await?;
        }
        Ok(store)
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn run_key(&self, key: &RunKey) -> String {
        format!("{}run:{}", self.prefix, key)
    }

    fn fence_key(&self, key: &RunKey) -> String {
        format!("{}fence:{}", self.prefix, key)
    }

    fn token_key(&self, token: &str) -> String {
        format!("{}token:{}", self.prefix, token)
    }

    fn runs_index(&self) -> String {
        format!("{}runs-by-expiry", self.prefix)
    }

    fn fences_index(&self) -> String {
        format!("{}fences-by-expiry", self.prefix)
    }
}

fn parse_fence(value: &str) -> Result<Fence, StoreError> {
    value
        .parse()
        .map(Fence)
        .map_err(|_| StoreError::Corrupt(format!("fence {value:?}")))
}

#[async_trait]
impl GuardStore for RedisStore {
    async fn claim(&self, key: &RunKey, terms: ClaimTerms) -> Result<ClaimOutcome, StoreError> {
        let attempt_id = Uuid::now_v7();
        let reply: Vec<String> = self
            .claim
            .key(self.run_key(key))
            .key(self.fence_key(key))
            .key(self.runs_index())
            .key(self.fences_index())
            .arg(key.as_str())
            .arg(attempt_id.to_string())
            .arg(duration_micros(terms.lease))
            .arg(duration_micros(terms.effective_retention()))
            .arg(BACKSTOP_MS)
            .invoke_async(&mut self.conn.clone())
            .await?;
        match reply.as_slice() {
            [state] if state == "completed" => Ok(ClaimOutcome::Completed),
            [state] if state == "in_progress" => Ok(ClaimOutcome::InProgress),
            [state, fence] if state == "claimed" => Ok(ClaimOutcome::Claimed(Claim {
                key: key.clone(),
                attempt_id,
                fence: parse_fence(fence)?,
            })),
            other => Err(StoreError::Corrupt(format!("claim reply {other:?}"))),
        }
    }

    async fn finish(
        &self,
        claim: &Claim,
        outcome: HandlerOutcome,
    ) -> Result<FinishResult, StoreError> {
        let outcome = match outcome {
            HandlerOutcome::Success => "success",
            HandlerOutcome::Failure => "failure",
        };
        let changed: i64 = self
            .finish
            .key(self.run_key(&claim.key))
            .key(self.runs_index())
            .arg(claim.attempt_id.to_string())
            .arg(outcome)
            .arg(claim.key.as_str())
            .invoke_async(&mut self.conn.clone())
            .await?;
        Ok(if changed == 1 {
            FinishResult::Applied
        } else {
            FinishResult::Stale
        })
    }

    async fn renew(&self, claim: &Claim, terms: ClaimTerms) -> Result<RenewResult, StoreError> {
        let renewed: i64 = self
            .renew
            .key(self.run_key(&claim.key))
            .key(self.runs_index())
            .arg(claim.attempt_id.to_string())
            .arg(duration_micros(terms.lease))
            .arg(duration_micros(terms.effective_retention()))
            .arg(BACKSTOP_MS)
            .arg(claim.key.as_str())
            .invoke_async(&mut self.conn.clone())
            .await?;
        Ok(if renewed == 1 {
            RenewResult::Renewed
        } else {
            RenewResult::Lost
        })
    }

    async fn sweep(&self, limit: usize) -> Result<Swept, StoreError> {
        let counts: Vec<usize> = self
            .sweep
            .key(self.runs_index())
            .key(self.fences_index())
            .arg(limit)
            .arg(format!("{}run:", self.prefix))
            .arg(format!("{}fence:", self.prefix))
            .invoke_async(&mut self.conn.clone())
            .await?;
        match counts.as_slice() {
            [records, fences] => Ok(Swept {
                records: *records,
                fences: *fences,
                tokens: 0,
            }),
            other => Err(StoreError::Corrupt(format!("sweep reply {other:?}"))),
        }
    }

    async fn bind_token(
        &self,
        token: &str,
        key: &RunKey,
        ttl: Duration,
    ) -> Result<RunKey, StoreError> {
        // Rounded up, so that a binding never ends before its token.
        let ttl_ms = i64::try_from(ttl.as_nanos().div_ceil(1_000_000))
            .unwrap_or(i64::MAX)
            .max(1);
        let bound: String = self
            .bind_token
            .key(self.token_key(token))
            .arg(key.as_str())
            .arg(ttl_ms)
            .invoke_async(&mut self.conn.clone())
            .await?;
        parse_key(&bound)
    }

    async fn inspect(&self, key: &RunKey) -> Result<Option<RecordView>, StoreError> {
        let reply: Vec<String> = self
            .inspect
            .key(self.run_key(key))
            .invoke_async(&mut self.conn.clone())
            .await?;
        match reply.as_slice() {
            [] => Ok(None),
            [state, attempt, fence] => Ok(Some(RecordView {
                state: parse_state(state)?,
                attempt_id: parse_attempt(attempt)?,
                fence: parse_fence(fence)?,
            })),
            other => Err(StoreError::Corrupt(format!("inspect reply {other:?}"))),
        }
    }
}
