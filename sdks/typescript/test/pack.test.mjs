// `npm pack` makes a tarball that installs into a fresh project and works
// against the real server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startServer } from "./helpers/server.mjs";

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

test("the packed tarball installs and talks to the server", { timeout: 180_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "idem-ts-pack-"));
  const server = await startServer({ store: "sqlite" });
  try {
    const tarball = process.env.IDEM_TS_TARBALL
      ? process.env.IDEM_TS_TARBALL
      : join(dir, (await run("npm", ["pack", "--pack-destination", dir, "--silent"], { cwd: PACKAGE })).stdout.trim().split("\n").pop());
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], { cwd: dir });
    await writeFile(
      join(dir, "main.mjs"),
      `import { IdemClient, TaskAlreadyExistsError, verifyDelivery } from "@idem/client";
const idem = new IdemClient({ baseUrl: process.argv[2], apiKey: process.argv[3] });
await idem.createQueue({ name: "packed", mode: "pull" });
const task = await idem.createTask("packed", { task_id: "t1", payload: { json: { hello: "world" } } });
const dup = await idem.createTask("packed", { task_id: "t1", payload: { json: {} } }).catch((e) => e);
console.log(JSON.stringify({ state: task.value.state, dup: dup instanceof TaskAlreadyExistsError, verify: typeof verifyDelivery }));
`,
    );
    const { stdout } = await run("node", ["main.mjs", server.url, server.apiKey], { cwd: dir });
    assert.deepEqual(JSON.parse(stdout), { state: "queued", dup: true, verify: "function" });
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
