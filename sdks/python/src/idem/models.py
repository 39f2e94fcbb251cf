"""The API's request and response bodies as TypedDicts.

Generated from the OpenAPI document the server serves at /openapi.json by
scripts/generate_models.py; do not edit by hand.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, TypedDict

from typing_extensions import NotRequired


class ApiKeyView(TypedDict):
    created_at: str
    id: str
    last_used_at: NotRequired[str | None]
    principal: str


class AssignTask(TypedDict):
    lease_s: NotRequired[int | None]
    principal: str


class Attempt(TypedDict):
    attempt: int
    duration_ms: NotRequired[int | None]
    error: NotRequired[str | None]
    finished_at: NotRequired[str | None]
    started_at: str
    status_code: NotRequired[int | None]


class AttemptList(TypedDict):
    items: list[Attempt]
    next_page_token: str | None


CatchUp: TypeAlias = Literal['none', 'latest', 'all']


class ClaimTask(TypedDict):
    lease_s: NotRequired[int | None]


class ClaimTasks(TypedDict):
    lease_s: NotRequired[int | None]
    max_tasks: NotRequired[int | None]
    tag: NotRequired[str | None]
    wait_ms: NotRequired[int | None]


class CompleteTask(TypedDict):
    attempt_id: str
    result: NotRequired[dict[str, Any] | None]


class CreateOrganization(TypedDict):
    name: str


class EndTask(TypedDict):
    attempt_id: str
    error: NotRequired[str | None]
    result: NotRequired[dict[str, Any] | None]
    task_id: str


class EndTasks(TypedDict):
    ends: list[EndTask]


EventType: TypeAlias = Literal['task.succeeded', 'task.failed', 'job.run_failed']


class FailTask(TypedDict):
    attempt_id: str
    error: NotRequired[str]


HeaderStyle: TypeAlias = Literal['idem', 'cloud_scheduler', 'cloud_tasks']


class Heartbeat(TypedDict):
    attempt_id: str
    lease_s: NotRequired[int | None]


class JobRetryConfig(TypedDict):
    max_backoff_ms: int
    max_doublings: int
    max_retry_duration_s: int
    min_backoff_ms: int
    retry_count: int


class JobRetryConfigPatch(TypedDict):
    max_backoff_ms: NotRequired[int | None]
    max_doublings: NotRequired[int | None]
    max_retry_duration_s: NotRequired[int | None]
    min_backoff_ms: NotRequired[int | None]
    retry_count: NotRequired[int | None]


JobState: TypeAlias = Literal['enabled', 'paused']


class Jwk(TypedDict):
    alg: str
    crv: str
    kid: str
    kty: str
    use: str
    x: str
    y: str


class Jwks(TypedDict):
    keys: list[Jwk]


class Lease(TypedDict):
    attempt_id: NotRequired[str | None]
    claimant: str
    lease_expires_at: str


class NewApiKeyView(TypedDict):
    created_at: str
    id: str
    key: str
    principal: str


class Oidc(TypedDict):
    audience: str


class OidcSpec(TypedDict):
    audience: NotRequired[str | None]


class OpenIdConfiguration(TypedDict):
    claims_supported: list[str]
    id_token_signing_alg_values_supported: list[str]
    issuer: str
    jwks_uri: str
    response_types_supported: list[str]
    subject_types_supported: list[str]


class OrganizationView(TypedDict):
    admin_key: str
    name: str


class PayloadSpec(TypedDict):
    body: NotRequired[str | None]
    body_base64: NotRequired[str | None]
    json: NotRequired[dict[str, Any] | None]


class PayloadView(TypedDict):
    body: NotRequired[str | None]
    body_base64: NotRequired[str | None]
    json: NotRequired[dict[str, Any] | None]


class PreviewRequest(TypedDict):
    after: NotRequired[str | None]
    count: NotRequired[int | None]
    schedule: str
    time_zone: NotRequired[str | None]


class PreviewView(TypedDict):
    times: list[str]


PrincipalKind: TypeAlias = Literal['service', 'person']


class Problem(TypedDict):
    detail: NotRequired[str]
    extensions: NotRequired[dict[str, Any]]
    instance: NotRequired[str | None]
    request_id: NotRequired[str | None]
    status: int
    title: NotRequired[str]
    type: str


class PurgeView(TypedDict):
    cancelled: int


QueueMode: TypeAlias = Literal['push', 'pull']


QueueState: TypeAlias = Literal['running', 'paused']


class RateLimits(TypedDict):
    max_burst_size: int
    max_concurrent_dispatches: int
    max_dispatches_per_second: float


class RateLimitsPatch(TypedDict):
    max_burst_size: NotRequired[int | None]
    max_concurrent_dispatches: NotRequired[int | None]
    max_dispatches_per_second: NotRequired[float | None]


class ReassignTask(TypedDict):
    attempt_id: str
    lease_s: NotRequired[int | None]
    principal: str


class RedriveView(TypedDict):
    redriven: int


class ReleaseTask(TypedDict):
    attempt_id: str


class ResourceView(TypedDict):
    id: str
    kind: str


class RetryConfig(TypedDict):
    max_attempts: int
    max_backoff_ms: int
    max_doublings: int
    max_retry_duration_s: int
    min_backoff_ms: int


class RetryConfigPatch(TypedDict):
    max_attempts: NotRequired[int | None]
    max_backoff_ms: NotRequired[int | None]
    max_doublings: NotRequired[int | None]
    max_retry_duration_s: NotRequired[int | None]
    min_backoff_ms: NotRequired[int | None]


Role: TypeAlias = Literal['reader', 'writer', 'admin']


RunKind: TypeAlias = Literal['scheduled', 'manual']


class SigningSecretView(TypedDict):
    created_at: str
    id: str
    secret: str


class SigningSecretsView(TypedDict):
    secrets: list[SigningSecretView]


class TargetSpec(TypedDict):
    body: NotRequired[str | None]
    body_base64: NotRequired[str | None]
    headers: NotRequired[dict[str, str]]
    json: NotRequired[Any]
    method: NotRequired[str | None]
    oidc: NotRequired[OidcSpec | None]
    url: str


class TargetView(TypedDict):
    body: NotRequired[str | None]
    body_base64: NotRequired[str | None]
    headers: dict[str, str]
    json: NotRequired[Any]
    method: str
    oidc: NotRequired[Oidc | None]
    url: str


class TaskCountsView(TypedDict):
    cancelled: int
    failed: int
    queued: int
    running: int
    scheduled: int
    succeeded: int


TaskState: TypeAlias = Literal[
    'scheduled', 'queued', 'running', 'succeeded', 'failed', 'cancelled'
]


class TaskView(TypedDict):
    attempt_count: int
    created_at: str
    dispatch_deadline_s: int
    finished_at: NotRequired[str | None]
    header_style: NotRequired[HeaderStyle]
    last_attempt: NotRequired[Attempt | None]
    lease: NotRequired[Lease | None]
    on_failure: NotRequired[TargetView | None]
    on_success: NotRequired[TargetView | None]
    payload: NotRequired[PayloadView | None]
    queue: str
    result: NotRequired[dict[str, Any] | None]
    retry_config: RetryConfig
    schedule_time: str
    state: TaskState
    tag: NotRequired[str | None]
    target: NotRequired[TargetView | None]
    task_id: str


class UpdateJob(TypedDict):
    attempt_deadline_s: NotRequired[int | None]
    catch_up: NotRequired[CatchUp | None]
    expected_updated_at: NotRequired[str | None]
    header_style: NotRequired[HeaderStyle | None]
    retry_config: NotRequired[JobRetryConfigPatch | None]
    schedule: NotRequired[str | None]
    target: NotRequired[TargetSpec | None]
    time_zone: NotRequired[str | None]


class UpdatePrincipal(TypedDict):
    role: Role


class WebhookView(TypedDict):
    created_at: str
    events: list[EventType]
    id: str
    url: str


class ApiKeyList(TypedDict):
    items: list[ApiKeyView]
    next_page_token: str | None


class ClaimedTasks(TypedDict):
    tasks: list[TaskView]


class CreateJob(TypedDict):
    attempt_deadline_s: NotRequired[int | None]
    catch_up: NotRequired[CatchUp | None]
    header_style: NotRequired[HeaderStyle | None]
    name: str
    paused: NotRequired[bool | None]
    retry_config: NotRequired[JobRetryConfigPatch | None]
    schedule: str
    target: TargetSpec
    time_zone: NotRequired[str | None]


class CreatePrincipal(TypedDict):
    kind: PrincipalKind
    name: str
    role: Role


class CreateQueue(TypedDict):
    dedup_window_s: NotRequired[int | None]
    dispatch_deadline_s: NotRequired[int | None]
    failed_retention_s: NotRequired[int | None]
    header_style: NotRequired[HeaderStyle | None]
    mode: NotRequired[QueueMode | None]
    name: str
    on_failure: NotRequired[TargetSpec | None]
    on_success: NotRequired[TargetSpec | None]
    person_only: NotRequired[bool | None]
    rate_limits: NotRequired[RateLimitsPatch | None]
    retry_config: NotRequired[RetryConfigPatch | None]


class CreateTask(TypedDict):
    dispatch_deadline_s: NotRequired[int | None]
    header_style: NotRequired[HeaderStyle | None]
    on_failure: NotRequired[TargetSpec | None]
    on_success: NotRequired[TargetSpec | None]
    payload: NotRequired[PayloadSpec | None]
    retry_config: NotRequired[RetryConfigPatch | None]
    schedule_time: NotRequired[str | None]
    tag: NotRequired[str | None]
    target: NotRequired[TargetSpec | None]
    task_id: NotRequired[str | None]


class CreateTasks(TypedDict):
    atomic: NotRequired[bool]
    tasks: list[CreateTask]


class CreateWebhook(TypedDict):
    events: list[EventType]
    url: str


class Result(TypedDict):
    problem: NotRequired[Problem]
    status: Literal[200, 403, 404, 409, 503]
    task: NotRequired[TaskView]


class EndedTasks(TypedDict):
    results: list[Result]


class IdempotencyKeyView(TypedDict):
    created_at: str
    expires_at: str
    fingerprint: str
    key: str
    resource: NotRequired[ResourceView | None]
    state: str
    status: NotRequired[int | None]


class PrincipalView(TypedDict):
    created_at: str
    kind: PrincipalKind
    name: str
    role: Role


class QueueConfigPatch(TypedDict):
    dedup_window_s: NotRequired[int | None]
    dispatch_deadline_s: NotRequired[int | None]
    failed_retention_s: NotRequired[int | None]
    header_style: NotRequired[HeaderStyle | None]
    mode: NotRequired[QueueMode | None]
    on_failure: NotRequired[TargetSpec | None]
    on_success: NotRequired[TargetSpec | None]
    person_only: NotRequired[bool | None]
    rate_limits: NotRequired[RateLimitsPatch | None]
    retry_config: NotRequired[RetryConfigPatch | None]


class QueueStatsView(TypedDict):
    dispatched_last_minute: int
    in_flight: int
    oldest_due_time: NotRequired[str | None]
    tasks: TaskCountsView


class QueueView(TypedDict):
    created_at: str
    dedup_window_s: int
    dispatch_deadline_s: int
    failed_retention_s: int
    header_style: HeaderStyle
    mode: NotRequired[QueueMode]
    name: str
    on_failure: NotRequired[TargetView | None]
    on_success: NotRequired[TargetView | None]
    person_only: NotRequired[bool]
    rate_limits: RateLimits
    retry_config: RetryConfig
    state: QueueState
    stats: QueueStatsView
    updated_at: str


class RedriveTasks(TypedDict):
    finished_after: NotRequired[str | None]
    finished_before: NotRequired[str | None]
    state: NotRequired[TaskState | None]


class RunView(TypedDict):
    attempt_count: int
    created_at: str
    finished_at: NotRequired[str | None]
    job: str
    kind: RunKind
    last_attempt: NotRequired[Attempt | None]
    run_id: str
    schedule_time: str
    state: TaskState


class Result1(TypedDict):
    problem: NotRequired[Problem]
    status: Literal[201, 400, 409, 410]
    task: NotRequired[TaskView]


class TaskBatchResults(TypedDict):
    results: list[Result1]


class TaskEvent(TypedDict):
    queue: str
    task: TaskView
    type: EventType


class TaskList(TypedDict):
    items: list[TaskView]
    next_page_token: str | None


class WebhookList(TypedDict):
    items: list[WebhookView]
    next_page_token: str | None


class JobRunEvent(TypedDict):
    job: str
    run: RunView
    type: EventType


class JobView(TypedDict):
    attempt_deadline_s: int
    catch_up: CatchUp
    created_at: str
    header_style: HeaderStyle
    last_run: NotRequired[RunView | None]
    name: str
    next_run_time: NotRequired[str | None]
    paused_reason: NotRequired[str | None]
    retry_config: JobRetryConfig
    schedule: str
    state: JobState
    target: TargetView
    time_zone: str
    updated_at: str


class PrincipalList(TypedDict):
    items: list[PrincipalView]
    next_page_token: str | None


class QueueList(TypedDict):
    items: list[QueueView]
    next_page_token: str | None


class RunList(TypedDict):
    items: list[RunView]
    next_page_token: str | None


class JobList(TypedDict):
    items: list[JobView]
    next_page_token: str | None
