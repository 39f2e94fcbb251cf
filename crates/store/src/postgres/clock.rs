//! The database's clock, as every node sees it.
//!
//! Leases, Idempotency-Key locks and retention compare instants written by
//! different nodes, so they must agree on "now" (API.md §2, ARCHITECTURE.md). Each
//! node measures the offset between its own clock and PostgreSQL's
//! `clock_timestamp()` — taking the fastest of a few round trips, whose
//! midpoint bounds the error by half that round trip — and keeps measuring,
//! so a node whose clock drifts or steps still reads the database's time.

use crate::Result;
use idem_core::Clock;
use idem_postgres_tls::MakeRustlsConnect;
use jiff::{SignedDuration, Timestamp};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// How often the offset is measured again.
const RECALIBRATE_EVERY: Duration = Duration::from_secs(30);
/// Round trips per measurement; the fastest one counts.
const SAMPLES: usize = 5;

/// The local clock corrected by the measured offset to the database's.
#[derive(Debug)]
pub struct DatabaseClock {
    offset_us: AtomicI64,
}

impl Clock for DatabaseClock {
    fn now(&self) -> Timestamp {
        let offset = SignedDuration::from_micros(self.offset_us.load(Ordering::Relaxed));
        Timestamp::now()
            .checked_add(offset)
            .unwrap_or_else(|_| Timestamp::now())
    }
}

impl DatabaseClock {
    /// Measures the offset to the database at `url` and keeps it current in
    /// the background for as long as the clock is in use.
    pub async fn start(url: &str) -> Result<Arc<DatabaseClock>> {
        let (config, tls) = super::connect_params(url)?;
        let offset = measure(&config, &tls).await?;
        let clock = Arc::new(DatabaseClock {
            offset_us: AtomicI64::new(offset),
        });
        let weak = Arc::downgrade(&clock);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RECALIBRATE_EVERY).await;
                let Some(clock) = weak.upgrade() else { return };
                match measure(&config, &tls).await {
                    Ok(offset) => clock.offset_us.store(offset, Ordering::Relaxed),
                    Err(e) => tracing::warn!(error = %e, "measuring the database clock"),
                }
            }
        });
        Ok(clock)
    }

    /// Microseconds to add to this node's clock to read the database's.
    pub fn offset_micros(&self) -> i64 {
        self.offset_us.load(Ordering::Relaxed)
    }
}

async fn measure(config: &tokio_postgres::Config, tls: &MakeRustlsConnect) -> Result<i64> {
    let (client, connection) = config.connect(tls.clone()).await?;
    let driver = tokio::spawn(connection);
    let stmt = client
        .prepare("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint")
        .await?;
    let mut best: Option<(i64, i64)> = None;
    for _ in 0..SAMPLES {
        let before = Timestamp::now().as_microsecond();
        let db: i64 = client.query_one(&stmt, &[]).await?.get(0);
        let after = Timestamp::now().as_microsecond();
        let rtt = after - before;
        let offset = db - (before + after) / 2;
        if best.is_none_or(|(r, _)| rtt < r) {
            best = Some((rtt, offset));
        }
    }
    drop(client);
    driver.abort();
    Ok(best.map(|(_, o)| o).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;
    use tokio_postgres::NoTls;

    #[tokio::test]
    async fn agrees_with_the_database_within_a_few_milliseconds() {
        let url = std::env::var("IDEM_TEST_DATABASE_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        let clock = DatabaseClock::start(&url).await.unwrap_or_else(|e| {
            panic!("PostgreSQL unreachable at {url} ({e}); set IDEM_TEST_DATABASE_URL")
        });
        let config = tokio_postgres::Config::from_str(&url).unwrap();
        let (client, conn) = config.connect(NoTls).await.unwrap();
        tokio::spawn(conn);
        let before = clock.now().as_microsecond();
        let db: i64 = client
            .query_one(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        let after = clock.now().as_microsecond();
        assert!(
            before - 5_000 <= db && db <= after + 5_000,
            "database {db} outside [{before}, {after}] ± 5 ms"
        );
    }
}
