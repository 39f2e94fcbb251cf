//! The tenant storage quotas: live tasks (pending or running) and stored
//! task bytes per organization (`--max-tasks-per-org`,
//! `--max-task-bytes-per-org`).
//!
//! Their counters are `task_counts`' rows, kept in the same transaction as
//! every task insert, status change and delete (migrations 009 and 016),
//! so they never count rows. A create does not read them, though: on
//! PostgreSQL an organization's counters are a few rows per queue and
//! connection, and summing them on every create would cost the create path
//! more than the rest of its reads. Each node reads an organization's sum
//! at most once a second ([`FRESH`]) and counts what it admits since, so a
//! create is checked in memory, in constant time. The bound is soft by
//! what other nodes admit within that second (each node's own creates are
//! counted at once): at the default limits a fraction of a percent.

use crate::quotas::{Quota, QuotaExceeded, Quotas};
use crate::{Error, Result};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an organization's counters, once read, answer its creates.
pub const FRESH: Duration = Duration::from_secs(1);

/// An organization's live tasks and stored task bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrgTasks {
    pub live: u64,
    pub bytes: u64,
}

/// Each organization's counters as last read, plus what was admitted since.
#[derive(Default)]
pub(crate) struct TaskUsage {
    orgs: Mutex<HashMap<String, (OrgTasks, Instant)>>,
}

impl TaskUsage {
    /// Admits `tasks` new tasks of about `bytes` bytes for `org`, or refuses
    /// them with the quota they would pass; `read` reads the counters when
    /// the last reading is older than [`FRESH`].
    pub(crate) async fn admit(
        &self,
        quotas: &Quotas,
        org: &str,
        tasks: u64,
        bytes: u64,
        read: impl AsyncFnOnce() -> Result<OrgTasks>,
    ) -> Result<()> {
        if quotas.tasks == 0 && quotas.task_bytes == 0 {
            return Ok(());
        }
        // One lock for the common case: a fresh reading, checked and added
        // to at once. A stale one is read again by this create alone: the
        // reading is marked fresh first, so that the creates arriving while
        // it is read are checked against the last one, as they would have
        // been a moment earlier, instead of all reading at once (32
        // concurrent creates made 32 reads each second). A failed read
        // fails its create and leaves the last reading in use for another
        // second: the bound stays as soft as it is between readings.
        if let Some((usage, at)) = self.orgs.lock().expect("task usage").get_mut(org) {
            if at.elapsed() < FRESH {
                return take(usage, quotas, tasks, bytes);
            }
            *at = Instant::now();
        }
        let read = read().await?;
        let mut orgs = self.orgs.lock().expect("task usage");
        // Another create of the organization may have read and admitted
        // meanwhile; the newer reading replaces it.
        let entry = orgs
            .entry(org.to_string())
            .or_insert((read, Instant::now()));
        *entry = (read, Instant::now());
        take(&mut entry.0, quotas, tasks, bytes)
    }
}

/// Refuses what would pass a limit; otherwise counts it in `usage`.
fn take(usage: &mut OrgTasks, quotas: &Quotas, tasks: u64, bytes: u64) -> Result<()> {
    let over = |limit: u64, used: u64, adding: u64| limit > 0 && used + adding > limit;
    let refused = if over(quotas.tasks, usage.live, tasks) {
        Some((Quota::Tasks, quotas.tasks))
    } else if over(quotas.task_bytes, usage.bytes, bytes) {
        Some((Quota::TaskBytes, quotas.task_bytes))
    } else {
        None
    };
    if let Some((quota, limit)) = refused {
        return Err(Error::ResourceExhausted(QuotaExceeded { quota, limit }));
    }
    usage.live += tasks;
    usage.bytes += bytes;
    Ok(())
}

/// About the bytes a task will hold in its organization's count: its
/// payload, URL and headers (the stored count is exact; this only stands
/// for it until the next reading).
pub(crate) fn estimated_bytes(target: &idem_core::task::Target) -> u64 {
    const ENVELOPE: usize = 64;
    let headers: usize = target
        .headers
        .iter()
        .map(|(name, value)| name.len() + value.len() + 6)
        .sum();
    let body = target.body.as_ref().map_or(0, |(_, bytes)| bytes.len());
    (ENVELOPE + target.url.len() + headers + body) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quotas(tasks: u64, task_bytes: u64) -> Quotas {
        Quotas {
            tasks,
            task_bytes,
            ..Quotas::default()
        }
    }

    #[tokio::test]
    async fn admits_up_to_the_limit_counting_what_it_admitted() {
        let usage = TaskUsage::default();
        let q = quotas(3, 0);
        let read = async || Ok(OrgTasks { live: 1, bytes: 0 });
        usage.admit(&q, "a", 2, 10, read).await.unwrap();
        let refused = usage
            .admit(&q, "a", 1, 10, async || panic!("read within FRESH"))
            .await
            .unwrap_err();
        assert!(
            matches!(
                refused,
                Error::ResourceExhausted(QuotaExceeded {
                    quota: Quota::Tasks,
                    limit: 3
                })
            ),
            "{refused:?}"
        );
        // Another organization has its own count.
        let other = async || Ok(OrgTasks::default());
        usage.admit(&q, "b", 3, 10, other).await.unwrap();
    }

    /// A stale reading is read again by one create; those arriving
    /// meanwhile are checked against the last reading, and the new one
    /// then answers.
    #[tokio::test]
    async fn a_stale_reading_is_read_again_once() {
        let usage = TaskUsage::default();
        let q = quotas(100, 0);
        usage
            .admit(&q, "a", 1, 0, async || Ok(OrgTasks { live: 10, bytes: 0 }))
            .await
            .unwrap();
        let stale = Instant::now().checked_sub(FRESH * 2).unwrap();
        usage.orgs.lock().unwrap().get_mut("a").unwrap().1 = stale;
        let (release, wait) = tokio::sync::oneshot::channel::<()>();
        let reads = std::sync::atomic::AtomicU32::new(0);
        let first = usage.admit(&q, "a", 1, 0, async || {
            reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            wait.await.unwrap();
            Ok(OrgTasks { live: 99, bytes: 0 })
        });
        let meanwhile = async {
            tokio::task::yield_now().await;
            // Checked against the last reading (11 live), not read again.
            let r = usage
                .admit(&q, "a", 80, 0, async || panic!("read twice"))
                .await;
            release.send(()).unwrap();
            r
        };
        let (first, meanwhile) = tokio::join!(first, meanwhile);
        first.unwrap();
        meanwhile.unwrap();
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1);
        // The new reading (99, plus the first create's one) answers now.
        assert!(
            usage
                .admit(&q, "a", 1, 0, async || panic!("fresh"))
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn bytes_have_their_own_limit_and_zero_means_none() {
        let usage = TaskUsage::default();
        let read = async || Ok(OrgTasks { live: 0, bytes: 90 });
        let refused = usage.admit(&quotas(0, 100), "a", 1, 20, read).await;
        assert!(matches!(
            refused,
            Err(Error::ResourceExhausted(QuotaExceeded {
                quota: Quota::TaskBytes,
                limit: 100
            }))
        ));
        usage
            .admit(&quotas(0, 0), "a", 1_000_000, 1 << 40, async || {
                panic!("no limit, no read")
            })
            .await
            .unwrap();
    }
}
