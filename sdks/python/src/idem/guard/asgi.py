"""idem-guard as ASGI middleware (FastAPI, Starlette, any ASGI app).

Each request is keyed (see :mod:`idem.guard.keys`) and claimed before the
app runs:

- a run already completed: 200 ``{"status": "duplicate", "run_key": …}``
  with ``Idempotent-Replayed: true``; the app does not run;
- a run another attempt holds: 409 ``IDEMPOTENCY_KEY_IN_PROGRESS`` with
  ``Retry-After: 1`` (never 503: some senders retry 503 without counting);
- otherwise the app runs, its lease renewed every lease/3; a 2xx answer
  records the run completed, anything else (or an exception) deletes the
  record so a retry can claim at once. Should the claim be lost meanwhile,
  the app is cancelled and the answer is 409 ``LEASE_LOST``.

The app's answer is held until its outcome is recorded, so a sender never
sees a success the store does not know of. The claim is in
``scope["state"]["idem_claim"]`` (``request.state.idem_claim`` in
Starlette): its ``fence`` may be passed downstream.

With ``signing_secrets`` a valid Standard Webhooks signature is required
(401 otherwise) and the request is keyed by its signed ``webhook-id``
alone; ``Idem-Target-Signature`` is checked when present (required with
``require_target_signature``). With ``oidc`` an ID token is required, and
an Idem token's ``idem_run`` keys the request the same way.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any, Awaitable, Callable, Sequence

from .. import webhooks
from .guard import Ended, Guard
from .keys import IDEMPOTENCY_KEY, KeyConfig, KeyError_, Request, RunKey
from .stores import Store, StoreError

log = logging.getLogger("idem.guard")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024


class _Answer(Exception):
    def __init__(self, status: int, code: str, detail: str, headers: Sequence[tuple[str, str]] = ()):
        self.status, self.code, self.detail, self.headers = status, code, detail, list(headers)


def _store_unavailable() -> _Answer:
    return _Answer(503, "UNAVAILABLE", "the guard store is unavailable", [("Retry-After", "1")])


_TITLES = {400: "Bad Request", 401: "Unauthorized", 409: "Conflict", 413: "Payload Too Large", 503: "Service Unavailable"}


async def _send_json(send: Send, status: int, body: dict[str, Any], headers: Sequence[tuple[str, str]], content_type: str) -> None:
    data = json.dumps(body, separators=(",", ":")).encode()
    raw = [(b"content-type", content_type.encode()), (b"content-length", str(len(data)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


async def _problem(send: Send, path: str, answer: _Answer) -> None:
    # Carries request_id and instance as the API's problems do, so that a
    # refusal a sender saw can be found in the log.
    request_id = str(uuid.uuid4())
    doc = {"type": answer.code, "title": _TITLES.get(answer.status, ""), "status": answer.status, "detail": answer.detail, "request_id": request_id, "instance": path}
    log.info("answered a problem: %s %s %s (request %s)", answer.status, answer.code, answer.detail, request_id)
    await _send_json(send, answer.status, doc, [("Idem-Request-Id", request_id), *answer.headers], "application/problem+json")


class GuardMiddleware:
    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        store: Store,
        *,
        lease: float = 300.0,
        retention: float = 24 * 3600.0,
        keys: KeyConfig | None = None,
        signing_secrets: Sequence[str] | None = None,
        require_target_signature: bool = False,
        oidc: Any = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ):
        self.app = app
        self.guard = Guard(store, lease=lease, retention=retention)
        self.keys = keys or KeyConfig()
        self.secrets = list(signing_secrets or [])
        self.require_target_signature = require_target_signature
        self.oidc = oidc
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "/")
        try:
            key, receive = await self._key(scope, receive)
        except _Answer as answer:
            await _problem(send, path, answer)
            return

        held: list[dict[str, Any]] = []

        async def capture(message: dict[str, Any]) -> None:
            held.append(message)

        async def work(claim: Any) -> int:
            state = dict(scope.get("state") or {})
            state["idem_claim"] = claim
            await self.app({**scope, "state": state}, receive, capture)
            start = next((m for m in held if m["type"] == "http.response.start"), None)
            return start["status"] if start else 500

        try:
            result = await self.guard.run(key, work, lambda status: 200 <= status < 300)
        except StoreError as e:
            log.error("run %s: guard store unavailable: %s", key, e)
            await _problem(send, path, _store_unavailable())
            return
        if result.ended is Ended.DUPLICATE:
            await _send_json(send, 200, {"status": "duplicate", "run_key": str(key)}, [("Idempotent-Replayed", "true")], "application/json")
        elif result.ended is Ended.IN_PROGRESS:
            await _problem(send, path, _Answer(409, "IDEMPOTENCY_KEY_IN_PROGRESS", f"run {key} is being processed by another attempt", [("Retry-After", "1")]))
        elif result.ended is Ended.LEASE_LOST:
            detail = f"run {key} stopped being this attempt's while it ran (it was taken over or is gone); this attempt was stopped and its outcome not recorded"
            await _problem(send, path, _Answer(409, "LEASE_LOST", detail, [("Retry-After", "1")]))
        else:
            for message in held:
                await send(message)

    async def _key(self, scope: Scope, receive: Receive) -> tuple[RunKey, Receive]:
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])]
        raw_path = scope.get("raw_path") or scope.get("path", "/").encode()
        path = raw_path.decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        request = Request(headers, path, query)
        signed_id: str | None = None
        unbound_token: Any = None

        if self.oidc is not None:
            from ..oidc import OidcError, OidcUnavailable

            try:
                token = await self.oidc.verify_headers_async(headers)
            except OidcUnavailable as e:
                raise _Answer(503, "UNAVAILABLE", str(e), [("Retry-After", "1")]) from e
            except OidcError as e:
                raise _Answer(401, "UNAUTHENTICATED", str(e)) from e
            if token.idem_run is not None:
                sent = [v.strip() for k, v in headers if k.lower() == IDEMPOTENCY_KEY]
                if sent and sent != [token.idem_run]:
                    raise _Answer(401, "UNAUTHENTICATED", "Idempotency-Key differs from the token's idem_run")
                signed_id = token.idem_run
            else:
                unbound_token = token

        if self.secrets:
            body = await self._read_body(receive)
            try:
                target = path + ("?" + query if query else "")
                msg_id = webhooks.verify_target(self.secrets, headers, scope["method"], target, body, required=self.require_target_signature)
            except webhooks.SignatureError as e:
                raise _Answer(401, "UNAUTHENTICATED", str(e)) from e
            if signed_id is not None and signed_id != msg_id:
                raise _Answer(401, "UNAUTHENTICATED", "the token's idem_run differs from the signed webhook-id")
            signed_id = msg_id
            receive = _replay(body, receive)

        try:
            key = self.keys.derive(request, signed_message_id=signed_id)
        except KeyError_ as e:
            raise _Answer(400, "INVALID_ARGUMENT", str(e)) from e
        if unbound_token is not None and signed_id is None:
            # A token that names no run (Google's) opens the first run it is
            # shown with, until it expires: the same token naming another
            # run is a replay of a captured token.
            from ..oidc import DEFAULT_LEEWAY

            ttl = max(unbound_token.expires_at + DEFAULT_LEEWAY - time.time(), 1.0)
            try:
                bound = await self.guard.store.bind_token(unbound_token.digest, key, ttl)
            except StoreError as e:
                raise _store_unavailable() from e
            if bound != key:
                raise _Answer(401, "UNAUTHENTICATED", "this token already opened another run")
        return key, receive

    async def _read_body(self, receive: Receive) -> bytes:
        chunks = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _Answer(413, "PAYLOAD_TOO_LARGE", f"the body is larger than {self.max_body_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The app reads the body the signature was checked over."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
