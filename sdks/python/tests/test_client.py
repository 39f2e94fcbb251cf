"""The clients against a real server, on SQLite and on PostgreSQL."""

from __future__ import annotations

import datetime as dt
import time

import httpx
import pytest

import idem
from idem import errors
from idem._operations import OPERATIONS

from conftest import free_port, unique
from dropproxy import DropProxy


def push_target(server, method: str = "GET") -> dict:
    # The server's own health route answers 200 at once: a target that
    # succeeds without anything else running.
    return {"url": server.base_url + "/healthz", "method": method}


def pull_queue(client, **settings) -> str:
    name = unique("q")
    client.create_queue({"name": name, "mode": "pull", **settings})
    return name


def test_a_create_whose_answer_is_lost_is_retried_with_its_key_and_runs_once(server):
    with server.client() as direct:
        queue = pull_queue(direct)
    proxy = DropProxy(int(server.base_url.rsplit(":", 1)[1]), drop=1)
    try:
        with idem.Client(proxy.url, server.api_key, retry=idem.RetryPolicy(initial_backoff=0.05)) as c:
            created = c.create_task(queue, {"payload": {"json": {"amount": 100}}})
        keys = proxy.idempotency_keys()
    finally:
        proxy.close()
    assert created.status == 201
    assert created.attempts == 2
    assert created.replayed, "the second attempt is answered as a replay of the first"
    assert len(keys) == 2 and keys[0] == keys[1] == created.idempotency_key
    with server.client() as direct:
        tasks = list(direct.iter_tasks(queue))
    assert [t["task_id"] for t in tasks] == [created["task_id"]], "one task, not two"


def test_a_bad_input_is_a_typed_problem_with_its_fields(client):
    with pytest.raises(errors.InvalidArgumentError) as caught:
        client.create_queue({"name": "no spaces allowed"})
    e = caught.value
    assert isinstance(e, idem.ProblemError)
    assert (e.status, e.code, e.instance) == (400, "INVALID_ARGUMENT", "/v1/queues")
    assert e.request_id and e.title
    assert [f["field"] for f in e.errors] == ["name"]

    with pytest.raises(errors.NotFoundError) as missing:
        client.get_queue(unique("absent"))
    assert missing.value.status == 404

    queue = pull_queue(client)
    client.create_task(queue, {"task_id": "t1"})
    with pytest.raises(errors.TaskAlreadyExistsError) as taken:
        client.create_task(queue, {"task_id": "t1"})
    assert taken.value.extensions["task"]["id"] == "t1"


def test_an_unknown_key_is_unauthenticated(server):
    with idem.Client(server.base_url, "idem_" + "0" * 40) as c:
        with pytest.raises(errors.UnauthenticatedError):
            c.list_queues()


def test_a_key_reused_replays_the_first_answer_and_a_changed_body_is_refused(client):
    queue = pull_queue(client)
    first = client.create_task(queue, {"task_id": "k1"}, idempotency_key="my-key-" + queue)
    again = client.create_task(queue, {"task_id": "k1"}, idempotency_key="my-key-" + queue)
    assert (first.status, first.replayed) == (201, False)
    assert (again.status, again.replayed) == (201, True)
    assert again["task_id"] == "k1"
    with pytest.raises(errors.IdempotencyKeyMismatchError) as caught:
        client.create_task(queue, {"task_id": "k2"}, idempotency_key="my-key-" + queue)
    assert "body" in caught.value.extensions["idempotency"]["differs"]
    record = client.get_idempotency_key("my-key-" + queue).value
    assert record["state"] == "completed"


def test_lists_iterate_across_pages(client):
    queue = pull_queue(client)
    ids = [f"p{i:02d}" for i in range(7)]
    client.create_tasks(queue, [{"task_id": i} for i in ids])
    first = client.list_tasks(queue, limit=2)
    assert len(first["items"]) == 2 and first["next_page_token"]
    assert [t["task_id"] for t in client.iter_tasks(queue, limit=2)] == ids
    assert [t["task_id"] for t in client.iter_tasks(queue, id_prefix="p0", limit=3)] == ids


async def test_async_lists_iterate_across_pages(aclient):
    queue = unique("q")
    await aclient.create_queue({"name": queue, "mode": "pull"})
    await aclient.create_tasks(queue, [{"task_id": f"a{i}"} for i in range(5)])
    seen = [t["task_id"] async for t in aclient.iter_tasks(queue, limit=2)]
    assert seen == [f"a{i}" for i in range(5)]


def test_batch_answers_item_by_item_and_atomic_batches_all_or_nothing(client):
    queue = pull_queue(client)
    out = client.create_tasks(queue, [{"task_id": "b1"}, {"task_id": "b1"}, {"task_id": "b2", "tag": "bad tag"}]).value
    assert [r["status"] for r in out["results"]] == [201, 409, 400]
    assert out["results"][1]["problem"]["type"] == "TASK_ALREADY_EXISTS"
    assert out["results"][2]["problem"]["extensions"]["errors"][0]["field"].startswith("tasks[2]")

    with pytest.raises(errors.TaskAlreadyExistsError) as caught:
        client.create_tasks(queue, [{"task_id": "b3"}, {"task_id": "b1"}], atomic=True)
    assert caught.value.extensions["index"] == 1
    with pytest.raises(errors.NotFoundError):
        client.get_task(queue, "b3")


def test_ndjson_batches_name_items_by_line(client):
    queue = pull_queue(client)
    out = client.create_tasks_ndjson(queue, [{"task_id": "n1"}, {"task_id": "n2", "tag": "bad tag"}]).value
    assert [r["status"] for r in out["results"]] == [201, 400]
    assert out["results"][1]["problem"]["extensions"]["errors"][0]["field"].startswith("line[2]")
    with pytest.raises(errors.InvalidArgumentError):
        client.create_tasks_ndjson(queue, b'{"task_id": "n3"}\n{"task_id": "n4", "tag": "bad tag"}\n', atomic=True)
    assert [t["task_id"] for t in client.iter_tasks(queue)] == ["n1"]


def test_wait_ms_answers_200_with_the_final_task_or_202_as_it_is(server, client):
    queue = unique("push")
    client.create_queue({"name": queue})
    done = client.create_task(queue, {"task_id": "w1", "target": push_target(server)}, wait_ms=20_000)
    assert done.status == 200
    assert done["state"] == "succeeded"
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    later = client.create_task(queue, {"task_id": "w2", "target": push_target(server), "schedule_time": tomorrow}, wait_ms=50)
    assert later.status == 202
    assert later["state"] == "scheduled"


def test_redrive_runs_a_failed_task_again(client):
    queue = pull_queue(client, retry_config={"max_attempts": 1})
    client.create_task(queue, {"task_id": "r1"})
    claimed = client.claim_tasks(queue, max_tasks=1).value["tasks"]
    assert [t["task_id"] for t in claimed] == ["r1"]
    failed = client.fail_task(queue, "r1", claimed[0]["lease"]["attempt_id"], error="boom")
    assert failed["state"] == "failed"
    again = client.redrive_task(queue, "r1")
    assert again["state"] == "queued"
    with pytest.raises(errors.FailedPreconditionError):
        client.redrive_task(queue, "r1")
    assert client.redrive_tasks(queue, state="failed")["redriven"] == 0
    dry = client.redrive_tasks(queue, id_prefix="r", dry_run=True)
    assert (dry["redriven"], dry["matching"]) == (0, 0)


def test_pull_routes_lease_heartbeat_release_and_end(client):
    queue = pull_queue(client)
    client.create_tasks(queue, [{"task_id": "x1", "payload": {"json": {"n": 1}}}, {"task_id": "x2"}])
    one = client.claim_task(queue, "x1", lease_s=30).value
    attempt = one["lease"]["attempt_id"]
    with pytest.raises(errors.WorkAlreadyClaimedError):
        client.claim_task(queue, "x1")
    assert client.heartbeat_task(queue, "x1", attempt, lease_s=60)["state"] == "running"
    released = client.release_task(queue, "x1", attempt)
    assert released["state"] == "queued"
    with pytest.raises(errors.LeaseLostError):
        client.complete_task(queue, "x1", attempt, result={"late": True})
    both = client.claim_tasks(queue, max_tasks=5).value["tasks"]
    ends = [{"task_id": t["task_id"], "attempt_id": t["lease"]["attempt_id"], "result": {"ok": t["task_id"]}} for t in both]
    out = client.end_tasks(queue, ends).value
    assert [r["status"] for r in out["results"]] == [200, 200]
    assert client.get_task(queue, "x2")["result"] == {"ok": "x2"}


def test_every_operation_of_the_document_has_a_method(client):
    document = client.openapi().value
    ids = {op["operationId"] for path in document["paths"].values() for op in path.values() if isinstance(op, dict) and "operationId" in op}
    assert ids == set(OPERATIONS), (ids ^ set(OPERATIONS))
    for name in OPERATIONS.values():
        assert callable(getattr(idem.Client, name)) and callable(getattr(idem.AsyncClient, name))


def test_every_problem_code_of_the_document_has_a_class(client):
    document = client.openapi().value
    codes = set()
    for path in document["paths"].values():
        for op in path.values():
            if not isinstance(op, dict):
                continue
            for answer in op.get("responses", {}).values():
                schema = answer.get("content", {}).get("application/problem+json", {}).get("schema", {})
                codes.update(schema.get("properties", {}).get("type", {}).get("enum", []))
    assert codes, "the document lists problem codes"
    missing = codes - set(errors.PROBLEM_CLASSES)
    assert not missing, missing


def test_jobs_tenancy_webhooks_and_discovery(server, client):
    job = unique("job")
    made = client.create_job({"name": job, "schedule": "0 3 * * *", "target": push_target(server)})
    assert made.status == 201 and made["next_run_time"]
    assert client.update_job(job, {"schedule": "0 4 * * *"})["schedule"] == "0 4 * * *"
    assert client.pause_job(job)["state"] == "paused"
    assert client.resume_job(job)["state"] == "enabled"
    run = client.run_job(job).value
    assert client.get_job_run(job, run["run_id"])["run_id"] == run["run_id"]
    # The manual run is due now: its attempt is listed once it starts.
    deadline = time.monotonic() + 10
    while not (attempts := list(client.iter_job_run_attempts(job, run["run_id"]))):
        assert time.monotonic() < deadline, "the run's attempt never appeared"
        time.sleep(0.05)
    assert attempts[0]["attempt"] == 1
    assert run["run_id"] in [r["run_id"] for r in client.iter_job_runs(job)]
    assert job in [j["name"] for j in client.iter_jobs()]
    preview = client.preview_schedule("0 12 * * *", time_zone="UTC", after="2026-10-16T00:00:00Z", count=2)
    assert preview["times"] == ["2026-10-16T12:00:00Z", "2026-10-17T12:00:00Z"]
    client.delete_job(job)
    with pytest.raises(errors.NotFoundError):
        client.get_job(job)

    who = unique("svc")
    client.create_principal(who, role="writer")
    key = client.create_api_key(who).value
    assert key["key"] and key["principal"] == who
    assert client.get_api_key(who, key["id"])["id"] == key["id"]
    assert [k["id"] for k in client.iter_api_keys(who)] == [key["id"]]
    with idem.Client(server.base_url, key["key"]) as writer:
        with pytest.raises(errors.PermissionDeniedError):
            writer.create_queue({"name": unique("q")})
    client.revoke_api_key(who, key["id"])
    assert who in [p["name"] for p in client.iter_principals()]

    secrets = client.list_signing_secrets()["secrets"]
    assert secrets and secrets[0]["secret"].startswith("whsec_")
    assert client.get_signing_secret(secrets[0]["id"])["id"] == secrets[0]["id"]

    hook = client.create_webhook("http://127.0.0.1:9/events", ["task.failed"]).value
    assert hook["id"] in [h["id"] for h in client.iter_webhooks()]
    assert client.get_webhook(hook["id"])["url"] == "http://127.0.0.1:9/events"
    client.delete_webhook(hook["id"])

    assert client.readyz().value["status"] == "ready"
    assert "idem" in client.metrics().value
    assert client.get_openid_configuration()["issuer"] == server.base_url
    assert "keys" in client.get_jwks().value


def test_grouped_tasks_take_turns_within_the_group_limit_and_are_listed(client):
    queue = pull_queue(client)
    assert client.update_queue(queue, {"group_concurrency": 1})["group_concurrency"] == 1
    for task_id, group, priority in [("a1", "acct:a", 0), ("a2", "acct:a", 5), ("b1", "acct:b", 0)]:
        made = client.create_task(queue, {"task_id": task_id, "group": group, "priority": priority})
        assert (made["group"], made["priority"]) == (group, priority)
    claimed = sorted(t["task_id"] for t in client.claim_tasks(queue, max_tasks=10).value["tasks"])
    assert claimed == ["a2", "b1"], "one of each group, the higher priority first"
    page = client.list_queue_groups(queue, id_prefix="acct:").value
    assert page["items"] == [
        {"group": "acct:a", "running": 1, "due": 1, "scheduled": 0},
        {"group": "acct:b", "running": 1, "due": 0, "scheduled": 0},
    ]
    assert [g["group"] for g in client.iter_queue_groups(queue, limit=1)] == ["acct:a", "acct:b"]
    assert client.get_queue(queue)["stats"]["groups_with_due"] == 1
    with pytest.raises(errors.InvalidArgumentError) as bad:
        client.create_task(queue, {"group": "a b"})
    assert [f["field"] for f in bad.value.errors] == ["group"]


def test_queue_routes(client):
    queue = pull_queue(client)
    assert client.get_queue(queue)["mode"] == "pull"
    assert client.update_queue(queue, {"dedup_window_s": 60})["dedup_window_s"] == 60
    assert client.pause_queue(queue)["state"] == "paused"
    assert client.resume_queue(queue)["state"] == "running"
    client.create_task(queue, {"task_id": "c1"})
    assert client.purge_queue(queue).status == 200
    assert client.get_task(queue, "c1")["state"] == "cancelled"
    assert queue in [q["name"] for q in client.iter_queues(limit=1000)]
    client.delete_queue(queue)


def test_an_upload_is_sent_as_a_file_part(client):
    queue = pull_queue(client)
    task = client.create_task(queue, {"task_id": "u1"}, upload=(b"\x00\x01binary", "application/octet-stream")).value
    assert task["payload"]["body_base64"] == "AAFiaW5hcnk="


def test_in_progress_and_unavailable_answers_are_retried_under_one_key_after_retry_after():
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("idempotency-key"))
        if len(seen) == 1:
            return httpx.Response(409, headers={"Retry-After": "1"}, json={"type": "IDEMPOTENCY_KEY_IN_PROGRESS", "status": 409, "title": "Conflict"})
        if len(seen) == 2:
            return httpx.Response(503, json={"type": "UNAVAILABLE", "status": 503, "title": "Service Unavailable"})
        if len(seen) == 3:
            return httpx.Response(429, json={"type": "RATE_LIMITED", "status": 429, "title": "Too Many Requests"})
        return httpx.Response(201, headers={"Idempotent-Replayed": "true"}, json={"name": "q"})

    policy = idem.RetryPolicy(initial_backoff=0.01, max_backoff=0.02)
    with idem.Client("http://idem.test", "k", retry=policy, transport=httpx.MockTransport(answer)) as c:
        started = time.monotonic()
        made = c.create_queue({"name": "q"})
        elapsed = time.monotonic() - started
    assert made.attempts == 4 and made.replayed
    assert len(set(seen)) == 1 and seen[0] == made.idempotency_key
    assert elapsed >= 1.0, "Retry-After was honoured"


def test_a_quota_and_other_refusals_are_not_retried():
    calls = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(429, json={"type": "RESOURCE_EXHAUSTED", "status": 429, "title": "x", "extensions": {"limit": "queues_per_org"}})

    with idem.Client("http://idem.test", "k", transport=httpx.MockTransport(answer)) as c:
        with pytest.raises(errors.ResourceExhaustedError) as caught:
            c.create_queue({"name": "q"})
    assert len(calls) == 1 and caught.value.extensions["limit"] == "queues_per_org"


def test_a_refused_connection_is_a_transport_error_after_the_attempts():
    # A port nothing listens on.
    dead = f"http://127.0.0.1:{free_port()}"
    with idem.Client(dead, "k", retry=idem.RetryPolicy(max_attempts=3, initial_backoff=0.01)) as c:
        with pytest.raises(idem.TransportError) as caught:
            c.create_queue({"name": "q"})
    assert caught.value.attempts == 3 and caught.value.idempotency_key
