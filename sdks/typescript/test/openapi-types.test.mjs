// The committed types must be what the server's OpenAPI document generates.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { GENERATED_PATH, typesFor } from "../scripts/openapi-types.mjs";
import { startServer } from "./helpers/server.mjs";

test("src/generated/openapi.ts is not stale against GET /openapi.json", async () => {
  const server = await startServer({ store: "sqlite" });
  try {
    const document = await (await fetch(`${server.url}/openapi.json`)).json();
    assert.equal(document.openapi.startsWith("3.1"), true);
    const fresh = await typesFor(document);
    const committed = await readFile(GENERATED_PATH, "utf8");
    assert.ok(committed === fresh, "src/generated/openapi.ts is stale: run `npm run generate` and commit it");
    // Every operation of the document has its method on the client.
    const { IdemClient } = await import("../dist/index.js");
    const noClientMethod = new Set(["healthz", "metrics", "openapi", "readyz"]);
    for (const item of Object.values(document.paths)) {
      for (const op of Object.values(item)) {
        if (noClientMethod.has(op.operationId)) continue;
        assert.equal(typeof IdemClient.prototype[op.operationId], "function", `client method for ${op.operationId}`);
      }
    }
  } finally {
    await server.stop();
  }
});
