"""Run keys: the identity of one logical delivery, the same on every retry.

The encoding is idem-guard's, byte for byte, so that a Python, a Rust and a
TypeScript guard sharing one store agree on which deliveries are one run.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence, Union

# Bumped by idem-guard whenever the encoding changes, so that keys of two
# encodings never collide.
KEY_DOMAIN = b"idem-guard/run-key/v1"

IDEMPOTENCY_KEY = "idempotency-key"
CLOUD_SCHEDULER_JOB_NAME = "x-cloudscheduler-jobname"
CLOUD_SCHEDULER_SCHEDULE_TIME = "x-cloudscheduler-scheduletime"
CLOUD_TASKS_QUEUE_NAME = "x-cloudtasks-queuename"
CLOUD_TASKS_TASK_NAME = "x-cloudtasks-taskname"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _bytes(part: Union[str, bytes]) -> bytes:
    return part.encode() if isinstance(part, str) else bytes(part)


class RunKey(str):
    """64 lowercase hex characters: SHA-256 of the length-prefixed parts."""

    @classmethod
    def from_parts(cls, parts: Iterable[Union[str, bytes]]) -> "RunKey":
        # Each part is length-prefixed, and so is the list, so ["ab", "c"]
        # and ["a", "bc"] never give one key.
        parts = [_bytes(p) for p in parts]
        h = hashlib.sha256()
        h.update(len(KEY_DOMAIN).to_bytes(8, "big"))
        h.update(KEY_DOMAIN)
        h.update(len(parts).to_bytes(8, "big"))
        for part in parts:
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
        return cls(h.hexdigest())

    @classmethod
    def parse(cls, text: str) -> "RunKey | None":
        return cls(text) if _HEX64.match(text) else None

    @classmethod
    def of_signed_message(cls, webhook_id: Union[str, bytes]) -> "RunKey":
        """The key of a message whose signature was verified: its signed
        ``webhook-id`` alone, encoded as an unscoped ``Idempotency-Key``
        because Idem sends its run key as both headers."""
        return cls.from_parts([b"idempotency-key", _bytes(webhook_id)])


class KeyError_(ValueError):
    """No run key could be derived; the guard answers 400 and runs nothing."""


class MissingIdentity(KeyError_):
    pass


class RepeatedHeader(KeyError_):
    pass


class MissingScope(KeyError_):
    pass


class InvalidScheduleTime(KeyError_):
    pass


class RepeatedQueryParameter(KeyError_):
    pass


@dataclass(frozen=True)
class Request:
    """What key derivation reads of a request: raw header pairs (any case,
    repeats kept), the path as sent (still percent-encoded) and the raw
    query string."""

    headers: Sequence[tuple[Union[str, bytes], Union[str, bytes]]]
    path: str = "/"
    query: str = ""

    @classmethod
    def from_mapping(cls, headers: Mapping[str, str], path: str = "/", query: str = "") -> "Request":
        return cls(list(headers.items()), path, query)

    def header_values(self, name: str) -> list[bytes]:
        wanted = name.lower().encode()
        return [_bytes(v) for k, v in self.headers if _bytes(k).lower() == wanted]


def _single_header(request: Request, name: str) -> bytes | None:
    values = request.header_values(name)
    if not values:
        return None
    if len(values) > 1:
        raise RepeatedHeader(f"header {name} is sent more than once")
    trimmed = values[0].strip(b" \t\r\n\x0b\x0c")
    return trimmed or None


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))$"
)


def _schedule_instant(value: bytes) -> bytes:
    """A ScheduleTime as the instant it names, written as UTC RFC 3339 with
    the fraction only as long as it needs: spellings of one instant are one
    run, and the usual ``…T12:00:00Z`` stays as it came."""
    text = value.decode("ascii", errors="replace")
    invalid = f"X-CloudScheduler-ScheduleTime {text!r} is not an RFC 3339 instant"
    m = _RFC3339.match(text)
    if not m:
        raise InvalidScheduleTime(invalid)
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    fraction = m.group(7) or ""
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    try:
        local = _dt.datetime(year, month, day, hour, minute, second)
    except ValueError as e:
        raise InvalidScheduleTime(invalid) from e
    offset = 0
    if not m.group(8):
        sign = -1 if m.group(9) == "-" else 1
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            raise InvalidScheduleTime(invalid)
        offset = sign * (oh * 3600 + om * 60)
    utc = local - _dt.timedelta(seconds=offset)
    out = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if nanos:
        out += "." + f"{nanos:09d}".rstrip("0")
    return (out + "Z").encode()


def _percent_decode(s: str) -> bytes:
    raw = s.encode()
    out = bytearray()
    i = 0
    while i < len(raw):
        b = raw[i]
        if b == 0x25:  # '%'
            h = raw[i + 1 : i + 3]
            if len(h) == 2 and all(c in b"0123456789abcdefABCDEF" for c in h):
                out.append(int(h, 16))
                i += 3
                continue
            out.append(b)
            i += 1
        elif b == 0x2B:  # '+', form encoding
            out.append(0x20)
            i += 1
        else:
            out.append(b)
            i += 1
    return bytes(out)


class IdentitySource:
    """Where the identity of a delivery comes from."""

    def __init__(self, kind: str, name: str | None = None, extract: Callable[[Request], str | None] | None = None):
        self.kind = kind
        self.name = name
        self._extract = extract

    @classmethod
    def idempotency_key(cls) -> "IdentitySource":
        return cls("idempotency-key")

    @classmethod
    def cloud_scheduler(cls) -> "IdentitySource":
        return cls("cloud-scheduler")

    @classmethod
    def cloud_tasks(cls) -> "IdentitySource":
        return cls("cloud-tasks")

    @classmethod
    def header(cls, name: str) -> "IdentitySource":
        return cls("header", name.lower())

    @classmethod
    def custom(cls, name: str, extract: Callable[[Request], str | None]) -> "IdentitySource":
        return cls("custom", name, extract)

    def describe(self) -> str:
        return {
            "idempotency-key": "Idempotency-Key",
            "cloud-scheduler": "X-CloudScheduler-JobName with X-CloudScheduler-ScheduleTime",
            "cloud-tasks": "X-CloudTasks-QueueName with X-CloudTasks-TaskName",
            "header": f"header {self.name}",
            "custom": f"custom identity {self.name!r}",
        }[self.kind]

    def extract(self, request: Request) -> list[bytes] | None:
        if self.kind == "idempotency-key":
            k = _single_header(request, IDEMPOTENCY_KEY)
            return None if k is None else [b"idempotency-key", k]
        if self.kind == "cloud-scheduler":
            job = _single_header(request, CLOUD_SCHEDULER_JOB_NAME)
            at = _single_header(request, CLOUD_SCHEDULER_SCHEDULE_TIME)
            if job is None or at is None:
                return None
            return [b"cloud-scheduler", job, _schedule_instant(at)]
        if self.kind == "cloud-tasks":
            queue = _single_header(request, CLOUD_TASKS_QUEUE_NAME)
            task = _single_header(request, CLOUD_TASKS_TASK_NAME)
            if queue is None or task is None:
                return None
            return [b"cloud-tasks", queue, task]
        if self.kind == "header":
            assert self.name is not None
            v = _single_header(request, self.name)
            return None if v is None else [f"header:{self.name}".encode(), v]
        assert self._extract is not None
        v = self._extract(request)
        return [f"custom:{self.name}".encode(), v.encode()] if v else None


@dataclass(frozen=True)
class Scope:
    """Extra context joined into the key, because names repeat across
    projects, regions and tenants: a header, the n-th path segment (0-based)
    or a query parameter."""

    kind: str
    name: str = ""
    index: int = 0

    @classmethod
    def header(cls, name: str) -> "Scope":
        return cls("header", name.lower())

    @classmethod
    def path_segment(cls, index: int) -> "Scope":
        return cls("path", index=index)

    @classmethod
    def query_param(cls, name: str) -> "Scope":
        return cls("query", name)

    def label(self) -> str:
        if self.kind == "path":
            return f"path:{self.index}"
        return f"{self.kind}:{self.name}"

    def extract(self, request: Request) -> bytes:
        value: bytes | None
        if self.kind == "header":
            value = _single_header(request, self.name)
        elif self.kind == "path":
            segments = request.path.split("/")[1:]
            value = segments[self.index].encode() if self.index < len(segments) and segments[self.index] else None
        else:
            found: bytes | None = None
            for pair in (request.query or "").split("&"):
                k, _, v = pair.partition("=")
                if _percent_decode(k) == self.name.encode():
                    if found is not None:
                        raise RepeatedQueryParameter(f"query parameter {self.name!r} is sent more than once")
                    found = _percent_decode(v)
            value = found or None
        if value is None:
            raise MissingScope(f"scope {self.label()} is missing from the request")
        return value


def _default_sources() -> list[IdentitySource]:
    return [IdentitySource.idempotency_key(), IdentitySource.cloud_scheduler(), IdentitySource.cloud_tasks()]


@dataclass
class KeyConfig:
    """Identity sources tried in order (the first complete one wins), then
    every scope, all hashed together."""

    sources: list[IdentitySource] = field(default_factory=_default_sources)
    scopes: list[Scope] = field(default_factory=list)

    def derive(self, request: Request, signed_message_id: str | None = None) -> RunKey:
        # A verified signature keys the request by what was signed: nothing
        # unsigned beside it may give one message a second run.
        if signed_message_id is not None:
            return RunKey.of_signed_message(signed_message_id)
        parts: list[bytes] | None = None
        for source in self.sources:
            parts = source.extract(request)
            if parts is not None:
                break
        if parts is None:
            expected = ", or ".join(s.describe() for s in self.sources)
            raise MissingIdentity(f"no run identity: expected {expected}")
        for scope in self.scopes:
            parts.append(scope.label().encode())
            parts.append(scope.extract(request))
        return RunKey.from_parts(parts)
