// The retry policy's decisions, seen through a fetch that answers what the
// server answers in the cases a live server cannot be made to hit on cue.
import { test } from "node:test";
import assert from "node:assert/strict";
import { IdemClient, ResourceExhaustedError, UnavailableError, parseRetryAfter } from "../dist/index.js";

function scripted(answers) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ at: Date.now(), key: init.headers["idempotency-key"], method: init.method });
    const [status, body, headers = {}] = answers[Math.min(calls.length - 1, answers.length - 1)];
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
  };
  return { calls, fetch };
}
const problem = (type, status) => ({ type, title: "", status, detail: type });

test("409 IDEMPOTENCY_KEY_IN_PROGRESS is retried after its Retry-After with the same key", async () => {
  const { calls, fetch } = scripted([
    [409, problem("IDEMPOTENCY_KEY_IN_PROGRESS", 409), { "retry-after": "1" }],
    [201, { name: "q" }, { "idempotent-replayed": "true" }],
  ]);
  const idem = new IdemClient({ baseUrl: "http://idem.test", apiKey: "k", fetch, retry: { initialBackoffMs: 10 } });
  const created = await idem.createQueue({ name: "q" });
  assert.equal(created.status, 201);
  assert.equal(created.replayed, true);
  assert.equal(calls.length, 2);
  assert.equal(calls[0].key, calls[1].key);
  assert.ok(calls[1].at - calls[0].at >= 1000, "waited for Retry-After");
});

test("429 and 503 are retried; a quota's RESOURCE_EXHAUSTED is not; attempts are bounded", async () => {
  const busy = scripted([[429, problem("RATE_LIMITED", 429)], [503, problem("UNAVAILABLE", 503)], [201, { name: "q" }]]);
  const idem = new IdemClient({ baseUrl: "http://idem.test", fetch: busy.fetch, retry: { initialBackoffMs: 5 } });
  assert.equal((await idem.createQueue({ name: "q" })).attempts, 3);
  assert.equal(new Set(busy.calls.map((c) => c.key)).size, 1);

  const quota = scripted([[429, { ...problem("RESOURCE_EXHAUSTED", 429), extensions: { limit: "queues_per_org", max: 1 } }]]);
  const q = new IdemClient({ baseUrl: "http://idem.test", fetch: quota.fetch, retry: { initialBackoffMs: 5 } });
  const error = await q.createQueue({ name: "q" }).catch((e) => e);
  assert.ok(error instanceof ResourceExhaustedError);
  assert.equal(error.limit, "queues_per_org");
  assert.equal(quota.calls.length, 1);

  const down = scripted([[503, problem("UNAVAILABLE", 503), { "retry-after": "0" }]]);
  const d = new IdemClient({ baseUrl: "http://idem.test", fetch: down.fetch, retry: { initialBackoffMs: 5, maxAttempts: 3 } });
  await assert.rejects(d.getQueue("q"), UnavailableError);
  assert.equal(down.calls.length, 3);
  assert.equal(down.calls[0].key, undefined, "a GET carries no key");
});

test("Retry-After reads seconds and HTTP dates", () => {
  assert.equal(parseRetryAfter("2"), 2000);
  assert.equal(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT"), 0);
  const soon = parseRetryAfter(new Date(Date.now() + 120_000).toUTCString());
  assert.ok(soon > 100_000 && soon <= 120_000);
  assert.equal(parseRetryAfter("soon"), undefined);
  assert.equal(parseRetryAfter(null), undefined);
});
