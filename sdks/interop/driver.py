"""Delivers each run to all three guards at once and checks it ran once.

Usage: driver.py STORE_NAME COUNTER_URL KEYS_FILE rust=URL typescript=URL python=URL

Each run key gets one delivery per guard, sent concurrently; each delivery
is retried (409 while another guard holds the run, 500 after a failed
execution, 503 while a store is unreachable, as Idem retries) until its guard answers 2xx. The counter then
says who executed what. Exit status 1 on any violation.
"""

import http.client
import json
import os
import random
import secrets
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode, urlsplit

RUNS = int(os.environ.get("INTEROP_RUNS", "48"))
FAIL_EVERY = 4  # every fourth run's first execution fails
PARALLEL_RUNS = 12
DEADLINE_S = 30.0

store, counter_url, keys_file = sys.argv[1:4]
guards = dict(arg.split("=", 1) for arg in sys.argv[4:])
names = list(guards)


def request(url: str, method: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=15)
    try:
        conn.request(method, u.path + ("?" + u.query if u.query else ""), body=b"", headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


tag = secrets.token_hex(6)
runs = [f"{'fail' if i % FAIL_EVERY == FAIL_EVERY - 1 else 'ok'}-{tag}-{i:02d}" for i in range(RUNS)]
# Written before anything is sent, so cleanup knows every key a guard may have stored.
with open(keys_file, "w") as f:
    f.write("\n".join(runs) + "\n")

deadline = time.monotonic() + DEADLINE_S
# (run, guard) -> {"answers": [status, ...], "final": status or error, "replayed": bool, "body": ...}
results: dict[tuple[str, str], dict] = {}
results_lock = threading.Lock()


def deliver(run: str, guard: str, ms: int, head_start: float) -> None:
    time.sleep(head_start)
    url = f"{guards[guard]}/run?{urlencode({'k': run, 'ms': ms})}"
    answers: list = []
    result: dict = {"answers": answers, "final": None, "replayed": False, "body": None}
    while time.monotonic() < deadline:
        try:
            status, headers, body = request(url, "POST", {"Idempotency-Key": run})
        except OSError as e:
            answers.append(f"{type(e).__name__}: {e}")
            time.sleep(0.1)
            continue
        answers.append(status)
        if 200 <= status < 300:
            result.update(final=status, replayed=headers.get("idempotent-replayed") == "true", body=body.decode(errors="replace"))
            break
        if status not in (409, 500, 503):
            result.update(final=status, body=body.decode(errors="replace"))
            break
        # Jittered, and shorter than the guards' Retry-After: 1, to keep the test quick.
        time.sleep(random.uniform(0.03, 0.12))
    else:
        result["final"] = "no 2xx before the deadline"
    with results_lock:
        results[(run, guard)] = result


def deliver_all(i: int, run: str) -> None:
    # One guard per run gets a head start, in turn, so that every guard
    # executes some runs; the others follow within a few tens of ms, while
    # the handler (100-300 ms) still holds the run.
    favoured = names[i % len(names)]
    ms = random.randint(100, 300)
    threads = [
        threading.Thread(target=deliver, args=(run, g, ms, 0.0 if g == favoured else random.uniform(0.01, 0.06)))
        for g in names
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


started = time.monotonic()
with ThreadPoolExecutor(PARALLEL_RUNS) as pool:
    list(pool.map(deliver_all, range(RUNS), runs))
elapsed = time.monotonic() - started

status, _, body = request(f"{counter_url}/executions", "GET")
ours = set(runs)
executions = [e for e in json.loads(body) if e["key"] in ours]
by_run: dict[str, list[dict]] = defaultdict(list)
for e in executions:
    by_run[e["key"]].append(e)

errors: list[str] = []
executed: Counter = Counter()
failed: Counter = Counter()
duplicates: Counter = Counter()
conflicts: Counter = Counter()
retried_elsewhere = 0
for run in runs:
    done = [e for e in by_run[run] if e["outcome"] == "ok"]
    fails = [e for e in by_run[run] if e["outcome"] == "fail"]
    who = ", ".join(f"{e['guard']} ({e['outcome']})" for e in by_run[run]) or "nobody"
    if len(done) != 1:
        errors.append(f"{run}: executed successfully {len(done)} times; executions: {who}")
    if run.startswith("fail-"):
        if len(fails) != 1:
            errors.append(f"{run}: {len(fails)} failed executions, expected 1; executions: {who}")
        elif done and fails[0]["at"] > done[0]["at"]:
            errors.append(f"{run}: succeeded before its failure; executions: {who}")
        elif done and done[0]["guard"] != fails[0]["guard"]:
            retried_elsewhere += 1
    for e in by_run[run]:
        (executed if e["outcome"] == "ok" else failed)[e["guard"]] += 1
    if len({e["run_key"] for e in by_run[run]}) > 1:
        errors.append(f"{run}: the guards claimed it under different run keys: {who} / {[e['run_key'] for e in by_run[run]]}")

    fresh = []
    for g in names:
        r = results.get((run, g))
        if r is None or not isinstance(r["final"], int) or not 200 <= r["final"] < 300:
            errors.append(f"{run}: {g} never answered 2xx; its answers: {r and r['answers']}, last body: {r and r['body']}")
            continue
        conflicts[g] += sum(1 for a in r["answers"] if a == 409)
        if r["replayed"]:
            duplicates[g] += 1
            if json.loads(r["body"]).get("status") != "duplicate":
                errors.append(f"{run}: {g} answered a replay without status duplicate: {r['body']}")
        else:
            fresh.append(g)
    if len(fresh) != 1 or (done and fresh != [done[0]["guard"]]):
        errors.append(f"{run}: answered 2xx without Idempotent-Replayed by {fresh or 'no guard'}; executions: {who}")

for g in names:
    if executed[g] == 0:
        errors.append(f"{g} executed no run: the test shows nothing about its claims being seen (check the head start in deliver_all)")
fail_runs = sum(1 for r in runs if r.startswith("fail-"))
if retried_elsewhere == 0:
    errors.append(f"no failed run was retried on another guard (of {fail_runs}): the retries prove nothing across guards")

print(f"{store}: {RUNS} runs ({fail_runs} failing once) delivered to {len(names)} guards in {elapsed:.1f} s")
print(f"  {'guard':<11} {'executed':>8} {'failed':>7} {'duplicates':>11} {'409s':>6}")
for g in names:
    print(f"  {g:<11} {executed[g]:>8} {failed[g]:>7} {duplicates[g]:>11} {conflicts[g]:>6}")
print(f"  failed runs whose retry executed on another guard: {retried_elsewhere} of {fail_runs}")
if errors:
    print(f"{store}: FAILED, {len(errors)} problem(s):", file=sys.stderr)
    for e in errors[:40]:
        print(f"  {e}", file=sys.stderr)
    sys.exit(1)
print(f"{store}: ok, every run executed successfully exactly once")
