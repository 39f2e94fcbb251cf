"""The guard on real stores (in-memory, PostgreSQL, Redis), under Starlette
and FastAPI, and beside idem-guard itself (``idem proxy``) on one store."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from collections import Counter

import httpx
import pytest
from fastapi import FastAPI, Request
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from idem import webhooks
from idem.guard import GuardMiddleware, MemoryStore, PostgresStore, RedisStore, RunKey
from idem.oidc import OidcVerifier

from conftest import REDIS_URL, free_port, idem_bin, stop, wait_ready
from receiver import Receiver
from test_verify import TESTDATA, _rs256


class Backend:
    """Opens stores on one backend: each store its own connection, as two
    processes guarding one service would have."""

    def __init__(self, kind: str, database_url: str):
        self.kind = kind
        self.database_url = database_url
        self.prefix = f"idem:pytest:{uuid.uuid4().hex[:8]}:"
        self._memory = MemoryStore()
        self._closers: list = []

    async def open(self):
        if self.kind == "memory":
            return self._memory
        if self.kind == "postgres":
            import psycopg

            conn = await psycopg.AsyncConnection.connect(self.database_url, autocommit=True)
            self._closers.append(conn.close)
            store = PostgresStore(conn)
            await store.create_schema()
            return store
        import redis.asyncio as redis

        client = redis.Redis.from_url(REDIS_URL)
        self._closers.append(client.aclose)
        return RedisStore(client, prefix=self.prefix)

    async def close(self):
        for close in self._closers:
            await close()
        if self.kind == "redis":
            import redis.asyncio as redis

            client = redis.Redis.from_url(REDIS_URL)
            keys = [k async for k in client.scan_iter(match=self.prefix + "*")]
            if keys:
                await client.delete(*keys)
            await client.aclose()


@pytest.fixture(params=["memory", "postgres", "redis"])
async def backend(request, guard_database):
    b = Backend(request.param, guard_database)
    yield b
    await b.close()


def guarded_app(store, runs: Counter, *, delay: float = 0.0, status: int = 200, lease: float = 300.0, claims: list | None = None, **kw):
    async def charge(request):
        claim = request.state.idem_claim
        if claims is not None:
            claims.append(claim)
        runs[str(claim.key)] += 1
        await asyncio.sleep(delay)
        runs["finished"] += 1
        return JSONResponse({"charged": True, "fence": claim.fence}, status_code=status)

    app = Starlette(routes=[Route("/charge", charge, methods=["POST"])])
    return GuardMiddleware(app, store, lease=lease, **kw)


def client_of(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://guarded")


async def test_concurrent_duplicate_deliveries_run_the_handler_once(backend):
    runs: Counter = Counter()
    apps = [guarded_app(await backend.open(), runs, delay=0.5) for _ in range(2)]
    key = "pay-" + uuid.uuid4().hex
    clients = [client_of(a) for a in apps]
    answers = await asyncio.gather(*(clients[i % 2].post("/charge", headers={"Idempotency-Key": key}) for i in range(8)))
    statuses = Counter(a.status_code for a in answers)
    assert statuses == {200: 1, 409: 7}, statuses
    assert runs["finished"] == 1
    busy = next(a for a in answers if a.status_code == 409)
    assert busy.json()["type"] == "IDEMPOTENCY_KEY_IN_PROGRESS" and busy.headers["retry-after"] == "1"
    assert busy.json()["request_id"] == busy.headers["idem-request-id"]

    again = await clients[1].post("/charge", headers={"Idempotency-Key": key})
    assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
    run_key = RunKey.from_parts([b"idempotency-key", key.encode()])
    assert again.json() == {"status": "duplicate", "run_key": run_key}
    assert runs["finished"] == 1
    for c in clients:
        await c.aclose()


async def test_a_failed_run_is_released_for_the_next_delivery(backend):
    store = await backend.open()
    runs: Counter = Counter()
    key = "k-" + uuid.uuid4().hex
    async with client_of(guarded_app(store, runs, status=500)) as failing:
        assert (await failing.post("/charge", headers={"Idempotency-Key": key})).status_code == 500
    assert await store.inspect(RunKey.of_signed_message(key)) is None, "failure deletes the record"
    async with client_of(guarded_app(store, runs)) as working:
        ok = await working.post("/charge", headers={"Idempotency-Key": key})
    assert ok.status_code == 200 and ok.json()["charged"]
    state, _, fence = await store.inspect(RunKey.of_signed_message(key))
    assert state == "completed" and ok.json()["fence"] == fence
    assert runs["finished"] == 2


async def test_a_handler_slower_than_its_lease_keeps_its_claim(backend):
    runs: Counter = Counter()
    app = guarded_app(await backend.open(), runs, delay=1.2, lease=0.3)
    key = "slow-" + uuid.uuid4().hex
    async with client_of(app) as c:
        first = asyncio.create_task(c.post("/charge", headers={"Idempotency-Key": key}))
        await asyncio.sleep(0.8)  # well past the 0.3 s lease
        late = await c.post("/charge", headers={"Idempotency-Key": key})
        assert late.status_code == 409, "the renewed claim still holds the run"
        assert (await first).status_code == 200
    assert runs["finished"] == 1


async def test_a_claim_lost_while_running_answers_lease_lost_and_records_nothing(backend):
    store = await backend.open()
    runs: Counter = Counter()
    claims: list = []
    app = guarded_app(store, runs, delay=2.0, lease=0.3, claims=claims)
    key = "lost-" + uuid.uuid4().hex
    async with client_of(app) as c:
        answer = asyncio.create_task(c.post("/charge", headers={"Idempotency-Key": key}))
        while not claims:
            await asyncio.sleep(0.01)
        # Another party ends the run under the handler's feet.
        assert await store.finish(claims[0], False)
        lost = await answer
    assert lost.status_code == 409 and lost.json()["type"] == "LEASE_LOST"
    assert runs["finished"] == 0, "the handler was stopped"
    assert await store.inspect(claims[0].key) is None


async def test_a_request_without_identity_is_refused_before_anything_runs():
    runs: Counter = Counter()
    async with client_of(guarded_app(MemoryStore(), runs)) as c:
        answer = await c.post("/charge")
    assert answer.status_code == 400 and answer.json()["type"] == "INVALID_ARGUMENT"
    assert not runs


async def test_fastapi_signed_deliveries_are_keyed_by_their_webhook_id():
    secret = "whsec_" + "c2VjcmV0LWtleS1mb3ItdGVzdHM="
    runs: Counter = Counter()
    api = FastAPI()
    api.add_middleware(GuardMiddleware, store=MemoryStore(), signing_secrets=[secret])

    @api.post("/hooks/charge")
    async def charge(request: Request):
        runs[await request.body()] += 1
        return {"fence": request.state.idem_claim.fence}

    body = b'{"amount":100}'
    now = int(time.time())

    def signed(msg_id: str, path: str = "/hooks/charge") -> dict:
        return {
            "webhook-id": msg_id,
            "webhook-timestamp": str(now),
            "webhook-signature": webhooks.sign(secret, msg_id, now, body),
            "idem-target-signature": webhooks.sign_target(secret, msg_id, now, "POST", path, body),
            "content-type": "application/json",
        }

    async with client_of(api) as c:
        first = await c.post("/hooks/charge", content=body, headers={**signed("msg_1"), "Idempotency-Key": "msg_1"})
        assert first.status_code == 200 and "fence" in first.json()
        # The same signed message with another unsigned key is the same run.
        dup = await c.post("/hooks/charge", content=body, headers={**signed("msg_1"), "Idempotency-Key": "other"})
        assert dup.status_code == 200 and dup.headers["idempotent-replayed"] == "true"
        assert (await c.post("/hooks/charge", content=body, headers={"Idempotency-Key": "x"})).status_code == 401
        forged = await c.post("/hooks/charge", content=b'{"amount":999}', headers=signed("msg_2"))
        assert forged.status_code == 401 and forged.json()["type"] == "UNAUTHENTICATED"
        moved = await c.post("/hooks/charge", content=body, headers=signed("msg_3", path="/hooks/refund"))
        assert moved.status_code == 401
    assert runs == {body: 1}


@pytest.fixture(params=["postgres", "redis"])
def shared_store(request, guard_database):
    return request.param


async def test_a_rust_guard_and_a_python_guard_see_each_others_claims(shared_store, guard_database, workdir):
    """``idem proxy`` (idem-guard) and this guard on one store: a run either
    completes is a duplicate to the other, and the proxy's upstream is not
    called for it."""
    backend = Backend(shared_store, guard_database)
    # The proxy keeps its keys under idem-guard's default prefix.
    backend.prefix = "idem:guard:"
    upstream = Receiver()
    port = free_port()
    store_url = guard_database if shared_store == "postgres" else REDIS_URL
    log = workdir / f"proxy-{shared_store}.log"
    proxy = subprocess.Popen(
        [idem_bin(), "proxy", "--listen", f"127.0.0.1:{port}", "--upstream", upstream.url, "--store", store_url, "--insecure-no-auth"],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        # The proxy has no health route: any answer (a 400 for a request
        # without identity) says it listens.
        wait_ready(f"http://127.0.0.1:{port}/", proxy, log, 30, name="idem proxy", any_answer=True)
        store = await backend.open()
        runs: Counter = Counter()
        python_key, rust_key = "py-" + uuid.uuid4().hex, "rs-" + uuid.uuid4().hex
        async with client_of(guarded_app(store, runs)) as py, httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as rs:
            assert (await py.post("/charge", headers={"Idempotency-Key": python_key})).status_code == 200
            seen_by_rust = await rs.post("/charge", headers={"Idempotency-Key": python_key})
            assert seen_by_rust.status_code == 200 and seen_by_rust.headers["idempotent-replayed"] == "true"
            assert seen_by_rust.json()["run_key"] == RunKey.of_signed_message(python_key)
            assert upstream.received == [], "the proxy did not call its upstream for a run Python completed"

            assert (await rs.post("/charge", headers={"Idempotency-Key": rust_key})).status_code == 200
            assert len(upstream.received) == 1
            seen_by_python = await py.post("/charge", headers={"Idempotency-Key": rust_key})
            assert seen_by_python.status_code == 200 and seen_by_python.headers["idempotent-replayed"] == "true"
        assert runs["finished"] == 1
    finally:
        stop(proxy)
        upstream.close()
        await backend.close()


class Served:
    """An ASGI app served by uvicorn on a free port, in a thread of its own."""

    def __init__(self, app):
        import threading

        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def close(self):
        self.server.should_exit = True
        self.thread.join(10)


def test_idem_retrying_a_slow_delivery_runs_the_guarded_handler_once(server, client):
    """Idem gives up on an attempt after its 1 s deadline and retries with
    the same run key while the handler still works: the guard answers the
    retries 409, then, once the run completed, 200 as a duplicate."""
    secrets = [s["secret"] for s in client.list_signing_secrets()["secrets"]]
    runs: Counter = Counter()

    async def charge(request):
        runs["started"] += 1
        await asyncio.sleep(2.5)
        runs["finished"] += 1
        return JSONResponse({"charged": True})

    audience = "guarded-" + uuid.uuid4().hex[:6]
    app = GuardMiddleware(
        Starlette(routes=[Route("/charge", charge, methods=["POST"])]),
        MemoryStore(),
        signing_secrets=secrets,
        require_target_signature=True,
        oidc=OidcVerifier(server.base_url, [audience], subjects=["org/default"]),
    )
    served = Served(app)
    try:
        queue = "guarded-" + uuid.uuid4().hex[:8]
        client.create_queue({"name": queue, "dispatch_deadline_s": 1, "retry_config": {"min_backoff_ms": 200, "max_backoff_ms": 500}})
        target = {"url": served.url + "/charge", "json": {"amount": 1}, "oidc": {"audience": audience}}
        done = client.create_task(queue, {"task_id": "slow", "target": target}, wait_ms=20_000)
        assert done.status == 200 and done["state"] == "succeeded", done.value
        assert done["attempt_count"] >= 2, "Idem retried the slow attempt"
        attempts = list(client.iter_task_attempts(queue, "slow"))
        assert attempts[-1]["status_code"] == 200
        assert any(a["status_code"] == 409 or a["status_code"] is None for a in attempts[:-1])
        assert runs == {"started": 1, "finished": 1}, "the handler ran once"
    finally:
        served.close()


async def test_a_token_without_idem_run_opens_one_run_only(guard_database):
    jwk = json.loads((TESTDATA / "rsa-test-key.jwk.json").read_text())
    issuer = Receiver(
        lambda r: (200, {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks"})
        if r.path.startswith("/.well-known/openid-configuration")
        else (200, {"keys": [jwk]})
    )
    backend = Backend("postgres", guard_database)
    try:
        now = int(time.time())
        token = _rs256({"iss": issuer.url, "aud": "svc", "sub": "scheduler@example", "iat": now, "exp": now + 300})
        runs: Counter = Counter()
        app = guarded_app(await backend.open(), runs, oidc=OidcVerifier(issuer.url, ["svc"]))
        auth = {"Authorization": "Bearer " + token}
        async with client_of(app) as c:
            assert (await c.post("/charge", headers={**auth, "Idempotency-Key": "run-a"})).status_code == 200
            dup = await c.post("/charge", headers={**auth, "Idempotency-Key": "run-a"})
            assert dup.status_code == 200 and dup.headers["idempotent-replayed"] == "true"
            replayed = await c.post("/charge", headers={**auth, "Idempotency-Key": "run-b"})
            assert replayed.status_code == 401 and replayed.json()["type"] == "UNAUTHENTICATED"
            assert (await c.post("/charge", headers={"Idempotency-Key": "run-c"})).status_code == 401
        assert runs["finished"] == 1
    finally:
        issuer.close()
        await backend.close()
