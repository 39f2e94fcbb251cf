"""Verifying that a delivery comes from Idem: the Standard Webhooks
signature (``Webhook-Id``, ``Webhook-Timestamp``, ``Webhook-Signature``) and
``Idem-Target-Signature``, which binds the method, path and query as Idem
sent them, so that a captured delivery cannot be replayed to another route.

Secrets are the organization's signing secrets (``GET /v1/signing-secrets``),
written ``whsec_<base64>``; pass every one that is valid during a rotation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Iterable, Mapping, Sequence, Union

__all__ = ["SignatureError", "verify", "verify_target", "sign", "sign_target", "DEFAULT_TOLERANCE"]

# How far a timestamp may be from now, either way.
DEFAULT_TOLERANCE = 5 * 60
# Bounds that refuse a list made to cost work before its sender is known.
MAX_SIGNATURE_LIST_BYTES = 4096
MAX_SIGNATURES = 32

Headers = Union[Mapping[str, str], Sequence[tuple[str, str]]]


class SignatureError(ValueError):
    """The delivery's signature is missing, stale or wrong: answer 401."""


def _key(secret: Union[str, bytes]) -> bytes:
    if isinstance(secret, bytes):
        return secret
    text = secret.strip()
    if not text.startswith("whsec_"):
        raise ValueError("a signing secret starts with whsec_")
    key = base64.b64decode(text[len("whsec_") :], validate=True)
    if not key:
        raise ValueError("the signing key is empty")
    return key


def _single(headers: Headers, name: str) -> str:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    values = [v for k, v in pairs if k.lower() == name]
    if not values:
        raise SignatureError(f"missing {name} header")
    if len(values) > 1:
        raise SignatureError(f"{name} header is sent more than once")
    value = values[0].strip()
    if not value:
        raise SignatureError(f"missing {name} header")
    return value


def _candidates(signatures: str) -> list[bytes]:
    if len(signatures) > MAX_SIGNATURE_LIST_BYTES:
        raise SignatureError("the signature list is too long")
    entries = signatures.split()
    if len(entries) > MAX_SIGNATURES:
        raise SignatureError("the signature list is too long")
    tags = []
    for entry in entries:
        version, _, encoded = entry.partition(",")
        if version != "v1":
            continue
        try:
            tag = base64.b64decode(encoded, validate=True)
        except ValueError:
            continue
        if len(tag) == 32:
            tags.append(tag)
    return tags


def _sign(key: bytes, message: bytes) -> str:
    return "v1," + base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode()


def sign(secret: Union[str, bytes], msg_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``."""
    return _sign(_key(secret), f"{msg_id}.{timestamp}.".encode() + body)


def _target_message(msg_id: str, timestamp: str, method: str, path_and_query: str, body: bytes) -> bytes:
    return f"{msg_id}.{timestamp}.{method}.{path_and_query}.{hashlib.sha256(body).hexdigest()}".encode()


def sign_target(secret: Union[str, bytes], msg_id: str, timestamp: int, method: str, path_and_query: str, body: bytes) -> str:
    """``Idem-Target-Signature``'s ``v1,<base64 HMAC-SHA256 of
    "id.timestamp.METHOD.path?query.hex(SHA-256(body))">``."""
    return _sign(_key(secret), _target_message(msg_id, str(timestamp), method, path_and_query, body))


def _matches(keys: Iterable[bytes], message: bytes, tags: list[bytes]) -> bool:
    for key in keys:
        mac = hmac.new(key, message, hashlib.sha256).digest()
        if any(hmac.compare_digest(mac, tag) for tag in tags):
            return True
    return False


def verify(secrets: Sequence[Union[str, bytes]], headers: Headers, body: bytes, *, tolerance: float = DEFAULT_TOLERANCE, now: float | None = None) -> str:
    """Checks the Standard Webhooks signature of a delivery; returns its
    signed ``webhook-id`` (the run key Idem sent) or raises
    :class:`SignatureError`."""
    return _verify(secrets, headers, body, tolerance, now)[0]


def _verify(secrets: Sequence[Union[str, bytes]], headers: Headers, body: bytes, tolerance: float, now: float | None) -> tuple[str, str]:
    """:func:`verify`, answering the signed id and timestamp text."""
    msg_id = _single(headers, "webhook-id")
    timestamp = _single(headers, "webhook-timestamp")
    signatures = _single(headers, "webhook-signature")
    if not timestamp.isdigit():
        raise SignatureError("Webhook-Timestamp is not Unix seconds")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise SignatureError("Webhook-Timestamp is outside the tolerated window")
    tags = _candidates(signatures)
    # The timestamp is signed as the text it was sent as.
    if not _matches((_key(s) for s in secrets), f"{msg_id}.{timestamp}.".encode() + body, tags):
        raise SignatureError("no valid signature")
    return msg_id, timestamp


def verify_target(secrets: Sequence[Union[str, bytes]], headers: Headers, method: str, path_and_query: str, body: bytes, *, required: bool = True, tolerance: float = DEFAULT_TOLERANCE, now: float | None = None) -> str:
    """Checks both signatures: the Standard Webhooks one, then
    ``Idem-Target-Signature`` against the request's method and its path and
    query as received (``/hooks/charge?x=1``). Without ``required`` a
    delivery lacking the header passes on its first signature alone.
    Returns the signed ``webhook-id``."""
    msg_id, timestamp = _verify(secrets, headers, body, tolerance, now)
    try:
        signatures = _single(headers, "idem-target-signature")
    except SignatureError:
        if required:
            raise
        return msg_id
    tags = _candidates(signatures)
    if not _matches((_key(s) for s in secrets), _target_message(msg_id, timestamp, method, path_and_query or "/", body), tags):
        raise SignatureError("Idem-Target-Signature does not match this request's method, path and query")
    return msg_id
