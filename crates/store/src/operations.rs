//! The [`Store`](crate::Store) and [`JobStore`](crate::JobStore)
//! implementations of both backends, written once: each operation is a
//! shared one of [`crate::tables`], run by the backend's helpers —
//! `read` (a reader, or a pooled connection; `read_walking` for a read
//! that walks through a queue's groups), `write` (a transaction that
//! completes the Idempotency-Key record it is given) and `autocommit` (a
//! write outside a transaction on PostgreSQL, a job of SQLite's writer).
//! The few operations whose dialects differ are the backend's own
//! (`ping_database`, `bootstrap_once`, `delete_queue`, `create_task`,
//! `create_tasks`, `claim_work`, `work_action`, `work_ends`, `queue_paused_hint`,
//! `forget_queue_config`, `ids_bytewise`).
//!
//! Arguments are moved into the operation, since SQLite runs it on
//! another thread.

/// Implements [`Store`](crate::Store) and [`JobStore`](crate::JobStore)
/// for a backend with the helpers above.
macro_rules! store_operations {
    ($backend:ty) => {
        const _: () = {
            use async_trait::async_trait;
            use idem_core::job::{JobConfig, JobPatch, JobState};
            use idem_core::queue::{QueueConfig, QueueConfigPatch, QueueState};
            use idem_core::tenancy::{PrincipalKind, Role};
            use $crate::idempotency::KeyCompletion;
            use $crate::jobs::{FireParams, FireReport, JobStore};
            use $crate::records::*;
            use $crate::tables::{events, jobs, oidc_keys, queues, stats, tasks, tenancy, work};
            use $crate::{Result, Store};

            impl $backend {
                /// The quotas as now set; a copy, for an operation's body.
                fn quotas(&self) -> $crate::Quotas {
                    *self.quotas_cell().read().expect("quotas")
                }

                /// Checks the task quotas of `org` for `count` new tasks of
                /// about `bytes` bytes ([`crate::usage`]).
                async fn admit_tasks(&self, org: &str, count: u64, bytes: u64) -> Result<()> {
                    let quotas = self.quotas();
                    self.task_usage()
                        .admit(&quotas, org, count, bytes, async || {
                            let org = org.to_string();
                            self.read(async move |c, _| tasks::usage(c, &org).await)
                                .await
                        })
                        .await
                }
            }

            #[async_trait]
            impl Store for $backend {
                fn set_quotas(&self, quotas: $crate::Quotas) {
                    *self.quotas_cell().write().expect("quotas") = quotas;
                }

                async fn ping(&self) -> Result<()> {
                    self.ping_database().await
                }

                async fn schema(&self) -> Result<$crate::schema::SchemaState> {
                    self.schema_now().await
                }

                async fn bootstrap(&self, key: NewApiKey) -> Result<Bootstrap> {
                    self.bootstrap_once(key).await
                }

                async fn organization_create(
                    &self,
                    name: &str,
                    admin_key: NewApiKey,
                    done: Option<KeyCompletion>,
                ) -> Result<()> {
                    let name = name.to_string();
                    self.write(done, async move |c, now, _| {
                        tenancy::organization_create(c, &name, &admin_key, now).await
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
                    let (org, name) = (org.to_string(), name.to_string());
                    let quotas = self.quotas();
                    self.write(done, async move |c, now, _| {
                        tenancy::principal_create(c, &org, &name, kind, role, &quotas, now).await
                    })
                    .await
                }

                async fn principal_get(&self, org: &str, name: &str) -> Result<Principal> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.read(async move |c, _| tenancy::principal_get(c, &org, &name).await)
                        .await
                }

                async fn principal_list(
                    &self,
                    org: &str,
                    page: &PageRequest,
                ) -> Result<Page<Principal>> {
                    let (org, page) = (org.to_string(), page.clone());
                    self.read(async move |c, _| tenancy::principal_list(c, &org, &page).await)
                        .await
                }

                async fn principal_set_role(
                    &self,
                    org: &str,
                    name: &str,
                    role: Role,
                    done: Option<KeyCompletion>,
                ) -> Result<Principal> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.write(done, async move |c, _, _| {
                        tenancy::principal_set_role(c, &org, &name, role).await
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
                    let (org, principal) = (org.to_string(), principal.to_string());
                    let quotas = self.quotas();
                    self.write(done, async move |c, now, _| {
                        tenancy::api_key_create(c, &org, &principal, &key, &quotas, now).await
                    })
                    .await
                }

                async fn api_key_list(
                    &self,
                    org: &str,
                    principal: &str,
                    page: &PageRequest,
                ) -> Result<Page<ApiKey>> {
                    let (org, principal, page) =
                        (org.to_string(), principal.to_string(), page.clone());
                    self.read(async move |c, _| {
                        tenancy::api_key_list(c, &org, &principal, &page).await
                    })
                    .await
                }

                async fn api_key_get(
                    &self,
                    org: &str,
                    principal: &str,
                    id: &str,
                ) -> Result<ApiKey> {
                    let (org, principal, id) =
                        (org.to_string(), principal.to_string(), id.to_string());
                    self.read(async move |c, _| {
                        tenancy::api_key_get(c, &org, &principal, &id).await
                    })
                    .await
                }

                async fn api_key_revoke(&self, org: &str, principal: &str, id: &str) -> Result<()> {
                    let (org, principal, id) =
                        (org.to_string(), principal.to_string(), id.to_string());
                    self.write(None, async move |c, _, _| {
                        tenancy::api_key_revoke(c, &org, &principal, &id).await
                    })
                    .await
                }

                async fn api_key_authenticate(&self, key_hash: &str) -> Result<Option<Caller>> {
                    let key_hash = key_hash.to_string();
                    self.read(async move |c, _| tenancy::api_key_authenticate(c, &key_hash).await)
                        .await
                }

                async fn api_key_touch(&self, id: &str) -> Result<()> {
                    let id = id.to_string();
                    self.autocommit(async move |c, now| tenancy::api_key_touch(c, &id, now).await)
                        .await
                }

                async fn signing_secret_list(&self, org: &str) -> Result<Vec<SigningSecret>> {
                    let org = org.to_string();
                    self.read(async move |c, _| tenancy::signing_secret_list(c, &org).await)
                        .await
                }

                async fn signing_secret_rotate(
                    &self,
                    org: &str,
                    done: Option<KeyCompletion>,
                ) -> Result<SigningSecret> {
                    let org = org.to_string();
                    let quotas = self.quotas();
                    self.write(done, async move |c, now, keyed| {
                        tenancy::signing_secret_rotate(c, &org, &quotas, now, keyed).await
                    })
                    .await
                }

                async fn signing_secret_delete(&self, org: &str, id: &str) -> Result<()> {
                    let (org, id) = (org.to_string(), id.to_string());
                    self.write(None, async move |c, _, _| {
                        tenancy::signing_secret_delete(c, &org, &id).await
                    })
                    .await
                }

                async fn oidc_key_current(
                    &self,
                    org: &str,
                    rotation: std::time::Duration,
                    keep: std::time::Duration,
                    candidate: $crate::oidc::NewOidcKey,
                ) -> Result<$crate::oidc::OidcKey> {
                    let org = org.to_string();
                    self.write(None, async move |c, now, _| {
                        oidc_keys::current(c, &org, rotation, keep, candidate, now).await
                    })
                    .await
                }

                async fn oidc_key_published(
                    &self,
                    keep: std::time::Duration,
                ) -> Result<Vec<$crate::oidc::OidcPublicKey>> {
                    self.read(async move |c, now| oidc_keys::published(c, keep, now).await)
                        .await
                }

                async fn webhook_create(
                    &self,
                    org: &str,
                    url: &str,
                    kinds: &[idem_core::event::EventType],
                    done: Option<KeyCompletion>,
                ) -> Result<Webhook> {
                    let (org, url, kinds) = (org.to_string(), url.to_string(), kinds.to_vec());
                    let quotas = self.quotas();
                    self.write(done, async move |c, now, keyed| {
                        events::webhook_create(c, &org, &url, &kinds, &quotas, now, keyed).await
                    })
                    .await
                }

                async fn webhook_list(
                    &self,
                    org: &str,
                    page: &PageRequest,
                ) -> Result<Page<Webhook>> {
                    let (org, page) = (org.to_string(), page.clone());
                    self.read(async move |c, _| events::webhook_list(c, &org, &page).await)
                        .await
                }

                async fn webhook_get(&self, org: &str, id: &str) -> Result<Webhook> {
                    let (org, id) = (org.to_string(), id.to_string());
                    self.read(async move |c, _| events::webhook_get(c, &org, &id).await)
                        .await
                }

                async fn webhook_delete(&self, org: &str, id: &str) -> Result<()> {
                    let (org, id) = (org.to_string(), id.to_string());
                    self.write(None, async move |c, _, _| {
                        events::webhook_delete(c, &org, &id).await
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
                    let (org, name, config) = (org.to_string(), name.to_string(), config.clone());
                    let quotas = self.quotas();
                    self.write(done, async move |c, now, _| {
                        queues::create(c, &org, &name, &config, &quotas, now).await
                    })
                    .await
                }

                async fn queue_get(&self, org: &str, name: &str) -> Result<Queue> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.read(async move |c, _| queues::get(c, &org, &name, "").await)
                        .await
                }

                async fn queue_list(&self, org: &str, page: &PageRequest) -> Result<Page<Queue>> {
                    let (org, page) = (org.to_string(), page.clone());
                    self.read(async move |c, _| queues::list(c, &org, &page).await)
                        .await
                }

                async fn queue_update(
                    &self,
                    org: &str,
                    name: &str,
                    patch: &QueueConfigPatch,
                    done: Option<KeyCompletion>,
                ) -> Result<Queue> {
                    let (org, name, patch) = (org.to_string(), name.to_string(), patch.clone());
                    let forget = self.forget_queue_config(&org, &name);
                    self.write(done, async move |c, now, _| {
                        forget();
                        queues::update(c, &org, &name, &patch, now).await
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
                    let (org, name) = (org.to_string(), name.to_string());
                    let forget = self.forget_queue_config(&org, &name);
                    self.write(done, async move |c, now, _| {
                        forget();
                        queues::set_state(c, &org, &name, state, now).await
                    })
                    .await
                }

                async fn queue_delete(&self, org: &str, name: &str) -> Result<()> {
                    self.delete_queue(org, name).await
                }

                async fn queue_purge(
                    &self,
                    org: &str,
                    name: &str,
                    done: Option<KeyCompletion>,
                ) -> Result<u64> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.write(done, async move |c, now, keyed| {
                        queues::purge(c, &org, &name, now, keyed).await
                    })
                    .await
                }

                async fn task_create(&self, p: TaskCreate) -> Result<Task> {
                    let bytes = $crate::usage::estimated_bytes(&p.target);
                    self.admit_tasks(&p.org, 1, bytes).await?;
                    self.create_task(p).await
                }

                async fn task_create_batch(&self, batch: TaskBatch) -> Result<BatchCreated> {
                    let (count, bytes) = batch.tasks.iter().flatten().fold((0, 0), |(n, b), t| {
                        (n + 1, b + $crate::usage::estimated_bytes(&t.target))
                    });
                    self.admit_tasks(&batch.org, count, bytes).await?;
                    self.create_tasks(batch).await
                }

                fn queue_paused_hint(&self, org: &str, queue: &str) -> bool {
                    self.queue_paused_hint(org, queue)
                }

                async fn task_get(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
                    let (org, queue, task_id) =
                        (org.to_string(), queue.to_string(), task_id.to_string());
                    self.read(async move |c, _| tasks::require(c, &org, &queue, &task_id, "").await)
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
                    let bytewise = self.ids_bytewise();
                    self.read(async move |c, now| {
                        tasks::list(c, &org, &queue, filter, bytewise, &page, now).await
                    })
                    .await
                }

                async fn task_attempts(
                    &self,
                    org: &str,
                    queue: &str,
                    task_id: &str,
                    page: &PageRequest,
                ) -> Result<Page<Attempt>> {
                    let (org, queue, task_id, page) = (
                        org.to_string(),
                        queue.to_string(),
                        task_id.to_string(),
                        page.clone(),
                    );
                    self.read(async move |c, _| {
                        tasks::attempts(c, &org, &queue, &task_id, &page).await
                    })
                    .await
                }

                async fn task_cancel(&self, org: &str, queue: &str, task_id: &str) -> Result<Task> {
                    let (org, queue, task_id) =
                        (org.to_string(), queue.to_string(), task_id.to_string());
                    let events = self.events();
                    self.write(None, async move |c, now, _| {
                        tasks::cancel(c, &org, &queue, &task_id, now, &*events).await
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
                    let (org, queue, task_id) =
                        (org.to_string(), queue.to_string(), task_id.to_string());
                    self.write(done, async move |c, now, _| {
                        tasks::run_now(c, &org, &queue, &task_id, now).await
                    })
                    .await
                }

                async fn task_redrive(
                    &self,
                    org: &str,
                    queue: &str,
                    task_id: &str,
                    done: Option<KeyCompletion>,
                ) -> Result<Task> {
                    let (org, queue, task_id) =
                        (org.to_string(), queue.to_string(), task_id.to_string());
                    self.write(done, async move |c, now, _| {
                        tasks::redrive(c, &org, &queue, &task_id, now).await
                    })
                    .await
                }

                async fn task_redrive_many(
                    &self,
                    org: &str,
                    queue: &str,
                    filter: RedriveFilter,
                    done: Option<KeyCompletion>,
                ) -> Result<Redriven> {
                    let (org, queue) = (org.to_string(), queue.to_string());
                    self.write(done, async move |c, now, keyed| {
                        tasks::redrive_many(c, &org, &queue, &filter, now, keyed).await
                    })
                    .await
                }

                async fn task_sweep_tombstones(&self, limit: u32) -> Result<u64> {
                    self.write(None, async move |c, now, _| {
                        tasks::sweep_tombstones(c, limit, now).await
                    })
                    .await
                }

                async fn queue_stats(&self, org: &str, name: &str) -> Result<QueueStats> {
                    let (o, n) = (org.to_string(), name.to_string());
                    let mut found = self
                        .read_walking(async move |c, now| stats::queue(c, &o, &n, now).await)
                        .await?;
                    if let Some(dispatched) = self.dispatched_in_memory(org, name) {
                        found.dispatched_last_minute = dispatched;
                    }
                    Ok(found)
                }

                async fn queue_groups(
                    &self,
                    org: &str,
                    queue: &str,
                    prefix: &str,
                    page: &PageRequest,
                ) -> Result<Page<GroupStats>> {
                    let (org, queue, prefix, page) = (
                        org.to_string(),
                        queue.to_string(),
                        prefix.to_string(),
                        page.clone(),
                    );
                    self.read_walking(async move |c, now| {
                        stats::groups(c, &org, &queue, &prefix, &page, now).await
                    })
                    .await
                }

                async fn task_counts_by_state(&self) -> Result<Vec<TaskCount>> {
                    self.read(async |c, _| tasks::counts_by_state(c).await)
                        .await
                }

                async fn work_claim(&self, claim: WorkClaim) -> Result<Vec<Task>> {
                    let (org, queue) = (claim.org.clone(), claim.queue.clone());
                    let claimed = self.claim_work(claim).await?;
                    self.record_dispatched(&org, &queue, claimed.len() as u64);
                    Ok(claimed)
                }

                async fn work_act(
                    &self,
                    org: &str,
                    queue: &str,
                    task_id: &str,
                    action: WorkAction,
                ) -> Result<$crate::dispatch::WorkDone> {
                    let claims =
                        matches!(action, WorkAction::Claim { .. } | WorkAction::Assign { .. });
                    let done = self.work_action(org, queue, task_id, action).await?;
                    if claims {
                        self.record_dispatched(org, queue, 1);
                    }
                    Ok(done)
                }

                async fn work_end_many(
                    &self,
                    org: &str,
                    queue: &str,
                    ends: Vec<(String, WorkAction)>,
                ) -> Result<Vec<Result<$crate::dispatch::WorkDone>>> {
                    let person = ends.iter().all(|(_, action)| {
                        matches!(
                            action,
                            WorkAction::Complete { person: true, .. }
                                | WorkAction::Fail { person: true, .. }
                        )
                    });
                    let (o, q) = (org.to_string(), queue.to_string());
                    self.read(async move |c, _| work::may_end(c, &o, &q, person).await)
                        .await?;
                    Ok(self.work_ends(org, queue, ends).await)
                }

                async fn queue_oldest_due(&self) -> Result<Vec<QueueOldestDue>> {
                    self.read(async |c, now| stats::oldest_due(c, now).await)
                        .await
                }

                async fn metric_scopes(&self) -> Result<MetricScopes> {
                    self.read(async |c, _| queues::metric_scopes(c).await).await
                }
            }

            #[async_trait]
            impl JobStore for $backend {
                async fn job_create(
                    &self,
                    org: &str,
                    name: &str,
                    config: &JobConfig,
                    paused: bool,
                    done: Option<KeyCompletion>,
                ) -> Result<Job> {
                    let (org, name, config) = (org.to_string(), name.to_string(), config.clone());
                    let quotas = self.quotas();
                    self.write(done, async move |c, now, _| {
                        jobs::create(c, &org, &name, &config, paused, &quotas, now).await
                    })
                    .await
                }

                async fn job_get(&self, org: &str, name: &str) -> Result<Job> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.read(async move |c, now| jobs::get(c, &org, &name, now).await)
                        .await
                }

                async fn job_list(&self, org: &str, page: &PageRequest) -> Result<Page<Job>> {
                    let (org, page) = (org.to_string(), page.clone());
                    self.read(async move |c, now| jobs::list(c, &org, &page, now).await)
                        .await
                }

                async fn job_update(
                    &self,
                    org: &str,
                    name: &str,
                    patch: &JobPatch,
                    done: Option<KeyCompletion>,
                ) -> Result<Job> {
                    let (org, name, patch) = (org.to_string(), name.to_string(), patch.clone());
                    self.write(done, async move |c, now, _| {
                        jobs::update(c, &org, &name, &patch, now).await
                    })
                    .await
                }

                async fn job_set_state(
                    &self,
                    org: &str,
                    name: &str,
                    state: JobState,
                    done: Option<KeyCompletion>,
                ) -> Result<Job> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.write(done, async move |c, now, _| {
                        jobs::set_state(c, &org, &name, state, now).await
                    })
                    .await
                }

                async fn job_delete(&self, org: &str, name: &str) -> Result<()> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.write(None, async move |c, _, _| {
                        jobs::delete(c, &org, &name).await
                    })
                    .await
                }

                async fn job_run_now(
                    &self,
                    org: &str,
                    name: &str,
                    done: Option<KeyCompletion>,
                ) -> Result<Task> {
                    let (org, name) = (org.to_string(), name.to_string());
                    self.write(done, async move |c, now, keyed| {
                        jobs::run_now(c, &org, &name, now, keyed).await
                    })
                    .await
                }

                async fn job_runs(
                    &self,
                    org: &str,
                    name: &str,
                    page: &PageRequest,
                ) -> Result<Page<Task>> {
                    let (org, name, page) = (org.to_string(), name.to_string(), page.clone());
                    self.read(async move |c, now| jobs::runs(c, &org, &name, &page, now).await)
                        .await
                }

                async fn job_run_get(&self, org: &str, name: &str, run_id: &str) -> Result<Task> {
                    let (org, name, run_id) =
                        (org.to_string(), name.to_string(), run_id.to_string());
                    self.read(async move |c, now| jobs::run_get(c, &org, &name, &run_id, now).await)
                        .await
                }

                async fn job_run_attempts(
                    &self,
                    org: &str,
                    name: &str,
                    run_id: &str,
                    page: &PageRequest,
                ) -> Result<Page<Attempt>> {
                    let (org, name, run_id, page) = (
                        org.to_string(),
                        name.to_string(),
                        run_id.to_string(),
                        page.clone(),
                    );
                    self.read(async move |c, now| {
                        jobs::run_attempts(c, &org, &name, &run_id, &page, now).await
                    })
                    .await
                }

                async fn scheduler_fire(&self, params: FireParams) -> Result<FireReport> {
                    self.write(None, async move |c, now, _| {
                        jobs::fire(c, now, params).await
                    })
                    .await
                }

                async fn scheduler_drop_missed(
                    &self,
                    tolerance: std::time::Duration,
                ) -> Result<u64> {
                    self.write(None, async move |c, now, _| {
                        jobs::drop_missed_runs(c, now, tolerance).await
                    })
                    .await
                }
            }
        };
    };
}
pub(crate) use store_operations;
