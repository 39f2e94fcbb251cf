//! Per-organization quotas: how much of a shared server one organization
//! may take, so that no tenant can exhaust it for the others.
//!
//! Each is held by a count per organization and resource (`org_usage`),
//! not by counting rows: the creation it limits checks the count and takes
//! one at the end of its transaction, and every deletion gives back the
//! rows it removed in its own, so the check costs the same however many
//! the organization holds. On PostgreSQL a count is spread over rows, so
//! that one organization's creations commit together, and counted exactly,
//! every row locked, within reach of the limit, so that two cannot both
//! take the last one; SQLite's single writer runs them one at a time
//! anyway. See `tables/org_usage.rs`.

/// The limits, per organization; 0 means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// Queues (the scheduler's own queue does not count).
    pub queues: u32,
    /// Cron jobs.
    pub jobs: u32,
    /// Principals.
    pub principals: u32,
    /// API keys, over all principals.
    pub api_keys: u32,
    /// Signing secrets; deliveries are signed with this many of the newest
    /// at most, since a target verifies every signature a request carries.
    pub signing_secrets: u32,
    /// Event webhooks.
    pub webhooks: u32,
    /// Live tasks (pending or running), over all queues; see
    /// [`crate::usage`] for how they are counted.
    pub tasks: u64,
    /// Bytes of stored tasks (their targets and payloads), finished ones
    /// kept for deduplication included.
    pub task_bytes: u64,
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            queues: 1000,
            jobs: 1000,
            principals: 1000,
            api_keys: 1000,
            signing_secrets: 5,
            webhooks: 20,
            tasks: 10_000_000,
            task_bytes: 10 << 30,
        }
    }
}

/// One of the [`Quotas`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    Queues,
    Jobs,
    Principals,
    ApiKeys,
    SigningSecrets,
    Webhooks,
    Tasks,
    TaskBytes,
}

impl Quota {
    /// The name a problem document gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Quota::Queues => "queues_per_org",
            Quota::Jobs => "jobs_per_org",
            Quota::Principals => "principals_per_org",
            Quota::ApiKeys => "api_keys_per_org",
            Quota::SigningSecrets => "signing_secrets_per_org",
            Quota::Webhooks => "webhooks_per_org",
            Quota::Tasks => "tasks_per_org",
            Quota::TaskBytes => "task_bytes_per_org",
        }
    }

    /// The `idem serve` flag that sets it, so an operator reading the
    /// refusal knows what to raise.
    pub fn flag(self) -> &'static str {
        match self {
            Quota::Queues => "--max-queues-per-org",
            Quota::Jobs => "--max-jobs-per-org",
            Quota::Principals => "--max-principals-per-org",
            Quota::ApiKeys => "--max-api-keys-per-org",
            Quota::SigningSecrets => "--max-signing-secrets-per-org",
            Quota::Webhooks => "--max-webhooks-per-org",
            Quota::Tasks => "--max-tasks-per-org",
            Quota::TaskBytes => "--max-task-bytes-per-org",
        }
    }

    /// Its counter's name in `org_usage` (the task quotas are counted in
    /// `task_counts` instead, see [`crate::usage`]).
    pub fn resource(self) -> &'static str {
        match self {
            Quota::Tasks => "tasks",
            Quota::TaskBytes => "task_bytes",
            Quota::Queues => "queues",
            Quota::Jobs => "jobs",
            Quota::Principals => "principals",
            Quota::ApiKeys => "api_keys",
            Quota::SigningSecrets => "signing_secrets",
            Quota::Webhooks => "webhooks",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Quota::Queues => "queues",
            Quota::Jobs => "jobs",
            Quota::Principals => "principals",
            Quota::ApiKeys => "API keys",
            Quota::SigningSecrets => "signing secrets",
            Quota::Webhooks => "event webhooks",
            Quota::Tasks => "live tasks (pending or running)",
            Quota::TaskBytes => "bytes of stored tasks",
        }
    }

    pub(crate) fn of(self, quotas: &Quotas) -> u64 {
        match self {
            Quota::Queues => quotas.queues.into(),
            Quota::Jobs => quotas.jobs.into(),
            Quota::Principals => quotas.principals.into(),
            Quota::ApiKeys => quotas.api_keys.into(),
            Quota::SigningSecrets => quotas.signing_secrets.into(),
            Quota::Webhooks => quotas.webhooks.into(),
            Quota::Tasks => quotas.tasks,
            Quota::TaskBytes => quotas.task_bytes,
        }
    }
}

/// A creation refused because its organization is at a quota.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "quota {name} exceeded: an organization may have at most {limit} {noun} ({flag})",
    name = .quota.as_str(),
    noun = .quota.noun(),
    flag = .quota.flag()
)]
pub struct QuotaExceeded {
    pub quota: Quota,
    pub limit: u64,
}

/// The count below which `limit` allows one more: the bound a creation's
/// upsert compares the counter with, in SQL, where 0 cannot mean unlimited.
pub(crate) fn ceiling(limit: u64) -> i64 {
    if limit == 0 {
        i64::MAX
    } else {
        i64::try_from(limit).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_unlimited_and_the_limit_itself_is_full() {
        let allows = |limit, count| count < ceiling(limit);
        assert!(allows(0, 1_000_000));
        assert!(allows(5, 4));
        assert!(!allows(5, 5));
        assert!(!allows(5, 6), "a lowered limit refuses, never underflows");
    }

    #[test]
    fn the_refusal_names_the_limit_and_its_flag() {
        let e = QuotaExceeded {
            quota: Quota::SigningSecrets,
            limit: 5,
        };
        let text = e.to_string();
        assert!(text.contains("signing_secrets_per_org"), "{text}");
        assert!(text.contains("at most 5 signing secrets"), "{text}");
        assert!(text.contains("--max-signing-secrets-per-org"), "{text}");
    }
}
