// The shared run-key vectors, which the Rust guard is held to as well.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { deriveRunKey, KeyError, scheduleInstant, runKeyFromParts, runKeyOfSignedMessage } from "../dist/index.js";

const vectors = JSON.parse(readFileSync(new URL("../../../crates/guard/testdata/run-keys.json", import.meta.url), "utf8")).vectors;

test("the shared file has vectors of keys and of every error", () => {
  assert.ok(vectors.length >= 20);
  const errors = new Set(vectors.filter((v) => v.error).map((v) => v.error));
  for (const kind of ["missing_identity", "repeated_header", "missing_scope", "invalid_schedule_time", "repeated_query_parameter"]) {
    assert.ok(errors.has(kind), kind);
  }
});

for (const v of vectors) {
  test(`run-key vector: ${v.name}`, () => {
    const sources = v.sources?.map((s) => (typeof s === "string" ? s : s));
    const config = { ...(sources ? { sources } : {}), ...(v.scopes ? { scopes: v.scopes } : {}) };
    const head = { uri: v.uri, headers: v.headers, ...(v.signed_webhook_id !== undefined ? { signedWebhookId: v.signed_webhook_id } : {}) };
    if (v.error) {
      assert.throws(() => deriveRunKey(head, config), (e) => e instanceof KeyError && e.kind === v.error);
    } else {
      assert.equal(deriveRunKey(head, config), v.run_key);
    }
  });
}

test("spellings of one schedule instant are one, other instants are not", () => {
  const utc = scheduleInstant("2026-10-16T12:00:00Z");
  assert.equal(utc, "2026-10-16T12:00:00Z");
  for (const same of ["2026-10-16T05:00:00-07:00", "2026-10-16T12:00:00.000Z", "2026-10-16T14:00:00.000000+02:00", "2026-10-16t12:00:00z"]) {
    assert.equal(scheduleInstant(same), utc, same);
  }
  assert.equal(scheduleInstant("2026-10-16T12:00:00.50Z"), "2026-10-16T12:00:00.5Z");
  assert.notEqual(scheduleInstant("2026-10-16T12:00:01Z"), utc);
  for (const bad of ["yesterday", "2026-02-30T00:00:00Z", "2026-10-16T24:00:00Z", "2026-10-16T12:00:00"]) {
    assert.throws(() => scheduleInstant(bad), KeyError, bad);
  }
});

test("parts are length-prefixed and a signed message is keyed as its bare Idempotency-Key", () => {
  assert.notEqual(runKeyFromParts(["ab", "c"]), runKeyFromParts(["a", "bc"]));
  assert.notEqual(runKeyFromParts(["a"]), runKeyFromParts(["a", ""]));
  assert.equal(runKeyOfSignedMessage("msg_1"), deriveRunKey({ uri: "/", headers: [["Idempotency-Key", "msg_1"]] }));
});
