// Starts the real `idem` binary for a test: SQLite in a scratch directory, or
// PostgreSQL in a database made for the test and dropped after it.

import { spawn } from "node:child_process";
import { mkdtemp, rm, open } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import pg from "pg";

const REPO = resolve(fileURLToPath(new URL("../../../..", import.meta.url)));

export function idemBinary() {
  if (process.env.IDEM_BIN) return process.env.IDEM_BIN;
  const target = process.env.CARGO_TARGET_DIR || join(REPO, "target");
  return join(target, "debug", "idem");
}

export const DATABASE_URL = process.env.IDEM_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = process.env.IDEM_TEST_REDIS_URL || "redis://127.0.0.1:6379";

/** The stores the API tests run on: both unless IDEM_TEST_STORES narrows them. */
export const STORES = (process.env.IDEM_TEST_STORES || "sqlite,postgres").split(",").filter(Boolean);

export async function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** A connection URL for database `name` on the test server. */
export function databaseUrl(name) {
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Makes a fresh database; answers its URL and a function that drops it. */
export async function freshDatabase(prefix = "idem_ts") {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: databaseUrl("postgres") });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrl(name),
    async drop() {
      const c = new pg.Client({ connectionString: databaseUrl("postgres") });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export const BOOTSTRAP_KEY = "idem_test_bootstrap_key_0123456789abcdef";

/**
 * Starts `idem serve` on a free loopback port and waits for /readyz.
 * `store` is "sqlite" or "postgres"; `args` are extra flags.
 */
export async function startServer({ store = "sqlite", args = [] } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "idem-ts-"));
  const database = store === "postgres" ? await freshDatabase() : undefined;
  const storeArgs = database ? ["--database-url", database.url] : ["--data-dir", join(dir, "data")];
  const log = await open(join(dir, "server.log"), "w");
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(
      idemBinary(),
      ["serve", "--listen", `127.0.0.1:${port}`, "--bootstrap-key", BOOTSTRAP_KEY, ...storeArgs, ...args],
      { stdio: ["ignore", log.fd, log.fd], env: { ...process.env, RUST_LOG: process.env.RUST_LOG || "warn" } },
    );
    const exited = new Promise((ok) => {
      child.once("exit", (code) => ok(code));
      child.once("error", (error) => ok(`spawn failed: ${error.message}`));
    });
    let exitCode;
    exited.then((code) => (exitCode = code));
    const deadline = Date.now() + 30_000;
    while (exitCode === undefined && Date.now() < deadline) {
      try {
        const r = await fetch(`${url}/readyz`);
        if (r.ok) {
          return {
            url,
            port,
            apiKey: BOOTSTRAP_KEY,
            store,
            dir,
            database,
            process: child,
            async stop() {
              if (exitCode === undefined) {
                child.kill("SIGTERM");
                const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
                await exited;
                clearTimeout(timer);
              }
              await log.close().catch(() => {});
              await database?.drop();
              await rm(dir, { recursive: true, force: true });
            },
          };
        }
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGKILL");
    await exited;
    // Another process may have taken the port between the probe and the bind.
    if (tries < 2) continue;
    await log.close();
    const { readFile } = await import("node:fs/promises");
    const text = await readFile(join(dir, "server.log"), "utf8").catch(() => "");
    await database?.drop();
    throw new Error(`idem serve did not become ready (exit ${exitCode}):\n${text.slice(-4000)}`);
  }
}
