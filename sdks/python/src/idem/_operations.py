"""Every route of the API, once, for both clients.

Each method builds a :class:`Call` and hands it to ``self._execute`` (one
answer) or ``self._paginate`` (every item of a list, page after page). The
sync client's ``_execute`` returns the :class:`Response`; the async
client's returns an awaitable of it, so the same method bodies serve both.
``OPERATIONS`` maps each ``operationId`` of the OpenAPI document to the
method that calls it; a test holds it to the document.
"""

from __future__ import annotations

import json as _json
from typing import Any, Iterable, Mapping, Sequence

from ._core import Call, ndjson
from . import models as m

OPERATIONS: dict[str, str] = {}


def operation(op_id: str):
    def mark(fn):
        OPERATIONS[op_id] = fn.__name__
        return fn

    return mark


def _page(limit: int | None, page_token: str | None) -> dict[str, Any]:
    return {"limit": limit, "page_token": page_token}


Upload = tuple  # (bytes, content_type | None[, file_name])


class Operations:
    def _execute(self, call: Call) -> Any:  # pragma: no cover - supplied by the clients
        raise NotImplementedError

    def _paginate(self, call: Call) -> Any:  # pragma: no cover - supplied by the clients
        raise NotImplementedError

    # --- queues ---------------------------------------------------------

    @operation("createQueue")
    def create_queue(self, queue: m.CreateQueue | Mapping[str, Any], *, idempotency_key: str | None = None):
        """``POST /v1/queues`` (admin): 201 with the queue."""
        return self._execute(Call("POST", ["queues"], json=dict(queue), idempotency_key=idempotency_key))

    @operation("listQueues")
    def list_queues(self, *, limit: int | None = None, page_token: str | None = None):
        """One page of queues."""
        return self._execute(Call("GET", ["queues"], query=_page(limit, page_token)))

    def iter_queues(self, *, limit: int | None = None):
        """Every queue, page after page."""
        return self._paginate(Call("GET", ["queues"], query=_page(limit, None)))

    @operation("getQueue")
    def get_queue(self, queue: str):
        return self._execute(Call("GET", ["queues", queue]))

    @operation("listQueueGroups")
    def list_queue_groups(self, queue: str, *, id_prefix: str | None = None, limit: int | None = None, page_token: str | None = None):
        """One page of the queue's groups with live tasks, by name."""
        q = {"id_prefix": id_prefix, **_page(limit, page_token)}
        return self._execute(Call("GET", ["queues", queue, "groups"], query=q))

    def iter_queue_groups(self, queue: str, *, id_prefix: str | None = None, limit: int | None = None):
        """Every group of the queue with live tasks, page after page."""
        q = {"id_prefix": id_prefix, "limit": limit}
        return self._paginate(Call("GET", ["queues", queue, "groups"], query=q))

    @operation("updateQueue")
    def update_queue(self, queue: str, changes: m.QueueConfigPatch | Mapping[str, Any], *, idempotency_key: str | None = None):
        return self._execute(Call("PATCH", ["queues", queue], json=dict(changes), idempotency_key=idempotency_key))

    @operation("deleteQueue")
    def delete_queue(self, queue: str):
        return self._execute(Call("DELETE", ["queues", queue]))

    @operation("pauseQueue")
    def pause_queue(self, queue: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["queues", queue, "pause"], idempotency_key=idempotency_key))

    @operation("resumeQueue")
    def resume_queue(self, queue: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["queues", queue, "resume"], idempotency_key=idempotency_key))

    @operation("purgeQueue")
    def purge_queue(self, queue: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["queues", queue, "purge"], idempotency_key=idempotency_key))

    # --- tasks ----------------------------------------------------------

    @operation("createTask")
    def create_task(
        self,
        queue: str,
        task: m.CreateTask | Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        wait_ms: int | None = None,
        upload: Upload | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        """``POST /v1/queues/{queue}/tasks``: 201 with the task, or with
        ``wait_ms`` 200 once it ended or 202 as it is. ``upload`` =
        ``(bytes, content_type[, file_name])`` sends the body as a
        ``multipart/form-data`` file part instead of inline."""
        call = Call(
            "POST",
            ["queues", queue, "tasks"],
            query={"wait_ms": wait_ms},
            idempotency_key=idempotency_key,
            headers=dict(headers or {}),
            extra_time=(wait_ms or 0) / 1000,
        )
        if upload is not None:
            data, content_type, *rest = upload
            name = rest[0] if rest else "body"
            call.files = {
                "task": (None, _json.dumps(dict(task)).encode(), "application/json"),
                "body": (name, bytes(data), content_type or "application/octet-stream"),
            }
        else:
            call.json = dict(task)
        return self._execute(call)

    @operation("createTasks")
    def create_tasks(self, queue: str, tasks: Sequence[m.CreateTask | Mapping[str, Any]], *, atomic: bool = False, idempotency_key: str | None = None):
        """``tasks:batch`` (JSON): up to 1000 tasks in one commit, answered
        item by item (``{"results": [{"status": 201, "task"} | {"status",
        "problem"}, …]}``). With ``atomic`` all or none are created."""
        body = {"tasks": [dict(t) for t in tasks], "atomic": atomic}
        return self._execute(Call("POST", ["queues", queue, "tasks"], verb="batch", json=body, idempotency_key=idempotency_key))

    def create_tasks_ndjson(self, queue: str, tasks: Iterable[Mapping[str, Any]] | bytes | str, *, atomic: bool = False, idempotency_key: str | None = None):
        """``tasks:batch`` with an NDJSON body, one task per line (bytes are
        sent as they are); answers name items by line."""
        return self._execute(
            Call(
                "POST",
                ["queues", queue, "tasks"],
                verb="batch",
                query={"atomic": atomic},
                content=ndjson(tasks),
                content_type="application/x-ndjson",
                idempotency_key=idempotency_key,
            )
        )

    @operation("listTasks")
    def list_tasks(self, queue: str, *, state: str | None = None, id_prefix: str | None = None, created_after: str | None = None, created_before: str | None = None, limit: int | None = None, page_token: str | None = None):
        q = {"state": state, "id_prefix": id_prefix, "created_after": created_after, "created_before": created_before, **_page(limit, page_token)}
        return self._execute(Call("GET", ["queues", queue, "tasks"], query=q))

    def iter_tasks(self, queue: str, *, state: str | None = None, id_prefix: str | None = None, created_after: str | None = None, created_before: str | None = None, limit: int | None = None):
        """Every task matching the filters, page after page."""
        q = {"state": state, "id_prefix": id_prefix, "created_after": created_after, "created_before": created_before, "limit": limit}
        return self._paginate(Call("GET", ["queues", queue, "tasks"], query=q))

    @operation("getTask")
    def get_task(self, queue: str, task_id: str):
        return self._execute(Call("GET", ["queues", queue, "tasks", task_id]))

    @operation("cancelTask")
    def cancel_task(self, queue: str, task_id: str):
        return self._execute(Call("DELETE", ["queues", queue, "tasks", task_id]))

    @operation("listTaskAttempts")
    def list_task_attempts(self, queue: str, task_id: str, *, limit: int | None = None, page_token: str | None = None):
        return self._execute(Call("GET", ["queues", queue, "tasks", task_id, "attempts"], query=_page(limit, page_token)))

    def iter_task_attempts(self, queue: str, task_id: str, *, limit: int | None = None):
        return self._paginate(Call("GET", ["queues", queue, "tasks", task_id, "attempts"], query=_page(limit, None)))

    @operation("runTask")
    def run_task(self, queue: str, task_id: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "run"], idempotency_key=idempotency_key))

    @operation("redriveTask")
    def redrive_task(self, queue: str, task_id: str, *, idempotency_key: str | None = None):
        """Runs a failed or cancelled task again (same ID and run key, a
        fresh retry budget); 409 ``FAILED_PRECONDITION`` otherwise."""
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "redrive"], idempotency_key=idempotency_key))

    @operation("redriveTasks")
    def redrive_tasks(self, queue: str, *, state: str | None = None, finished_after: str | None = None, finished_before: str | None = None, id_prefix: str | None = None, created_after: str | None = None, created_before: str | None = None, dry_run: bool | None = None, idempotency_key: str | None = None):
        """Redrives every task of the queue the filter matches (failed by
        default); with ``dry_run=True`` answers how many (``matching``) and
        redrives none."""
        filters = {"state": state, "finished_after": finished_after, "finished_before": finished_before, "id_prefix": id_prefix, "created_after": created_after, "created_before": created_before, "dry_run": dry_run}
        body = {k: v for k, v in filters.items() if v is not None}
        return self._execute(Call("POST", ["queues", queue, "tasks"], verb="redrive", json=body, idempotency_key=idempotency_key))

    # --- pull work (no Idempotency-Key: these routes never replay one) ---

    @operation("claimTasks")
    def claim_tasks(self, queue: str, *, max_tasks: int = 1, wait_ms: int = 0, lease_s: int = 60, tag: str | None = None):
        body: dict[str, Any] = {"max_tasks": max_tasks, "wait_ms": wait_ms, "lease_s": lease_s}
        if tag is not None:
            body["tag"] = tag
        return self._execute(Call("POST", ["queues", queue, "tasks"], verb="claim", json=body, keyed=False, extra_time=wait_ms / 1000))

    @operation("claimTask")
    def claim_task(self, queue: str, task_id: str, *, lease_s: int = 60):
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "claim"], json={"lease_s": lease_s}, keyed=False))

    @operation("heartbeatTask")
    def heartbeat_task(self, queue: str, task_id: str, attempt_id: str, *, lease_s: int = 60):
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "heartbeat"], json={"attempt_id": attempt_id, "lease_s": lease_s}, keyed=False))

    @operation("completeTask")
    def complete_task(self, queue: str, task_id: str, attempt_id: str, *, result: Any = None):
        body: dict[str, Any] = {"attempt_id": attempt_id}
        if result is not None:
            body["result"] = result
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "complete"], json=body, keyed=False))

    @operation("failTask")
    def fail_task(self, queue: str, task_id: str, attempt_id: str, *, error: str):
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "fail"], json={"attempt_id": attempt_id, "error": error}, keyed=False))

    @operation("endTasks")
    def end_tasks(self, queue: str, ends: Sequence[Mapping[str, Any]]):
        """Completes (``result``) or fails (``error``) up to 100 leased
        attempts in one call, answered end by end."""
        return self._execute(Call("POST", ["queues", queue, "tasks"], verb="end", json={"ends": [dict(e) for e in ends]}, keyed=False))

    @operation("releaseTask")
    def release_task(self, queue: str, task_id: str, attempt_id: str):
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "release"], json={"attempt_id": attempt_id}, keyed=False))

    @operation("reassignTask")
    def reassign_task(self, queue: str, task_id: str, attempt_id: str, principal: str, *, lease_s: int | None = None):
        body: dict[str, Any] = {"attempt_id": attempt_id, "principal": principal}
        if lease_s is not None:
            body["lease_s"] = lease_s
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "reassign"], json=body, keyed=False))

    @operation("assignTask")
    def assign_task(self, queue: str, task_id: str, principal: str, *, lease_s: int | None = None):
        body: dict[str, Any] = {"principal": principal}
        if lease_s is not None:
            body["lease_s"] = lease_s
        return self._execute(Call("POST", ["queues", queue, "tasks", task_id, "assign"], json=body, keyed=False))

    # --- cron jobs ------------------------------------------------------

    @operation("createJob")
    def create_job(self, job: m.CreateJob | Mapping[str, Any], *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["jobs"], json=dict(job), idempotency_key=idempotency_key))

    @operation("listJobs")
    def list_jobs(self, *, limit: int | None = None, page_token: str | None = None):
        return self._execute(Call("GET", ["jobs"], query=_page(limit, page_token)))

    def iter_jobs(self, *, limit: int | None = None):
        return self._paginate(Call("GET", ["jobs"], query=_page(limit, None)))

    @operation("getJob")
    def get_job(self, job: str):
        return self._execute(Call("GET", ["jobs", job]))

    @operation("updateJob")
    def update_job(self, job: str, changes: m.UpdateJob | Mapping[str, Any], *, idempotency_key: str | None = None):
        return self._execute(Call("PATCH", ["jobs", job], json=dict(changes), idempotency_key=idempotency_key))

    @operation("deleteJob")
    def delete_job(self, job: str):
        return self._execute(Call("DELETE", ["jobs", job]))

    @operation("pauseJob")
    def pause_job(self, job: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["jobs", job, "pause"], idempotency_key=idempotency_key))

    @operation("resumeJob")
    def resume_job(self, job: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["jobs", job, "resume"], idempotency_key=idempotency_key))

    @operation("runJob")
    def run_job(self, job: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["jobs", job, "run"], idempotency_key=idempotency_key))

    @operation("listJobRuns")
    def list_job_runs(self, job: str, *, limit: int | None = None, page_token: str | None = None):
        return self._execute(Call("GET", ["jobs", job, "runs"], query=_page(limit, page_token)))

    def iter_job_runs(self, job: str, *, limit: int | None = None):
        return self._paginate(Call("GET", ["jobs", job, "runs"], query=_page(limit, None)))

    @operation("getJobRun")
    def get_job_run(self, job: str, run_id: str):
        return self._execute(Call("GET", ["jobs", job, "runs", run_id]))

    @operation("listJobRunAttempts")
    def list_job_run_attempts(self, job: str, run_id: str, *, limit: int | None = None, page_token: str | None = None):
        """A run's attempts, oldest first: each with its duration and, when
        the target refused it, the start of its answer (``response``)."""
        return self._execute(Call("GET", ["jobs", job, "runs", run_id, "attempts"], query=_page(limit, page_token)))

    def iter_job_run_attempts(self, job: str, run_id: str, *, limit: int | None = None):
        return self._paginate(Call("GET", ["jobs", job, "runs", run_id, "attempts"], query=_page(limit, None)))

    @operation("previewSchedule")
    def preview_schedule(self, schedule: str, *, time_zone: str | None = None, after: str | None = None, count: int | None = None):
        body = {k: v for k, v in {"schedule": schedule, "time_zone": time_zone, "after": after, "count": count}.items() if v is not None}
        # Computes, creates nothing: a key would only cost a record.
        return self._execute(Call("POST", ["schedules", "preview"], json=body, keyed=False))

    # --- tenancy --------------------------------------------------------

    @operation("createPrincipal")
    def create_principal(self, name: str, *, role: str, kind: str = "service", idempotency_key: str | None = None):
        return self._execute(Call("POST", ["principals"], json={"name": name, "kind": kind, "role": role}, idempotency_key=idempotency_key))

    @operation("listPrincipals")
    def list_principals(self, *, limit: int | None = None, page_token: str | None = None):
        return self._execute(Call("GET", ["principals"], query=_page(limit, page_token)))

    def iter_principals(self, *, limit: int | None = None):
        return self._paginate(Call("GET", ["principals"], query=_page(limit, None)))

    @operation("updatePrincipal")
    def update_principal(self, name: str, *, role: str, idempotency_key: str | None = None):
        return self._execute(Call("PATCH", ["principals", name], json={"role": role}, idempotency_key=idempotency_key))

    @operation("createApiKey")
    def create_api_key(self, principal: str, *, idempotency_key: str | None = None):
        """A new key for ``principal``; the answer is the only time its
        secret is shown (a replay with the same key shows it again)."""
        return self._execute(Call("POST", ["principals", principal, "keys"], idempotency_key=idempotency_key))

    @operation("listApiKeys")
    def list_api_keys(self, principal: str, *, limit: int | None = None, page_token: str | None = None):
        return self._execute(Call("GET", ["principals", principal, "keys"], query=_page(limit, page_token)))

    def iter_api_keys(self, principal: str, *, limit: int | None = None):
        return self._paginate(Call("GET", ["principals", principal, "keys"], query=_page(limit, None)))

    @operation("getApiKey")
    def get_api_key(self, principal: str, key_id: str):
        return self._execute(Call("GET", ["principals", principal, "keys", key_id]))

    @operation("revokeApiKey")
    def revoke_api_key(self, principal: str, key_id: str):
        return self._execute(Call("DELETE", ["principals", principal, "keys", key_id]))

    @operation("createOrganization")
    def create_organization(self, name: str, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["organizations"], json={"name": name}, idempotency_key=idempotency_key))

    @operation("listSigningSecrets")
    def list_signing_secrets(self):
        return self._execute(Call("GET", ["signing-secrets"]))

    @operation("getSigningSecret")
    def get_signing_secret(self, secret_id: str):
        return self._execute(Call("GET", ["signing-secrets", secret_id]))

    @operation("rotateSigningSecret")
    def rotate_signing_secret(self, *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["signing-secrets", "rotate"], idempotency_key=idempotency_key))

    @operation("deleteSigningSecret")
    def delete_signing_secret(self, secret_id: str):
        return self._execute(Call("DELETE", ["signing-secrets", secret_id]))

    # --- event webhooks -------------------------------------------------

    @operation("createWebhook")
    def create_webhook(self, url: str, events: Sequence[str], *, idempotency_key: str | None = None):
        return self._execute(Call("POST", ["webhooks"], json={"url": url, "events": list(events)}, idempotency_key=idempotency_key))

    @operation("listWebhooks")
    def list_webhooks(self, *, limit: int | None = None, page_token: str | None = None):
        return self._execute(Call("GET", ["webhooks"], query=_page(limit, page_token)))

    def iter_webhooks(self, *, limit: int | None = None):
        return self._paginate(Call("GET", ["webhooks"], query=_page(limit, None)))

    @operation("getWebhook")
    def get_webhook(self, webhook_id: str):
        return self._execute(Call("GET", ["webhooks", webhook_id]))

    @operation("deleteWebhook")
    def delete_webhook(self, webhook_id: str):
        return self._execute(Call("DELETE", ["webhooks", webhook_id]))

    # --- inspection and discovery ---------------------------------------

    @operation("getIdempotencyKey")
    def get_idempotency_key(self, key: str):
        """The caller's own record of ``key``: state, resource, status."""
        return self._execute(Call("GET", ["idempotency-keys", key]))

    @operation("getOpenIdConfiguration")
    def get_openid_configuration(self):
        return self._execute(Call("GET", [".well-known", "openid-configuration"], root=True))

    @operation("getJwks")
    def get_jwks(self):
        return self._execute(Call("GET", [".well-known", "jwks.json"], root=True))

    @operation("healthz")
    def healthz(self):
        return self._execute(Call("GET", ["healthz"], root=True, raw=True))

    @operation("readyz")
    def readyz(self):
        return self._execute(Call("GET", ["readyz"], root=True))

    @operation("metrics")
    def metrics(self):
        """The Prometheus text, as a string."""
        return self._execute(Call("GET", ["metrics"], root=True, raw=True))

    @operation("openapi")
    def openapi(self):
        return self._execute(Call("GET", ["openapi.json"], root=True))
