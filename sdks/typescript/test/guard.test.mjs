// The guard as Express middleware on PostgreSQL, Redis (ioredis and
// node-redis) and in memory, and side by side with the Rust guard
// (`idem proxy`) on one store.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import express from "express";
import pg from "pg";
import Redis from "ioredis";
import { createClient } from "redis";
import { MemoryGuardStore, PostgresGuardStore, RedisGuardStore, idemGuard, signDelivery, runKeyOfSignedMessage } from "../dist/index.js";
import { REDIS_URL, freePort, freshDatabase, idemBinary } from "./helpers/server.mjs";
import { startTarget } from "./helpers/http.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const quiet = () => {};

/** An app whose guarded handler counts its runs per run key. */
async function guardedApp(store, options = {}) {
  const runs = new Map();
  const app = express();
  app.post(
    "/run",
    idemGuard({ store, onWarning: quiet, ...options }),
    async (req, res) => {
      const key = req.idem.runKey;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      await sleep(Number(req.query.delay ?? 0));
      if (req.query.fail) return res.status(500).json({ failed: true });
      res.status(200).json({ ran: key, fence: String(req.idem.fence) });
    },
  );
  const server = await new Promise((ok) => {
    const s = app.listen(0, "127.0.0.1", () => ok(s));
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    runs,
    send: (key, query = "", headers = {}, body) =>
      fetch(`${url}/run${query}`, { method: "POST", headers: { ...(key ? { "idempotency-key": key } : {}), ...headers }, body }),
    close: () => new Promise((ok) => { server.closeAllConnections(); server.close(ok); }),
  };
}

/** The stores to run the same tests on, each with a way to delete a record behind the guard's back. */
const STORES = {
  postgres: async () => {
    const db = await freshDatabase("idem_ts_guard");
    const pool = new pg.Pool({ connectionString: db.url, max: 20 });
    // The database is dropped WITH (FORCE) at the end: a connection the pool
    // has not closed by then is terminated, which it reports here rather
    // than as an uncaught error after the tests.
    pool.on("error", quiet);
    const store = await PostgresGuardStore.create(pool);
    return {
      store,
      url: db.url,
      remove: (key) => pool.query("DELETE FROM idem_guard_runs WHERE key = $1", [key]),
      close: async () => {
        await pool.end();
        await db.drop();
      },
    };
  },
  "redis (ioredis)": async () => {
    const client = new Redis(REDIS_URL);
    const prefix = `idem:ts-test:${randomBytes(6).toString("hex")}:`;
    const store = new RedisGuardStore(client, prefix);
    return {
      store,
      remove: (key) => client.del(`${prefix}run:${key}`),
      close: async () => {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length) await client.del(...keys);
        client.disconnect();
      },
    };
  },
  "redis (node-redis)": async () => {
    const client = await createClient({ url: REDIS_URL }).connect();
    const prefix = `idem:ts-test:${randomBytes(6).toString("hex")}:`;
    const store = new RedisGuardStore(client, prefix);
    return {
      store,
      remove: (key) => client.del(`${prefix}run:${key}`),
      close: async () => {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length) await client.del(keys);
        await client.quit();
      },
    };
  },
  memory: async () => ({ store: new MemoryGuardStore(), close: async () => {} }),
};

for (const [name, open] of Object.entries(STORES)) {
  describe(`guard on ${name}`, () => {
    let s;
    before(async () => (s = await open()));
    after(async () => s?.close());

    test("concurrent duplicate deliveries run the handler once", async () => {
      const app = await guardedApp(s.store);
      try {
        const key = randomUUID();
        const answers = await Promise.all(Array.from({ length: 20 }, () => app.send(key, "?delay=300")));
        const runKey = [...app.runs.keys()][0];
        assert.equal(app.runs.size, 1);
        assert.equal(app.runs.get(runKey), 1, "ran once");
        const statuses = answers.map((a) => a.status);
        assert.equal(statuses.filter((st) => st === 200).length >= 1, true);
        for (const a of answers) {
          if (a.status === 409) {
            const problem = await a.json();
            assert.equal(problem.type, "IDEMPOTENCY_KEY_IN_PROGRESS");
            assert.equal(a.headers.get("retry-after"), "1");
            assert.ok(problem.request_id);
          } else {
            assert.equal(a.status, 200);
          }
        }
        const again = await app.send(key);
        assert.equal(again.status, 200);
        assert.equal(again.headers.get("idempotent-replayed"), "true");
        assert.deepEqual(await again.json(), { status: "duplicate", run_key: runKey });
        assert.equal(app.runs.get(runKey), 1);
        assert.equal((await s.store.inspect(runKey)).state, "completed");
      } finally {
        await app.close();
      }
    });

    test("a failure deletes the record before answering, so the retry runs at once with a greater fence", async () => {
      const app = await guardedApp(s.store);
      try {
        const key = randomUUID();
        const first = await app.send(key, "?fail=1");
        assert.equal(first.status, 500);
        const [runKey] = app.runs.keys();
        assert.equal(await s.store.inspect(runKey), undefined);
        const second = await app.send(key);
        assert.equal(second.status, 200);
        const body = await second.json();
        assert.equal(app.runs.get(runKey), 2);
        const third = await app.send(key);
        assert.equal(third.headers.get("idempotent-replayed"), "true");
        assert.ok(BigInt(body.fence) > 0n);
      } finally {
        await app.close();
      }
    });

    test("a handler slower than its lease keeps its claim by renewal", async () => {
      const app = await guardedApp(s.store, { leaseMs: 300 });
      try {
        const key = randomUUID();
        const slow = app.send(key, "?delay=1200");
        await sleep(800);
        const during = await app.send(key);
        assert.equal(during.status, 409, "still held, past the first lease");
        assert.equal((await slow).status, 200);
        assert.equal([...app.runs.values()][0], 1);
      } finally {
        await app.close();
      }
    });

    test("a request without a run identity gets 400 and runs nothing", async () => {
      const app = await guardedApp(s.store);
      try {
        const r = await app.send(undefined);
        assert.equal(r.status, 400);
        assert.equal((await r.json()).type, "INVALID_ARGUMENT");
        assert.equal(app.runs.size, 0);
      } finally {
        await app.close();
      }
    });

    if (name !== "memory") {
      test("a claim lost while the handler runs answers 409 LEASE_LOST and records nothing", async () => {
        const app = await guardedApp(s.store, { leaseMs: 300 });
        try {
          const key = randomUUID();
          const pending = app.send(key, "?delay=1000");
          await sleep(150);
          const [runKey] = app.runs.keys();
          await s.remove(runKey);
          const answer = await pending;
          assert.equal(answer.status, 409);
          const problem = await answer.json();
          assert.equal(problem.type, "LEASE_LOST");
          await sleep(1000);
          assert.equal(await s.store.inspect(runKey), undefined, "the handler's success was not recorded");
        } finally {
          await app.close();
        }
      });
    }
  });
}

describe("signed deliveries through the guard", () => {
  const secret = "whsec_" + Buffer.from("a test signing key").toString("base64");
  test("valid ones run once keyed by their webhook-id; tampered ones are refused", async () => {
    const app = await guardedApp(new MemoryGuardStore(), { secrets: [secret], requireTargetSignature: true });
    try {
      const body = JSON.stringify({ amount: 100 });
      const headers = { "content-type": "application/json", ...signDelivery([secret], { webhookId: "run-1", method: "POST", pathAndQuery: "/run", body }) };
      const ok = await app.send(undefined, "", headers, body);
      assert.equal(ok.status, 200);
      assert.equal((await ok.json()).ran, runKeyOfSignedMessage("run-1"));
      assert.equal((await app.send(undefined, "", headers, body)).headers.get("idempotent-replayed"), "true");
      assert.equal((await app.send(undefined, "", headers, '{"amount":1}')).status, 401);
      assert.equal((await app.send(undefined, "?delay=0", headers, body)).status, 401, "another query than the one signed");
      assert.equal((await app.send("another-key", "", headers, body)).status, 401, "an Idempotency-Key other than the signed id");
      assert.equal((await app.send(undefined, "", { "content-type": "application/json" }, body)).status, 401);
      assert.equal(app.runs.size, 1);
    } finally {
      await app.close();
    }
  });
});

/** `idem proxy` in front of a counting upstream, on a shared store. */
async function startProxy(storeUrl, upstream) {
  const port = await freePort();
  const child = spawn(
    idemBinary(),
    ["proxy", "--listen", `127.0.0.1:${port}`, "--upstream", upstream, "--store", storeUrl, "--insecure-no-auth", "--lease", "30s"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr.on("data", (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(url, { method: "POST" });
      break;
    } catch {
      if (i > 150 || child.exitCode !== null) throw new Error(`idem proxy did not start: ${log}`);
      await sleep(100);
    }
  }
  return {
    url,
    send: (key, path = "/run") => fetch(`${url}${path}`, { method: "POST", headers: { "idempotency-key": key } }),
    stop: () => new Promise((ok) => { child.once("exit", ok); child.kill("SIGTERM"); }),
  };
}

describe("one store shared with the Rust guard (idem proxy)", () => {
  const shared = {
    postgres: async () => {
      const db = await freshDatabase("idem_ts_shared");
      const pool = new pg.Pool({ connectionString: db.url });
      pool.on("error", quiet);
      return { url: db.url, store: await PostgresGuardStore.create(pool), close: async () => { await pool.end(); await db.drop(); } };
    },
    redis: async () => {
      const client = new Redis(REDIS_URL);
      // idem proxy keeps its records under idem-guard's own prefix; the
      // random run keys of the test keep it apart from anything else there.
      return { url: REDIS_URL, store: new RedisGuardStore(client, "idem:guard:"), close: async () => client.disconnect() };
    },
  };
  for (const [name, open] of Object.entries(shared)) {
    test(`each sees the other's claims on ${name}`, async () => {
      const s = await open();
      const upstream = await startTarget(async (d) => {
        if (d.url.includes("slow")) await sleep(1500);
        return 200;
      });
      const proxy = await startProxy(s.url, upstream.url);
      const app = await guardedApp(s.store);
      try {
        const doneHere = randomUUID();
        assert.equal((await app.send(doneHere)).status, 200);
        const there = await proxy.send(doneHere);
        assert.equal(there.status, 200);
        assert.equal(there.headers.get("idempotent-replayed"), "true", "the Rust guard sees the TypeScript guard's completed run");
        assert.equal(upstream.deliveries.length, 0);

        const doneThere = randomUUID();
        assert.equal((await proxy.send(doneThere)).status, 200);
        assert.equal(upstream.deliveries.length, 1);
        const here = await app.send(doneThere);
        assert.equal(here.headers.get("idempotent-replayed"), "true", "the TypeScript guard sees the Rust guard's completed run");

        const inFlight = randomUUID();
        const slow = proxy.send(inFlight, "/slow");
        await upstream.waitFor(2);
        assert.equal((await app.send(inFlight)).status, 409, "a run the Rust guard holds is in progress here");
        assert.equal((await slow).status, 200);
        assert.equal(app.runs.size, 1);
      } finally {
        await app.close();
        await proxy.stop();
        await upstream.close();
        await s.close();
      }
    });
  }
});
