//! What PostgreSQL did for a stretch of a benchmark, per operation: the
//! rows, index entries and WAL bytes written for the node's database
//! (`idem_testkit::pg_wal`, as the cost budget counts them), and the CPU
//! time of the node's backends and of the `idem` process. The WAL figures
//! are counts, the same from run to run, so they compare builds on a
//! machine too noisy to time them; the CPU figures are as noisy as the
//! machine. Taken only when `IDEM_BENCH_PG_COST` is set, since the
//! extension and the reads are not part of what the benchmarks time.

use idem_testkit::pg_wal::{self, WalMark};
use std::collections::HashMap;
use std::sync::OnceLock;
use tokio_postgres::NoTls;

/// The database of the PostgreSQL node a probe reads, set when the node
/// starts with `IDEM_BENCH_PG_COST` in the environment.
pub static DATABASE: OnceLock<String> = OnceLock::new();

pub struct PgCost {
    client: tokio_postgres::Client,
    mark: WalMark,
    ticks: HashMap<i32, u64>,
    node_ticks: u64,
}

impl PgCost {
    /// Starts a probe when one was asked for and the node is on PostgreSQL.
    pub async fn start() -> Option<PgCost> {
        let url = DATABASE.get()?;
        let (client, conn) = tokio_postgres::connect(url, NoTls)
            .await
            .expect("connect to the node's database");
        tokio::spawn(conn);
        pg_wal::enable(&client).await;
        let ticks = backend_ticks(&client).await;
        let node_ticks = node_ticks();
        let mark = pg_wal::mark(&client).await;
        Some(PgCost {
            client,
            mark,
            ticks,
            node_ticks,
        })
    }

    /// The figures since the start, divided by `n` operations.
    pub async fn per(self, n: usize) -> String {
        let node = node_ticks() - self.node_ticks;
        let after = backend_ticks(&self.client).await;
        // A backend that started during the stretch counts from zero; one
        // that ended is lost, which the node's pool does not do under load.
        let spent: u64 = after
            .iter()
            .map(|(pid, t)| t - self.ticks.get(pid).copied().unwrap_or(0).min(*t))
            .sum();
        let wal = pg_wal::since(&self.client, &self.mark).await;
        let n = n as f64;
        let hz = clock_ticks_per_second();
        let ms = |ticks: u64| ticks as f64 * 1000.0 / hz / n;
        format!(
            "rows_per_op={:.2} index_entries_per_op={:.2} wal_bytes_per_op={:.1} \
             commits_per_op={:.3} backend_cpu_ms_per_op={:.4} node_cpu_ms_per_op={:.4}",
            wal.rows as f64 / n,
            wal.index_entries as f64 / n,
            wal.bytes as f64 / n,
            wal.commits as f64 / n,
            ms(spent),
            ms(node)
        )
    }
}

async fn backend_ticks(client: &tokio_postgres::Client) -> HashMap<i32, u64> {
    let pids: Vec<i32> = client
        .query(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    pids.into_iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, process_ticks(&stat)?))
        })
        .collect()
}

/// CPU ticks of the `idem` processes on the machine: the benchmark's node,
/// when it runs alone.
fn node_ticks() -> u64 {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| stat.contains(" (idem) "))
        .filter_map(|stat| process_ticks(&stat))
        .sum()
}

/// utime and stime, the 14th and 15th fields of `/proc/PID/stat`, after
/// the parenthesised command name (which may hold spaces).
fn process_ticks(stat: &str) -> Option<u64> {
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}
