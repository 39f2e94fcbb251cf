//! The cost budget: what each hot operation costs its store, held to the
//! figures recorded in `cost_budget.json`.
//!
//! Small costs add up unseen when each change is only compared with the one
//! before it, so this test measures, for a fixed workload on each store,
//! what the database is asked to do per operation — keyless creates, keyed
//! creates, tagged creates into a pull queue, batch items, deliveries
//! (claim and completion) and pull claims (claim and completion), and the
//! creates, deliveries and pull claims of tasks in groups, with a priority,
//! in queues with a group limit:
//!
//! - statements executed (PostgreSQL: counted on the wire by a relay, every
//!   pool, batcher and background task included; SQLite: every statement a
//!   connection starts, trigger programs and the writer's savepoints too);
//! - PostgreSQL: WAL bytes (without page splits, see `pg_wal`), heap rows
//!   written (inserted, updated, deleted or locked), B-tree entries added
//!   and commits, read from the log itself;
//! - SQLite: pages written to the WAL, and the virtual-machine instructions
//!   the statements executed (a statement that starts repeating work for
//!   each row it reads shows there, as no count of statements would).
//!
//! These are counts, not times, so the test is deterministic: operations run
//! one after another, each its own commit. Each phase runs twice and the
//! smaller figure counts, so that a background statement (the planner
//! statistics look) landing in one run adds nothing. A figure more than
//! `tolerance` above its budget fails the test. Raising a budget is a
//! deliberate commit that says why; `IDEM_COST_BUDGET_WRITE=1` rewrites the
//! file with the figures measured, and `IDEM_COST_BUDGET_SHOW=1` prints
//! each phase's PostgreSQL statements by text.

mod support;

use idem_core::ManualClock;
use idem_core::queue::{QueueConfig, QueueMode};
use idem_core::task::{BodyForm, Target};
use idem_store::dispatch::{AttemptResult, DispatchClaim};
use idem_store::idempotency::KeyCompletion;
use idem_store::postgres::PostgresStore;
use idem_store::sqlite::{SqliteStore, StatementCounts};
use idem_store::*;
use idem_testkit::pg_wire::{Statements, WireCounter};
use idem_testkit::{TestDatabase, pg_wal};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use support::{ORG, events, new_key, start};

/// Operations per phase and run. SQLite's pages are read from its WAL,
/// which must not reach the automatic checkpoint (1,000 pages) within a
/// phase: [`Sqlite::pages_since`] refuses a count it cannot trust.
const N: usize = 40;
/// Items per batch create.
const BATCH: usize = 20;
/// Tasks per dispatcher or worker claim.
const CLAIM: u32 = 10;
const RUNS: usize = 2;

const PHASES: [&str; 9] = [
    "keyless create",
    "keyed create",
    "batch item",
    "delivery",
    "pull claim",
    "tagged pull create",
    "grouped create",
    "grouped delivery",
    "grouped pull claim",
];

/// The groups the grouped phases spread their tasks over.
const GROUPS: usize = 8;

/// A task of one of [`GROUPS`] groups, with a priority.
fn grouped(t: TaskCreate, i: usize) -> TaskCreate {
    TaskCreate {
        group: Some(format!("acct:{}", i % GROUPS)),
        priority: (i % 3) as i32,
        ..t
    }
}

fn budget_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cost_budget.json")
}

/// One phase's figures, per operation.
type Figures = BTreeMap<&'static str, f64>;

fn task(queue: &str, task_id: &str, due_in: Option<i64>, pull: bool) -> TaskCreate {
    let body = Some((
        BodyForm::Json,
        br#"{"amount":1250,"currency":"EUR"}"#.to_vec(),
    ));
    TaskCreate {
        target: if pull {
            Target::payload(body)
        } else {
            support::hook(body)
        },
        schedule_time: due_in.map(|s| start() + jiff::SignedDuration::from_secs(s)),
        pull,
        ..TaskCreate::example(ORG, queue, task_id)
    }
}

fn keyed(queue: &str, task_id: &str) -> TaskCreate {
    TaskCreate {
        completion: Some(KeyCompletion {
            org: ORG.into(),
            principal: "admin".into(),
            key: format!("key-{task_id}"),
            token: format!("tok-{task_id}"),
            fingerprint: format!("fp-{task_id}"),
            status: 201,
            resource_kind: "task",
            resource_id: format!("{queue}/{task_id}"),
            body: None,
            retain_for: Duration::from_secs(3600),
            claim: true,
        }),
        ..task(queue, task_id, Some(3600), false)
    }
}

/// Sets the store up: the queues each phase uses.
async fn queues(store: &dyn Store) {
    let push = QueueConfig::default();
    let pull = QueueConfig {
        mode: QueueMode::Pull,
        ..QueueConfig::default()
    };
    let limited = QueueConfig {
        group_concurrency: Some(4),
        ..QueueConfig::default()
    };
    let limited_pull = QueueConfig {
        mode: QueueMode::Pull,
        ..limited.clone()
    };
    let queues = [
        ("creates", &push),
        ("deliveries", &push),
        ("work", &pull),
        ("tagged", &pull),
        ("grouped", &limited),
        ("grouped-deliveries", &limited),
        ("grouped-work", &limited_pull),
    ];
    for (name, config) in queues {
        store.queue_create(ORG, name, config, None).await.unwrap();
    }
}

/// Runs phase `phase` (run `run`): `N` operations, one after another. What
/// a phase needs in place before it (due tasks to deliver or claim) is made
/// by `prepare`, outside the measurement.
async fn prepare(store: &dyn Store, phase: &str, run: usize) {
    let (queue, pull, groups) = match phase {
        "delivery" => ("deliveries", false, false),
        "pull claim" => ("work", true, false),
        "grouped delivery" => ("grouped-deliveries", false, true),
        "grouped pull claim" => ("grouped-work", true, true),
        _ => return,
    };
    for i in 0..N {
        let t = task(queue, &format!("r{run}-{i}"), None, pull);
        let t = if groups { grouped(t, i) } else { t };
        store.task_create(t).await.unwrap();
    }
}

async fn phase(store: &dyn Store, phase: &str, run: usize) {
    match phase {
        "keyless create" => {
            for i in 0..N {
                let t = task("creates", &format!("plain-r{run}-{i}"), Some(3600), false);
                store.task_create(t).await.unwrap();
            }
        }
        "tagged pull create" => {
            for i in 0..N {
                let t = TaskCreate {
                    tag: Some(format!("region-{}", i % 3)),
                    ..task("tagged", &format!("tagged-r{run}-{i}"), Some(3600), true)
                };
                store.task_create(t).await.unwrap();
            }
        }
        "keyed create" => {
            for i in 0..N {
                let t = keyed("creates", &format!("keyed-r{run}-{i}"));
                store.task_create(t).await.unwrap();
            }
        }
        "batch item" => {
            for b in 0..N / BATCH {
                let tasks = (0..BATCH)
                    .map(|i| {
                        let id = format!("batch-r{run}-{b}-{i}");
                        Ok(task("creates", &id, Some(3600), false))
                    })
                    .collect();
                let made = store
                    .task_create_batch(TaskBatch {
                        org: ORG.into(),
                        queue: "creates".into(),
                        tasks,
                        atomic: false,
                        completion: None,
                    })
                    .await
                    .unwrap();
                assert!(
                    made.items
                        .iter()
                        .all(|i| matches!(i, BatchItem::Created(_)))
                );
            }
        }
        "grouped create" => {
            for i in 0..N {
                let t = task("grouped", &format!("grouped-r{run}-{i}"), Some(3600), false);
                store.task_create(grouped(t, i)).await.unwrap();
            }
        }
        "delivery" | "grouped delivery" => {
            let mut delivered = 0;
            while delivered < N {
                let claimed = store
                    .dispatch_claim(DispatchClaim {
                        max_tasks: CLAIM,
                        lease_grace: Duration::from_secs(30),
                        attempts_kept: 10,
                        fair_share: None,
                    })
                    .await
                    .unwrap();
                assert!(!claimed.tasks.is_empty(), "due tasks to deliver");
                let results = claimed
                    .tasks
                    .iter()
                    .map(|c| AttemptResult {
                        task_uid: c.task.uid.clone(),
                        attempt: c.attempt,
                        status_code: Some(200),
                        error: None,
                        duration: Duration::from_millis(3),
                        retry_after: None,
                        give_up: false,
                        response: None,
                    })
                    .collect::<Vec<_>>();
                delivered += results.len();
                store.dispatch_complete(results).await.unwrap();
            }
        }
        "pull claim" | "grouped pull claim" => {
            let queue = if phase == "pull claim" {
                "work"
            } else {
                "grouped-work"
            };
            let mut done = 0;
            while done < N {
                let claimed = store
                    .work_claim(WorkClaim {
                        org: ORG.into(),
                        queue: queue.into(),
                        claimant: "admin".into(),
                        max_tasks: CLAIM,
                        lease_s: 60,
                        tag: None,
                        attempts_kept: 10,
                    })
                    .await
                    .unwrap();
                assert!(!claimed.is_empty(), "due tasks to claim");
                for t in &claimed {
                    let attempt_id = t.lease.as_ref().expect("a lease").attempt_id.clone();
                    let action = WorkAction::Complete {
                        attempt_id,
                        result: Some(r#"{"ok":true}"#.into()),
                        person: false,
                        holder: None,
                    };
                    store
                        .work_act(ORG, queue, &t.task_id, action)
                        .await
                        .unwrap();
                }
                done += claimed.len();
            }
        }
        other => unreachable!("no phase {other}"),
    }
}

fn per_op(total: u64) -> f64 {
    // Two decimals: enough to see one statement in a hundred operations.
    (total as f64 / N as f64 * 100.0).round() / 100.0
}

/// Keeps the smaller of each figure.
fn keep_min(best: &mut Option<Figures>, now: Figures) {
    match best {
        None => *best = Some(now),
        Some(b) => {
            for (k, v) in now {
                let e = b.entry(k).or_insert(v);
                *e = e.min(v);
            }
        }
    }
}

struct Postgres {
    store: PostgresStore,
    wire: WireCounter,
    client: tokio_postgres::Client,
    _db: TestDatabase,
}

impl Postgres {
    async fn new() -> Postgres {
        let db = TestDatabase::create().await;
        let wire = WireCounter::start(&db.url).await;
        let clock = Arc::new(ManualClock::new(start()));
        let store = PostgresStore::open(wire.url(), 8, clock, events())
            .await
            .unwrap();
        let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        pg_wal::enable(&client).await;
        // Autovacuum would write to these tables whenever it chose.
        let tables: Vec<String> = client
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()",
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        for t in tables {
            client
                .batch_execute(&format!("ALTER TABLE {t} SET (autovacuum_enabled = off)"))
                .await
                .unwrap();
        }
        Postgres {
            store,
            wire,
            client,
            _db: db,
        }
    }

    async fn measure(&self, name: &str, run: usize) -> Figures {
        prepare(&self.store, name, run).await;
        let statements = self.wire.snapshot();
        let wal = pg_wal::mark(&self.client).await;
        phase(&self.store, name, run).await;
        let mark = wal;
        let wal = pg_wal::since(&self.client, &mark).await;
        let sent = self.statements_since(&statements);
        if std::env::var_os("IDEM_COST_BUDGET_SHOW").is_some() {
            eprintln!("postgres {name}, run {run}:");
            for (text, n) in &sent.0 {
                eprintln!(
                    "  {n:>4}  {}",
                    text.split_whitespace().collect::<Vec<_>>().join(" ")
                );
            }
            for (kind, relation, n, bytes) in pg_wal::breakdown(&self.client, &mark).await {
                eprintln!("  {n:>4} {bytes:>7} B  {kind} {relation}");
            }
        }
        Figures::from([
            ("statements", per_op(sent.total())),
            ("wal_bytes", per_op(wal.bytes)),
            ("rows_written", per_op(wal.rows)),
            ("index_entries", per_op(wal.index_entries)),
            ("commits", per_op(wal.commits)),
        ])
    }

    /// What the store sent since `earlier`, less the planner-statistics
    /// look, which runs on a timer whatever the workload.
    fn statements_since(&self, earlier: &Statements) -> Statements {
        self.wire
            .snapshot()
            .since(earlier)
            .without("pg_stat_user_tables")
            .without("ANALYZE")
    }
}

struct Sqlite {
    store: SqliteStore,
    statements: Arc<StatementCounts>,
    file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Sqlite {
    async fn new() -> Sqlite {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("idem.db");
        let statements = Arc::new(StatementCounts::default());
        let clock = Arc::new(ManualClock::new(start()));
        let store =
            SqliteStore::open_counting_statements(&file, clock, events(), statements.clone())
                .await
                .unwrap();
        Sqlite {
            store,
            statements,
            file,
            _dir: dir,
        }
    }

    /// Runs a checkpoint from a connection of the test's own; answers the
    /// frames the WAL held (`PRAGMA wal_checkpoint`'s `log` column).
    fn checkpoint(&self, mode: &str) -> i64 {
        let conn = rusqlite::Connection::open(&self.file).unwrap();
        conn.busy_timeout(Duration::from_secs(5)).unwrap();
        let (busy, log): (i64, i64) = conn
            .query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(busy, 0, "the checkpoint ({mode}) was blocked");
        log
    }

    /// The pages written to the WAL since it was last truncated: every
    /// frame is one page written by one commit.
    fn pages_since_truncate(&self) -> u64 {
        let frames = self.checkpoint("PASSIVE");
        assert!(
            frames < 900,
            "{frames} WAL frames in one phase come near the automatic checkpoint, \
             after which the count restarts: make the phase smaller"
        );
        frames as u64
    }

    async fn measure(&self, name: &str, run: usize) -> Figures {
        prepare(&self.store, name, run).await;
        self.checkpoint("TRUNCATE");
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let before = [&self.statements.statements, &self.statements.vm_steps].map(count);
        phase(&self.store, name, run).await;
        let after = [&self.statements.statements, &self.statements.vm_steps].map(count);
        let pages = self.pages_since_truncate();
        Figures::from([
            ("statements", per_op(after[0] - before[0])),
            ("vm_steps", per_op(after[1] - before[1])),
            ("pages_written", per_op(pages)),
        ])
    }
}

/// Measures every phase `RUNS` times on one store, keeping each figure's
/// smallest value.
async fn measure_all<F, Fut>(measure: F) -> BTreeMap<&'static str, Figures>
where
    F: Fn(&'static str, usize) -> Fut,
    Fut: std::future::Future<Output = Figures>,
{
    let mut all = BTreeMap::new();
    for name in PHASES {
        let mut best = None;
        for run in 0..RUNS {
            keep_min(&mut best, measure(name, run).await);
        }
        all.insert(name, best.expect("a run"));
    }
    all
}

fn to_json(figures: &BTreeMap<&'static str, Figures>) -> Value {
    let mut out = Map::new();
    for (phase, f) in figures {
        let mut m = Map::new();
        for (k, v) in f {
            m.insert(k.to_string(), json!(v));
        }
        out.insert(phase.to_string(), Value::Object(m));
    }
    Value::Object(out)
}

/// Every figure above its budget by more than the tolerance, and every
/// figure the budget does not know.
fn over_budget(store: &str, measured: &Value, budget: &Value, tolerance: f64) -> Vec<String> {
    let mut problems = Vec::new();
    for (phase, figures) in measured.as_object().unwrap() {
        for (name, value) in figures.as_object().unwrap() {
            let value = value.as_f64().unwrap();
            match budget[store][phase][name].as_f64() {
                None => problems.push(format!("{store} {phase} {name}: {value} has no budget")),
                Some(limit) if value > limit * (1.0 + tolerance) + 0.01 => problems.push(format!(
                    "{store} {phase} {name}: {value} per operation, budget {limit} (+{:.0} %)",
                    tolerance * 100.0
                )),
                Some(_) => {}
            }
        }
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hot_operation_stays_within_its_cost_budget() {
    let pg = Postgres::new().await;
    pg.store
        .organization_create(ORG, new_key(), None)
        .await
        .unwrap();
    queues(&pg.store).await;
    let postgres = to_json(&measure_all(|p, r| pg.measure(p, r)).await);

    let lite = Sqlite::new().await;
    lite.store
        .organization_create(ORG, new_key(), None)
        .await
        .unwrap();
    queues(&lite.store).await;
    let sqlite = to_json(&measure_all(|p, r| lite.measure(p, r)).await);

    let measured = json!({"postgres": postgres, "sqlite": sqlite});
    let path = budget_path();
    if std::env::var_os("IDEM_COST_BUDGET_WRITE").is_some() {
        let mut budget: Value = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| json!({"tolerance": 0.10}));
        budget["postgres"] = measured["postgres"].clone();
        budget["sqlite"] = measured["sqlite"].clone();
        let text = serde_json::to_string_pretty(&budget).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        return;
    }
    let budget: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .expect("cost_budget.json is JSON");
    let tolerance = budget["tolerance"].as_f64().expect("a tolerance");
    eprintln!(
        "measured per operation:\n{}",
        serde_json::to_string_pretty(&measured).unwrap()
    );
    let mut problems = over_budget("postgres", &measured["postgres"], &budget, tolerance);
    problems.extend(over_budget(
        "sqlite",
        &measured["sqlite"],
        &budget,
        tolerance,
    ));
    assert!(
        problems.is_empty(),
        "over the cost budget in {}:\n{}",
        path.display(),
        problems.join("\n")
    );
}

#[test]
fn a_figure_over_its_budget_by_more_than_the_tolerance_fails() {
    let budget = json!({"postgres": {"keyless create": {"statements": 2.0}}});
    let at = |v: f64| json!({"keyless create": {"statements": v}});
    assert!(over_budget("postgres", &at(2.2), &budget, 0.10).is_empty());
    assert_eq!(over_budget("postgres", &at(2.3), &budget, 0.10).len(), 1);
    let unknown = json!({"keyless create": {"wal_bytes": 1.0}});
    assert_eq!(over_budget("postgres", &unknown, &budget, 0.10).len(), 1);
}
