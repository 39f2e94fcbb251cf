//! [`JobStore`] on SQLite. The scheduler's pass is one job of the writer,
//! which already serializes every write: no second process can fire the
//! same row.

use super::SqliteStore;
use crate::Result;
use crate::idempotency::KeyCompletion;
use crate::jobs::*;
use crate::records::{Job, Page, PageRequest, Task};
use crate::tables::jobs;
use async_trait::async_trait;
use idem_core::job::{JobConfig, JobPatch, JobState};

#[async_trait]
impl JobStore for SqliteStore {
    async fn job_create(
        &self,
        org: &str,
        name: &str,
        config: &JobConfig,
        paused: bool,
        done: Option<KeyCompletion>,
    ) -> Result<Job> {
        let (org, name, config) = (org.to_string(), name.to_string(), config.clone());
        self.write(done, async move |c, now, _| {
            jobs::create(c, &org, &name, &config, paused, now).await
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

    async fn job_runs(&self, org: &str, name: &str, page: &PageRequest) -> Result<Page<Task>> {
        let (org, name, page) = (org.to_string(), name.to_string(), page.clone());
        self.read(async move |c, now| jobs::runs(c, &org, &name, &page, now).await)
            .await
    }

    async fn job_run_get(&self, org: &str, name: &str, run_id: &str) -> Result<Task> {
        let (org, name, run_id) = (org.to_string(), name.to_string(), run_id.to_string());
        self.read(async move |c, now| jobs::run_get(c, &org, &name, &run_id, now).await)
            .await
    }

    async fn scheduler_fire(&self, params: FireParams) -> Result<FireReport> {
        self.write(None, async move |c, now, _| {
            jobs::fire(c, now, params).await
        })
        .await
    }
}
