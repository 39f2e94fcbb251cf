// An Express app behind the TypeScript guard (@idem/client's idemGuard).
//
// Usage: node app.mjs PORT STORE_URL COUNTER_URL
//
// The package is used as sdks/typescript/test.sh builds it (dist/), with the
// express, pg and ioredis that its npm ci installed.
import { createRequire } from "node:module";
import { PostgresGuardStore, RedisGuardStore, idemGuard } from "../typescript/dist/index.js";

const require = createRequire(new URL("../typescript/package.json", import.meta.url));
const express = require("express");

const [port, storeUrl, counter] = process.argv.slice(2);

async function openStore(url) {
  if (url.startsWith("postgres")) {
    const pg = require("pg");
    return PostgresGuardStore.create(new pg.Pool({ connectionString: url, max: 10 }));
  }
  const Redis = require("ioredis");
  // idem-guard's own prefix, the one `idem proxy` uses.
  return new RedisGuardStore(new Redis(url), "idem:guard:");
}

const store = await openStore(storeUrl);
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

const app = express();
app.post(
  "/run",
  idemGuard({ store, onWarning: (message, detail) => console.error("guard:", message, detail) }),
  async (req, res) => {
    const q = new URLSearchParams({ k: String(req.query.k), guard: "typescript", run: req.idem.runKey });
    const { outcome } = await (await fetch(`${counter}/execute?${q}`, { method: "POST" })).json();
    await sleep(Number(req.query.ms));
    res.status(outcome === "fail" ? 500 : 200).json({ guard: "typescript", outcome });
  },
);
app.listen(Number(port), "127.0.0.1");
