// The guard's Redis scripts and PostgreSQL tables are idem-guard's own, so
// that a Rust, a TypeScript and a Python guard on one store share claims:
// each text here must be the Rust guard's, word for word.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { SCRIPT_TEXTS } from "../dist/stores/redis.js";
import { TABLES } from "../dist/stores/postgres.js";

const rust = (file) =>
  readFileSync(new URL(`../../../crates/guard/src/store/scripts/${file}`, import.meta.url), "utf8");
// Layout may differ; the words may not.
const words = (text) => text.trim().split(/\s+/).join(" ");

for (const [name, text] of Object.entries(SCRIPT_TEXTS)) {
  test(`the Redis script ${name} is idem-guard's`, () => {
    assert.equal(words(text), words(rust(`${name}.lua`)));
  });
}

test("the PostgreSQL tables are idem-guard's", () => {
  assert.equal(words(TABLES), words(rust("schema.sql")));
});
