"""What the sync and async clients share: how a call is described, when it
is retried, and how an answer becomes a value or an exception. Nothing here
does I/O."""

from __future__ import annotations

import email.utils
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from .errors import DecodeError, ProblemError, TransportError, UnexpectedStatusError, problem_error

T = TypeVar("T")

IDEMPOTENCY_KEY = "Idempotency-Key"
IDEMPOTENT_REPLAYED = "Idempotent-Replayed"
REQUEST_ID = "Idem-Request-Id"


@dataclass(frozen=True)
class RetryPolicy:
    """How a call is retried.

    Retry ``n`` waits a random time between half and all of
    ``initial_backoff * 2**(n-1)`` (capped at ``max_backoff``), or the
    server's ``Retry-After`` when longer. The call gives up after
    ``max_attempts`` attempts, or before a wait that would end more than
    ``max_elapsed`` seconds after it began. Times are seconds.
    """

    max_attempts: int = 5
    max_elapsed: float = 30.0
    initial_backoff: float = 0.2
    max_backoff: float = 5.0
    attempt_timeout: float = 30.0

    @classmethod
    def none(cls) -> "RetryPolicy":
        return cls(max_attempts=1)

    def backoff(self, retry: int) -> float:
        return min(self.initial_backoff * (2 ** min(max(retry - 1, 0), 31)), self.max_backoff)

    def delay(self, retry: int, retry_after: float | None) -> float:
        # Jittered so that clients that failed together do not retry
        # together, and never shorter than the server asked.
        b = self.backoff(retry)
        return max(random.uniform(b / 2, b), retry_after or 0.0)


def new_idempotency_key() -> str:
    """A fresh key: a random UUID, one per logical call."""
    return str(uuid.uuid4())


def check_key(key: str) -> None:
    if not (1 <= len(key) <= 255) or any(not (0x20 <= ord(c) <= 0x7E) for c in key):
        raise ValueError("an idempotency key is 1-255 printable ASCII characters")


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as delay-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(at.timestamp() - time.time(), 0.0)


@dataclass
class Call:
    """One logical API call: retried as a whole under one idempotency key."""

    method: str
    segments: list[str]
    # A custom method after the last segment (``tasks:batch``): its colon is
    # part of the route, not data to encode.
    verb: str | None = None
    query: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    content_type: str | None = None
    files: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    idempotency_key: str | None = None
    # The pull work routes never replay, so they get no key.
    keyed: bool = True
    # Added to the attempt timeout, for calls the server holds on purpose.
    extra_time: float = 0.0
    # Outside /v1 (health, discovery, the document itself).
    root: bool = False
    # The answer is text, not JSON (metrics).
    raw: bool = False

    def path(self) -> str:
        p = ("" if self.root else "/v1") + "".join("/" + quote(s, safe="") for s in self.segments)
        return p + (":" + self.verb if self.verb else "")

    def params(self) -> dict[str, str]:
        out = {}
        for k, v in self.query.items():
            if v is None:
                continue
            out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return out

    def key(self) -> str | None:
        if self.method in ("POST", "PATCH") and self.keyed:
            key = self.idempotency_key or new_idempotency_key()
            check_key(key)
            return key
        return None

    def build(self, client: httpx.Client | httpx.AsyncClient, key: str | None, timeout: float) -> httpx.Request:
        headers = dict(self.headers)
        if key is not None:
            headers[IDEMPOTENCY_KEY] = key
        kwargs: dict[str, Any] = {}
        if self.files is not None:
            # Multipart is built afresh per attempt; its boundary differs,
            # which the server's fingerprint ignores.
            kwargs["files"] = self.files
        elif self.content is not None:
            kwargs["content"] = self.content
            if self.content_type:
                headers["Content-Type"] = self.content_type
        elif self.json is not None:
            kwargs["content"] = json.dumps(self.json, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        return client.build_request(
            self.method,
            self.path(),
            params=self.params(),
            headers=headers,
            timeout=timeout + self.extra_time,
            **kwargs,
        )


class Response(Generic[T]):
    """A success answer: the decoded ``value`` and what the answer said about
    it. ``response["field"]`` reads the value's fields."""

    __slots__ = ("value", "status", "replayed", "request_id", "idempotency_key", "attempts", "headers")

    def __init__(self, value: T, status: int, replayed: bool, request_id: str | None, idempotency_key: str | None, attempts: int, headers: httpx.Headers):
        self.value = value
        self.status = status
        # The server answered an earlier attempt's (or call's) result.
        self.replayed = replayed
        self.request_id = request_id
        self.idempotency_key = idempotency_key
        self.attempts = attempts
        self.headers = headers

    def __getitem__(self, name: str) -> Any:
        return self.value[name]  # type: ignore[index]

    def get(self, name: str, default: Any = None) -> Any:
        return self.value.get(name, default)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"Response(status={self.status}, replayed={self.replayed}, value={self.value!r})"


def problem_of(answer: httpx.Response) -> ProblemError | None:
    try:
        doc = answer.json()
    except ValueError:
        return None
    if not isinstance(doc, dict) or "type" not in doc or "status" not in doc:
        return None
    return problem_error(doc, retry_after=parse_retry_after(answer.headers.get("retry-after")), request_id=answer.headers.get(REQUEST_ID))


def transient(answer: httpx.Response) -> bool:
    """Whether an answer says "not now" rather than "no": 429 but a quota,
    5xx, and 409 ``IDEMPOTENCY_KEY_IN_PROGRESS`` (the first attempt is still
    running)."""
    s = answer.status_code
    if s >= 500:
        return True
    if s in (409, 429):
        p = problem_of(answer)
        code = p.code if p else None
        if s == 429:
            return code != "RESOURCE_EXHAUSTED"
        return code == "IDEMPOTENCY_KEY_IN_PROGRESS"
    return False


TRANSIENT_TRANSPORT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class Attempts:
    """The retry loop of one call without its I/O, shared by both clients:
    they send :meth:`request` and sleep for what :meth:`after` answers
    until it answers ``None``; :meth:`result` is then the call's outcome."""

    def __init__(self, call: Call, policy: RetryPolicy):
        self.call = call
        self.policy = policy
        self.key = call.key()
        self.started = time.monotonic()
        self.count = 0
        self.answer: httpx.Response | None = None
        self.failure: Exception | None = None

    def request(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        self.count += 1
        return self.call.build(client, self.key, self.policy.attempt_timeout)

    def after(self, answer: httpx.Response | None = None, failure: Exception | None = None) -> float | None:
        """Given the attempt's answer (read in full) or its transport
        failure: the wait before the next attempt, or ``None`` when none
        follows."""
        self.answer, self.failure = answer, failure
        retry_after = None
        if answer is not None:
            if not transient(answer):
                return None
            retry_after = parse_retry_after(answer.headers.get("retry-after"))
        if self.count >= max(self.policy.max_attempts, 1):
            return None
        wait = self.policy.delay(self.count, retry_after)
        if time.monotonic() - self.started + wait > self.policy.max_elapsed:
            return None
        return wait

    def result(self) -> "Response[Any]":
        """The last answer decoded, or the transport failure raised."""
        if self.answer is not None:
            return decode(self.answer, self.key, self.count, self.call.raw)
        raise TransportError(f"{self.call.method} {self.call.path()}: {self.failure}", self.count, self.key) from self.failure


def next_page(call: Call, page: Any) -> bool:
    """Points ``call`` at the page after ``page``; False on the last."""
    token = page.get("next_page_token")
    if not token:
        return False
    call.query["page_token"] = token
    return True


def decode(answer: httpx.Response, key: str | None, attempts: int, raw: bool = False) -> Response[Any]:
    request_id = answer.headers.get(REQUEST_ID)
    if answer.status_code >= 400:
        p = problem_of(answer)
        if p is not None:
            raise p
        raise UnexpectedStatusError(answer.status_code, answer.text, request_id)
    value: Any = None
    if raw:
        value = answer.text
    elif answer.content:
        try:
            value = answer.json()
        except ValueError as e:
            raise DecodeError(f"answer {answer.status_code} is not JSON: {e}") from e
    replayed = answer.headers.get(IDEMPOTENT_REPLAYED, "").strip().lower() == "true"
    return Response(value, answer.status_code, replayed, request_id, key, attempts, answer.headers)


def ndjson(tasks: Any) -> bytes:
    """Tasks as NDJSON: bytes pass as they are, an iterable of tasks is
    written one JSON object per line."""
    if isinstance(tasks, (bytes, bytearray)):
        return bytes(tasks)
    if isinstance(tasks, str):
        return tasks.encode()
    return b"".join(json.dumps(t, separators=(",", ":")).encode() + b"\n" for t in tasks)
