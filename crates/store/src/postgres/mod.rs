//! The multi-node backend: any number of `idem` nodes on one PostgreSQL
//! database.
//!
//! Each operation is one transaction on a pooled connection; creates
//! without an Idempotency-Key share their commits ([`batch`]). Uniqueness
//! (organization, queue and task names; task IDs) rests on primary keys, so
//! nodes never need to coordinate in memory; row locks (`FOR UPDATE`) order
//! the read-modify-write operations.

mod batch;
mod clock;
mod dispatch;
mod idempotency;

pub use clock::DatabaseClock;

use crate::idempotency::Completion;
use crate::records::*;
use crate::sql::{self as rows, Row as _};
use crate::tasks;
use crate::{Error, Result, Store};
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use idem_core::Clock;
use idem_core::clock::{from_micros, to_micros};
use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState};
use idem_core::secrets::generate_signing_secret;
use idem_core::tenancy::{ADMIN_PRINCIPAL, DEFAULT_ORGANIZATION, PrincipalKind, Role, generate_id};
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_postgres::NoTls;
use tokio_postgres::error::SqlState;

const SCHEMA: &str = include_str!("schema.sql");
const MIGRATIONS: &[&str] = &[
    SCHEMA,
    include_str!("migrations/002_dispatch.sql"),
    include_str!("migrations/003_idempotency.sql"),
    include_str!("migrations/004_jobs.sql"),
];
/// Serializes migrations and bootstrap across nodes starting together.
const ADVISORY_LOCK: i64 = 0x1de3_5c4e_3a00_0001;

/// The PostgreSQL store. Cheap to clone.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    clock: Arc<dyn Clock>,
    /// For the dedicated connection that LISTENs for dispatch wake-ups.
    listen_config: tokio_postgres::Config,
    /// Queue configurations recently read, for the one-statement create.
    queue_configs: Arc<Mutex<QueueConfigCache>>,
    /// Group commit for creates without an Idempotency-Key.
    batcher: batch::Batcher,
    /// Connections whose commits do not wait for the disk, for
    /// Idempotency-Key locks only: a lock lost in a crash is released, which
    /// is what a crash should do to it, and the effect's durable commit
    /// flushes it anyway. One statement instead of a four-round-trip
    /// transaction with `SET LOCAL`.
    lock_pool: Pool,
}

fn pool(config: tokio_postgres::Config, max_size: usize) -> Result<Pool> {
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(max_size)
        .build()
        .map_err(|e| Error::Internal(e.to_string()))
}

impl PostgresStore {
    /// Connects to `url` (`postgres://…`), with at most `max_connections`
    /// pooled connections, and brings the schema up to date.
    pub async fn open(url: &str, max_connections: usize, clock: Arc<dyn Clock>) -> Result<Self> {
        let config = tokio_postgres::Config::from_str(url)
            .map_err(|e| Error::Unavailable(format!("invalid database URL: {e}")))?;
        let listen_config = config.clone();
        let mut lock_config = config.clone();
        let options = match config.get_options() {
            Some(o) => format!("{o} -c synchronous_commit=off"),
            None => "-c synchronous_commit=off".to_string(),
        };
        lock_config.options(&options);
        let lock_pool = pool(lock_config, max_connections.clamp(1, 8))?;
        // The batchers' statements look rows up by primary key, one key at a
        // time, whatever their arrays hold: one plan serves every batch
        // (rather than a custom plan, planned anew for each), and it must
        // never scan a table, even when made while the table was small.
        let mut batch_config = config.clone();
        let batch_options = "-c plan_cache_mode=force_generic_plan -c enable_seqscan=off";
        let options = match config.get_options() {
            Some(o) => format!("{o} {batch_options}"),
            None => batch_options.to_string(),
        };
        batch_config.options(&options);
        let batch_pool = pool(batch_config, batch::BATCHERS)?;
        let pool = pool(config, max_connections)?;
        let store = PostgresStore {
            batcher: batch::Batcher::start(batch_pool),
            pool,
            clock,
            listen_config,
            queue_configs: Arc::default(),
            lock_pool,
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<()> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&ADVISORY_LOCK])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS idem_schema (version BIGINT NOT NULL); \
             INSERT INTO idem_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM idem_schema)",
        )
        .await?;
        let version: i64 = tx
            .query_one("SELECT version FROM idem_schema", &[])
            .await?
            .get(0);
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.batch_execute(sql).await?;
            tx.execute("UPDATE idem_schema SET version = $1", &[&(i as i64 + 1)])
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    fn now(&self) -> i64 {
        to_micros(self.clock.now())
    }
}

fn not_found(kind: &'static str, id: &str) -> Error {
    Error::NotFound {
        kind,
        id: id.to_string(),
    }
}

fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

async fn query_opt<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Option<tokio_postgres::Row>> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query_opt(&stmt, params).await?)
}

async fn query<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<tokio_postgres::Row>> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query(&stmt, params).await?)
}

async fn execute<C: GenericClient>(
    c: &C,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<u64> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.execute(&stmt, params).await?)
}

fn map_rows<T>(
    rows: Vec<tokio_postgres::Row>,
    f: fn(&tokio_postgres::Row) -> Result<T>,
) -> Result<Vec<T>> {
    rows.iter().map(f).collect()
}

async fn insert_org<C: GenericClient>(c: &C, name: &str, key: &NewApiKey, now: i64) -> Result<()> {
    let n = execute(
        c,
        "INSERT INTO organizations (name, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&name, &now],
    )
    .await?;
    if n == 0 {
        return Err(Error::AlreadyExists {
            kind: "organization",
            id: name.to_string(),
        });
    }
    execute(
        c,
        "INSERT INTO principals (org, name, kind, role, created_at) VALUES ($1, $2, $3, $4, $5)",
        &[
            &name,
            &ADMIN_PRINCIPAL,
            &PrincipalKind::Service.as_str(),
            &Role::Admin.as_str(),
            &now,
        ],
    )
    .await?;
    insert_key(c, name, ADMIN_PRINCIPAL, key, now).await?;
    insert_secret(c, name, now).await?;
    Ok(())
}

async fn insert_key<C: GenericClient>(
    c: &C,
    org: &str,
    principal: &str,
    key: &NewApiKey,
    now: i64,
) -> Result<()> {
    let stmt = c
        .prepare_cached(
            "INSERT INTO api_keys (id, org, principal, key_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .await?;
    c.execute(&stmt, &[&key.id, &org, &principal, &key.key_hash, &now])
        .await
        .map_err(|e| {
            if is_unique_violation(&e) {
                Error::AlreadyExists {
                    kind: "api_key",
                    id: key.id.clone(),
                }
            } else {
                e.into()
            }
        })?;
    Ok(())
}

async fn insert_secret<C: GenericClient>(c: &C, org: &str, now: i64) -> Result<SigningSecret> {
    let secret = SigningSecret {
        id: generate_id("ss"),
        secret: generate_signing_secret(),
        created_at: from_micros(now),
    };
    execute(
        c,
        "INSERT INTO signing_secrets (org, id, secret, created_at) VALUES ($1, $2, $3, $4)",
        &[&org, &secret.id, &secret.secret, &now],
    )
    .await?;
    Ok(secret)
}

async fn get_principal<C: GenericClient>(c: &C, org: &str, name: &str) -> Result<Principal> {
    let sql = format!(
        "SELECT {} FROM principals WHERE org = $1 AND name = $2",
        rows::PRINCIPAL_COLUMNS
    );
    match query_opt(c, &sql, &[&org, &name]).await? {
        Some(r) => rows::principal(&r),
        None => Err(not_found("principal", name)),
    }
}

async fn get_queue<C: GenericClient>(c: &C, org: &str, name: &str, lock: &str) -> Result<Queue> {
    let sql = format!(
        "SELECT {} FROM queues WHERE org = $1 AND name = $2 {lock}",
        rows::QUEUE_COLUMNS
    );
    match query_opt(c, &sql, &[&org, &name]).await? {
        Some(r) => rows::queue(&r),
        None => Err(not_found("queue", name)),
    }
}

async fn get_task<C: GenericClient>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    lock: &str,
) -> Result<Option<Task>> {
    let sql = format!(
        "SELECT {} FROM tasks WHERE org = $1 AND queue = $2 AND task_id = $3 {lock}",
        rows::TASK_COLUMNS
    );
    query_opt(c, &sql, &[&org, &queue, &task_id])
        .await?
        .map(|r| rows::task(&r))
        .transpose()
}

/// The task, or 404 naming the queue when the queue itself is missing.
async fn require_task<C: GenericClient>(
    c: &C,
    org: &str,
    queue: &str,
    task_id: &str,
    lock: &str,
) -> Result<Task> {
    match get_task(c, org, queue, task_id, lock).await? {
        Some(t) => Ok(t),
        None => {
            get_queue(c, org, queue, "").await?;
            Err(not_found("task", task_id))
        }
    }
}

async fn delete_task<C: GenericClient>(c: &C, uid: &str) -> Result<()> {
    execute(c, "DELETE FROM attempts WHERE task_uid = $1", &[&uid]).await?;
    execute(c, "DELETE FROM tasks WHERE uid = $1", &[&uid]).await?;
    Ok(())
}

fn limit(page: &PageRequest) -> i64 {
    i64::from(page.limit) + 1
}

fn caller(r: &tokio_postgres::Row) -> Result<Caller> {
    let role: String = r.try_get(2)?;
    Ok(Caller {
        org: r.try_get(0)?,
        principal: r.try_get(1)?,
        role: Role::parse(&role)
            .ok_or_else(|| Error::Internal(format!("unreadable role {role:?}")))?,
        key_id: r.try_get(3)?,
    })
}

/// Runs `body` in a transaction and commits it. A macro rather than a
/// function because the body borrows the transaction across awaits.
macro_rules! transaction {
    ($self:ident, |$tx:ident| $body:block) => {{
        let mut client = $self.pool.get().await?;
        let $tx = client.transaction().await?;
        let result = async { $body }.await;
        match result {
            Ok(v) => {
                $tx.commit().await?;
                Ok(v)
            }
            Err(e) => Err(e),
        }
    }};
    // The same, completing the Idempotency-Key record `$done` (an
    // `Option<Completion>` the body may fill in) before the commit. The
    // body must not `return`: that would skip the completion.
    ($self:ident, $done:ident, $now:expr, |$tx:ident| $body:block) => {{
        let mut client = $self.pool.get().await?;
        let $tx = client.transaction().await?;
        #[allow(unused_mut)]
        let mut $done = $done;
        let result: Result<_> = async {
            let body: Result<_> = $body;
            let value = body?;
            idempotency::complete(&$tx, $done.as_ref(), $now).await?;
            Ok(value)
        }
        .await;
        match result {
            Ok(v) => {
                $tx.commit().await?;
                Ok(v)
            }
            Err(e) => Err(e),
        }
    }};
}

// Declared after `transaction!`, which it uses.
mod jobs;

/// A task insert that checks its queue in the same statement: one round
/// trip and one commit for the common case. `FOR KEY SHARE` makes it wait
/// for a concurrent queue delete and then see the queue gone. Creates
/// without a key run its many-row form in a group commit
/// ([`batch`]); this one only when the batchers are gone.
const SQL_INSERT_TASK_IF_QUEUE: &str = "INSERT INTO tasks (org, queue, task_id, uid, status, \
     target, body_form, body, schedule_time, next_attempt_at, dispatch_deadline_s, retry_config, \
     attempt_count, cancel_requested, created_at) \
     SELECT $1::text, $2::text, $3::text, $4::text, 'pending', $5::text, $6::text, $7::bytea, \
     $8::bigint, $8::bigint, $9::bigint, $10::text, 0, 0, $11::bigint \
     WHERE EXISTS (SELECT 1 FROM queues WHERE org = $1 AND name = $2 FOR KEY SHARE) \
     ON CONFLICT (org, queue, task_id) DO NOTHING";

/// (organization, queue) → configuration and when it was read.
type QueueConfigCache = HashMap<(String, String), (QueueConfig, Instant)>;

/// [`SQL_INSERT_TASK_IF_QUEUE`] together with the completion of the
/// request's Idempotency-Key record, in one statement: the insert happens
/// only while this request holds the key (its in-progress row, locked
/// here), and the record completes only if the insert did, so the two
/// commit together or not at all. Answers (inserted, completed).
const SQL_INSERT_TASK_AND_COMPLETE: &str = "WITH held AS ( \
       SELECT 1 FROM idempotency_keys WHERE org = $1 AND principal = $12 AND key = $13 \
       AND token = $14 AND state = 'in_progress' FOR UPDATE), \
     ins AS ( \
       INSERT INTO tasks (org, queue, task_id, uid, status, target, body_form, body, \
       schedule_time, next_attempt_at, dispatch_deadline_s, retry_config, attempt_count, \
       cancel_requested, created_at) \
       SELECT $1::text, $2::text, $3::text, $4::text, 'pending', $5::text, $6::text, \
       $7::bytea, $8::bigint, $8::bigint, $9::bigint, $10::text, 0, 0, $11::bigint \
       WHERE EXISTS (SELECT 1 FROM queues WHERE org = $1 AND name = $2 FOR KEY SHARE) \
       AND EXISTS (SELECT 1 FROM held) \
       ON CONFLICT (org, queue, task_id) DO NOTHING RETURNING 1), \
     done AS ( \
       UPDATE idempotency_keys SET fingerprint = $15, state = 'completed', \
       status = $16::bigint, resource_kind = $17::text, resource_id = $18::text, body = NULL, \
       locked_until = $11::bigint, expires_at = $19::bigint \
       WHERE org = $1 AND principal = $12::text AND key = $13::text AND token = $14::text \
       AND EXISTS (SELECT 1 FROM ins) RETURNING 1) \
     SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM done)";

/// The parameters of every task insert, in the order the statements number
/// them ($1–$11).
fn task_params<'a>(
    p: &'a TaskCreate,
    ins: &'a tasks::TaskInsert,
    now: &'a i64,
) -> [&'a (dyn tokio_postgres::types::ToSql + Sync); 11] {
    [
        &p.org,
        &p.queue,
        &p.task_id,
        &ins.uid,
        &ins.target,
        &ins.body_form,
        &ins.body,
        &ins.schedule_time,
        &ins.dispatch_deadline_s,
        &ins.retry_config,
        now,
    ]
}

/// How long a node trusts a queue's configuration for resolving the retry
/// policy of new tasks; a PATCH reaches creates on other nodes within it.
const QUEUE_CONFIG_TTL: Duration = Duration::from_secs(1);

/// How a create ended on the fast path.
enum Fast {
    Created(Box<Task>),
    /// Down the transactional path, which handles conflicts and missing
    /// queues. `uid` is the row a failed batch may have committed after all
    /// (the connection broke after the commit): found there, it is this
    /// request's own task.
    Fallback {
        uid: Option<String>,
    },
}

impl PostgresStore {
    /// The queue's configuration from the cache, or read and cached; `None`
    /// when the queue is missing.
    async fn queue_config(&self, org: &str, queue: &str) -> Result<Option<QueueConfig>> {
        let id = (org.to_string(), queue.to_string());
        {
            let cache = self.queue_configs.lock().expect("queue config cache");
            if let Some((c, _)) = cache
                .get(&id)
                .filter(|(_, at)| at.elapsed() < QUEUE_CONFIG_TTL)
            {
                return Ok(Some(c.clone()));
            }
        }
        let client = self.pool.get().await?;
        match get_queue(&client, org, queue, "").await {
            Ok(q) => {
                let mut cache = self.queue_configs.lock().expect("queue config cache");
                if cache.len() > 10_000 {
                    cache.clear();
                }
                cache.insert(id, (q.config.clone(), Instant::now()));
                Ok(Some(q.config))
            }
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates the task in one statement when its queue's configuration is
    /// at hand and its ID is free: without a key, the statement of a group
    /// commit ([`batch`]); with one, a statement of its own that also
    /// completes the key's record.
    async fn task_create_fast(
        &self,
        p: &TaskCreate,
        done: Option<&Completion>,
        now: i64,
    ) -> Result<Fast> {
        let Some(config) = self.queue_config(&p.org, &p.queue).await? else {
            return Ok(Fast::Fallback { uid: None });
        };
        let mut ins = tasks::TaskInsert::resolve(p, &config, now)?;
        if let Some(d) = done {
            let client = self.pool.get().await?;
            let expires_at = now.saturating_add(crate::idempotency::micros(d.retain_for));
            let status = i64::from(d.status);
            let mut params = task_params(p, &ins, &now).to_vec();
            params.extend_from_slice(&[
                &d.principal,
                &d.key,
                &d.token,
                &d.fingerprint,
                &status,
                &d.resource_kind,
                &d.resource_id,
                &expires_at,
            ]);
            let row = client
                .query_one(
                    &client.prepare_cached(SQL_INSERT_TASK_AND_COMPLETE).await?,
                    &params,
                )
                .await?;
            let (inserted, completed): (i64, i64) = (row.get(0), row.get(1));
            return match (inserted, completed) {
                (1, 1) => Ok(Fast::Created(Box::new(ins.task(p, now)))),
                (0, _) => Ok(Fast::Fallback { uid: None }),
                _ => Err(Error::Internal(
                    "a task was inserted without its Idempotency-Key record".into(),
                )),
            };
        }
        // The row takes the insert's column values; `task` below needs
        // none of those moved out.
        let row = batch::Row {
            org: p.org.clone(),
            queue: p.queue.clone(),
            task_id: p.task_id.clone(),
            uid: ins.uid.clone(),
            target: std::mem::take(&mut ins.target),
            body_form: ins.body_form,
            body: ins.body.take(),
            schedule_time: ins.schedule_time,
            dispatch_deadline_s: ins.dispatch_deadline_s,
            retry_config: std::mem::take(&mut ins.retry_config),
            created_at: now,
        };
        Ok(match self.batcher.insert(row).await {
            Ok(batch::Outcome::Inserted) => Fast::Created(Box::new(ins.task(p, now))),
            Ok(batch::Outcome::Exists(summary)) => return Err(Error::TaskExists(summary)),
            Ok(batch::Outcome::NotInserted) => Fast::Fallback { uid: None },
            Ok(batch::Outcome::Failed) => Fast::Fallback { uid: Some(ins.uid) },
            // No batcher: a statement of its own.
            Err(row) => {
                let client = self.pool.get().await?;
                let n = execute(&client, SQL_INSERT_TASK_IF_QUEUE, &row.params()).await?;
                if n == 1 {
                    Fast::Created(Box::new(ins.task(p, now)))
                } else {
                    Fast::Fallback { uid: None }
                }
            }
        })
    }
}

impl PostgresStore {
    async fn queue_delete_once(&self, org: &str, name: &str) -> Result<()> {
        transaction!(self, |tx| {
            let n = execute(
                &tx,
                "DELETE FROM queues WHERE org = $1 AND name = $2",
                &[&org, &name],
            )
            .await?;
            if n == 0 {
                return Err(not_found("queue", name));
            }
            execute(
                &tx,
                "DELETE FROM attempts WHERE task_uid IN \
                 (SELECT uid FROM tasks WHERE org = $1 AND queue = $2)",
                &[&org, &name],
            )
            .await?;
            execute(
                &tx,
                "DELETE FROM tasks WHERE org = $1 AND queue = $2",
                &[&org, &name],
            )
            .await?;
            Ok(())
        })
    }
}

/// A deadlock or serialization failure: the transaction may simply be run
/// again.
fn is_serialization_failure(e: &Error) -> bool {
    matches!(e, Error::Internal(m) if m.starts_with("40P01") || m.starts_with("40001"))
}

#[async_trait]
impl Store for PostgresStore {
    async fn ping(&self) -> Result<()> {
        let client = self.pool.get().await?;
        client.simple_query("SELECT 1").await?;
        Ok(())
    }

    async fn bootstrap(&self, key: NewApiKey) -> Result<bool> {
        let now = self.now();
        transaction!(self, |tx| {
            execute(&tx, "SELECT pg_advisory_xact_lock($1)", &[&ADVISORY_LOCK]).await?;
            if query_opt(&tx, "SELECT 1 FROM api_keys LIMIT 1", &[])
                .await?
                .is_some()
            {
                return Ok(false);
            }
            insert_org(&tx, DEFAULT_ORGANIZATION, &key, now).await?;
            Ok(true)
        })
    }

    async fn organization_create(
        &self,
        name: &str,
        admin_key: NewApiKey,
        done: Option<Completion>,
    ) -> Result<()> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            insert_org(&tx, name, &admin_key, now).await
        })
    }

    async fn principal_create(
        &self,
        org: &str,
        name: &str,
        kind: PrincipalKind,
        role: Role,
        done: Option<Completion>,
    ) -> Result<Principal> {
        let now = self.now();
        let sql = format!(
            "INSERT INTO principals (org, name, kind, role, created_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING {}",
            rows::PRINCIPAL_COLUMNS
        );
        transaction!(self, done, now, |tx| {
            let row = query_opt(
                &tx,
                &sql,
                &[&org, &name, &kind.as_str(), &role.as_str(), &now],
            )
            .await?;
            match row {
                Some(r) => rows::principal(&r),
                None => Err(Error::AlreadyExists {
                    kind: "principal",
                    id: name.to_string(),
                }),
            }
        })
    }

    async fn principal_get(&self, org: &str, name: &str) -> Result<Principal> {
        let client = self.pool.get().await?;
        get_principal(&client, org, name).await
    }

    async fn principal_list(&self, org: &str, page: &PageRequest) -> Result<Page<Principal>> {
        let client = self.pool.get().await?;
        let sql = format!(
            "SELECT {} FROM principals WHERE org = $1 AND name > $2 ORDER BY name LIMIT $3",
            rows::PRINCIPAL_COLUMNS
        );
        let after = page.after.clone().unwrap_or_default();
        let items = map_rows(
            query(&client, &sql, &[&org, &after, &limit(page)]).await?,
            rows::principal,
        )?;
        Ok(Page::from_rows(items, page.limit, |p| p.name.clone()))
    }

    async fn principal_set_role(
        &self,
        org: &str,
        name: &str,
        role: Role,
        done: Option<Completion>,
    ) -> Result<Principal> {
        let sql = format!(
            "UPDATE principals SET role = $1 WHERE org = $2 AND name = $3 RETURNING {}",
            rows::PRINCIPAL_COLUMNS
        );
        transaction!(self, done, self.now(), |tx| {
            match query_opt(&tx, &sql, &[&role.as_str(), &org, &name]).await? {
                Some(r) => rows::principal(&r),
                None => Err(not_found("principal", name)),
            }
        })
    }

    async fn api_key_create(
        &self,
        org: &str,
        principal: &str,
        key: NewApiKey,
        done: Option<Completion>,
    ) -> Result<ApiKey> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            get_principal(&tx, org, principal).await?;
            insert_key(&tx, org, principal, &key, now).await?;
            Ok(ApiKey {
                id: key.id.clone(),
                principal: principal.to_string(),
                created_at: from_micros(now),
                last_used_at: None,
            })
        })
    }

    async fn api_key_list(
        &self,
        org: &str,
        principal: &str,
        page: &PageRequest,
    ) -> Result<Page<ApiKey>> {
        let client = self.pool.get().await?;
        get_principal(&client, org, principal).await?;
        let sql = format!(
            "SELECT {} FROM api_keys WHERE org = $1 AND principal = $2 AND id > $3 \
             ORDER BY id LIMIT $4",
            rows::API_KEY_COLUMNS
        );
        let after = page.after.clone().unwrap_or_default();
        let items = map_rows(
            query(&client, &sql, &[&org, &principal, &after, &limit(page)]).await?,
            rows::api_key,
        )?;
        Ok(Page::from_rows(items, page.limit, |k| k.id.clone()))
    }

    async fn api_key_revoke(&self, org: &str, principal: &str, id: &str) -> Result<()> {
        let client = self.pool.get().await?;
        get_principal(&client, org, principal).await?;
        let n = execute(
            &client,
            "DELETE FROM api_keys WHERE org = $1 AND principal = $2 AND id = $3",
            &[&org, &principal, &id],
        )
        .await?;
        if n == 0 {
            return Err(not_found("api_key", id));
        }
        Ok(())
    }

    async fn api_key_authenticate(&self, key_hash: &str) -> Result<Option<Caller>> {
        let client = self.pool.get().await?;
        query_opt(
            &client,
            "SELECT k.org, k.principal, p.role, k.id FROM api_keys k \
             JOIN principals p ON p.org = k.org AND p.name = k.principal \
             WHERE k.key_hash = $1",
            &[&key_hash],
        )
        .await?
        .map(|r| caller(&r))
        .transpose()
    }

    async fn api_key_touch(&self, id: &str) -> Result<()> {
        let client = self.pool.get().await?;
        execute(
            &client,
            "UPDATE api_keys SET last_used_at = $1 WHERE id = $2",
            &[&self.now(), &id],
        )
        .await?;
        Ok(())
    }

    async fn signing_secret_list(&self, org: &str) -> Result<Vec<SigningSecret>> {
        let client = self.pool.get().await?;
        map_rows(
            query(
                &client,
                "SELECT id, secret, created_at FROM signing_secrets WHERE org = $1 \
                 ORDER BY created_at DESC, id DESC",
                &[&org],
            )
            .await?,
            rows::signing_secret,
        )
    }

    async fn signing_secret_rotate(
        &self,
        org: &str,
        done: Option<Completion>,
    ) -> Result<SigningSecret> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            let secret = insert_secret(&tx, org, now).await?;
            if let Some(d) = done.as_mut() {
                d.resource_id = secret.id.clone();
            }
            Ok::<_, Error>(secret)
        })
    }

    async fn signing_secret_delete(&self, org: &str, id: &str) -> Result<()> {
        transaction!(self, |tx| {
            // Locking the organization's secrets makes two concurrent deletes
            // of its last two secrets see each other.
            let ids: Vec<String> = query(
                &tx,
                "SELECT id FROM signing_secrets WHERE org = $1 FOR UPDATE",
                &[&org],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
            if !ids.iter().any(|i| i == id) {
                return Err(not_found("signing_secret", id));
            }
            if ids.len() <= 1 {
                return Err(Error::FailedPrecondition(
                    "the organization's only signing secret cannot be deleted; rotate first".into(),
                ));
            }
            execute(
                &tx,
                "DELETE FROM signing_secrets WHERE org = $1 AND id = $2",
                &[&org, &id],
            )
            .await?;
            Ok(())
        })
    }

    async fn queue_create(
        &self,
        org: &str,
        name: &str,
        config: &QueueConfig,
        done: Option<Completion>,
    ) -> Result<Queue> {
        let now = self.now();
        let sql = format!(
            "INSERT INTO queues (org, name, state, config, created_at, updated_at) \
             VALUES ($1, $2, 'running', $3, $4, $4) ON CONFLICT DO NOTHING RETURNING {}",
            rows::QUEUE_COLUMNS
        );
        let config = rows::to_json(config);
        transaction!(self, done, now, |tx| {
            match query_opt(&tx, &sql, &[&org, &name, &config, &now]).await? {
                Some(r) => rows::queue(&r),
                None => Err(Error::AlreadyExists {
                    kind: "queue",
                    id: name.to_string(),
                }),
            }
        })
    }

    async fn queue_get(&self, org: &str, name: &str) -> Result<Queue> {
        let client = self.pool.get().await?;
        get_queue(&client, org, name, "").await
    }

    async fn queue_list(&self, org: &str, page: &PageRequest) -> Result<Page<Queue>> {
        let client = self.pool.get().await?;
        let sql = format!(
            "SELECT {} FROM queues WHERE org = $1 AND name > $2 AND name <> '~jobs' \
                 ORDER BY name LIMIT $3",
            rows::QUEUE_COLUMNS
        );
        let after = page.after.clone().unwrap_or_default();
        let items = map_rows(
            query(&client, &sql, &[&org, &after, &limit(page)]).await?,
            rows::queue,
        )?;
        Ok(Page::from_rows(items, page.limit, |q| q.name.clone()))
    }

    async fn queue_update(
        &self,
        org: &str,
        name: &str,
        patch: &QueueConfigPatch,
        done: Option<Completion>,
    ) -> Result<Queue> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            let current = get_queue(&tx, org, name, "FOR UPDATE").await?;
            let next = current.config.apply(patch).map_err(Error::Invalid)?;
            let sql = format!(
                "UPDATE queues SET config = $1, updated_at = $2 WHERE org = $3 AND name = $4 \
                 RETURNING {}",
                rows::QUEUE_COLUMNS
            );
            let row = query_opt(&tx, &sql, &[&rows::to_json(&next), &now, &org, &name]).await?;
            rows::queue(&row.ok_or_else(|| not_found("queue", name))?)
        })
    }

    async fn queue_set_state(
        &self,
        org: &str,
        name: &str,
        state: QueueState,
        done: Option<Completion>,
    ) -> Result<Queue> {
        let now = self.now();
        let sql = format!(
            "UPDATE queues SET state = $1, updated_at = $2 WHERE org = $3 AND name = $4 \
             RETURNING {}",
            rows::QUEUE_COLUMNS
        );
        transaction!(self, done, now, |tx| {
            match query_opt(&tx, &sql, &[&state.as_str(), &now, &org, &name]).await? {
                Some(r) => rows::queue(&r),
                None => Err(not_found("queue", name)),
            }
        })
    }

    async fn queue_delete(&self, org: &str, name: &str) -> Result<()> {
        // Completing attempts lock a task and then its queue; the delete
        // locks the other way round. PostgreSQL breaks such a deadlock by
        // failing one side, and the delete simply tries again.
        let mut tries = 0;
        loop {
            match self.queue_delete_once(org, name).await {
                Err(e) if is_serialization_failure(&e) && tries < 5 => tries += 1,
                other => return other,
            }
        }
    }

    async fn queue_purge(&self, org: &str, name: &str, done: Option<Completion>) -> Result<u64> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            let queue = get_queue(&tx, org, name, "FOR SHARE").await?;
            let window = queue.config.dedup_window_s as i64 * 1_000_000;
            let n = execute(
                &tx,
                rows::SQL_CANCEL_PENDING_IN_QUEUE,
                &[&now, &window, &org, &name],
            )
            .await?;
            if let Some(d) = done.as_mut() {
                d.body = Some(format!("{{\"cancelled\":{n}}}"));
            }
            Ok::<_, Error>(n)
        })
    }

    async fn task_create(&self, mut p: TaskCreate) -> Result<Task> {
        let now = self.now();
        let done = p.completion.take();
        let own_uid = match self.task_create_fast(&p, done.as_ref(), now).await? {
            Fast::Created(task) => return Ok(*task),
            Fast::Fallback { uid } => uid,
        };
        transaction!(self, done, now, |tx| {
            // FOR KEY SHARE keeps the queue from being deleted under the
            // insert without blocking concurrent creates.
            let queue = get_queue(&tx, &p.org, &p.queue, "FOR KEY SHARE").await?;
            let ins = tasks::TaskInsert::resolve(&p, &queue.config, now)?;
            let params = task_params(&p, &ins, &now);
            // No early return: the macro completes the Idempotency-Key
            // record after this block.
            let mut tries = 0;
            loop {
                if execute(&tx, rows::SQL_INSERT_TASK, &params).await? == 1 {
                    break Ok(ins.task(&p, now));
                }
                match get_task(&tx, &p.org, &p.queue, &p.task_id, "FOR UPDATE").await? {
                    // Committed by this request's batch after all.
                    Some(t) if own_uid.as_deref() == Some(t.uid.as_str()) => break Ok(t),
                    Some(t) if !tasks::tombstone_expired(&t, now) => {
                        break Err(Error::TaskExists(Box::new(tasks::summary(&t, now))));
                    }
                    // An expired tombstone: the ID is free.
                    Some(t) => delete_task(&tx, &t.uid).await?,
                    // A row deleted between the insert and the lock (by a
                    // sweep, or a create replacing a tombstone that may have
                    // inserted its own): look again.
                    None => {}
                }
                tries += 1;
                if tries > 3 {
                    break Err(Error::Internal("task insert raced".into()));
                }
            }
        })
    }

    async fn task_get(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
        let client = self.pool.get().await?;
        require_task(&client, org, queue, task_id, "").await
    }

    async fn task_list(
        &self,
        org: &str,
        queue: &str,
        filter: TaskFilter,
        page: &PageRequest,
    ) -> Result<Page<Task>> {
        let client = self.pool.get().await?;
        get_queue(&client, org, queue, "").await?;
        let after = page.after.clone().unwrap_or_default();
        let rows_ = query(
            &client,
            &rows::task_list_sql(filter.state),
            &[&org, &queue, &after, &self.now(), &limit(page)],
        )
        .await?;
        let items = map_rows(rows_, rows::task)?;
        Ok(Page::from_rows(items, page.limit, |t| t.task_id.clone()))
    }

    async fn task_attempts(&self, org: &str, queue: &str, task_id: &str) -> Result<Vec<Attempt>> {
        let client = self.pool.get().await?;
        let task = require_task(&client, org, queue, task_id, "").await?;
        map_rows(
            query(&client, rows::SQL_ATTEMPTS, &[&task.uid]).await?,
            rows::attempt,
        )
    }

    async fn task_cancel(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
        let now = self.now();
        transaction!(self, |tx| {
            let task = require_task(&tx, org, queue, task_id, "FOR UPDATE").await?;
            let window =
                get_queue(&tx, org, queue, "").await?.config.dedup_window_s as i64 * 1_000_000;
            execute(&tx, rows::SQL_CANCEL_TASK, &[&now, &window, &task.uid]).await?;
            require_task(&tx, org, queue, task_id, "").await
        })
    }

    async fn task_run_now(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        done: Option<Completion>,
    ) -> Result<Task> {
        let now = self.now();
        transaction!(self, done, now, |tx| {
            let task = require_task(&tx, org, queue, task_id, "FOR UPDATE").await?;
            tasks::check_runnable(&task, now)?;
            execute(&tx, rows::SQL_RUN_NOW, &[&now, &task.uid]).await?;
            require_task(&tx, org, queue, task_id, "").await
        })
    }

    async fn task_sweep_tombstones(&self, limit: u32) -> Result<u64> {
        let now = self.now();
        transaction!(self, |tx| {
            let sql = format!("{} FOR UPDATE SKIP LOCKED", rows::SQL_EXPIRED_TOMBSTONES);
            let uids: Vec<String> = query(&tx, &sql, &[&now, &i64::from(limit)])
                .await?
                .iter()
                .map(|r| r.text(0))
                .collect::<Result<_>>()?;
            for uid in &uids {
                delete_task(&tx, uid).await?;
            }
            Ok(uids.len() as u64)
        })
    }

    async fn task_counts_by_state(&self) -> Result<Vec<TaskCount>> {
        let client = self.pool.get().await?;
        query(&client, rows::SQL_TASK_COUNTS, &[])
            .await?
            .iter()
            .map(rows::task_count)
            .collect()
    }
}
