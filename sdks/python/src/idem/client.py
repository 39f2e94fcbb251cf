"""The clients: :class:`Client` (blocking) and :class:`AsyncClient` (asyncio).

Safe retries: every POST and PATCH carries an ``Idempotency-Key``, one
fresh UUID per logical call and the same on each of its attempts, so that
the server runs the first attempt that reaches it and replays its result to
the others. Connection errors, timeouts, 429 (not a quota's
``RESOURCE_EXHAUSTED``), 5xx and 409 ``IDEMPOTENCY_KEY_IN_PROGRESS`` are
retried with jittered exponential backoff, honouring ``Retry-After``; any
other error is raised at once as the :class:`~idem.errors.ProblemError`
subclass its code names.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Iterator

import httpx

from ._core import TRANSIENT_TRANSPORT, Call, Response, RetryPolicy, decode, parse_retry_after, transient
from ._operations import Operations
from .errors import TransportError

__all__ = ["Client", "AsyncClient", "RetryPolicy", "Response"]

USER_AGENT = "idem-client-python/0.1.0"


def _headers(api_key: str | None) -> dict[str, str]:
    h = {"User-Agent": USER_AGENT}
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    return h


class Client(Operations):
    """A blocking client of the server at ``base_url``.

    ``transport`` and ``http_client`` are for tests and unusual networks;
    a client made with ``http_client`` leaves it open on :meth:`close`.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.retry = retry or RetryPolicy()
        self._own = http_client is None
        self._http = http_client or httpx.Client(transport=transport)
        self._http.base_url = httpx.URL(base_url.rstrip("/"))
        self._http.headers.update(_headers(api_key))

    def close(self) -> None:
        if self._own:
            self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _execute(self, call: Call) -> Response[Any]:
        key = call.key()
        policy = self.retry
        started = time.monotonic()
        attempts = 0
        while True:
            attempts += 1
            request = call.build(self._http, key, policy.attempt_timeout)
            try:
                answer = self._http.send(request)
                answer.read()
            except TRANSIENT_TRANSPORT as e:
                retry_after = None
                failure: Exception | None = e
                answer = None
            else:
                if not transient(answer):
                    return decode(answer, key, attempts, call.raw)
                retry_after = parse_retry_after(answer.headers.get("retry-after"))
                failure = None
            if attempts >= max(policy.max_attempts, 1):
                break
            wait = policy.delay(attempts, retry_after)
            if time.monotonic() - started + wait > policy.max_elapsed:
                break
            time.sleep(wait)
        if answer is not None:
            return decode(answer, key, attempts, call.raw)
        raise TransportError(f"{call.method} {call.path()}: {failure}", attempts, key) from failure

    def _paginate(self, call: Call) -> Iterator[Any]:
        while True:
            page = self._execute(call).value
            yield from page.get("items", [])
            token = page.get("next_page_token")
            if not token:
                return
            call.query["page_token"] = token


class AsyncClient(Operations):
    """The asyncio twin of :class:`Client`: the same methods, awaited; the
    ``iter_*`` methods are async generators."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.retry = retry or RetryPolicy()
        self._own = http_client is None
        self._http = http_client or httpx.AsyncClient(transport=transport)
        self._http.base_url = httpx.URL(base_url.rstrip("/"))
        self._http.headers.update(_headers(api_key))

    async def aclose(self) -> None:
        if self._own:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _execute(self, call: Call) -> Response[Any]:  # type: ignore[override]
        key = call.key()
        policy = self.retry
        started = time.monotonic()
        attempts = 0
        while True:
            attempts += 1
            request = call.build(self._http, key, policy.attempt_timeout)
            try:
                answer = await self._http.send(request)
                await answer.aread()
            except TRANSIENT_TRANSPORT as e:
                retry_after = None
                failure: Exception | None = e
                answer = None
            else:
                if not transient(answer):
                    return decode(answer, key, attempts, call.raw)
                retry_after = parse_retry_after(answer.headers.get("retry-after"))
                failure = None
            if attempts >= max(policy.max_attempts, 1):
                break
            wait = policy.delay(attempts, retry_after)
            if time.monotonic() - started + wait > policy.max_elapsed:
                break
            await asyncio.sleep(wait)
        if answer is not None:
            return decode(answer, key, attempts, call.raw)
        raise TransportError(f"{call.method} {call.path()}: {failure}", attempts, key) from failure

    async def _paginate(self, call: Call) -> AsyncIterator[Any]:  # type: ignore[override]
        while True:
            page = (await self._execute(call)).value
            for item in page.get("items", []):
                yield item
            token = page.get("next_page_token")
            if not token:
                return
            call.query["page_token"] = token
