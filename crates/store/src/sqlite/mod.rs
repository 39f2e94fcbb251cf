//! The embedded backend: one SQLite file in WAL mode.
//!
//! Writes go through the [`writer::Writer`] (group commit, `synchronous=FULL`,
//! so a write acknowledged is a write that survives power loss); reads run
//! on a small pool of read-only connections, which WAL lets proceed while
//! the writer commits.

mod dispatch;
mod idempotency;
mod jobs;
mod writer;

use crate::idempotency::Completion;
use crate::records::*;
use crate::sql::{self as rows, Row as _};
use crate::tasks;
use crate::{Error, Result, Store};
use async_trait::async_trait;
use idem_core::Clock;
use idem_core::clock::to_micros;
use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState};
use idem_core::secrets::generate_signing_secret;
use idem_core::tenancy::{ADMIN_PRINCIPAL, DEFAULT_ORGANIZATION, PrincipalKind, Role, generate_id};
use jiff::Timestamp;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use writer::Writer;

const SCHEMA: &str = include_str!("schema.sql");
/// Idle read connections kept open.
const MAX_IDLE_READERS: usize = 8;

/// The SQLite store. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: Writer,
    readers: Mutex<Vec<Connection>>,
    clock: Arc<dyn Clock>,
    /// In-progress Idempotency-Key locks (see `idempotency`).
    locks: Mutex<HashMap<idempotency::LockId, idempotency::Lock>>,
    /// Queue configurations as the writer last read them, so that a task
    /// create costs the single writer no queue lookup. Exact: every change
    /// of a queue's configuration or existence goes through this store and
    /// drops the entry.
    queue_configs: Arc<Mutex<HashMap<(String, String), QueueConfig>>>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path` and brings its
    /// schema up to date.
    pub async fn open(path: impl AsRef<Path>, clock: Arc<dyn Clock>) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        let p = path.clone();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection> {
            let conn = Connection::open(&p)?;
            conn.execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = FULL;
                 PRAGMA busy_timeout = 5000;
                 PRAGMA foreign_keys = OFF;",
            )?;
            migrate(&conn)?;
            Ok(conn)
        })
        .await
        .map_err(|e| Error::Internal(e.to_string()))??;
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                writer: Writer::start(conn),
                readers: Mutex::new(Vec::new()),
                clock,
                locks: Mutex::new(HashMap::new()),
                queue_configs: Arc::default(),
            }),
        })
    }

    fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, i64) -> Result<T> + Send + 'static,
    {
        let clock = self.inner.clock.clone();
        // "now" is read inside the batch, so a write never records a time
        // earlier than writes committed before it.
        let result = self
            .inner
            .writer
            .write(move |conn| f(conn, to_micros(clock.now())))
            .await;
        if let Err(Error::Unavailable(_)) = &result {
            // A batch that failed to commit may have filled the cache with
            // rows that never existed.
            self.inner
                .queue_configs
                .lock()
                .expect("queue cache")
                .clear();
        }
        result
    }

    async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, i64) -> Result<T> + Send + 'static,
    {
        let inner = self.inner.clone();
        let now = to_micros(self.now());
        tokio::task::spawn_blocking(move || {
            let conn = match inner.readers.lock().expect("reader pool").pop() {
                Some(c) => c,
                None => open_reader(&inner.path)?,
            };
            let result = f(&conn, now);
            let mut idle = inner.readers.lock().expect("reader pool");
            if idle.len() < MAX_IDLE_READERS {
                idle.push(conn);
            }
            result
        })
        .await
        .map_err(|e| Error::Internal(e.to_string()))?
    }
}

impl SqliteStore {
    /// [`Self::write`], completing the Idempotency-Key record `done` in the
    /// same transaction; `f` may fill in what only it knows (a generated ID,
    /// a response body).
    async fn write_done<T, F>(&self, done: Option<Completion>, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, i64, &mut Option<Completion>) -> Result<T> + Send + 'static,
    {
        let lock = done.clone();
        let inner = self.inner.clone();
        let result = self
            .write(move |conn, now| {
                // Checked before the effect, in the writer, so that no
                // takeover can slip in between: a request whose lock another
                // one holds now must change nothing.
                if let Some(d) = &done {
                    idempotency::check_still_held(&inner.locks, d)?;
                }
                let mut done = done;
                let value = f(conn, now, &mut done)?;
                idempotency::complete(conn, done.as_ref(), now)?;
                Ok(value)
            })
            .await;
        if result.is_ok() {
            self.unlock(lock.as_ref());
        }
        result
    }
}

fn open_reader(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.execute_batch("PRAGMA busy_timeout = 5000;")?;
    Ok(conn)
}

/// Schema versions, applied in order; each runs once, recorded in
/// `user_version`.
const MIGRATIONS: &[&str] = &[
    SCHEMA,
    include_str!("migrations/002_dispatch.sql"),
    include_str!("migrations/003_idempotency.sql"),
    include_str!("migrations/004_jobs.sql"),
];

fn migrate(conn: &Connection) -> Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}

fn not_found(kind: &'static str, id: &str) -> Error {
    Error::NotFound {
        kind,
        id: id.to_string(),
    }
}

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
        || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
}

fn insert_org(conn: &Connection, name: &str, key: &NewApiKey, now: i64) -> Result<()> {
    let inserted = conn
        .prepare_cached(
            "INSERT INTO organizations (name, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )?
        .execute(params![name, now])?;
    if inserted == 0 {
        return Err(Error::AlreadyExists {
            kind: "organization",
            id: name.to_string(),
        });
    }
    conn.prepare_cached(
        "INSERT INTO principals (org, name, kind, role, created_at) VALUES ($1, $2, $3, $4, $5)",
    )?
    .execute(params![
        name,
        ADMIN_PRINCIPAL,
        PrincipalKind::Service.as_str(),
        Role::Admin.as_str(),
        now
    ])?;
    insert_key(conn, name, ADMIN_PRINCIPAL, key, now)?;
    insert_secret(conn, name, now)?;
    Ok(())
}

fn insert_key(
    conn: &Connection,
    org: &str,
    principal: &str,
    key: &NewApiKey,
    now: i64,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO api_keys (id, org, principal, key_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
    )?
    .execute(params![key.id, org, principal, key.key_hash, now])
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

fn insert_secret(conn: &Connection, org: &str, now: i64) -> Result<SigningSecret> {
    let secret = SigningSecret {
        id: generate_id("ss"),
        secret: generate_signing_secret(),
        created_at: idem_core::clock::from_micros(now),
    };
    conn.prepare_cached(
        "INSERT INTO signing_secrets (org, id, secret, created_at) VALUES ($1, $2, $3, $4)",
    )?
    .execute(params![org, secret.id, secret.secret, now])?;
    Ok(secret)
}

fn get_principal(conn: &Connection, org: &str, name: &str) -> Result<Principal> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM principals WHERE org = $1 AND name = $2",
        rows::PRINCIPAL_COLUMNS
    ))?
    .query_row(params![org, name], |r| Ok(rows::principal(r)))
    .optional()?
    .ok_or_else(|| not_found("principal", name))?
}

fn get_queue(conn: &Connection, org: &str, name: &str) -> Result<Queue> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM queues WHERE org = $1 AND name = $2",
        rows::QUEUE_COLUMNS
    ))?
    .query_row(params![org, name], |r| Ok(rows::queue(r)))
    .optional()?
    .ok_or_else(|| not_found("queue", name))?
}

fn get_task(conn: &Connection, org: &str, queue: &str, task_id: &str) -> Result<Option<Task>> {
    conn.prepare_cached(&format!(
        "SELECT {} FROM tasks WHERE org = $1 AND queue = $2 AND task_id = $3",
        rows::TASK_COLUMNS
    ))?
    .query_row(params![org, queue, task_id], |r| Ok(rows::task(r)))
    .optional()?
    .transpose()
}

/// The task, or 404 naming the queue when the queue itself is missing.
fn require_task(conn: &Connection, org: &str, queue: &str, task_id: &str) -> Result<Task> {
    match get_task(conn, org, queue, task_id)? {
        Some(t) => Ok(t),
        None => {
            get_queue(conn, org, queue)?;
            Err(not_found("task", task_id))
        }
    }
}

fn collect<T>(
    stmt: &mut rusqlite::CachedStatement<'_>,
    params: impl rusqlite::Params,
    map: fn(&rusqlite::Row<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut rows = stmt.query(params)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(map(r)?);
    }
    Ok(out)
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<()> {
        self.read(|conn, _| Ok(conn.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))?))
            .await
            .map(drop)
    }

    async fn bootstrap(&self, key: NewApiKey) -> Result<bool> {
        self.write(move |conn, now| {
            let any: Option<i64> = conn
                .query_row("SELECT 1 FROM api_keys LIMIT 1", [], |r| r.get(0))
                .optional()?;
            if any.is_some() {
                return Ok(false);
            }
            insert_org(conn, DEFAULT_ORGANIZATION, &key, now)?;
            Ok(true)
        })
        .await
    }

    async fn organization_create(
        &self,
        name: &str,
        admin_key: NewApiKey,
        done: Option<Completion>,
    ) -> Result<()> {
        let name = name.to_string();
        self.write_done(done, move |conn, now, _| {
            insert_org(conn, &name, &admin_key, now)
        })
        .await
    }

    async fn principal_create(
        &self,
        org: &str,
        name: &str,
        kind: PrincipalKind,
        role: Role,
        done: Option<Completion>,
    ) -> Result<Principal> {
        let (org, name) = (org.to_string(), name.to_string());
        self.write_done(done, move |conn, now, _| {
            let inserted = conn
                .prepare_cached(
                    "INSERT INTO principals (org, name, kind, role, created_at) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                )?
                .execute(params![org, name, kind.as_str(), role.as_str(), now])?;
            if inserted == 0 {
                return Err(Error::AlreadyExists {
                    kind: "principal",
                    id: name,
                });
            }
            get_principal(conn, &org, &name)
        })
        .await
    }

    async fn principal_get(&self, org: &str, name: &str) -> Result<Principal> {
        let (org, name) = (org.to_string(), name.to_string());
        self.read(move |conn, _| get_principal(conn, &org, &name))
            .await
    }

    async fn principal_list(&self, org: &str, page: &PageRequest) -> Result<Page<Principal>> {
        let (org, page) = (org.to_string(), page.clone());
        self.read(move |conn, _| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {} FROM principals WHERE org = $1 AND name > $2 ORDER BY name LIMIT $3",
                rows::PRINCIPAL_COLUMNS
            ))?;
            let after = page.after.clone().unwrap_or_default();
            let items = collect(&mut stmt, params![org, after, page.limit + 1], |r| {
                rows::principal(r)
            })?;
            Ok(Page::from_rows(items, page.limit, |p| p.name.clone()))
        })
        .await
    }

    async fn principal_set_role(
        &self,
        org: &str,
        name: &str,
        role: Role,
        done: Option<Completion>,
    ) -> Result<Principal> {
        let (org, name) = (org.to_string(), name.to_string());
        self.write_done(done, move |conn, _, _| {
            let n = conn
                .prepare_cached("UPDATE principals SET role = $1 WHERE org = $2 AND name = $3")?
                .execute(params![role.as_str(), org, name])?;
            if n == 0 {
                return Err(not_found("principal", &name));
            }
            get_principal(conn, &org, &name)
        })
        .await
    }

    async fn api_key_create(
        &self,
        org: &str,
        principal: &str,
        key: NewApiKey,
        done: Option<Completion>,
    ) -> Result<ApiKey> {
        let (org, principal) = (org.to_string(), principal.to_string());
        self.write_done(done, move |conn, now, _| {
            get_principal(conn, &org, &principal)?;
            insert_key(conn, &org, &principal, &key, now)?;
            Ok(ApiKey {
                id: key.id,
                principal,
                created_at: idem_core::clock::from_micros(now),
                last_used_at: None,
            })
        })
        .await
    }

    async fn api_key_list(
        &self,
        org: &str,
        principal: &str,
        page: &PageRequest,
    ) -> Result<Page<ApiKey>> {
        let (org, principal, page) = (org.to_string(), principal.to_string(), page.clone());
        self.read(move |conn, _| {
            get_principal(conn, &org, &principal)?;
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {} FROM api_keys WHERE org = $1 AND principal = $2 AND id > $3 \
                 ORDER BY id LIMIT $4",
                rows::API_KEY_COLUMNS
            ))?;
            let after = page.after.clone().unwrap_or_default();
            let items = collect(
                &mut stmt,
                params![org, principal, after, page.limit + 1],
                |r| rows::api_key(r),
            )?;
            Ok(Page::from_rows(items, page.limit, |k| k.id.clone()))
        })
        .await
    }

    async fn api_key_revoke(&self, org: &str, principal: &str, id: &str) -> Result<()> {
        let (org, principal, id) = (org.to_string(), principal.to_string(), id.to_string());
        self.write(move |conn, _| {
            get_principal(conn, &org, &principal)?;
            let n = conn
                .prepare_cached(
                    "DELETE FROM api_keys WHERE org = $1 AND principal = $2 AND id = $3",
                )?
                .execute(params![org, principal, id])?;
            if n == 0 {
                return Err(not_found("api_key", &id));
            }
            Ok(())
        })
        .await
    }

    async fn api_key_authenticate(&self, key_hash: &str) -> Result<Option<Caller>> {
        let key_hash = key_hash.to_string();
        self.read(move |conn, _| {
            conn.prepare_cached(
                "SELECT k.org, k.principal, p.role, k.id FROM api_keys k \
                 JOIN principals p ON p.org = k.org AND p.name = k.principal \
                 WHERE k.key_hash = $1",
            )?
            .query_row(params![key_hash], |r| Ok(caller(r)))
            .optional()?
            .transpose()
        })
        .await
    }

    async fn api_key_touch(&self, id: &str) -> Result<()> {
        let id = id.to_string();
        self.write(move |conn, now| {
            conn.prepare_cached("UPDATE api_keys SET last_used_at = $1 WHERE id = $2")?
                .execute(params![now, id])?;
            Ok(())
        })
        .await
    }

    async fn signing_secret_list(&self, org: &str) -> Result<Vec<SigningSecret>> {
        let org = org.to_string();
        self.read(move |conn, _| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, secret, created_at FROM signing_secrets WHERE org = $1 \
                 ORDER BY created_at DESC, id DESC",
            )?;
            collect(&mut stmt, params![org], |r| rows::signing_secret(r))
        })
        .await
    }

    async fn signing_secret_rotate(
        &self,
        org: &str,
        done: Option<Completion>,
    ) -> Result<SigningSecret> {
        let org = org.to_string();
        self.write_done(done, move |conn, now, done| {
            let secret = insert_secret(conn, &org, now)?;
            if let Some(d) = done {
                d.resource_id = secret.id.clone();
            }
            Ok(secret)
        })
        .await
    }

    async fn signing_secret_delete(&self, org: &str, id: &str) -> Result<()> {
        let (org, id) = (org.to_string(), id.to_string());
        self.write(move |conn, _| {
            let count: i64 = conn
                .prepare_cached("SELECT count(*) FROM signing_secrets WHERE org = $1")?
                .query_row(params![org], |r| r.get(0))?;
            let exists: Option<i64> = conn
                .prepare_cached("SELECT 1 FROM signing_secrets WHERE org = $1 AND id = $2")?
                .query_row(params![org, id], |r| r.get(0))
                .optional()?;
            if exists.is_none() {
                return Err(not_found("signing_secret", &id));
            }
            if count <= 1 {
                return Err(Error::FailedPrecondition(
                    "the organization's only signing secret cannot be deleted; rotate first".into(),
                ));
            }
            conn.prepare_cached("DELETE FROM signing_secrets WHERE org = $1 AND id = $2")?
                .execute(params![org, id])?;
            Ok(())
        })
        .await
    }

    async fn queue_create(
        &self,
        org: &str,
        name: &str,
        config: &QueueConfig,
        done: Option<Completion>,
    ) -> Result<Queue> {
        let (org, name, config) = (org.to_string(), name.to_string(), rows::to_json(config));
        self.write_done(done, move |conn, now, _| {
            let n = conn
                .prepare_cached(
                    "INSERT INTO queues (org, name, state, config, created_at, updated_at) \
                     VALUES ($1, $2, 'running', $3, $4, $4) ON CONFLICT DO NOTHING",
                )?
                .execute(params![org, name, config, now])?;
            if n == 0 {
                return Err(Error::AlreadyExists {
                    kind: "queue",
                    id: name,
                });
            }
            get_queue(conn, &org, &name)
        })
        .await
    }

    async fn queue_get(&self, org: &str, name: &str) -> Result<Queue> {
        let (org, name) = (org.to_string(), name.to_string());
        self.read(move |conn, _| get_queue(conn, &org, &name)).await
    }

    async fn queue_list(&self, org: &str, page: &PageRequest) -> Result<Page<Queue>> {
        let (org, page) = (org.to_string(), page.clone());
        self.read(move |conn, _| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {} FROM queues WHERE org = $1 AND name > $2 AND name <> '~jobs' \
                 ORDER BY name LIMIT $3",
                rows::QUEUE_COLUMNS
            ))?;
            let after = page.after.clone().unwrap_or_default();
            let items = collect(&mut stmt, params![org, after, page.limit + 1], |r| {
                rows::queue(r)
            })?;
            Ok(Page::from_rows(items, page.limit, |q| q.name.clone()))
        })
        .await
    }

    async fn queue_update(
        &self,
        org: &str,
        name: &str,
        patch: &QueueConfigPatch,
        done: Option<Completion>,
    ) -> Result<Queue> {
        let (org, name, patch) = (org.to_string(), name.to_string(), patch.clone());
        let cache = self.inner.queue_configs.clone();
        self.write_done(done, move |conn, now, _| {
            cache
                .lock()
                .expect("queue cache")
                .remove(&(org.clone(), name.clone()));
            let current = get_queue(conn, &org, &name)?;
            let next = current.config.apply(&patch).map_err(Error::Invalid)?;
            conn.prepare_cached(
                "UPDATE queues SET config = $1, updated_at = $2 WHERE org = $3 AND name = $4",
            )?
            .execute(params![rows::to_json(&next), now, org, name])?;
            get_queue(conn, &org, &name)
        })
        .await
    }

    async fn queue_set_state(
        &self,
        org: &str,
        name: &str,
        state: QueueState,
        done: Option<Completion>,
    ) -> Result<Queue> {
        let (org, name) = (org.to_string(), name.to_string());
        self.write_done(done, move |conn, now, _| {
            let n = conn
                .prepare_cached(
                    "UPDATE queues SET state = $1, updated_at = $2 WHERE org = $3 AND name = $4",
                )?
                .execute(params![state.as_str(), now, org, name])?;
            if n == 0 {
                return Err(not_found("queue", &name));
            }
            get_queue(conn, &org, &name)
        })
        .await
    }

    async fn queue_delete(&self, org: &str, name: &str) -> Result<()> {
        let (org, name) = (org.to_string(), name.to_string());
        let cache = self.inner.queue_configs.clone();
        self.write(move |conn, _| {
            cache
                .lock()
                .expect("queue cache")
                .remove(&(org.clone(), name.clone()));
            let n = conn
                .prepare_cached("DELETE FROM queues WHERE org = $1 AND name = $2")?
                .execute(params![org, name])?;
            if n == 0 {
                return Err(not_found("queue", &name));
            }
            conn.prepare_cached(
                "DELETE FROM attempts WHERE task_uid IN \
                 (SELECT uid FROM tasks WHERE org = $1 AND queue = $2)",
            )?
            .execute(params![org, name])?;
            conn.prepare_cached("DELETE FROM tasks WHERE org = $1 AND queue = $2")?
                .execute(params![org, name])?;
            Ok(())
        })
        .await
    }

    async fn queue_purge(&self, org: &str, name: &str, done: Option<Completion>) -> Result<u64> {
        let (org, name) = (org.to_string(), name.to_string());
        self.write_done(done, move |conn, now, done| {
            let queue = get_queue(conn, &org, &name)?;
            let n = conn
                .prepare_cached(rows::SQL_CANCEL_PENDING_IN_QUEUE)?
                .execute(params![
                    now,
                    queue.config.dedup_window_s as i64 * 1_000_000,
                    org,
                    name
                ])?;
            if let Some(d) = done {
                d.body = Some(format!("{{\"cancelled\":{n}}}"));
            }
            Ok(n as u64)
        })
        .await
    }

    async fn task_create(&self, mut p: TaskCreate) -> Result<Task> {
        let done = p.completion.take();
        let cache = self.inner.queue_configs.clone();
        self.write_done(done, move |conn, now, _| {
            let id = (p.org.clone(), p.queue.clone());
            let cached = cache.lock().expect("queue cache").get(&id).cloned();
            let config = match cached {
                Some(c) => c,
                None => {
                    let c = get_queue(conn, &p.org, &p.queue)?.config;
                    cache.lock().expect("queue cache").insert(id, c.clone());
                    c
                }
            };
            let insert = tasks::TaskInsert::resolve(&p, &config, now)?;
            let run = |conn: &Connection| -> Result<bool> {
                let n = conn
                    .prepare_cached(rows::SQL_INSERT_TASK)?
                    .execute(params![
                        p.org,
                        p.queue,
                        p.task_id,
                        insert.uid,
                        insert.target,
                        insert.body_form,
                        insert.body,
                        insert.schedule_time,
                        insert.dispatch_deadline_s,
                        insert.retry_config,
                        now
                    ])?;
                Ok(n == 1)
            };
            if run(conn)? {
                return Ok(insert.task(&p, now));
            }
            let existing = get_task(conn, &p.org, &p.queue, &p.task_id)?
                .ok_or_else(|| Error::Internal("conflicting task vanished".into()))?;
            if !tasks::tombstone_expired(&existing, now) {
                return Err(Error::TaskExists(Box::new(tasks::summary(&existing, now))));
            }
            delete_task(conn, &existing.uid)?;
            if !run(conn)? {
                return Err(Error::Internal("task insert after sweep failed".into()));
            }
            Ok(insert.task(&p, now))
        })
        .await
    }

    async fn task_get(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
        let (org, queue, task_id) = (org.to_string(), queue.to_string(), task_id.to_string());
        self.read(move |conn, _| require_task(conn, &org, &queue, &task_id))
            .await
    }

    async fn task_list(
        &self,
        org: &str,
        queue: &str,
        filter: TaskFilter,
        page: &PageRequest,
    ) -> Result<Page<Task>> {
        let (org, queue, page) = (org.to_string(), queue.to_string(), page.clone());
        self.read(move |conn, now| {
            get_queue(conn, &org, &queue)?;
            let sql = rows::task_list_sql(filter.state);
            let mut stmt = conn.prepare_cached(&sql)?;
            let after = page.after.clone().unwrap_or_default();
            let items = collect(
                &mut stmt,
                params![org, queue, after, now, page.limit + 1],
                |r| rows::task(r),
            )?;
            Ok(Page::from_rows(items, page.limit, |t| t.task_id.clone()))
        })
        .await
    }

    async fn task_attempts(&self, org: &str, queue: &str, task_id: &str) -> Result<Vec<Attempt>> {
        let (org, queue, task_id) = (org.to_string(), queue.to_string(), task_id.to_string());
        self.read(move |conn, _| {
            let task = require_task(conn, &org, &queue, &task_id)?;
            let mut stmt = conn.prepare_cached(rows::SQL_ATTEMPTS)?;
            collect(&mut stmt, params![task.uid], |r| rows::attempt(r))
        })
        .await
    }

    async fn task_cancel(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
        let (org, queue, task_id) = (org.to_string(), queue.to_string(), task_id.to_string());
        self.write(move |conn, now| {
            let task = require_task(conn, &org, &queue, &task_id)?;
            let window = get_queue(conn, &org, &queue)?.config.dedup_window_s as i64 * 1_000_000;
            conn.prepare_cached(rows::SQL_CANCEL_TASK)?
                .execute(params![now, window, task.uid])?;
            require_task(conn, &org, &queue, &task_id)
        })
        .await
    }

    async fn task_run_now(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        done: Option<Completion>,
    ) -> Result<Task> {
        let (org, queue, task_id) = (org.to_string(), queue.to_string(), task_id.to_string());
        self.write_done(done, move |conn, now, _| {
            let task = require_task(conn, &org, &queue, &task_id)?;
            tasks::check_runnable(&task, now)?;
            conn.prepare_cached(rows::SQL_RUN_NOW)?
                .execute(params![now, task.uid])?;
            require_task(conn, &org, &queue, &task_id)
        })
        .await
    }

    async fn task_sweep_tombstones(&self, limit: u32) -> Result<u64> {
        self.write(move |conn, now| {
            let mut stmt = conn.prepare_cached(rows::SQL_EXPIRED_TOMBSTONES)?;
            let uids = collect(&mut stmt, params![now, limit], |r| r.text(0))?;
            for uid in &uids {
                delete_task(conn, uid)?;
            }
            Ok(uids.len() as u64)
        })
        .await
    }

    async fn task_counts_by_state(&self) -> Result<Vec<TaskCount>> {
        self.read(|conn, _| {
            let mut stmt = conn.prepare_cached(rows::SQL_TASK_COUNTS)?;
            collect(&mut stmt, [], |r| rows::task_count(r))
        })
        .await
    }
}

fn caller(r: &rusqlite::Row<'_>) -> Result<Caller> {
    let role: String = r.get(2)?;
    Ok(Caller {
        org: r.get(0)?,
        principal: r.get(1)?,
        role: Role::parse(&role)
            .ok_or_else(|| Error::Internal(format!("unreadable role {role:?}")))?,
        key_id: r.get(3)?,
    })
}

fn delete_task(conn: &Connection, uid: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM attempts WHERE task_uid = $1")?
        .execute(params![uid])?;
    conn.prepare_cached("DELETE FROM tasks WHERE uid = $1")?
        .execute(params![uid])?;
    Ok(())
}
