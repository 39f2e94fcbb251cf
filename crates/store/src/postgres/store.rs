//! [`Store`] on PostgreSQL: the shared tables' operations, each in its
//! transaction. Task creates take their own path ([`super::tasks`]).

use super::{ADVISORY_LOCK, PostgresStore};
use crate::driver::{Conn, args};
use crate::idempotency::KeyCompletion;
use crate::records::*;
use crate::tables::{queues, tasks, tenancy};
use crate::{Result, Store};
use async_trait::async_trait;
use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState};
use idem_core::tenancy::{PrincipalKind, Role};

/// How often a queue delete runs again after losing a deadlock.
const QUEUE_DELETE_TRIES: u32 = 6;

#[async_trait]
impl Store for PostgresStore {
    async fn ping(&self) -> Result<()> {
        let client = self.pool.get().await?;
        client.simple_query("SELECT 1").await?;
        Ok(())
    }

    async fn bootstrap(&self, key: NewApiKey) -> Result<bool> {
        self.write(None, async |c, now, _| {
            // Serializes nodes starting together on an empty database.
            c.execute("SELECT pg_advisory_xact_lock($1)", &args![ADVISORY_LOCK])
                .await?;
            tenancy::bootstrap(c, &key, now).await
        })
        .await
    }

    async fn organization_create(
        &self,
        name: &str,
        admin_key: NewApiKey,
        done: Option<KeyCompletion>,
    ) -> Result<()> {
        self.write(done, async |c, now, _| {
            tenancy::organization_create(c, name, &admin_key, now).await
        })
        .await
    }

    async fn principal_create(
        &self,
        org: &str,
        name: &str,
        kind: PrincipalKind,
        role: Role,
        done: Option<KeyCompletion>,
    ) -> Result<Principal> {
        self.write(done, async |c, now, _| {
            tenancy::principal_create(c, org, name, kind, role, now).await
        })
        .await
    }

    async fn principal_get(&self, org: &str, name: &str) -> Result<Principal> {
        self.read(async |c, _| tenancy::principal_get(c, org, name).await)
            .await
    }

    async fn principal_list(&self, org: &str, page: &PageRequest) -> Result<Page<Principal>> {
        self.read(async |c, _| tenancy::principal_list(c, org, page).await)
            .await
    }

    async fn principal_set_role(
        &self,
        org: &str,
        name: &str,
        role: Role,
        done: Option<KeyCompletion>,
    ) -> Result<Principal> {
        self.write(done, async |c, _, _| {
            tenancy::principal_set_role(c, org, name, role).await
        })
        .await
    }

    async fn api_key_create(
        &self,
        org: &str,
        principal: &str,
        key: NewApiKey,
        done: Option<KeyCompletion>,
    ) -> Result<ApiKey> {
        self.write(done, async |c, now, _| {
            tenancy::api_key_create(c, org, principal, &key, now).await
        })
        .await
    }

    async fn api_key_list(
        &self,
        org: &str,
        principal: &str,
        page: &PageRequest,
    ) -> Result<Page<ApiKey>> {
        self.read(async |c, _| tenancy::api_key_list(c, org, principal, page).await)
            .await
    }

    async fn api_key_revoke(&self, org: &str, principal: &str, id: &str) -> Result<()> {
        self.read(async |c, _| tenancy::api_key_revoke(c, org, principal, id).await)
            .await
    }

    async fn api_key_authenticate(&self, key_hash: &str) -> Result<Option<Caller>> {
        self.read(async |c, _| tenancy::api_key_authenticate(c, key_hash).await)
            .await
    }

    async fn api_key_touch(&self, id: &str) -> Result<()> {
        self.read(async |c, now| tenancy::api_key_touch(c, id, now).await)
            .await
    }

    async fn signing_secret_list(&self, org: &str) -> Result<Vec<SigningSecret>> {
        self.read(async |c, _| tenancy::signing_secret_list(c, org).await)
            .await
    }

    async fn signing_secret_rotate(
        &self,
        org: &str,
        done: Option<KeyCompletion>,
    ) -> Result<SigningSecret> {
        self.write(done, async |c, now, keyed| {
            tenancy::signing_secret_rotate(c, org, now, keyed).await
        })
        .await
    }

    async fn signing_secret_delete(&self, org: &str, id: &str) -> Result<()> {
        self.write(None, async |c, _, _| {
            tenancy::signing_secret_delete(c, org, id).await
        })
        .await
    }

    async fn queue_create(
        &self,
        org: &str,
        name: &str,
        config: &QueueConfig,
        done: Option<KeyCompletion>,
    ) -> Result<Queue> {
        self.write(done, async |c, now, _| {
            queues::create(c, org, name, config, now).await
        })
        .await
    }

    async fn queue_get(&self, org: &str, name: &str) -> Result<Queue> {
        self.read(async |c, _| queues::get(c, org, name, "").await)
            .await
    }

    async fn queue_list(&self, org: &str, page: &PageRequest) -> Result<Page<Queue>> {
        self.read(async |c, _| queues::list(c, org, page).await)
            .await
    }

    async fn queue_update(
        &self,
        org: &str,
        name: &str,
        patch: &QueueConfigPatch,
        done: Option<KeyCompletion>,
    ) -> Result<Queue> {
        self.write(done, async |c, now, _| {
            queues::update(c, org, name, patch, now).await
        })
        .await
    }

    async fn queue_set_state(
        &self,
        org: &str,
        name: &str,
        state: QueueState,
        done: Option<KeyCompletion>,
    ) -> Result<Queue> {
        self.write(done, async |c, now, _| {
            queues::set_state(c, org, name, state, now).await
        })
        .await
    }

    async fn queue_delete(&self, org: &str, name: &str) -> Result<()> {
        // Completing attempts lock a task and then its queue; the delete
        // locks the other way round. PostgreSQL breaks such a deadlock by
        // failing one side, and the delete simply runs again.
        let mut tries = 1;
        loop {
            let deleted = self
                .write(None, async |c, _, _| queues::delete(c, org, name).await)
                .await;
            match deleted {
                Err(crate::Error::Retryable(_)) if tries < QUEUE_DELETE_TRIES => tries += 1,
                other => return other,
            }
        }
    }

    async fn queue_purge(&self, org: &str, name: &str, done: Option<KeyCompletion>) -> Result<u64> {
        self.write(done, async |c, now, keyed| {
            queues::purge(c, org, name, now, keyed).await
        })
        .await
    }

    async fn task_create(&self, p: TaskCreate) -> Result<Task> {
        self.create_task(p).await
    }

    async fn task_get(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
        self.read(async |c, _| tasks::require(c, org, queue, task_id, "").await)
            .await
    }

    async fn task_list(
        &self,
        org: &str,
        queue: &str,
        filter: TaskFilter,
        page: &PageRequest,
    ) -> Result<Page<Task>> {
        self.read(async |c, now| tasks::list(c, org, queue, filter, page, now).await)
            .await
    }

    async fn task_attempts(&self, org: &str, queue: &str, task_id: &str) -> Result<Vec<Attempt>> {
        self.read(async |c, _| tasks::attempts(c, org, queue, task_id).await)
            .await
    }

    async fn task_cancel(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
        self.write(None, async |c, now, _| {
            tasks::cancel(c, org, queue, task_id, now).await
        })
        .await
    }

    async fn task_run_now(
        &self,
        org: &str,
        queue: &str,
        task_id: &str,
        done: Option<KeyCompletion>,
    ) -> Result<Task> {
        self.write(done, async |c, now, _| {
            tasks::run_now(c, org, queue, task_id, now).await
        })
        .await
    }

    async fn task_sweep_tombstones(&self, limit: u32) -> Result<u64> {
        self.write(None, async |c, now, _| {
            tasks::sweep_tombstones(c, limit, now).await
        })
        .await
    }

    async fn task_counts_by_state(&self) -> Result<Vec<TaskCount>> {
        self.read(async |c, _| tasks::counts_by_state(c).await)
            .await
    }
}
