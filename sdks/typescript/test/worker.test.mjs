// The pull worker against the real server, on SQLite and on PostgreSQL.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { IdemClient, createWorker } from "../dist/index.js";
import { STORES, startServer } from "./helpers/server.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(check, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(100);
  }
}

for (const store of STORES) {
  describe(`worker on ${store}`, () => {
    let server, idem;
    before(async () => {
      server = await startServer({ store });
      idem = new IdemClient({ baseUrl: server.url, apiKey: server.apiKey });
    });
    after(async () => server?.stop());

    test("drains a pull queue: heartbeats keep slow handlers' leases, ends are reported in batches", async () => {
      await idem.createQueue({ name: "work", mode: "pull", retry_config: { max_attempts: 1 } });
      const ids = Array.from({ length: 12 }, (_, i) => `job-${i}`);
      await idem.createTasks("work", ids.map((task_id, i) => ({ task_id, payload: { json: { i } } })));
      const endCalls = [];
      const counting = Object.create(idem);
      counting.endTasks = (queue, ends, o) => {
        endCalls.push(ends.length);
        return idem.endTasks(queue, ends, o);
      };
      const leaseMoves = [];
      const errors = [];
      const worker = createWorker(
        counting,
        "work",
        async (task, { attemptId }) => {
          const i = task.payload.json.i;
          if (i === 5) throw new Error("no good\u0000");
          if (i % 4 === 0) {
            // Longer than the 1 s lease: only heartbeats keep the task ours.
            const before = Date.parse(task.lease.lease_expires_at);
            await sleep(2200);
            const now = (await idem.getTask("work", task.task_id)).value;
            assert.equal(now.lease.attempt_id, attemptId);
            leaseMoves.push(Date.parse(now.lease.lease_expires_at) - before);
          }
          return { doubled: i * 2 };
        },
        { maxTasks: 5, leaseS: 1, waitMs: 300, onError: (e) => errors.push(e) },
      );
      const running = worker.run();
      const tasks = await until(async () => {
        const all = [];
        for await (const t of idem.iterateTasks("work")) all.push(t);
        return all.every((t) => t.state === "succeeded" || t.state === "failed") && all;
      }, 30000);
      await worker.stop(1000);
      await running;
      assert.deepEqual(errors, []);
      for (const t of tasks) {
        assert.equal(t.attempt_count, 1, `${t.task_id} ran once: its lease never ran out`);
        if (t.task_id === "job-5") {
          assert.equal(t.state, "failed");
          assert.equal(t.last_attempt.error, "no good");
        } else {
          assert.equal(t.state, "succeeded", t.task_id);
          assert.deepEqual(t.result, { doubled: t.payload.json.i * 2 });
        }
      }
      assert.equal(leaseMoves.length, 3);
      for (const moved of leaseMoves) assert.ok(moved >= 1000, `the lease was extended by ${moved} ms`);
      assert.equal(endCalls.reduce((a, b) => a + b, 0), 12);
      assert.ok(endCalls.some((n) => n > 1), `ends sent together: ${endCalls}`);
      assert.equal(worker.completed, 11);
      assert.equal(worker.failed, 1);
    });

    test("stops gracefully: finishes what ends within the grace, releases the rest", async () => {
      await idem.createQueue({ name: "stop", mode: "pull" });
      await idem.createTasks("stop", [
        { task_id: "quick", payload: { body: "q" } },
        { task_id: "stuck", payload: { body: "s" } },
      ]);
      const aborted = [];
      let started = 0;
      const worker = createWorker(
        idem,
        "stop",
        async (task, { signal }) => {
          started++;
          if (task.task_id === "quick") {
            await sleep(200);
            return "done";
          }
          await new Promise((ok) => signal.addEventListener("abort", ok));
          aborted.push(task.task_id);
          return "too late";
        },
        { maxTasks: 2, leaseS: 30, waitMs: 200 },
      );
      const running = worker.run();
      await until(() => started === 2);
      await worker.stop(600);
      await running;
      assert.deepEqual(aborted, ["stuck"]);
      const quick = (await idem.getTask("stop", "quick")).value;
      assert.equal(quick.state, "succeeded");
      assert.equal(quick.result, "done");
      const stuck = (await idem.getTask("stop", "stuck")).value;
      assert.equal(stuck.state, "queued", "released, due again at once");
      assert.equal(stuck.lease ?? null, null, "no lease");
      // Another worker takes it straight away.
      const claimed = (await idem.claimTasks("stop", { maxTasks: 1 })).value.tasks;
      assert.deepEqual(claimed.map((t) => t.task_id), ["stuck"]);
    });

    test("pull routes one by one: claim, heartbeat, release, reassign, assign, complete, fail", async () => {
      await idem.createQueue({ name: "manual", mode: "pull", retry_config: { max_attempts: 1 } });
      await idem.createPrincipal({ name: "w2", kind: "service", role: "writer" });
      await idem.createTasks("manual", [{ task_id: "m1", payload: { body: "1" } }, { task_id: "m2", payload: { body: "2" }, tag: "blue" }]);
      const one = (await idem.claimTask("manual", "m1", 30)).value;
      await assert.rejects(idem.claimTask("manual", "m1", 30), (e) => e.code === "WORK_ALREADY_CLAIMED" && e.claim.claimant === "admin");
      const hb = (await idem.heartbeatTask("manual", "m1", one.lease.attempt_id, 60)).value;
      assert.ok(Date.parse(hb.lease.lease_expires_at) > Date.parse(one.lease.lease_expires_at));
      assert.equal((await idem.releaseTask("manual", "m1", one.lease.attempt_id)).value.state, "queued");
      await assert.rejects(idem.completeTask("manual", "m1", one.lease.attempt_id, { x: 1 }), (e) => e.code === "LEASE_LOST");
      const blue = (await idem.claimTasks("manual", { tag: "blue", maxTasks: 5 })).value.tasks;
      assert.deepEqual(blue.map((t) => t.task_id), ["m2"]);
      const moved = (await idem.reassignTask("manual", "m2", blue[0].lease.attempt_id, "w2")).value;
      assert.equal(moved.lease.claimant, "w2");
      const again = (await idem.claimTask("manual", "m1")).value;
      const done = await idem.completeTask("manual", "m1", again.lease.attempt_id, { ok: true });
      assert.equal(done.value.state, "succeeded");
      const repeat = await idem.completeTask("manual", "m1", again.lease.attempt_id, { ok: true });
      assert.equal(repeat.replayed, true, "the holder's repeated complete is a replay");
      await idem.createTask("manual", { task_id: "m3", payload: { body: "3" } });
      const assigned = (await idem.assignTask("manual", "m3", "admin", 30)).value;
      const failed = await idem.failTask("manual", "m3", assigned.lease.attempt_id, "broken");
      assert.equal(failed.value.state, "failed");
    });
  });
}
