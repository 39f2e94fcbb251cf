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
from typing import Any, AsyncIterator, Iterator, TypeVar

import httpx

from ._core import TRANSIENT_TRANSPORT, Attempts, Call, Response, RetryPolicy, next_page
from ._operations import Operations

__all__ = ["Client", "AsyncClient", "RetryPolicy", "Response"]

USER_AGENT = "idem-client-python/0.1.0"

H = TypeVar("H", httpx.Client, httpx.AsyncClient)


def _configured(http: H, base_url: str, api_key: str | None) -> H:
    """``http`` pointed at ``base_url``, sending this library's headers."""
    http.base_url = httpx.URL(base_url.rstrip("/"))
    http.headers["User-Agent"] = USER_AGENT
    if api_key:
        http.headers["Authorization"] = f"Bearer {api_key}"
    return http


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
        self._http = _configured(http_client or httpx.Client(transport=transport), base_url, api_key)

    def close(self) -> None:
        if self._own:
            self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _execute(self, call: Call) -> Response[Any]:
        attempts = Attempts(call, self.retry)
        while True:
            request = attempts.request(self._http)
            try:
                answer = self._http.send(request)
                answer.read()
            except TRANSIENT_TRANSPORT as e:
                wait = attempts.after(failure=e)
            else:
                wait = attempts.after(answer)
            if wait is None:
                return attempts.result()
            time.sleep(wait)

    def _paginate(self, call: Call) -> Iterator[Any]:
        while True:
            page = self._execute(call).value
            yield from page.get("items", [])
            if not next_page(call, page):
                return


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
        self._http = _configured(http_client or httpx.AsyncClient(transport=transport), base_url, api_key)

    async def aclose(self) -> None:
        if self._own:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _execute(self, call: Call) -> Response[Any]:  # type: ignore[override]
        attempts = Attempts(call, self.retry)
        while True:
            request = attempts.request(self._http)
            try:
                answer = await self._http.send(request)
                await answer.aread()
            except TRANSIENT_TRANSPORT as e:
                wait = attempts.after(failure=e)
            else:
                wait = attempts.after(answer)
            if wait is None:
                return attempts.result()
            await asyncio.sleep(wait)

    async def _paginate(self, call: Call) -> AsyncIterator[Any]:  # type: ignore[override]
        while True:
            page = (await self._execute(call)).value
            for item in page.get("items", []):
                yield item
            if not next_page(call, page):
                return
