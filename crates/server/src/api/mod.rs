//! The HTTP API: one table of operations drives both the router and the
//! OpenAPI document, so the two cannot drift apart; the document's request
//! and response schemas come from each handler's own signature
//! (`signature`), so it cannot name a type the handler does not read or
//! answer.

mod batch;
pub mod extract;
pub mod idempotency;
mod jobs;
mod objects;
mod oidc;
mod openapi;
pub mod problem;
mod queues;
mod signature;
mod tasks;
mod tenancy;
pub mod views;
mod webhooks;
mod work;

use crate::App;
use axum::Router;
use axum::extract::State;
use axum::handler::Handler;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter, get};
use http::{HeaderValue, Method, StatusCode, header};
use idem_api::ProblemCode;
use problem::Problem;
use serde::Serialize;
use signature::{Io, Signature};
use std::sync::Arc;

/// 201 with `Location`.
pub struct Created<T>(pub String, pub T);

impl<T: Serialize> IntoResponse for Created<T> {
    fn into_response(self) -> Response {
        let mut r = (StatusCode::CREATED, axum::Json(self.1)).into_response();
        if let Ok(v) = HeaderValue::from_str(&self.0) {
            r.headers_mut().insert(header::LOCATION, v);
        }
        r
    }
}

/// 201 without `Location`: what it made has no route to read it.
pub struct CreatedWithoutLocation<T>(pub T);

impl<T: Serialize> IntoResponse for CreatedWithoutLocation<T> {
    fn into_response(self) -> Response {
        (StatusCode::CREATED, axum::Json(self.0)).into_response()
    }
}

/// 204, no body.
pub struct NoContent;

impl IntoResponse for NoContent {
    fn into_response(self) -> Response {
        StatusCode::NO_CONTENT.into_response()
    }
}

/// The answer of a create that takes `?wait_ms`: 201 at once, or after
/// the wait 200 if what it made reached a final state and 202 if not,
/// each with `Location`.
pub enum MayWait<T> {
    Created(Created<T>),
    Waited {
        settled: bool,
        created: Created<T>,
    },
    /// The Idempotency-Key layer's answer for a key the create found
    /// taken (`idempotency::claim_failed`): a replay of the first answer,
    /// or a problem.
    Claimed(Response),
}

impl<T: Serialize> IntoResponse for MayWait<T> {
    fn into_response(self) -> Response {
        match self {
            MayWait::Created(created) => created.into_response(),
            MayWait::Waited { settled, created } => {
                let mut r = created.into_response();
                *r.status_mut() = if settled {
                    StatusCode::OK
                } else {
                    StatusCode::ACCEPTED
                };
                r
            }
            MayWait::Claimed(r) => r,
        }
    }
}

/// `/v1/<segments…>`, each segment percent-encoded where needed.
pub fn location(segments: &[&str]) -> String {
    let mut out = String::from("/v1");
    for s in segments {
        out.push('/');
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// What the OpenAPI document says of one operation. The problems each
/// operation may answer are derived from these properties (see
/// `openapi::problems`), so that a route cannot gain a rule the document
/// does not show.
pub struct Operation {
    pub method: Method,
    /// Path in OpenAPI and axum syntax (`/v1/queues/{queue}`).
    pub path: &'static str,
    pub id: &'static str,
    pub summary: &'static str,
    /// Honours `Idempotency-Key` (API.md §2): every POST that creates or runs
    /// something, and the PATCH of queues, jobs and principals.
    pub idempotent: bool,
    /// Its write claims the Idempotency-Key in the effect's own transaction
    /// instead of the layer locking it first (`IdempotencyLayer::claiming`):
    /// the task create, where a key must cost no commit or round trip of
    /// its own.
    pub claims_key: bool,
    /// Query parameters beyond `limit` and `page_token` (which every
    /// operation answering a page of a list takes).
    pub query: &'static [Param],
    /// Whether the route needs an API key.
    pub authenticated: bool,
    /// Only a person may take it (`x-person-only`): a service principal's
    /// key is refused with 403 `USER_IDENTITY_REQUIRED`, whatever its role.
    pub person_only: bool,
    /// Only a person may take it on a queue created `person_only` (the
    /// pull queue's complete, fail and `tasks:end`): the document marks it
    /// `x-person-only: "when the queue is person_only"`.
    pub person_only_on_person_only_queues: bool,
    /// Problem codes that the resource's state can cause, beyond those its
    /// other properties imply (a name taken, a quota, a stale version).
    pub problems: &'static [ProblemCode],
    /// Takes the task ID from `Idem-Task-Id`, its compatibility twin or the
    /// request-ID header when the body names none.
    pub task_id_headers: bool,
    /// A request body shown in the document as an example.
    pub example: Option<&'static str>,
    /// The request body and the success answer, as the handler's signature
    /// gives them ([`route`]); what `op!` leaves here is replaced there.
    pub io: Io,
}

/// A query parameter: its name, meaning and JSON Schema (as JSON text).
pub struct Param {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: &'static str,
}

macro_rules! op {
    ($method:ident $path:literal, $id:literal, $summary:literal, idempotent: $idem:literal) => {
        Operation {
            method: Method::$method,
            path: $path,
            id: $id,
            summary: $summary,
            idempotent: $idem,
            claims_key: false,
            query: &[],
            authenticated: true,
            person_only: false,
            person_only_on_person_only_queues: false,
            problems: &[],
            task_id_headers: false,
            example: None,
            io: Io::UNSET,
        }
    };
}

/// The filters of `GET /v1/queues/{queue}/tasks`.
const TASK_LIST_QUERY: &[Param] = &[
    Param {
        name: "state",
        description: "Only tasks in this state",
        schema: r##"{"$ref": "#/components/schemas/TaskState"}"##,
    },
    Param {
        name: "id_prefix",
        description: "Only task IDs that start with it",
        schema: r#"{"type": "string", "minLength": 1, "maxLength": 500, "pattern": "^[A-Za-z0-9_-]+$"}"#,
    },
    Param {
        name: "created_after",
        description: "RFC 3339; tasks created at or after it (the list then goes by creation time)",
        schema: r#"{"type": "string", "format": "date-time"}"#,
    },
    Param {
        name: "created_before",
        description: "RFC 3339; tasks created before it (the list then goes by creation time)",
        schema: r#"{"type": "string", "format": "date-time"}"#,
    },
];

/// The filter of `GET /v1/queues/{queue}/groups`.
const GROUP_LIST_QUERY: &[Param] = &[Param {
    name: "id_prefix",
    description: "Only groups whose name starts with it",
    schema: r#"{"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[A-Za-z0-9_.:@-]+$"}"#,
}];

/// The query of `POST /v1/queues/{queue}/tasks:batch`.
const BATCH_QUERY: &[Param] = &[Param {
    name: "atomic",
    description: "All or nothing (true) or item by item (false, when neither this nor a JSON body's `atomic` is true)",
    schema: r#"{"type": "boolean"}"#,
}];

/// An operation with its handler, the request body and success answer
/// the document shows taken from the handler's signature, so that they
/// cannot differ from what it reads and answers.
fn route<H, T, A>(op: Operation, handler: H) -> (Operation, MethodRouter<Arc<App>>)
where
    H: Handler<T, Arc<App>> + Signature<A>,
    T: 'static,
{
    let filter = MethodFilter::try_from(op.method.clone()).expect("a method axum routes");
    (
        Operation { io: H::io(), ..op },
        axum::routing::on(filter, handler),
    )
}

/// Every `/v1` operation with its handler.
fn operations() -> Vec<(Operation, MethodRouter<Arc<App>>)> {
    vec![
        route(
            Operation {
                problems: &[
                    ProblemCode::QueueAlreadyExists,
                    ProblemCode::ResourceExhausted,
                ],
                example: Some(
                    r#"{"name": "payments", "rate_limits": {"max_dispatches_per_second": 500}, "retry_config": {"max_attempts": 5}, "dispatch_deadline_s": 600}"#,
                ),
                ..op!(POST "/v1/queues", "createQueue", "Create a queue", idempotent: true)
            },
            queues::create,
        ),
        route(
            op!(GET "/v1/queues", "listQueues", "List queues", idempotent: false),
            queues::list,
        ),
        route(
            op!(GET "/v1/queues/{queue}", "getQueue", "Get a queue", idempotent: false),
            queues::get,
        ),
        route(
            Operation {
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(PATCH "/v1/queues/{queue}", "updateQueue", "Update a queue's configuration", idempotent: true)
            },
            queues::update,
        ),
        route(
            op!(DELETE "/v1/queues/{queue}", "deleteQueue", "Delete a queue and its tasks", idempotent: false),
            queues::delete,
        ),
        route(
            Operation {
                query: GROUP_LIST_QUERY,
                ..op!(GET "/v1/queues/{queue}/groups", "listQueueGroups", "List a queue's groups with live tasks, by name", idempotent: false)
            },
            queues::groups,
        ),
        route(
            op!(POST "/v1/queues/{queue}/pause", "pauseQueue", "Stop dispatching a queue", idempotent: true),
            queues::pause,
        ),
        route(
            op!(POST "/v1/queues/{queue}/resume", "resumeQueue", "Resume dispatching a queue", idempotent: true),
            queues::resume,
        ),
        route(
            op!(POST "/v1/queues/{queue}/purge", "purgeQueue", "Cancel every task not running", idempotent: true),
            queues::purge,
        ),
        route(
            Operation {
                task_id_headers: true,
                claims_key: true,
                problems: &[
                    ProblemCode::TaskAlreadyExists,
                    ProblemCode::FailedPrecondition,
                    ProblemCode::ResourceExhausted,
                ],
                example: Some(
                    r#"{"task_id": "payment-12345", "target": {"url": "https://pay.internal/charge", "json": {"amount": 100}}, "retry_config": {"max_attempts": 5}}"#,
                ),
                ..op!(POST "/v1/queues/{queue}/tasks", "createTask", "Create a task (JSON or multipart/form-data)", idempotent: true)
            },
            tasks::create,
        ),
        route(
            Operation {
                query: BATCH_QUERY,
                problems: &[
                    ProblemCode::TaskAlreadyExists,
                    ProblemCode::FailedPrecondition,
                    ProblemCode::ResourceExhausted,
                ],
                ..op!(POST "/v1/queues/{queue}/tasks:batch", "createTasks", "Create up to 1000 tasks with one commit (JSON or NDJSON), answered item by item", idempotent: true)
            },
            batch::create,
        ),
        route(
            Operation {
                query: TASK_LIST_QUERY,
                ..op!(GET "/v1/queues/{queue}/tasks", "listTasks", "List tasks, filtered by state, ID prefix and creation time", idempotent: false)
            },
            tasks::list,
        ),
        route(
            op!(GET "/v1/queues/{queue}/tasks/{task_id}", "getTask", "Get a task", idempotent: false),
            tasks::get,
        ),
        route(
            op!(DELETE "/v1/queues/{queue}/tasks/{task_id}", "cancelTask", "Cancel a task (a running attempt is aborted)", idempotent: false),
            tasks::cancel,
        ),
        route(
            op!(GET "/v1/queues/{queue}/tasks/{task_id}/attempts", "listTaskAttempts", "List a task's attempts", idempotent: false),
            tasks::attempts,
        ),
        route(
            Operation {
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/run", "runTask", "Dispatch a scheduled or backing-off task now", idempotent: true)
            },
            tasks::run,
        ),
        route(
            Operation {
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/redrive", "redriveTask", "Run a failed or cancelled task again, with the same ID and run key and a fresh retry budget", idempotent: true)
            },
            tasks::redrive,
        ),
        route(
            Operation {
                ..op!(POST "/v1/queues/{queue}/tasks:redrive", "redriveTasks", "Run a queue's failed (or cancelled) tasks again, in one transaction", idempotent: true)
            },
            tasks::redrive_many,
        ),
        route(
            Operation {
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/queues/{queue}/tasks:claim", "claimTasks", "Pull queues: lease up to max_tasks due tasks in schedule order, waiting up to wait_ms for one (writer; Idempotency-Key is ignored)", idempotent: false)
            },
            work::claim_many,
        ),
        route(
            Operation {
                problems: &[
                    ProblemCode::WorkAlreadyClaimed,
                    ProblemCode::FailedPrecondition,
                ],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/claim", "claimTask", "Pull queues: lease one task; 409 WORK_ALREADY_CLAIMED if it is leased, to the caller too (writer)", idempotent: false)
            },
            work::claim,
        ),
        route(
            Operation {
                problems: &[ProblemCode::LeaseLost, ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/heartbeat", "heartbeatTask", "Pull queues: extend the lease attempt_id names; 409 LEASE_LOST if it is not the current one or not the caller's (writer holding the lease, or admin)", idempotent: false)
            },
            work::heartbeat,
        ),
        route(
            Operation {
                person_only_on_person_only_queues: true,
                problems: &[
                    ProblemCode::LeaseLost,
                    ProblemCode::UserIdentityRequired,
                    ProblemCode::FailedPrecondition,
                ],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/complete", "completeTask", "Pull queues: end the leased task succeeded, with an optional result; the holder's repeated complete with the same result answers 200, Idempotent-Replayed (writer holding the lease, or admin; person-only on a person_only queue: 403 USER_IDENTITY_REQUIRED to a service key)", idempotent: false)
            },
            work::complete,
        ),
        route(
            Operation {
                person_only_on_person_only_queues: true,
                problems: &[
                    ProblemCode::LeaseLost,
                    ProblemCode::UserIdentityRequired,
                    ProblemCode::FailedPrecondition,
                ],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/fail", "failTask", "Pull queues: fail the leased attempt; the retry policy queues the task again or fails it; the holder's repeated fail with the same error answers 200, Idempotent-Replayed (writer holding the lease, or admin; person-only on a person_only queue: 403 USER_IDENTITY_REQUIRED to a service key)", idempotent: false)
            },
            work::fail,
        ),
        route(
            Operation {
                person_only_on_person_only_queues: true,
                problems: &[
                    ProblemCode::UserIdentityRequired,
                    ProblemCode::FailedPrecondition,
                ],
                example: Some(
                    r#"{"ends": [{"task_id": "invoice-1", "attempt_id": "0193b1c4e5f67a8b9c0d1e2f3a4b5c6d-1", "result": {"sent": true}}, {"task_id": "invoice-2", "attempt_id": "0193b1c4e5f67a8b9c0d1e2f3a4b5c6e-1", "error": "mail server refused"}]}"#,
                ),
                ..op!(POST "/v1/queues/{queue}/tasks:end", "endTasks", "Pull queues: complete (result) or fail (error) up to 100 leased attempts in one call, answered item by item: 200 with the task, or the problem its own complete or fail would answer (writer; person-only on a person_only queue)", idempotent: false)
            },
            work::end_many,
        ),
        route(
            Operation {
                problems: &[ProblemCode::LeaseLost, ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/release", "releaseTask", "Pull queues: give the leased task back, due now; the attempt does not count (writer holding the lease, or admin)", idempotent: false)
            },
            work::release,
        ),
        route(
            Operation {
                problems: &[ProblemCode::LeaseLost, ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/reassign", "reassignTask", "Pull queues: hand the lease, same attempt_id and a fresh term, to another principal (its holder or an admin)", idempotent: false)
            },
            work::reassign,
        ),
        route(
            Operation {
                problems: &[
                    ProblemCode::WorkAlreadyClaimed,
                    ProblemCode::FailedPrecondition,
                ],
                ..op!(POST "/v1/queues/{queue}/tasks/{task_id}/assign", "assignTask", "Pull queues: lease a task nobody holds to a principal; 409 WORK_ALREADY_CLAIMED if leased (admin)", idempotent: false)
            },
            work::assign,
        ),
        route(
            Operation {
                problems: &[
                    ProblemCode::JobAlreadyExists,
                    ProblemCode::ResourceExhausted,
                ],
                example: Some(
                    r#"{"name": "report", "schedule": "*/5 * * * *", "time_zone": "Europe/Berlin", "target": {"url": "https://reports.internal/run"}}"#,
                ),
                ..op!(POST "/v1/jobs", "createJob", "Create a cron job", idempotent: true)
            },
            jobs::create,
        ),
        route(
            op!(GET "/v1/jobs", "listJobs", "List cron jobs", idempotent: false),
            jobs::list,
        ),
        route(
            op!(GET "/v1/jobs/{job}", "getJob", "Get a cron job", idempotent: false),
            jobs::get,
        ),
        route(
            Operation {
                problems: &[ProblemCode::StaleVersion],
                ..op!(PATCH "/v1/jobs/{job}", "updateJob", "Update a cron job (expected_updated_at guards against lost updates)", idempotent: true)
            },
            jobs::update,
        ),
        route(
            op!(DELETE "/v1/jobs/{job}", "deleteJob", "Delete a cron job and its runs", idempotent: false),
            jobs::delete,
        ),
        route(
            op!(POST "/v1/jobs/{job}/pause", "pauseJob", "Stop creating runs", idempotent: true),
            jobs::pause,
        ),
        route(
            Operation {
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/jobs/{job}/resume", "resumeJob", "Resume creating runs, from now on", idempotent: true)
            },
            jobs::resume,
        ),
        route(
            Operation {
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(POST "/v1/jobs/{job}/run", "runJob", "Start a manual run now", idempotent: true)
            },
            jobs::run,
        ),
        route(
            op!(GET "/v1/jobs/{job}/runs", "listJobRuns", "List a job's runs, newest first", idempotent: false),
            jobs::runs,
        ),
        route(
            op!(GET "/v1/jobs/{job}/runs/{run_id}", "getJobRun", "Get one run of a job", idempotent: false),
            jobs::get_run,
        ),
        route(
            op!(GET "/v1/jobs/{job}/runs/{run_id}/attempts", "listJobRunAttempts", "List a run's attempts, oldest first", idempotent: false),
            jobs::run_attempts,
        ),
        route(
            Operation {
                example: Some(
                    r#"{"schedule": "0 9 * * MON-FRI", "time_zone": "Europe/Berlin", "count": 3}"#,
                ),
                ..op!(POST "/v1/schedules/preview", "previewSchedule", "The next instants a schedule fires at", idempotent: false)
            },
            jobs::preview,
        ),
        route(
            Operation {
                problems: &[
                    ProblemCode::PrincipalAlreadyExists,
                    ProblemCode::ResourceExhausted,
                    ProblemCode::UserIdentityRequired,
                ],
                example: Some(
                    r#"{"name": "billing-service", "kind": "service", "role": "writer"}"#,
                ),
                ..op!(POST "/v1/principals", "createPrincipal", "Create a principal (an admin only by a person)", idempotent: true)
            },
            tenancy::create_principal,
        ),
        route(
            op!(GET "/v1/principals", "listPrincipals", "List principals", idempotent: false),
            tenancy::list_principals,
        ),
        route(
            Operation {
                person_only: true,
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(PATCH "/v1/principals/{name}", "updatePrincipal", "Change a principal's role", idempotent: true)
            },
            tenancy::update_principal,
        ),
        route(
            Operation {
                problems: &[
                    ProblemCode::ResourceExhausted,
                    ProblemCode::UserIdentityRequired,
                ],
                ..op!(POST "/v1/principals/{name}/keys", "createApiKey", "Create an API key (shown once; a key for an admin only by a person)", idempotent: true)
            },
            tenancy::create_key,
        ),
        route(
            op!(GET "/v1/principals/{name}/keys", "listApiKeys", "List a principal's API keys", idempotent: false),
            tenancy::list_keys,
        ),
        route(
            op!(GET "/v1/principals/{name}/keys/{id}", "getApiKey", "Read an API key (never the key itself)", idempotent: false),
            tenancy::get_key,
        ),
        route(
            Operation {
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(DELETE "/v1/principals/{name}/keys/{id}", "revokeApiKey", "Revoke an API key", idempotent: false)
            },
            tenancy::revoke_key,
        ),
        route(
            Operation {
                person_only: true,
                problems: &[ProblemCode::OrganizationAlreadyExists],
                ..op!(POST "/v1/organizations", "createOrganization", "Create an organization with its first admin key", idempotent: true)
            },
            tenancy::create_organization,
        ),
        route(
            op!(GET "/v1/signing-secrets", "listSigningSecrets", "List signing secrets, newest first", idempotent: false),
            tenancy::list_secrets,
        ),
        route(
            Operation {
                person_only: true,
                problems: &[ProblemCode::ResourceExhausted],
                ..op!(POST "/v1/signing-secrets/rotate", "rotateSigningSecret", "Add a signing secret", idempotent: true)
            },
            tenancy::rotate_secret,
        ),
        route(
            op!(GET "/v1/signing-secrets/{id}", "getSigningSecret", "Read a signing secret", idempotent: false),
            tenancy::get_secret,
        ),
        route(
            Operation {
                person_only: true,
                problems: &[ProblemCode::FailedPrecondition],
                ..op!(DELETE "/v1/signing-secrets/{id}", "deleteSigningSecret", "Delete a signing secret", idempotent: false)
            },
            tenancy::delete_secret,
        ),
        route(
            Operation {
                problems: &[ProblemCode::ResourceExhausted],
                example: Some(
                    r#"{"url": "https://hooks.internal/idem", "events": ["task.failed", "job.run_failed"]}"#,
                ),
                ..op!(POST "/v1/webhooks", "createWebhook", "Add an event webhook (task.failed, job.run_failed)", idempotent: true)
            },
            webhooks::create,
        ),
        route(
            op!(GET "/v1/webhooks", "listWebhooks", "List the organization's event webhooks", idempotent: false),
            webhooks::list,
        ),
        route(
            op!(GET "/v1/webhooks/{id}", "getWebhook", "Read an event webhook", idempotent: false),
            webhooks::get,
        ),
        route(
            op!(DELETE "/v1/webhooks/{id}", "deleteWebhook", "Delete an event webhook", idempotent: false),
            webhooks::delete,
        ),
        route(
            op!(GET "/v1/idempotency-keys/{key}", "getIdempotencyKey", "Inspect the caller's own Idempotency-Key record", idempotent: false),
            idempotency::get,
        ),
        route(
            Operation {
                authenticated: false,
                ..op!(GET "/.well-known/openid-configuration", "getOpenIdConfiguration", "The OpenID Provider configuration: the issuer of the ID tokens sent to targets and where its keys are", idempotent: false)
            },
            oidc::configuration,
        ),
        route(
            Operation {
                authenticated: false,
                ..op!(GET "/.well-known/jwks.json", "getJwks", "Every organization's public keys that signed ID tokens which may not have expired", idempotent: false)
            },
            oidc::jwks,
        ),
    ]
}

/// The operations without their handlers: the OpenAPI document's source.
pub fn catalog() -> Vec<Operation> {
    operations().into_iter().map(|(op, _)| op).collect()
}

pub fn router(app: Arc<App>) -> Router {
    let keys = idempotency::layer(&app);
    let claiming = keys.claiming();
    let mut v1 = Router::new();
    let mut public = Router::new();
    for (op, handler) in operations() {
        if !op.authenticated {
            public = public.route(op.path, handler);
            continue;
        }
        // The mark in the table is what makes an operation honour keys.
        let handler = if op.claims_key {
            handler.layer(claiming.clone())
        } else if op.idempotent {
            handler.layer(keys.clone())
        } else {
            handler
        };
        // Before the key layer, so that a header-given task ID is part of
        // what the fingerprint sees.
        let handler = if op.task_id_headers {
            handler.layer(axum::middleware::from_fn_with_state(
                app.clone(),
                tasks::task_id_into_body,
            ))
        } else {
            handler
        };
        let handler = if op.path.starts_with("/v1/queues/{queue}") {
            handler.layer(axum::middleware::from_fn(hide_reserved_queues))
        } else {
            handler
        };
        // The handler's `Auth` extractor refuses services (after the role).
        let handler = if op.person_only {
            handler.layer(axum::middleware::from_fn(crate::auth::mark_person_only))
        } else {
            handler
        };
        v1 = v1.route(op.path, handler);
    }
    // Authentication runs first, so the key layer knows whose key it sees;
    // it also refuses path parameters the store cannot hold
    // ([`refuse_path_params`]), one layer for what every route needs.
    let v1 = v1.route_layer(axum::middleware::from_fn_with_state(
        app.clone(),
        crate::auth::authenticate,
    ));
    // Written once: the document does not change while the server runs,
    // and with every time zone named it is large to clone and serialize.
    let doc = bytes::Bytes::from(
        serde_json::to_vec(&openapi::document(
            &catalog(),
            app.options.request_id_header.as_str(),
        ))
        .expect("the document serializes"),
    );
    v1.merge(public)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(crate::telemetry::render))
        .route(
            "/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move { ([(http::header::CONTENT_TYPE, "application/json")], doc) }
            }),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(app)
}

/// Queues whose names users cannot choose (the job queue, `~jobs`, and the
/// event queue, `~events`) hold runs, reached through `/v1/jobs`, and
/// events; under `/v1/queues` they do not exist.
async fn hide_reserved_queues(
    axum::extract::Path(params): axum::extract::Path<std::collections::HashMap<String, String>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match params.get("queue") {
        Some(q) if idem_core::names::check_queue_name("queue", q).is_err() => {
            Problem::not_found(format!("queue '{q}' not found")).into_response()
        }
        _ => next.run(req).await,
    }
}

async fn healthz() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({"status": "ok"}))
}

async fn readyz(State(app): State<Arc<App>>) -> Result<axum::Json<serde_json::Value>, Problem> {
    // Reading the schema's version is the store's answer too. Another
    // node (or `idem migrate`) may have moved it on since this one
    // started: a node that cannot read it must leave the pool.
    let schema = app.store.schema().await?;
    if let Err(e) = schema.check_current() {
        return Err(
            Problem::unavailable(e.to_string()).with_extensions(serde_json::json!({
                "schema_version": schema.store,
                "binary_schema_version": idem_store::schema::VERSION,
            })),
        );
    }
    let down = app.health.down();
    if !down.is_empty() {
        let p = Problem::unavailable(format!(
            "background work is not running: {}; it is being restarted",
            down.join(", ")
        ))
        .with_extensions(serde_json::json!({"down": down}));
        return Err(p);
    }
    Ok(axum::Json(serde_json::json!({"status": "ready"})))
}

async fn not_found() -> Problem {
    Problem::not_found("no such route")
}

async fn method_not_allowed() -> Problem {
    Problem::new(
        ProblemCode::MethodNotAllowed,
        "this route does not support that method",
    )
}

/// A path parameter the store could not hold (PostgreSQL refuses NUL in
/// text) or that is not UTF-8 is the client's error, named before anything
/// reads or writes.
pub(crate) fn refuse_path_params(
    params: &Result<axum::extract::RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
) -> Option<Response> {
    use axum::extract::rejection::RawPathParamsRejection;
    match params {
        Ok(params) => params
            .iter()
            .find(|(_, value)| value.chars().any(char::is_control))
            .map(|(name, _)| {
                Problem::field(name, "must not contain control characters").into_response()
            }),
        Err(RawPathParamsRejection::InvalidUtf8InPathParam(e)) => {
            // axum names the parameter only in its text: "Invalid UTF-8 in `name`".
            let text = e.body_text();
            let name = text.split('`').nth(1).unwrap_or("path");
            Some(Problem::field(name, "must be UTF-8 once percent-decoded").into_response())
        }
        // A route without parameters.
        Err(_) => None,
    }
}
