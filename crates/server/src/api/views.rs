//! Resources as the API shows them (SPEC 9).

use super::extract::encode_page_token;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use idem_core::job::{HeaderStyle, JobRetryConfig, JobState, RunKind};
use idem_core::queue::{QueueState, RateLimits, RetryConfig};
use idem_core::schedule::CatchUp;
use idem_core::task::{Attempt, BodyForm, Target, TaskState};
use idem_core::tenancy::{PrincipalKind, Role};
use idem_store::{ApiKey, Job, Page, Principal, Queue, SigningSecret, Task};
use jiff::Timestamp;
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// `{items, next_page_token}`.
#[derive(Serialize, ToSchema)]
pub struct List<T> {
    pub items: Vec<T>,
    pub next_page_token: Option<String>,
}

impl<T> List<T> {
    pub fn from_page<R>(page: Page<R>, view: impl Fn(R) -> T) -> Self {
        List {
            items: page.items.into_iter().map(view).collect(),
            next_page_token: page.next.as_deref().map(encode_page_token),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct QueueView {
    pub name: String,
    pub state: QueueState,
    pub rate_limits: RateLimits,
    pub retry_config: RetryConfig,
    pub dispatch_deadline_s: u32,
    pub dedup_window_s: u64,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: Timestamp,
}

impl From<Queue> for QueueView {
    fn from(q: Queue) -> Self {
        QueueView {
            name: q.name,
            state: q.state,
            rate_limits: q.config.rate_limits,
            retry_config: q.config.retry_config,
            dispatch_deadline_s: q.config.dispatch_deadline_s,
            dedup_window_s: q.config.dedup_window_s,
            created_at: q.created_at,
            updated_at: q.updated_at,
        }
    }
}

/// A target with its body in the form it was given.
#[derive(Serialize, ToSchema)]
pub struct TargetView {
    pub url: String,
    pub method: String,
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub json: Option<Box<RawValue>>,
}

impl From<Target> for TargetView {
    fn from(t: Target) -> Self {
        let mut view = TargetView {
            url: t.url,
            method: t.method,
            headers: t.headers,
            body: None,
            body_base64: None,
            json: None,
        };
        match t.body {
            Some((BodyForm::Text, bytes)) => match String::from_utf8(bytes) {
                Ok(text) => view.body = Some(text),
                Err(e) => view.body_base64 = Some(STANDARD.encode(e.into_bytes())),
            },
            Some((BodyForm::Json, bytes)) => match std::str::from_utf8(&bytes)
                .ok()
                .and_then(|s| RawValue::from_string(s.to_string()).ok())
            {
                Some(raw) => view.json = Some(raw),
                None => view.body_base64 = Some(STANDARD.encode(bytes)),
            },
            Some((BodyForm::Base64, bytes)) => view.body_base64 = Some(STANDARD.encode(bytes)),
            None => {}
        }
        view
    }
}

#[derive(Serialize, ToSchema)]
pub struct TaskView {
    pub task_id: String,
    pub queue: String,
    pub state: TaskState,
    pub target: TargetView,
    #[schema(value_type = String, format = DateTime)]
    pub schedule_time: Timestamp,
    pub dispatch_deadline_s: u32,
    pub retry_config: RetryConfig,
    pub attempt_count: u32,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub finished_at: Option<Timestamp>,
    pub last_attempt: Option<Attempt>,
}

impl TaskView {
    pub fn new(t: Task, now: Timestamp) -> Self {
        TaskView {
            state: t.state(now),
            task_id: t.task_id,
            queue: t.queue,
            target: t.target.into(),
            schedule_time: t.schedule_time,
            dispatch_deadline_s: t.dispatch_deadline_s,
            retry_config: t.retry_config,
            attempt_count: t.attempt_count,
            created_at: t.created_at,
            finished_at: t.finished_at,
            last_attempt: t.last_attempt,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct JobView {
    pub name: String,
    pub schedule: String,
    pub time_zone: String,
    pub target: TargetView,
    pub attempt_deadline_s: u32,
    pub retry_config: JobRetryConfig,
    pub catch_up: CatchUp,
    pub header_style: HeaderStyle,
    pub state: JobState,
    /// The next scheduled instant; null while paused.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_run_time: Option<Timestamp>,
    pub last_run: Option<RunView>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: Timestamp,
}

impl JobView {
    pub fn new(j: Job, now: Timestamp) -> Self {
        let next_run_time = j.next_run_time(now);
        JobView {
            name: j.name,
            schedule: j.config.schedule,
            time_zone: j.config.time_zone,
            target: j.config.target.into(),
            attempt_deadline_s: j.config.attempt_deadline_s,
            retry_config: j.config.retry_config,
            catch_up: j.config.catch_up,
            header_style: j.config.header_style,
            next_run_time,
            state: j.state,
            last_run: j.last_run.map(|t| RunView::new(t, now)),
            created_at: j.created_at,
            updated_at: j.updated_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct RunView {
    pub run_id: String,
    pub job: String,
    #[schema(value_type = String, format = DateTime)]
    pub schedule_time: Timestamp,
    pub kind: RunKind,
    pub state: TaskState,
    pub attempt_count: u32,
    pub last_attempt: Option<Attempt>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub finished_at: Option<Timestamp>,
}

impl RunView {
    /// `t` must be a run (`t.run` set); the store hands out no other kind
    /// where a run is asked for.
    pub fn new(t: Task, now: Timestamp) -> Self {
        let (job, kind) = t
            .run
            .as_ref()
            .map_or((String::new(), RunKind::Scheduled), |r| {
                (r.job.clone(), r.kind)
            });
        RunView {
            state: t.state(now),
            run_id: t.task_id,
            job,
            schedule_time: t.schedule_time,
            kind,
            attempt_count: t.attempt_count,
            last_attempt: t.last_attempt,
            created_at: t.created_at,
            finished_at: t.finished_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct PrincipalView {
    pub name: String,
    pub kind: PrincipalKind,
    pub role: Role,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
}

impl From<Principal> for PrincipalView {
    fn from(p: Principal) -> Self {
        PrincipalView {
            name: p.name,
            kind: p.kind,
            role: p.role,
            created_at: p.created_at,
        }
    }
}

/// A listed key: never its secret.
#[derive(Serialize, ToSchema)]
pub struct ApiKeyView {
    pub id: String,
    pub principal: String,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_used_at: Option<Timestamp>,
}

impl From<ApiKey> for ApiKeyView {
    fn from(k: ApiKey) -> Self {
        ApiKeyView {
            id: k.id,
            principal: k.principal,
            created_at: k.created_at,
            last_used_at: k.last_used_at,
        }
    }
}

/// A new key, shown once.
#[derive(Serialize, ToSchema)]
pub struct NewApiKeyView {
    pub id: String,
    pub key: String,
    pub principal: String,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
}

#[derive(Serialize, ToSchema)]
pub struct OrganizationView {
    pub name: String,
    /// The organization's first admin key, shown once.
    pub admin_key: String,
}

#[derive(Serialize, ToSchema)]
pub struct SigningSecretView {
    pub id: String,
    pub secret: String,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
}

impl From<SigningSecret> for SigningSecretView {
    fn from(s: SigningSecret) -> Self {
        SigningSecretView {
            id: s.id,
            secret: s.secret,
            created_at: s.created_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct SigningSecretsView {
    pub secrets: Vec<SigningSecretView>,
}

#[derive(Serialize, ToSchema)]
pub struct PurgeView {
    /// Tasks cancelled by the purge.
    pub cancelled: u64,
}
