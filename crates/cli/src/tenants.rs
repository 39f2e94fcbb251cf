//! `idem serve`'s flags that keep organizations from taking more than their
//! part of a shared server: dispatch slots and quotas.

use clap::Args;
use idem_store::Quotas;

#[derive(Args, Debug)]
#[command(next_help_heading = "Dispatch slots and per-organization quotas (0 = unlimited)")]
pub struct TenantLimits {
    /// Most attempts this node runs at once, over all queues and
    /// organizations: its dispatch slots.
    #[arg(long, env = "IDEM_MAX_IN_FLIGHT", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight: u32,
    /// Most of this node's slots one organization may hold. By default,
    /// when the server has more than one organization, each of the N
    /// organizations with due work or attempts in flight may hold
    /// slots / (N + 1) (at least 1): the share kept back is what an
    /// organization whose work arrives next is served from at once, while
    /// another's slow targets hold their slots until their deadlines.
    #[arg(long, env = "IDEM_MAX_IN_FLIGHT_PER_ORG", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight_per_org: Option<u32>,
    /// Most queues per organization (the scheduler's own queue aside).
    #[arg(long, env = "IDEM_MAX_QUEUES_PER_ORG", default_value_t = Quotas::default().queues)]
    pub max_queues_per_org: u32,
    /// Most cron jobs per organization.
    #[arg(long, env = "IDEM_MAX_JOBS_PER_ORG", default_value_t = Quotas::default().jobs)]
    pub max_jobs_per_org: u32,
    /// Most principals per organization.
    #[arg(long, env = "IDEM_MAX_PRINCIPALS_PER_ORG", default_value_t = Quotas::default().principals)]
    pub max_principals_per_org: u32,
    /// Most API keys per organization, over all its principals.
    #[arg(long, env = "IDEM_MAX_API_KEYS_PER_ORG", default_value_t = Quotas::default().api_keys)]
    pub max_api_keys_per_org: u32,
    /// Most signing secrets per organization: a rotation beyond it is
    /// refused until an old secret is deleted, and deliveries are signed
    /// with at most this many, the newest.
    #[arg(long, env = "IDEM_MAX_SIGNING_SECRETS_PER_ORG", default_value_t = Quotas::default().signing_secrets)]
    pub max_signing_secrets_per_org: u32,
    /// Most event webhooks per organization.
    #[arg(long, env = "IDEM_MAX_WEBHOOKS_PER_ORG", default_value_t = Quotas::default().webhooks)]
    pub max_webhooks_per_org: u32,
}

impl TenantLimits {
    pub fn quotas(&self) -> Quotas {
        Quotas {
            queues: self.max_queues_per_org,
            jobs: self.max_jobs_per_org,
            principals: self.max_principals_per_org,
            api_keys: self.max_api_keys_per_org,
            signing_secrets: self.max_signing_secrets_per_org,
            webhooks: self.max_webhooks_per_org,
        }
    }
}
