"""Workers draining real pull queues."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import idem

from conftest import unique


def fill(client, n: int, **queue_settings) -> str:
    queue = unique("work")
    client.create_queue({"name": queue, "mode": "pull", **queue_settings})
    client.create_tasks(queue, [{"task_id": f"t{i:02d}", "payload": {"json": {"n": i}}} for i in range(n)])
    return queue


def test_a_worker_drains_a_queue_heartbeating_handlers_slower_than_the_lease(client):
    queue = fill(client, 8)
    seen = []
    lock = threading.Lock()

    def handle(task):
        with lock:
            seen.append(task["task_id"])
        # Longer than the 1 s lease: only heartbeats keep the task ours.
        time.sleep(1.6)
        return {"double": task["payload"]["json"]["n"] * 2}

    worker = idem.Worker(client, queue, handle, concurrency=4, lease_s=1, wait_ms=200)
    stats = worker.run(stop_when_idle=True)
    assert sorted(seen) == [f"t{i:02d}" for i in range(8)]
    assert stats.completed == 8 and stats.end_problems == []
    assert stats.heartbeats >= 8
    for task in client.iter_tasks(queue):
        assert task["state"] == "succeeded"
        assert task["attempt_count"] == 1, "no lease ran out"
        assert client.get_task(queue, task["task_id"])["result"] == {"double": int(task["task_id"][1:]) * 2}


def test_a_handler_that_raises_fails_its_attempt(client):
    queue = fill(client, 3, retry_config={"max_attempts": 1})

    def handle(task):
        if task["task_id"] == "t01":
            raise ValueError("card declined")
        return None

    stats = idem.Worker(client, queue, handle, concurrency=3, wait_ms=200).run(stop_when_idle=True)
    assert (stats.completed, stats.failed) == (2, 1)
    failed = client.get_task(queue, "t01").value
    assert failed["state"] == "failed"
    assert "card declined" in failed["last_attempt"]["error"]
    assert client.get_task(queue, "t00")["state"] == "succeeded"


def test_stop_lets_running_handlers_finish_and_claims_nothing_more(client):
    queue = fill(client, 10)
    worker: idem.Worker

    def handle(task):
        if task["task_id"] == "t00":
            worker.stop()
        time.sleep(0.5)
        return None

    worker = idem.Worker(client, queue, handle, concurrency=2, wait_ms=200)
    stats = worker.run()
    states = {t["task_id"]: t["state"] for t in client.iter_tasks(queue)}
    assert "running" not in states.values(), states
    done = [i for i, s in states.items() if s == "succeeded"]
    assert stats.claimed == len(done) == stats.completed
    assert 1 <= len(done) < 10, states


async def test_an_async_worker_drains_and_a_stop_past_its_grace_releases_the_rest(aclient):
    queue = unique("awork")
    await aclient.create_queue({"name": queue, "mode": "pull"})
    await aclient.create_tasks(queue, [{"task_id": f"a{i}"} for i in range(6)])

    async def quick(task):
        await asyncio.sleep(0.05)
        return {"ok": task["task_id"]}

    stats = await idem.AsyncWorker(aclient, queue, quick, concurrency=3, wait_ms=200).run(stop_when_idle=True)
    assert stats.completed == 6
    assert (await aclient.get_task(queue, "a5"))["result"] == {"ok": "a5"}

    await aclient.create_tasks(queue, [{"task_id": f"s{i}"} for i in range(3)])
    started = asyncio.Event()

    async def stuck(task):
        started.set()
        await asyncio.sleep(60)

    worker = idem.AsyncWorker(aclient, queue, stuck, concurrency=3, wait_ms=200, grace=0.2)
    running = asyncio.create_task(worker.run())
    await started.wait()
    await asyncio.sleep(0.2)
    worker.stop()
    stats = await asyncio.wait_for(running, 10)
    assert stats.released == stats.claimed >= 1
    for i in range(3):
        task = (await aclient.get_task(queue, f"s{i}")).value
        assert task["state"] == "queued", task


def test_a_worker_on_a_missing_queue_stops_with_the_problem(client):
    with pytest.raises(idem.errors.NotFoundError):
        idem.Worker(client, unique("absent"), lambda t: None, wait_ms=100).run()
