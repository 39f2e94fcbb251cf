"""Pull-queue workers: claim tasks, heartbeat them while the handler runs,
report their ends in batches through ``tasks:end``, stop gracefully.

A handler gets the claimed task (a dict, with ``payload`` and ``lease``) and
returns the task's ``result`` (any JSON value, or ``None``); an exception
fails the attempt with its text, and the queue's retry policy decides what
follows. Delivery is at least once: a worker that dies mid-task loses its
lease and the task runs again elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
import queue as _queue
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from .errors import IdemError, LeaseLostError, ProblemError

log = logging.getLogger("idem.worker")

# The server keeps at most this much of an error's text.
MAX_ERROR_CHARS = 4096
# tasks:end takes at most this many ends per call.
MAX_ENDS = 100


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\x00", "")
    return text[:MAX_ERROR_CHARS]


def _passing(e: IdemError) -> bool:
    """Whether a failed claim may pass by waiting: an outage may, a missing
    queue or a refused key will not."""
    return not isinstance(e, ProblemError) or e.status >= 500 or e.status == 429


def _batch(first: dict[str, Any] | None, more: Callable[[], dict[str, Any] | None]) -> tuple[list[dict[str, Any]], bool]:
    """``first`` and whatever else is ready (``more`` raises once nothing
    is), up to :data:`MAX_ENDS`, for one ``tasks:end`` call; and whether the
    end marker (``None``) came."""
    done = first is None
    batch = [] if first is None else [first]
    while len(batch) < MAX_ENDS:
        try:
            item = more()
        except (_queue.Empty, asyncio.QueueEmpty):
            break
        if item is None:
            done = True
        else:
            batch.append(item)
    return batch, done


def _end_of(task: dict[str, Any], ok: bool, value: Any) -> dict[str, Any]:
    end = {"task_id": task["task_id"], "attempt_id": task["lease"]["attempt_id"]}
    if ok:
        if value is not None:
            end["result"] = value
    else:
        end["error"] = value
    return end


@dataclass
class WorkerStats:
    claimed: int = 0
    completed: int = 0
    failed: int = 0
    heartbeats: int = 0
    lost: int = 0
    released: int = 0
    end_calls: int = 0
    end_problems: list[dict[str, Any]] = field(default_factory=list)


class _Base:
    def __init__(self, client: Any, queue: str, handler: Any, *, concurrency: int, lease_s: int, wait_ms: int, tag: str | None, heartbeat_every: float | None):
        if concurrency < 1:
            raise ValueError("concurrency is at least 1")
        self.client = client
        self.queue = queue
        self.handler = handler
        self.concurrency = concurrency
        self.lease_s = lease_s
        self.wait_ms = wait_ms
        self.tag = tag
        # A third of the lease, as idem-client does: two heartbeats may be
        # lost before the lease runs out.
        self.heartbeat_every = heartbeat_every or max(lease_s / 3, 0.05)
        self.stats = WorkerStats()

    def _record(self, answer: dict[str, Any], ends: list[dict[str, Any]]) -> None:
        self.stats.end_calls += 1
        for end, result in zip(ends, answer.get("results", [])):
            if result.get("status") == 200:
                if "error" in end:
                    self.stats.failed += 1
                else:
                    self.stats.completed += 1
            else:
                # LEASE_LOST: the lease ran out or was taken; the task's fate
                # is another attempt's now.
                self.stats.end_problems.append(result.get("problem") or {})
                log.warning("end of task %s refused: %s", end["task_id"], result.get("problem"))


class Worker(_Base):
    """A blocking worker running up to ``concurrency`` handlers in threads.

    :meth:`run` claims until :meth:`stop` is called (from a handler, a
    signal handler or another thread); it then claims nothing more, lets
    the running handlers finish, reports their ends and returns. A long
    poll in flight (``wait_ms``) ends first.
    """

    def __init__(self, client: Any, queue: str, handler: Callable[[dict[str, Any]], Any], *, concurrency: int = 4, lease_s: int = 60, wait_ms: int = 5000, tag: str | None = None, heartbeat_every: float | None = None):
        super().__init__(client, queue, handler, concurrency=concurrency, lease_s=lease_s, wait_ms=wait_ms, tag=tag, heartbeat_every=heartbeat_every)
        self._stopping = threading.Event()
        # Set once every handler has returned: heartbeats go on until then.
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(concurrency)
        self._inflight: dict[str, dict[str, Any]] = {}
        self._ends: _queue.Queue[dict[str, Any] | None] = _queue.Queue()

    def stop(self) -> None:
        self._stopping.set()

    def run(self, *, stop_when_idle: bool = False) -> WorkerStats:
        """Works until stopped (or, with ``stop_when_idle``, until a claim
        finds nothing and no handler runs)."""
        heartbeats = threading.Thread(target=self._heartbeat_loop, name="idem-heartbeats", daemon=True)
        reporter = threading.Thread(target=self._report_loop, name="idem-ends", daemon=True)
        heartbeats.start()
        reporter.start()
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="idem-handler")
        try:
            while not self._stopping.is_set():
                free = self._free_slots()
                if free == 0:
                    continue
                try:
                    tasks = self.client.claim_tasks(self.queue, max_tasks=min(free, 100), wait_ms=self.wait_ms, lease_s=self.lease_s, tag=self.tag).value["tasks"]
                except IdemError as e:
                    if not _passing(e):
                        raise
                    log.warning("claim failed: %s", e)
                    self._stopping.wait(1.0)
                    continue
                finally:
                    for _ in range(free):
                        self._slots.release()
                if self._stopping.is_set():
                    self._release(tasks)
                    break
                if not tasks:
                    with self._lock:
                        idle = not self._inflight
                    if stop_when_idle and idle:
                        break
                    continue
                for task in tasks:
                    self._slots.acquire()
                    with self._lock:
                        self._inflight[task["task_id"]] = task
                    self.stats.claimed += 1
                    pool.submit(self._run_one, task)
        finally:
            self._stopping.set()
            pool.shutdown(wait=True)
            self._done.set()
            self._ends.put(None)
            reporter.join()
            heartbeats.join()
        return self.stats

    def _free_slots(self) -> int:
        """Takes every free slot (waiting briefly for one); the caller gives
        them back once the claim is in."""
        if not self._slots.acquire(timeout=0.2):
            return 0
        n = 1
        while n < 100 and self._slots.acquire(blocking=False):
            n += 1
        return n

    def _run_one(self, task: dict[str, Any]) -> None:
        try:
            try:
                end = _end_of(task, True, self.handler(task))
            except Exception as e:  # the handler's failure is the task's
                end = _end_of(task, False, _error_text(e))
            with self._lock:
                lost = self._inflight.pop(task["task_id"], None) is None
            if not lost:
                self._ends.put(end)
        finally:
            self._slots.release()

    def _release(self, tasks: list[dict[str, Any]]) -> None:
        for task in tasks:
            try:
                self.client.release_task(self.queue, task["task_id"], task["lease"]["attempt_id"])
                self.stats.released += 1
            except IdemError as e:
                log.warning("release of %s failed: %s", task["task_id"], e)

    def _heartbeat_loop(self) -> None:
        while not self._done.wait(self.heartbeat_every):
            with self._lock:
                tasks = list(self._inflight.values())
            for task in tasks:
                try:
                    self.client.heartbeat_task(self.queue, task["task_id"], task["lease"]["attempt_id"], lease_s=self.lease_s)
                    self.stats.heartbeats += 1
                except LeaseLostError:
                    # Its end would be refused: another attempt owns it.
                    with self._lock:
                        self._inflight.pop(task["task_id"], None)
                    self.stats.lost += 1
                    log.warning("lease of task %s was lost", task["task_id"])
                except IdemError as e:
                    log.warning("heartbeat of %s failed: %s", task["task_id"], e)

    def _report_loop(self) -> None:
        done = False
        while not done:
            batch, done = _batch(self._ends.get(), self._ends.get_nowait)
            if batch:
                self._send(batch)

    def _send(self, ends: list[dict[str, Any]]) -> None:
        try:
            self._record(self.client.end_tasks(self.queue, ends).value, ends)
        except IdemError as e:
            # The leases run out and the tasks run again: at least once.
            log.error("reporting %d ends failed: %s", len(ends), e)


class AsyncWorker(_Base):
    """The asyncio worker: handlers are coroutines, run up to
    ``concurrency`` at once. :meth:`stop` lets running handlers finish for
    up to ``grace`` seconds, then cancels the rest and releases their
    leases, so another worker starts them at once."""

    def __init__(self, client: Any, queue: str, handler: Callable[[dict[str, Any]], Awaitable[Any]], *, concurrency: int = 4, lease_s: int = 60, wait_ms: int = 5000, tag: str | None = None, heartbeat_every: float | None = None, grace: float = 30.0):
        super().__init__(client, queue, handler, concurrency=concurrency, lease_s=lease_s, wait_ms=wait_ms, tag=tag, heartbeat_every=heartbeat_every)
        self.grace = grace
        self._stopping = asyncio.Event()
        self._inflight: dict[str, tuple[dict[str, Any], asyncio.Task[Any]]] = {}
        self._ends: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._slot_freed = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()

    async def run(self, *, stop_when_idle: bool = False) -> WorkerStats:
        heartbeats = asyncio.create_task(self._heartbeat_loop())
        reporter = asyncio.create_task(self._report_loop())
        stop_wait = asyncio.create_task(self._stopping.wait())
        try:
            while not self._stopping.is_set():
                free = self.concurrency - len(self._inflight)
                if free <= 0:
                    self._slot_freed.clear()
                    freed = asyncio.create_task(self._slot_freed.wait())
                    await asyncio.wait([freed, stop_wait], return_when=asyncio.FIRST_COMPLETED)
                    freed.cancel()
                    continue
                try:
                    answer = await self.client.claim_tasks(self.queue, max_tasks=min(free, 100), wait_ms=self.wait_ms, lease_s=self.lease_s, tag=self.tag)
                except IdemError as e:
                    if not _passing(e):
                        raise
                    log.warning("claim failed: %s", e)
                    await asyncio.wait([stop_wait], timeout=1.0)
                    continue
                tasks = answer.value["tasks"]
                if self._stopping.is_set():
                    await asyncio.gather(*(self._release(t) for t in tasks))
                    break
                if not tasks:
                    if stop_when_idle and not self._inflight:
                        break
                    continue
                for task in tasks:
                    self.stats.claimed += 1
                    self._inflight[task["task_id"]] = (task, asyncio.create_task(self._run_one(task)))
            running = [t for _, t in self._inflight.values()]
            if running:
                _, late = await asyncio.wait(running, timeout=self.grace)
                for t in late:
                    t.cancel()
                await asyncio.gather(*late, return_exceptions=True)
        finally:
            self._stopping.set()
            stop_wait.cancel()
            await self._ends.put(None)
            await reporter
            heartbeats.cancel()
            await asyncio.gather(heartbeats, return_exceptions=True)
        return self.stats

    async def _run_one(self, task: dict[str, Any]) -> None:
        try:
            try:
                end = _end_of(task, True, await self.handler(task))
            except asyncio.CancelledError:
                # Stopped past the grace: give the task back, uncounted. A
                # task whose lease was lost is not ours to give.
                if self._inflight.pop(task["task_id"], None) is not None:
                    await self._release(task)
                return
            except Exception as e:  # the handler's failure is the task's
                end = _end_of(task, False, _error_text(e))
            if self._inflight.pop(task["task_id"], None) is not None:
                await self._ends.put(end)
        finally:
            self._slot_freed.set()

    async def _release(self, task: dict[str, Any]) -> None:
        try:
            await self.client.release_task(self.queue, task["task_id"], task["lease"]["attempt_id"])
            self.stats.released += 1
        except IdemError as e:
            log.warning("release of %s failed: %s", task["task_id"], e)

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_every)
            for task_id, (task, running) in list(self._inflight.items()):
                try:
                    await self.client.heartbeat_task(self.queue, task_id, task["lease"]["attempt_id"], lease_s=self.lease_s)
                    self.stats.heartbeats += 1
                except LeaseLostError:
                    # Another attempt owns the task: whatever this one still
                    # does would be done twice.
                    self._inflight.pop(task_id, None)
                    running.cancel()
                    self.stats.lost += 1
                    log.warning("lease of task %s was lost; its handler was cancelled", task_id)
                except IdemError as e:
                    log.warning("heartbeat of %s failed: %s", task_id, e)

    async def _report_loop(self) -> None:
        done = False
        while not done:
            batch, done = _batch(await self._ends.get(), self._ends.get_nowait)
            if batch:
                try:
                    self._record((await self.client.end_tasks(self.queue, batch)).value, batch)
                except IdemError as e:
                    log.error("reporting %d ends failed: %s", len(batch), e)
