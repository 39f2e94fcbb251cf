// The client against the real server, on SQLite and on PostgreSQL.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  IdemClient,
  InvalidArgumentError,
  QueueAlreadyExistsError,
  TaskAlreadyExistsError,
  UnauthenticatedError,
  NotFoundError,
  StaleVersionError,
  FailedPreconditionError,
  IdempotencyKeyMismatchError,
  ProblemError,
  TransportError,
  isProblem,
} from "../dist/index.js";
import { STORES, startServer } from "./helpers/server.mjs";
import { startTarget, startDroppingProxy } from "./helpers/http.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const store of STORES) {
  describe(`client on ${store}`, () => {
    let server, idem, target, targetStatus = 200;
    before(async () => {
      server = await startServer({ store });
      idem = new IdemClient({ baseUrl: server.url, apiKey: server.apiKey, retry: { initialBackoffMs: 50 } });
      target = await startTarget(() => targetStatus);
    });
    after(async () => {
      await target?.close();
      await server?.stop();
    });

    test("queues: create, replay with the same key, read, list, update, pause, resume, purge, delete", async () => {
      const created = await idem.createQueue({ name: "q-admin" }, { idempotencyKey: "create-q-admin" });
      assert.equal(created.status, 201);
      assert.equal(created.replayed, false);
      assert.equal(created.value.name, "q-admin");
      const again = await idem.createQueue({ name: "q-admin" }, { idempotencyKey: "create-q-admin" });
      assert.equal(again.status, 201);
      assert.equal(again.replayed, true, "the same key replays instead of conflicting");
      await assert.rejects(idem.createQueue({ name: "q-admin" }), QueueAlreadyExistsError);
      await assert.rejects(idem.createQueue({ name: "q-admin", dedup_window_s: 5 }, { idempotencyKey: "create-q-admin" }), (e) => {
        assert.ok(e instanceof IdempotencyKeyMismatchError);
        assert.deepEqual(e.differs, ["body"]);
        return true;
      });
      assert.equal((await idem.getQueue("q-admin")).value.state, "running");
      const names = [];
      for await (const q of idem.iterateQueues()) names.push(q.name);
      assert.ok(names.includes("q-admin"));
      assert.equal((await idem.updateQueue("q-admin", { dedup_window_s: 60 })).value.dedup_window_s, 60);
      assert.equal((await idem.pauseQueue("q-admin")).value.state, "paused");
      assert.equal((await idem.resumeQueue("q-admin")).value.state, "running");
      const purged = await idem.purgeQueue("q-admin");
      assert.equal(typeof purged.value, "object");
      assert.equal((await idem.deleteQueue("q-admin")).status, 204);
      await assert.rejects(idem.getQueue("q-admin"), NotFoundError);
    });

    test("grouped tasks take turns within their queue's group limit, and the groups are listed", async () => {
      await idem.createQueue({ name: "q-groups", mode: "pull", group_concurrency: 1 });
      for (const [id, group, priority] of [["a1", "acct:a", 0], ["a2", "acct:a", 5], ["b1", "acct:b", 0]]) {
        const t = await idem.createTask("q-groups", { task_id: id, group, priority, payload: { json: {} } });
        assert.equal(t.value.group, group);
        assert.equal(t.value.priority, priority);
      }
      const claimed = (await idem.claimTasks("q-groups", { maxTasks: 10 })).value.tasks.map((t) => t.task_id).sort();
      assert.deepEqual(claimed, ["a2", "b1"], "one of each group, the higher priority first");
      const groups = (await idem.listQueueGroups("q-groups", { id_prefix: "acct:" })).value.items;
      assert.deepEqual(groups, [
        { group: "acct:a", running: 1, due: 1, scheduled: 0 },
        { group: "acct:b", running: 1, due: 0, scheduled: 0 },
      ]);
      const all = [];
      for await (const g of idem.iterateQueueGroups("q-groups", { limit: 1 })) all.push(g.group);
      assert.deepEqual(all, ["acct:a", "acct:b"]);
      assert.equal((await idem.getQueue("q-groups")).value.stats.groups_with_due, 1);
      const bad = await idem.createTask("q-groups", { group: "a b", payload: { json: {} } }).catch((e) => e);
      assert.ok(bad instanceof InvalidArgumentError, String(bad));
      assert.ok(bad.fieldErrors.some((f) => f.field === "group"), JSON.stringify(bad.fieldErrors));
    });

    test("a bad input is a typed problem with its fields, request ID and extensions", async () => {
      await idem.createQueue({ name: "q-bad" });
      const error = await idem.createTask("q-bad", { target: { url: "ftp://nowhere" } }).then(
        () => assert.fail("accepted"),
        (e) => e,
      );
      assert.ok(error instanceof InvalidArgumentError, String(error));
      assert.ok(error instanceof ProblemError);
      assert.equal(error.status, 400);
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.ok(error.fieldErrors.some((f) => f.field.startsWith("target")), JSON.stringify(error.fieldErrors));
      assert.ok(error.requestId, "carries the request ID");
      assert.equal(error.instance, "/v1/queues/q-bad/tasks");

      await idem.createTask("q-bad", { task_id: "t1", target: { url: target.url } });
      const dup = await idem.createTask("q-bad", { task_id: "t1", target: { url: target.url } }).catch((e) => e);
      assert.ok(dup instanceof TaskAlreadyExistsError);
      assert.ok(isProblem(dup, "TASK_ALREADY_EXISTS"));
      assert.equal(dup.task.id, "t1");

      const stranger = new IdemClient({ baseUrl: server.url, apiKey: "idem_not_a_key_0123456789abcdefghij" });
      await assert.rejects(stranger.listQueues(), UnauthenticatedError);
    });

    test("a create whose answer was lost is retried with the same key and creates once", async () => {
      await idem.createQueue({ name: "q-lost", mode: "pull" });
      let dropped = 0;
      const proxy = await startDroppingProxy(server.url, (req) => req.method === "POST" && req.url.endsWith("/tasks") && dropped++ === 0);
      try {
        const viaProxy = new IdemClient({ baseUrl: proxy.url, apiKey: server.apiKey, retry: { initialBackoffMs: 20 } });
        // No task ID: only the key stops a retry from making a second task.
        const created = await viaProxy.createTask("q-lost", { payload: { body: "once" } });
        assert.equal(created.attempts, 2);
        assert.equal(created.replayed, true);
        assert.equal(created.status, 201);
        const posts = proxy.seen.filter((r) => r.method === "POST");
        assert.equal(posts.length, 2);
        assert.equal(posts[0].headers["idempotency-key"], created.idempotencyKey);
        assert.equal(posts[1].headers["idempotency-key"], created.idempotencyKey);
        const tasks = (await idem.listTasks("q-lost")).value.items;
        assert.equal(tasks.length, 1);
        assert.equal(tasks[0].task_id, created.value.task_id);
      } finally {
        await proxy.close();
      }
    });

    test("no answer at all is a TransportError carrying the key to retry with", async () => {
      const nowhere = new IdemClient({ baseUrl: "http://127.0.0.1:9", apiKey: "x", retry: { maxAttempts: 2, initialBackoffMs: 10 } });
      const error = await nowhere.createQueue({ name: "x" }).catch((e) => e);
      assert.ok(error instanceof TransportError);
      assert.equal(error.attempts, 2);
      assert.match(error.idempotencyKey, /^[0-9a-f-]{36}$/);
    });

    test("lists page through next_page_token", async () => {
      await idem.createQueue({ name: "q-pages", mode: "pull" });
      const ids = Array.from({ length: 7 }, (_, i) => `p${i}`);
      await idem.createTasks("q-pages", ids.map((task_id) => ({ task_id, payload: { body: task_id } })));
      let pages = 0;
      const seen = [];
      for await (const task of idem.paginate((p) => (pages++, idem.listTasks("q-pages", { ...p, limit: 3 })))) seen.push(task.task_id);
      assert.equal(pages, 3);
      assert.deepEqual(seen.sort(), ids);
      const viaIterate = [];
      for await (const t of idem.iterateTasks("q-pages", { limit: 2, id_prefix: "p" })) viaIterate.push(t.task_id);
      assert.equal(viaIterate.length, 7);
      const first = (await idem.listTasks("q-pages", { limit: 3 })).value;
      assert.equal(first.items.length, 3);
      assert.ok(first.next_page_token);
    });

    test("batch create: JSON item by item, atomic all-or-nothing, NDJSON, replay", async () => {
      await idem.createQueue({ name: "q-batch", mode: "pull" });
      const items = [
        { task_id: "b1", payload: { json: { n: 1 } } },
        { task_id: "b2", payload: { body: "two" } },
        { task_id: "b1", payload: { body: "dup" } },
      ];
      const batch = await idem.createTasks("q-batch", items, { idempotencyKey: "batch-1" });
      assert.deepEqual(batch.value.results.map((r) => r.status), [201, 201, 409]);
      assert.equal(batch.value.results[2].problem.type, "TASK_ALREADY_EXISTS");
      const replay = await idem.createTasks("q-batch", items, { idempotencyKey: "batch-1" });
      assert.equal(replay.replayed, true);
      assert.deepEqual(replay.value.results.map((r) => r.status), [201, 201, 409]);

      const atomic = await idem
        .createTasks("q-batch", [{ task_id: "b3", payload: { body: "x" } }, { task_id: "bad id!", payload: { body: "y" } }], { atomic: true })
        .catch((e) => e);
      assert.ok(atomic instanceof InvalidArgumentError, String(atomic));
      assert.equal(atomic.extensions.index, 1);
      await assert.rejects(idem.getTask("q-batch", "b3"), NotFoundError, "an atomic batch that failed created nothing");

      const nd = await idem.createTasks("q-batch", [{ task_id: "n1", payload: { body: "a" } }, { task_id: "n2", payload: { body: "b" } }], { format: "ndjson" });
      assert.deepEqual(nd.value.results.map((r) => r.status), [201, 201]);
      const ndBad = await idem.createTasks("q-batch", [{ task_id: "n3", payload: { body: "a" } }, { task_id: "n 4", payload: { body: "b" } }], { format: "ndjson", atomic: true }).catch((e) => e);
      assert.ok(ndBad instanceof InvalidArgumentError);
      assert.equal(ndBad.extensions.line, 2);
    });

    test("wait_ms: 200 with the final task once delivered, 202 with the task as it is otherwise", async () => {
      await idem.createQueue({ name: "q-wait" });
      const done = await idem.createTask("q-wait", { task_id: "w1", target: { url: `${target.url}/ok`, json: { a: 1 } } }, { waitMs: 15000 });
      assert.equal(done.status, 200);
      assert.equal(done.value.state, "succeeded");
      const later = new Date(Date.now() + 3600_000).toISOString();
      const pending = await idem.createTask("q-wait", { task_id: "w2", schedule_time: later, target: { url: target.url } }, { waitMs: 200 });
      assert.equal(pending.status, 202);
      assert.equal(pending.value.state, "scheduled");
      const ran = await idem.runTask("q-wait", "w2");
      assert.equal(ran.status, 200);
      // A finished task is answered as it is.
      assert.equal((await idem.cancelTask("q-wait", "w1")).value.state, "succeeded");
    });

    test("redrive: a failed task runs again with a fresh budget; bulk redrive of cancelled tasks", async () => {
      await idem.createQueue({ name: "q-redrive", retry_config: { max_attempts: 1, min_backoff_ms: 10, max_backoff_ms: 10 } });
      targetStatus = 500;
      const failed = await idem.createTask("q-redrive", { task_id: "r1", target: { url: `${target.url}/flaky` } }, { waitMs: 15000 });
      assert.equal(failed.value.state, "failed");
      assert.equal(failed.value.attempt_count, 1);
      targetStatus = 200;
      const redriven = await idem.redriveTask("q-redrive", "r1");
      assert.equal(redriven.value.state, "queued");
      let task;
      for (let i = 0; i < 100; i++) {
        task = (await idem.getTask("q-redrive", "r1")).value;
        if (task.state === "succeeded") break;
        await sleep(100);
      }
      assert.equal(task.state, "succeeded");
      assert.equal(task.attempt_count, 2);
      const attempts = [];
      for await (const a of idem.iterateTaskAttempts("q-redrive", "r1", { limit: 1 })) attempts.push(a.attempt);
      assert.deepEqual(attempts, [1, 2]);
      await assert.rejects(idem.redriveTask("q-redrive", "r1"), FailedPreconditionError);

      const later = new Date(Date.now() + 3600_000).toISOString();
      await idem.createTask("q-redrive", { task_id: "r2", schedule_time: later, target: { url: target.url } });
      assert.equal((await idem.cancelTask("q-redrive", "r2")).value.state, "cancelled");
      const dry = await idem.redriveTasks("q-redrive", { state: "cancelled", id_prefix: "r", dry_run: true });
      assert.deepEqual(dry.value, { redriven: 0, matching: 1 });
      const bulk = await idem.redriveTasks("q-redrive", { state: "cancelled" });
      assert.equal(bulk.value.redriven, 1);
    });

    test("jobs: create, read, preview, run, runs, stale update refused, pause, resume, delete", async () => {
      const job = await idem.createJob({ name: "nightly", schedule: "0 3 * * *", time_zone: "Europe/Berlin", target: { url: target.url } });
      assert.equal(job.status, 201);
      assert.equal((await idem.getJob("nightly")).value.schedule, "0 3 * * *");
      const preview = await idem.previewSchedule({ schedule: "*/15 * * * *", after: "2026-10-16T12:00:00Z", count: 3 });
      assert.deepEqual(preview.value.times.map((t) => t.replace(/\.0+Z$/, "Z")), ["2026-10-16T12:15:00Z", "2026-10-16T12:30:00Z", "2026-10-16T12:45:00Z"]);
      const run = await idem.runJob("nightly");
      assert.equal(run.status, 201);
      const runs = [];
      for await (const r of idem.iterateJobRuns("nightly")) runs.push(r);
      assert.equal(runs.length, 1);
      assert.equal((await idem.getJobRun("nightly", runs[0].run_id)).value.kind, "manual");
      // The manual run is due now: its attempt is listed once it starts.
      const attempts = [];
      for (const until = Date.now() + 10_000; attempts.length === 0 && Date.now() < until; ) {
        for await (const a of idem.iterateJobRunAttempts("nightly", runs[0].run_id)) attempts.push(a);
        if (attempts.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(attempts[0]?.attempt, 1);
      await assert.rejects(idem.updateJob("nightly", { schedule: "0 4 * * *", expected_updated_at: "2020-01-01T00:00:00Z" }), StaleVersionError);
      const updated = await idem.updateJob("nightly", { schedule: "0 4 * * *", expected_updated_at: job.value.updated_at });
      assert.equal(updated.value.schedule, "0 4 * * *");
      assert.equal((await idem.pauseJob("nightly")).value.state, "paused");
      assert.equal((await idem.resumeJob("nightly")).value.state, "enabled");
      assert.ok((await idem.listJobs()).value.items.some((j) => j.name === "nightly"));
      assert.equal((await idem.deleteJob("nightly")).status, 204);
    });

    test("tenancy, signing secrets, webhooks and idempotency records", async () => {
      const principal = await idem.createPrincipal({ name: "svc-writer", kind: "service", role: "writer" });
      assert.equal(principal.value.role, "writer");
      const key = await idem.createApiKey("svc-writer", { idempotencyKey: "key-for-svc" });
      assert.ok(key.value.key);
      const replayedKey = await idem.createApiKey("svc-writer", { idempotencyKey: "key-for-svc" });
      assert.equal(replayedKey.value.key, key.value.key, "a replay carries the same secret");
      const asWriter = new IdemClient({ baseUrl: server.url, apiKey: key.value.key });
      assert.ok(Array.isArray((await asWriter.listQueues()).value.items));
      assert.equal((await idem.getApiKey("svc-writer", key.value.id)).value.id, key.value.id);
      assert.ok((await idem.listApiKeys("svc-writer")).value.items.some((k) => k.id === key.value.id));
      assert.ok((await idem.listPrincipals()).value.items.some((p) => p.name === "svc-writer"));
      assert.equal((await idem.updatePrincipal("svc-writer", { role: "reader" })).value.role, "reader");
      assert.equal((await idem.revokeApiKey("svc-writer", key.value.id)).status, 204);
      await assert.rejects(asWriter.listQueues(), UnauthenticatedError);

      const before = (await idem.listSigningSecrets()).value.secrets;
      const rotated = await idem.rotateSigningSecret();
      assert.match(rotated.value.secret, /^whsec_/);
      const afterRotate = (await idem.listSigningSecrets()).value.secrets;
      assert.equal(afterRotate.length, before.length + 1);
      assert.equal((await idem.getSigningSecret(rotated.value.id)).value.id, rotated.value.id);
      assert.equal((await idem.deleteSigningSecret(rotated.value.id)).status, 204);

      const hook = await idem.createWebhook({ url: `${target.url}/events`, events: ["task.failed"] });
      assert.equal((await idem.getWebhook(hook.value.id)).value.url, `${target.url}/events`);
      assert.ok((await idem.listWebhooks()).value.items.some((w) => w.id === hook.value.id));
      assert.equal((await idem.deleteWebhook(hook.value.id)).status, 204);

      const org = await idem.createOrganization(`org-${store}`);
      assert.ok(org.value.admin_key);
      const record = await idem.getIdempotencyKey("key-for-svc");
      assert.equal(record.value.state, "completed");
      assert.equal((await idem.getJwks()).keys instanceof Array, true);
      assert.equal(await idem.ready(), true);
    });
  });
}
