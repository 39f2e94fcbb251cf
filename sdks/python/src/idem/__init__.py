"""Idem's Python client library.

- :class:`Client` / :class:`AsyncClient`: every route of the API, with safe
  retries (one ``Idempotency-Key`` per logical call) and typed problems.
- :class:`Worker` / :class:`AsyncWorker`: pull-queue workers.
- :mod:`idem.webhooks` and :mod:`idem.oidc`: verifying a delivery.
- :mod:`idem.guard`: exactly-once handlers (ASGI middleware and stores).
"""

from ._core import IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, REQUEST_ID, Response, RetryPolicy, new_idempotency_key
from .client import AsyncClient, Client
from .errors import IdemError, ProblemError, TransportError
from .worker import AsyncWorker, Worker

__all__ = [
    "AsyncClient",
    "AsyncWorker",
    "Client",
    "IDEMPOTENCY_KEY",
    "IDEMPOTENT_REPLAYED",
    "IdemError",
    "ProblemError",
    "REQUEST_ID",
    "Response",
    "RetryPolicy",
    "TransportError",
    "Worker",
    "new_idempotency_key",
]
__version__ = "0.1.0"
