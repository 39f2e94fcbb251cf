"""The claim/finish protocol of idem-guard, with lease renewal.

:meth:`Guard.run` claims a run key and, when this attempt won, runs the
work while renewing the claim every lease/3. Success marks the record
completed; failure deletes it so a retry need not wait for the lease. A
finish acts only while the record still holds this attempt. When a renewal
finds the claim gone or taken over, the work is cancelled and nothing is
recorded: another attempt owns the run, and whatever this one still did
would be done twice.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Generic, TypeVar

from .keys import RunKey
from .stores import Claim, Outcome, Store, StoreError, Terms

log = logging.getLogger("idem.guard")

T = TypeVar("T")

# A tiny lease must not make the guard renew in a busy loop.
MIN_RENEW_EVERY = 0.01


class LeaseLost(Exception):
    """The claim stopped being this attempt's while its work ran."""


class Ended(enum.Enum):
    DONE = "done"
    DUPLICATE = "duplicate"
    IN_PROGRESS = "in_progress"
    LEASE_LOST = "lease_lost"


@dataclass
class RunResult(Generic[T]):
    ended: Ended
    value: T | None = None
    claim: Claim | None = None


class Guard:
    """Claims runs in ``store`` before work runs, and records how it ended.

    ``lease`` (seconds) is how long a claim outlives a guard that died;
    ``retention`` how long a finished run is remembered.
    """

    def __init__(self, store: Store, *, lease: float = 300.0, retention: float = 24 * 3600.0):
        self.store = store
        self.terms = Terms(lease=lease, retention=retention)

    async def run(self, key: RunKey, work: Callable[[Claim], Awaitable[T]], succeeded: Callable[[T], bool] = lambda _: True) -> RunResult[T]:
        """Runs ``work(claim)`` once per run key. ``succeeded`` tells from
        its value whether the effect happened; an exception is a failure
        (the record is deleted, the exception propagates)."""
        claimed_at = time.monotonic()
        result = await self.store.claim(key, self.terms)
        if result.outcome is Outcome.COMPLETED:
            return RunResult(Ended.DUPLICATE)
        if result.outcome is Outcome.IN_PROGRESS:
            return RunResult(Ended.IN_PROGRESS)
        claim = result.claim
        assert claim is not None
        held = [claimed_at + self.terms.lease]
        task = asyncio.ensure_future(work(claim))
        keeper = asyncio.ensure_future(self._keep(claim, held))
        try:
            done, _ = await asyncio.wait([task, keeper], return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            keeper.cancel()
            raise
        if task not in done:
            # The keeper returned: the claim is lost.
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            log.warning("run %s: the claim was lost while its work ran; the work was stopped and its outcome is not recorded", key)
            return RunResult(Ended.LEASE_LOST, claim=claim)
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
        error = task.exception()
        value = None if error else task.result()
        success = error is None and succeeded(value)  # type: ignore[arg-type]
        await self._finish_while_held(claim, success, held[0])
        if error is not None:
            raise error
        return RunResult(Ended.DONE, value, claim)

    async def _finish_while_held(self, claim: Claim, success: bool, held_until: float) -> None:
        # The effect has happened: an outcome left unrecorded lets a retry
        # run it again once the lease runs out, so the finish is retried
        # while the lease last granted holds.
        pause = MIN_RENEW_EVERY * 5
        while True:
            try:
                remaining = max(held_until - time.monotonic(), MIN_RENEW_EVERY)
                finished = await asyncio.wait_for(self.store.finish(claim, success), remaining)
                if not finished:
                    log.warning("run %s: attempt %s finished after losing its claim; its outcome is not recorded", claim.key, claim.attempt_id)
                return
            except (StoreError, asyncio.TimeoutError, OSError) as e:
                if time.monotonic() + pause >= held_until:
                    log.error("run %s: could not record its outcome while its lease held (%s); a retry after the lease may run it again", claim.key, e)
                    return
                log.warning("run %s: recording the outcome failed (%s); retrying while the lease holds", claim.key, e)
                await asyncio.sleep(pause)
                pause = max(min(pause * 2, self.terms.lease / 12), MIN_RENEW_EVERY)

    async def _keep(self, claim: Claim, held: list[float]) -> None:
        """Renews every lease/3; returns only once the claim is lost. A
        renewal the store cannot answer is retried, more often, until the
        lease granted by the last good one would have run out."""
        lease = self.terms.lease
        every = max(lease / 3, MIN_RENEW_EVERY)
        retry_every = max(every / 4, MIN_RENEW_EVERY)
        next_at = held[0] - lease + every
        while True:
            await asyncio.sleep(max(next_at - time.monotonic(), 0))
            sent = time.monotonic()
            deadline = max(min(sent + every, held[0]), sent + MIN_RENEW_EVERY)
            try:
                renewed = await asyncio.wait_for(self.store.renew(claim, self.terms), deadline - sent)
            except (StoreError, asyncio.TimeoutError, OSError) as e:
                now = time.monotonic()
                if now >= held[0]:
                    return
                log.warning("run %s: renewing the claim failed (%s); retrying until the lease runs out", claim.key, e)
                next_at = min(now + retry_every, held[0])
                continue
            if not renewed:
                return
            held[0] = sent + lease
            next_at = sent + every
