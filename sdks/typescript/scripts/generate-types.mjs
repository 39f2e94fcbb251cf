#!/usr/bin/env node
// npm run generate [-- --url http://127.0.0.1:7070]  rewrites src/generated/openapi.ts
// npm run check-types                                 exits 1 when it is stale
//
// Without --url, starts the server binary (IDEM_BIN, else
// ${CARGO_TARGET_DIR:-<repo>/target}/debug/idem) on a scratch SQLite store.

import { readFile, writeFile } from "node:fs/promises";
import { GENERATED_PATH, typesFor } from "./openapi-types.mjs";
import { startServer } from "../test/helpers/server.mjs";

const args = process.argv.slice(2);
const check = args.includes("--check");
const urlAt = args.indexOf("--url");
let url = urlAt >= 0 ? args[urlAt + 1] : undefined;
let server;
if (!url) {
  server = await startServer({ store: "sqlite" });
  url = server.url;
}
try {
  const response = await fetch(new URL("/openapi.json", url));
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
  const text = await typesFor(await response.json());
  if (check) {
    const committed = await readFile(GENERATED_PATH, "utf8").catch(() => "");
    if (committed !== text) {
      console.error("src/generated/openapi.ts is stale against the server's OpenAPI document: run `npm run generate`");
      process.exitCode = 1;
    } else {
      console.log("src/generated/openapi.ts matches the server's OpenAPI document");
    }
  } else {
    await writeFile(GENERATED_PATH, text);
    console.log(`wrote ${GENERATED_PATH.pathname}`);
  }
} finally {
  await server?.stop();
}
