import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../src/db/embedded.js";
import { createPool, type Pool, withTransaction } from "../src/db/pool.js";
import { emitEvents } from "../src/delivery-engine/emit.js";
import { createLogger } from "../src/logger.js";
import { freePort } from "../test/support/ports.js";
import type { ReceivedRequest } from "../test/support/receiver.js";
import { startCommand } from "../test/support/start-command.js";

// The parts every scenario is built from: a real Postgres it can stop, the real service as a child
// process it can SIGKILL or SIGTERM, events emitted straight into the outbox.

export const apiKey = "reliability-admin-key-0123";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Database {
  url: string;
  pool: Pool;
  /** Stops Postgres for `ms`, then starts it again on the same data and port. */
  outage(ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startDatabase(): Promise<Database> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "wo-reliability-pg-"));
  const port = await freePort();
  const logger = createLogger("silent");
  let server: EmbeddedDatabase = await startEmbeddedPostgres({ dataDir, port, logger });
  const pool = createPool(server.url, 4);
  pool.on("error", () => {}); // idle connections die in an outage
  return {
    url: server.url,
    pool,
    async outage(ms) {
      await server.stop();
      await sleep(ms);
      server = await startEmbeddedPostgres({ dataDir, port, logger });
    },
    async close() {
      await pool.end().catch(() => {});
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Service {
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  ready(): Promise<boolean>;
}

/**
 * `webhook-operator serve` against `databaseUrl`, with the Node flags and settings `npm start` gives
 * it; resolves once it listens. `openFiles` lowers the process's limit of open files (`ulimit -n`),
 * so that a scenario can reach it.
 */
export async function startService(
  databaseUrl: string,
  env: Record<string, string> = {},
  openFiles?: number,
): Promise<Service> {
  const port = await freePort();
  const start = await startCommand();
  const command = [process.execPath, ...start.flags, "dist/server/main.js", "serve"];
  if (openFiles !== undefined) command.unshift("sh", "-c", `ulimit -n ${openFiles} && exec "$0" "$@"`);
  const [file = "", ...args] = command;
  const child = spawn(file, args, {
    env: {
      ...start.env,
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      API_KEY: apiKey,
      HOST: "127.0.0.1",
      PORT: String(port),
      KUBERNETES: "false",
      LOG_LEVEL: "fatal",
      ...env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const ready = () =>
    fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) }).then(
      (res) => res.ok,
      () => false,
    );
  for (let waited = 0; !(await ready()); waited += 100) {
    if (waited > 30_000) throw new Error("the service did not become ready within 30 s");
    await sleep(100);
  }
  return { url, child, exited, ready };
}

/** A project with one webhook per url, subscribed to deployment.created. */
export async function createWebhooks(service: Service, urls: string[]): Promise<number> {
  const call = async (pathname: string, body: unknown) => {
    const res = await fetch(`${service.url}/api${pathname}`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${pathname}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: number };
  };
  const project = await call("/projects", { name: "Reliability", slug: `r${Date.now()}` });
  for (const url of urls)
    await call(`/projects/${project.id}/webhooks`, { url, events: ["deployment.created"] });
  return project.id;
}

/** Emits `count` deployment.created events in batches of 500; resolves to their event ids. */
export async function emit(pool: Pool, projectId: number, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += 500) {
    const n = Math.min(500, count - done);
    const events = Array.from({ length: n }, () => ({
      eventType: "deployment.created" as const,
      projectId,
      payload: {},
    }));
    const { emitted } = await withTransaction(pool, (client) => emitEvents(client, events));
    ids.push(...emitted.map((e) => e.envelope.id));
  }
  return ids;
}

/** Lost: emitted events never received; duplicates: requests beyond the first per event. */
export function tally(eventIds: string[], requests: ReceivedRequest[]): { lost: number; duplicates: number } {
  const seen = new Map<string, number>();
  for (const request of requests) {
    const id = (JSON.parse(request.body) as { id: string }).id;
    seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  const lost = eventIds.filter((id) => !seen.has(id)).length;
  let duplicates = 0;
  for (const id of eventIds) duplicates += Math.max(0, (seen.get(id) ?? 0) - 1);
  return { lost, duplicates };
}

/** Waits until `check` holds, polling; false when `limitMs` passed first. */
export async function until(check: () => boolean | Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

export { sleep };
