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
    /// Most live tasks (pending or running) per organization, over all its
    /// queues; finished tasks do not count.
    #[arg(long, env = "IDEM_MAX_TASKS_PER_ORG", default_value_t = Quotas::default().tasks)]
    pub max_tasks_per_org: u64,
    /// Most bytes of stored tasks per organization (their targets and
    /// payloads, finished tasks kept for deduplication included), in bytes
    /// or with a unit: `500MiB`, `10GiB`.
    #[arg(long, env = "IDEM_MAX_TASK_BYTES_PER_ORG", default_value = "10GiB", value_parser = parse_bytes)]
    pub max_task_bytes_per_org: u64,
}

/// A size in bytes, plain or with a binary unit (`KiB`, `MiB`, `GiB`,
/// `TiB`).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let shift = match unit.trim() {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        "TiB" => 40,
        other => {
            return Err(format!(
                "{other:?} is not a unit: use B, KiB, MiB, GiB or TiB"
            ));
        }
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size like 1048576, 500MiB or 10GiB"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
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
            tasks: self.max_tasks_per_org,
            task_bytes: self.max_task_bytes_per_org,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("10GiB"), Ok(10 << 30));
        assert_eq!(parse_bytes("500 MiB"), Ok(500 << 20));
        assert!(parse_bytes("10GB").unwrap_err().contains("not a unit"));
        assert!(parse_bytes("lots").is_err());
        assert!(
            parse_bytes("99999999TiB")
                .unwrap_err()
                .contains("too large")
        );
    }
}
