import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { findLeftoverPostmaster, unreachableDirectory } from "../../src/db/embedded-preflight.js";
import { createLogger } from "../../src/logger.js";
import { assertBuilt } from "../support/cli.js";
import { freePort } from "../support/ports.js";
import { repoRoot } from "../support/tools.js";

// Each way the embedded Postgres can fail to start says what failed and what to do; a Postgres left
// running by a SIGKILLed run is stopped, not reported as "failed to start: undefined".

let scratch: string;
const logger = createLogger("silent");
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "wo-embedded-"));
  await chmod(scratch, 0o755);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Starts an embedded Postgres in a child process, then SIGKILLs the child: its postmaster stays. */
async function leaveOrphanedPostmaster(dataDir: string, port: number): Promise<void> {
  assertBuilt();
  const script = `
    const { startEmbeddedPostgres } = await import(${JSON.stringify(path.join(repoRoot, "dist/src/db/embedded.js"))});
    const { createLogger } = await import(${JSON.stringify(path.join(repoRoot, "dist/src/logger.js"))});
    await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, logger: createLogger("silent") });
    console.log("ready");
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`the child exited with ${code}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("starting the embedded Postgres", () => {
  it("stops a Postgres left running by a run that was SIGKILLed, then starts", async () => {
    const dataDir = path.join(scratch, "killed");
    await leaveOrphanedPostmaster(dataDir, await freePort());
    const leftover = await findLeftoverPostmaster(path.join(dataDir, "postgres"));
    expect(leftover).toMatchObject({ owned: false });
    const database = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger });
    await database.stop();
  });

  it("refuses a data directory that another running process's Postgres holds", async () => {
    const dataDir = path.join(scratch, "shared");
    const first = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger });
    try {
      await expect(startEmbeddedPostgres({ dataDir, port: await freePort(), logger })).rejects.toThrow(
        /is in use by a running Postgres \(pid \d+\) of another process.*set DATA_DIR/,
      );
    } finally {
      await first.stop();
    }
  });

  it("names a port in use and what to do", async () => {
    const server = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as { port: number };
    try {
      await expect(
        startEmbeddedPostgres({ dataDir: path.join(scratch, "port"), port, logger }),
      ).rejects.toThrow(new RegExp(`Port ${port} on 127.0.0.1 is already in use.*EMBEDDED_POSTGRES_PORT`));
    } finally {
      server.close();
    }
  });

  it("names DATABASE_URL and DATA_DIR when the data directory cannot be created (a read-only root)", async () => {
    // Root may write anywhere, so the directory is one below a regular file (ENOTDIR).
    const file = path.join(scratch, "a-file");
    await writeFile(file, "");
    const dataDir = path.join(file, ".data");
    await expect(startEmbeddedPostgres({ dataDir, port: await freePort(), logger })).rejects.toThrow(
      `No DATABASE_URL is set, and the embedded Postgres cannot create its data directory ${dataDir} (ENOTDIR): set DATABASE_URL to a Postgres of your own, or DATA_DIR to a writable directory.`,
    );
  });

  it("finds the directory the postgres user cannot enter (a checkout under /root, say)", async () => {
    const closed = path.join(scratch, "closed");
    await mkdir(path.join(closed, "inside"), { recursive: true });
    await chmod(closed, 0o700);
    expect(await unreachableDirectory(path.join(closed, "inside", "data"))).toBe(closed);
    // A data directory is private (embedded-postgres-access.test.ts): others cannot enter it.
    expect(await unreachableDirectory(path.join(scratch, "killed"))).toBe(path.join(scratch, "killed"));
    expect(await unreachableDirectory(path.join(scratch, "not-made-yet", "data"))).toBeUndefined();
  });
});
