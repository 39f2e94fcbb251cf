"""idem-guard for Python: exactly-once effects in the handler.

Run keys (:mod:`.keys`), the claim/finish protocol with lease renewal
(:class:`Guard`), stores that share idem-guard's tables and keys
(:class:`MemoryStore`, :class:`PostgresStore`, :class:`RedisStore`) and ASGI
middleware (:class:`GuardMiddleware`).
"""

from .asgi import GuardMiddleware
from .guard import Ended, Guard, RunResult
from .keys import IdentitySource, KeyConfig, Request, RunKey, Scope
from .stores import Claim, ClaimResult, MemoryStore, Outcome, PostgresStore, RedisStore, StoreError, Terms

__all__ = [
    "Claim",
    "ClaimResult",
    "Ended",
    "Guard",
    "GuardMiddleware",
    "IdentitySource",
    "KeyConfig",
    "MemoryStore",
    "Outcome",
    "PostgresStore",
    "RedisStore",
    "Request",
    "RunKey",
    "RunResult",
    "Scope",
    "StoreError",
    "Terms",
]
