"""Claim stores, each with an atomic claim: in-memory (tests), PostgreSQL and
Redis. The PostgreSQL and Redis stores use idem-guard's own tables, keys and
scripts, so a Rust, a TypeScript and a Python guard on one store see each
other's claims. "Now" is the store's clock, never this process's.
"""

from __future__ import annotations

import asyncio
import enum
import time
import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from .keys import RunKey


@dataclass(frozen=True)
class Terms:
    """``lease``: how long a claim survives a guard that died (renewed every
    lease/3 while the handler runs); ``retention``: how long a record is
    honoured. Seconds."""

    lease: float = 300.0
    retention: float = 24 * 3600.0

    def lease_us(self) -> int:
        return int(self.lease * 1_000_000)

    def retention_us(self) -> int:
        # Never shorter than the lease, so a live lease is never ignored as
        # expired.
        return int(max(self.retention, self.lease) * 1_000_000)


@dataclass(frozen=True)
class Claim:
    key: RunKey
    attempt_id: str
    # Grows with every claim of the key: pass it downstream so a store can
    # refuse a stale attempt's writes.
    fence: int


class Outcome(enum.Enum):
    CLAIMED = "claimed"
    COMPLETED = "completed"
    IN_PROGRESS = "in_progress"


@dataclass(frozen=True)
class ClaimResult:
    outcome: Outcome
    claim: Claim | None = None


class StoreError(Exception):
    """The store could not be reached or answered nonsense."""


class Store(Protocol):
    async def claim(self, key: RunKey, terms: Terms) -> ClaimResult: ...

    async def finish(self, claim: Claim, success: bool) -> bool:
        """Only while the record holds ``claim.attempt_id`` in progress:
        success marks it completed, failure deletes it. False: stale."""
        ...

    async def renew(self, claim: Claim, terms: Terms) -> bool:
        """Extends the lease while the record is still this attempt's;
        False once it is not (finished, taken over, expired, swept)."""
        ...

    async def bind_token(self, token: str, key: RunKey, ttl: float) -> RunKey:
        """Unless a live binding of ``token`` (a token's digest) exists,
        binds it to ``key`` for ``ttl`` seconds. Returns the key the token
        is bound to: a token without ``idem_run`` opens one run only."""
        ...

    async def inspect(self, key: RunKey) -> tuple[str, str, int] | None: ...


def _attempt_id() -> str:
    return str(uuid.uuid4())


def _next_fence(watermark: int | None, now_us: int) -> int:
    if watermark is None:
        return max(now_us, 1)
    return max(watermark + 1, now_us)


class MemoryStore:
    """In-process, for tests and single-process apps."""

    def __init__(self) -> None:
        self._runs: dict[str, dict[str, Any]] = {}
        self._fences: dict[str, int] = {}
        self._tokens: dict[str, tuple[RunKey, int]] = {}
        self._lock = asyncio.Lock()

    @staticmethod
    def _now() -> int:
        return time.time_ns() // 1000

    async def claim(self, key: RunKey, terms: Terms) -> ClaimResult:
        async with self._lock:
            now = self._now()
            rec = self._runs.get(key)
            if rec and rec["expire"] > now:
                if rec["state"] == "completed":
                    return ClaimResult(Outcome.COMPLETED)
                if rec["lease"] > now:
                    return ClaimResult(Outcome.IN_PROGRESS)
            fence = _next_fence(self._fences.get(key), now)
            self._fences[key] = fence
            attempt = _attempt_id()
            self._runs[key] = {"state": "in_progress", "attempt": attempt, "fence": fence, "lease": now + terms.lease_us(), "expire": now + terms.retention_us()}
            return ClaimResult(Outcome.CLAIMED, Claim(key, attempt, fence))

    async def finish(self, claim: Claim, success: bool) -> bool:
        async with self._lock:
            rec = self._runs.get(claim.key)
            if not rec or rec["state"] != "in_progress" or rec["attempt"] != claim.attempt_id:
                return False
            if success:
                rec["state"] = "completed"
            else:
                del self._runs[claim.key]
            return True

    async def renew(self, claim: Claim, terms: Terms) -> bool:
        async with self._lock:
            now = self._now()
            rec = self._runs.get(claim.key)
            if not rec or rec["state"] != "in_progress" or rec["attempt"] != claim.attempt_id or rec["expire"] <= now:
                return False
            rec["lease"] = max(rec["lease"], now + terms.lease_us())
            rec["expire"] = max(rec["expire"], now + terms.retention_us())
            return True

    async def bind_token(self, token: str, key: RunKey, ttl: float) -> RunKey:
        async with self._lock:
            now = self._now()
            bound = self._tokens.get(token)
            if bound and bound[1] > now:
                return bound[0]
            self._tokens[token] = (key, now + int(ttl * 1_000_000))
            return key

    async def inspect(self, key: RunKey) -> tuple[str, str, int] | None:
        rec = self._runs.get(key)
        if not rec or rec["expire"] <= self._now():
            return None
        return rec["state"], rec["attempt"], rec["fence"]


# --- PostgreSQL: idem-guard's tables and statements ---------------------

SCHEMA_LOCK = 0x1DE79A4D

PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS idem_guard_runs (
    key text PRIMARY KEY,
    state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
    attempt_id text NOT NULL,
    fence bigint NOT NULL,
    lease_expires timestamptz NOT NULL,
    expire_at timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_runs_expire ON idem_guard_runs (expire_at);
CREATE TABLE IF NOT EXISTS idem_guard_fences (
    key text PRIMARY KEY,
    fence bigint NOT NULL,
    expire_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_fences_expire ON idem_guard_fences (expire_at);
CREATE TABLE IF NOT EXISTS idem_guard_tokens (
    token text PRIMARY KEY,
    key text NOT NULL,
    expire_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idem_guard_tokens_expire ON idem_guard_tokens (expire_at);
"""


def _take_over(column: str) -> str:
    return (
        f"{column} = CASE WHEN r.expire_at <= EXCLUDED.claimed_at"
        f" OR (r.state = 'in_progress' AND r.lease_expires <= EXCLUDED.claimed_at)"
        f" THEN EXCLUDED.{column} ELSE r.{column} END"
    )


# One statement, so one atomic step. The fence upsert locks the key's
# watermark row until commit, so claims of one key run one after another;
# the record is rewritten only when it may be taken over, and RETURNING
# reports it either way: our attempt_id in it means we won.
PG_CLAIM = (
    """
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t),
fence AS (
    INSERT INTO idem_guard_fences AS f (key, fence, expire_at)
    SELECT %(key)s, GREATEST((extract(epoch FROM clock.t) * 1000000)::bigint, 1),
           clock.t + %(retention_us)s::bigint * interval '1 microsecond'
    FROM clock
    ON CONFLICT (key) DO UPDATE
        SET fence = GREATEST(f.fence + 1, EXCLUDED.fence),
            expire_at = GREATEST(f.expire_at, EXCLUDED.expire_at)
    RETURNING f.fence
)
INSERT INTO idem_guard_runs AS r
    (key, state, attempt_id, fence, lease_expires, expire_at, claimed_at)
SELECT %(key)s, 'in_progress', %(attempt)s, fence.fence,
       clock.t + %(lease_us)s::bigint * interval '1 microsecond',
       clock.t + %(retention_us)s::bigint * interval '1 microsecond',
       clock.t
FROM fence, clock
ON CONFLICT (key) DO UPDATE SET
"""
    + ",\n".join(
        "    " + _take_over(c)
        for c in ("state", "attempt_id", "fence", "lease_expires", "expire_at", "claimed_at")
    )
    + "\nRETURNING r.attempt_id, r.state, r.fence"
)

PG_FINISH_SUCCESS = """
UPDATE idem_guard_runs SET state = 'completed'
WHERE key = %(key)s AND attempt_id = %(attempt)s AND state = 'in_progress'"""

PG_FINISH_FAILURE = """
DELETE FROM idem_guard_runs
WHERE key = %(key)s AND attempt_id = %(attempt)s AND state = 'in_progress'"""

PG_RENEW = """
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t)
UPDATE idem_guard_runs r
SET lease_expires = GREATEST(r.lease_expires, clock.t + %(lease_us)s::bigint * interval '1 microsecond'),
    expire_at = GREATEST(r.expire_at, clock.t + %(retention_us)s::bigint * interval '1 microsecond')
FROM clock
WHERE r.key = %(key)s AND r.attempt_id = %(attempt)s AND r.state = 'in_progress' AND r.expire_at > clock.t"""

# A live binding is kept; one past its expiry is replaced.
PG_BIND_TOKEN = """
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS t)
INSERT INTO idem_guard_tokens AS b (token, key, expire_at)
SELECT %(token)s, %(key)s, clock.t + %(ttl_us)s::bigint * interval '1 microsecond' FROM clock
ON CONFLICT (token) DO UPDATE SET
    key = CASE WHEN b.expire_at <= (SELECT t FROM clock) THEN EXCLUDED.key ELSE b.key END,
    expire_at = CASE WHEN b.expire_at <= (SELECT t FROM clock)
        THEN EXCLUDED.expire_at ELSE b.expire_at END
RETURNING b.key"""

PG_INSPECT = """
SELECT state, attempt_id, fence FROM idem_guard_runs
WHERE key = %(key)s AND expire_at > clock_timestamp()"""


class PostgresStore:
    """idem-guard's PostgreSQL store over a connection the caller owns: a
    ``psycopg_pool.AsyncConnectionPool`` (anything with an async
    ``connection()`` context manager) or a single ``psycopg.AsyncConnection``,
    whose statements are then taken one at a time. Call :meth:`create_schema`
    once (it is idempotent and safe between nodes starting at once)."""

    def __init__(self, pool_or_connection: Any):
        self._source = pool_or_connection
        # A connection runs statements itself; a pool lends connections.
        self._single = hasattr(pool_or_connection, "execute")
        self._lock = asyncio.Lock()

    async def _run(self, sql: str, params: dict[str, Any] | None = None, *, fetch: bool = False, setup: str | None = None) -> Any:
        async def on(conn: Any) -> Any:
            async with conn.transaction():
                if setup:
                    await conn.execute(setup)
                cur = await conn.execute(sql, params)
                return await cur.fetchone() if fetch else cur.rowcount

        try:
            if self._single:
                async with self._lock:
                    return await on(self._source)
            async with self._source.connection() as conn:
                return await on(conn)
        except Exception as e:  # the driver's errors, whatever their class
            if type(e).__module__.startswith("psycopg"):
                raise StoreError(f"postgres: {e}") from e
            raise

    async def create_schema(self) -> None:
        # Concurrent CREATE TABLE IF NOT EXISTS can still fail on the
        # catalog's unique index: the same advisory lock as idem-guard's.
        await self._run(PG_SCHEMA, setup=f"SET LOCAL statement_timeout = 0; SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")

    async def claim(self, key: RunKey, terms: Terms) -> ClaimResult:
        attempt = _attempt_id()
        row = await self._run(PG_CLAIM, {"key": str(key), "attempt": attempt, "lease_us": terms.lease_us(), "retention_us": terms.retention_us()}, fetch=True)
        got_attempt, state, fence = row
        if got_attempt == attempt:
            return ClaimResult(Outcome.CLAIMED, Claim(key, attempt, int(fence)))
        return ClaimResult(Outcome.COMPLETED if state == "completed" else Outcome.IN_PROGRESS)

    async def finish(self, claim: Claim, success: bool) -> bool:
        sql = PG_FINISH_SUCCESS if success else PG_FINISH_FAILURE
        return await self._run(sql, {"key": str(claim.key), "attempt": claim.attempt_id}) == 1

    async def renew(self, claim: Claim, terms: Terms) -> bool:
        params = {"key": str(claim.key), "attempt": claim.attempt_id, "lease_us": terms.lease_us(), "retention_us": terms.retention_us()}
        return await self._run(PG_RENEW, params) == 1

    async def bind_token(self, token: str, key: RunKey, ttl: float) -> RunKey:
        row = await self._run(PG_BIND_TOKEN, {"token": token, "key": str(key), "ttl_us": max(int(ttl * 1_000_000), 1)}, fetch=True)
        return RunKey(row[0])

    async def inspect(self, key: RunKey) -> tuple[str, str, int] | None:
        row = await self._run(PG_INSPECT, {"key": str(key)}, fetch=True)
        return None if row is None else (row[0], row[1], int(row[2]))


# --- Redis: idem-guard's keys and Lua scripts ---------------------------

# Records and watermarks also expire natively this long after expire_at, so
# a deployment that never sweeps does not grow without bound.
BACKSTOP_MS = 60 * 60 * 1000

LUA_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
"""

# KEYS: run, fence, runs-by-expiry, fences-by-expiry
# ARGV: member (run key), attempt id, lease µs, retention µs, backstop ms
LUA_CLAIM = """
local rec = redis.call('HMGET', KEYS[1], 'state', 'lease', 'expire')
if rec[1] and tonumber(rec[3]) > now then
    if rec[1] == 'completed' then return {'completed'} end
    if tonumber(rec[2]) > now then return {'in_progress'} end
end
local expire = now + tonumber(ARGV[4])
local fence = now
local fence_expire = expire
local mark = redis.call('HMGET', KEYS[2], 'fence', 'expire')
if mark[1] then
    fence = math.max(tonumber(mark[1]) + 1, now)
    fence_expire = math.max(tonumber(mark[2]), expire)
end
if fence < 1 then fence = 1 end
local ttl = math.floor((fence_expire - now) / 1000) + tonumber(ARGV[5])
redis.call('HSET', KEYS[2], 'fence', fmt(fence), 'expire', fmt(fence_expire))
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('ZADD', KEYS[4], fmt(fence_expire), ARGV[1])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'in_progress', 'attempt', ARGV[2], 'fence', fmt(fence),
    'lease', fmt(now + tonumber(ARGV[3])), 'expire', fmt(expire))
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[4]) / 1000) + tonumber(ARGV[5]))
redis.call('ZADD', KEYS[3], fmt(expire), ARGV[1])
return {'claimed', fmt(fence)}
"""

# KEYS: run, runs-by-expiry
# ARGV: attempt id, 'success' | 'failure', member
LUA_FINISH = """
local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt')
if rec[1] ~= 'in_progress' or rec[2] ~= ARGV[1] then return 0 end
if ARGV[2] == 'success' then
    redis.call('HSET', KEYS[1], 'state', 'completed')
else
    redis.call('DEL', KEYS[1])
    redis.call('ZREM', KEYS[2], ARGV[3])
end
return 1
"""

# KEYS: run, runs-by-expiry
# ARGV: attempt id, lease µs, retention µs, backstop ms, member (run key)
LUA_RENEW = """
local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'lease', 'expire')
if rec[1] ~= 'in_progress' or rec[2] ~= ARGV[1] or tonumber(rec[4]) <= now then return 0 end
local lease = math.max(tonumber(rec[3]), now + tonumber(ARGV[2]))
local expire = math.max(tonumber(rec[4]), now + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'lease', fmt(lease), 'expire', fmt(expire))
redis.call('PEXPIRE', KEYS[1], math.floor((expire - now) / 1000) + tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], fmt(expire), ARGV[5])
return 1
"""

# KEYS: token
# ARGV: run key, ttl ms
LUA_BIND_TOKEN = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
return redis.call('GET', KEYS[1])
"""

# KEYS: run
LUA_INSPECT = """
local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'fence', 'expire')
if not rec[1] or tonumber(rec[4]) <= now then return {} end
return {rec[1], rec[2], rec[3]}
"""


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


class RedisStore:
    """idem-guard's Redis store over a ``redis.asyncio.Redis`` client the
    caller owns, every key under ``prefix`` (idem-guard's default:
    ``idem:guard:``). Each operation is one Lua script, so Redis runs it
    without interleaving; fine on one server or a replica set, not on
    Redis Cluster."""

    def __init__(self, client: Any, prefix: str = "idem:guard:"):
        self._redis = client
        self.prefix = prefix
        self._claim = client.register_script(LUA_NOW + LUA_CLAIM)
        self._finish = client.register_script(LUA_FINISH)
        self._renew = client.register_script(LUA_NOW + LUA_RENEW)
        self._inspect = client.register_script(LUA_NOW + LUA_INSPECT)
        self._bind_token = client.register_script(LUA_BIND_TOKEN)

    def _run_key(self, key: str) -> str:
        return f"{self.prefix}run:{key}"

    async def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        try:
            return await script(keys=keys, args=args)
        except Exception as e:
            if type(e).__module__.startswith("redis"):
                raise StoreError(f"redis: {e}") from e
            raise

    async def claim(self, key: RunKey, terms: Terms) -> ClaimResult:
        attempt = _attempt_id()
        keys = [self._run_key(key), f"{self.prefix}fence:{key}", f"{self.prefix}runs-by-expiry", f"{self.prefix}fences-by-expiry"]
        reply = [_text(v) for v in await self._call(self._claim, keys, [str(key), attempt, terms.lease_us(), terms.retention_us(), BACKSTOP_MS])]
        if reply == ["completed"]:
            return ClaimResult(Outcome.COMPLETED)
        if reply == ["in_progress"]:
            return ClaimResult(Outcome.IN_PROGRESS)
        if len(reply) == 2 and reply[0] == "claimed":
            return ClaimResult(Outcome.CLAIMED, Claim(key, attempt, int(reply[1])))
        raise StoreError(f"unexpected claim reply {reply!r}")

    async def finish(self, claim: Claim, success: bool) -> bool:
        keys = [self._run_key(claim.key), f"{self.prefix}runs-by-expiry"]
        return int(await self._call(self._finish, keys, [claim.attempt_id, "success" if success else "failure", str(claim.key)])) == 1

    async def renew(self, claim: Claim, terms: Terms) -> bool:
        keys = [self._run_key(claim.key), f"{self.prefix}runs-by-expiry"]
        args = [claim.attempt_id, terms.lease_us(), terms.retention_us(), BACKSTOP_MS, str(claim.key)]
        return int(await self._call(self._renew, keys, args)) == 1

    async def bind_token(self, token: str, key: RunKey, ttl: float) -> RunKey:
        # Rounded up, so that a binding never ends before its token.
        ttl_ms = max(-(-int(ttl * 1_000_000) // 1000), 1)
        return RunKey(_text(await self._call(self._bind_token, [f"{self.prefix}token:{token}"], [str(key), ttl_ms])))

    async def inspect(self, key: RunKey) -> tuple[str, str, int] | None:
        reply = [_text(v) for v in await self._call(self._inspect, [self._run_key(key)], [])]
        return None if not reply else (reply[0], reply[1], int(reply[2]))
