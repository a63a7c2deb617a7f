import { connectionFailedMessage, httpErrorMessage } from "../src/delivery-engine/sender.js";
import { freePort } from "../test/support/ports.js";
import { startReceiver } from "../test/support/receiver.js";
import { createWebhooks, emit, sleep, startDatabase, startService, tally, until } from "./harness.js";

/** One line of the table: a figure, its bound, and whether it kept it. */
export interface Figure {
  scenario: string;
  figure: string;
  value: string;
  bound: string;
  ok: boolean;
}

export const figure = (scenario: string, name: string, value: number, max: number, unit = ""): Figure => ({
  scenario,
  figure: name,
  value: `${Number.isInteger(value) ? value : value.toFixed(1)}${unit}`,
  bound: `≤ ${max}${unit}`,
  ok: value <= max,
});

/** SIGKILL of the service mid-burst, restart: nothing lost, duplicates at most the sends in flight. */
export async function sigkillMidBurst(events = 10_000): Promise<Figure[]> {
  const name = `SIGKILL mid-burst (${events} events)`;
  const db = await startDatabase();
  const receiver = await startReceiver();
  const env = { DELIVERY_TIMEOUT_MS: "5000", DELIVERY_LEASE_MS: "15000" };
  try {
    let service = await startService(db.url, env);
    const project = await createWebhooks(service, [`${receiver.url}/ok`]);
    const ids = await emit(db.pool, project, events);
    await until(() => receiver.requests.length >= events / 4, 60_000);
    service.child.kill("SIGKILL");
    await service.exited;
    const killedAt = Date.now();
    service = await startService(db.url, env);
    const drained = await until(() => tally(ids, receiver.requests).lost === 0, 120_000);
    const drainSeconds = (Date.now() - killedAt) / 1000;
    service.child.kill("SIGTERM");
    await service.exited;
    const { lost, duplicates } = tally(ids, receiver.requests);
    return [
      figure(name, "lost", lost, 0),
      figure(name, "duplicates (64 slots in flight at most)", duplicates, 64),
      figure(
        name,
        "time to drain after the kill",
        drained ? drainSeconds : Number.POSITIVE_INFINITY,
        120,
        " s",
      ),
    ];
  } finally {
    await receiver.close();
    await db.close();
  }
}

/** Two replicas on one database, one SIGKILLed mid-burst: the other retakes its claims after the lease. */
export async function twoReplicasOneKilled(events = 5_000): Promise<Figure[]> {
  const name = `two replicas, one SIGKILLed mid-burst (${events} events, 5 s lease)`;
  const db = await startDatabase();
  const receiver = await startReceiver();
  const env = { DELIVERY_TIMEOUT_MS: "2000", DELIVERY_LEASE_MS: "5000" };
  try {
    const doomed = await startService(db.url, env);
    const survivor = await startService(db.url, env);
    const project = await createWebhooks(doomed, [`${receiver.url}/ok`]);
    const ids = await emit(db.pool, project, events);
    await until(() => receiver.requests.length >= events / 5, 60_000);
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const killedAt = Date.now();
    const drained = await until(() => tally(ids, receiver.requests).lost === 0, 120_000);
    const drainSeconds = (Date.now() - killedAt) / 1000;
    // Every event has arrived; the survivor records the last outcomes as their responses come back, so
    // rows may still be open for a moment. Rows of the killed replica's claims that no one retakes stay
    // open for good: wait a lease and more for the count to reach 0, then take what is left.
    const unfinished = async () =>
      (
        await db.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM deliveries WHERE delivered_at IS NULL",
        )
      ).rows[0]?.n ?? 0;
    await until(async () => (await unfinished()) === 0, 15_000);
    const left = await unfinished();
    survivor.child.kill("SIGTERM");
    await survivor.exited;
    const { lost, duplicates } = tally(ids, receiver.requests);
    return [
      figure(name, "lost", lost, 0),
      figure(name, "duplicates (the killed replica's sends in flight, 64 at most)", duplicates, 64),
      figure(name, "unfinished rows left (claims not retaken)", left, 0),
      figure(
        name,
        "time to drain after the kill",
        drained ? drainSeconds : Number.POSITIVE_INFINITY,
        60,
        " s",
      ),
    ];
  } finally {
    await receiver.close();
    await db.close();
  }
}

/** Postgres stopped mid-burst: nothing lost, no duplicate, not ready during it, ready after. */
export async function databaseOutage(outageMs: number): Promise<Figure[]> {
  const name = `Postgres stopped ${outageMs / 1000} s mid-burst`;
  const db = await startDatabase();
  const receiver = await startReceiver();
  receiver.on("/slow", (_req, res) => setTimeout(() => res.writeHead(200).end("ok"), 20));
  try {
    const service = await startService(db.url);
    const project = await createWebhooks(service, [`${receiver.url}/slow`]);
    const ids = await emit(db.pool, project, 3_000);
    await until(() => receiver.requests.length >= 500, 60_000);
    const outage = db.outage(outageMs);
    await sleep(Math.min(2_000, outageMs / 2));
    const readyDuring = await service.ready();
    await outage;
    const readyAfter = await until(() => service.ready(), 30_000);
    await until(() => tally(ids, receiver.requests).lost === 0, 120_000);
    const stillRunning = service.child.exitCode === null;
    service.child.kill("SIGTERM");
    await service.exited;
    const { lost, duplicates } = tally(ids, receiver.requests);
    return [
      figure(name, "lost", lost, 0),
      figure(name, "duplicates", duplicates, 0),
      figure(name, "/readyz ready during the outage (0 = no)", readyDuring ? 1 : 0, 0),
      figure(
        name,
        "/readyz not ready again within 30 s, or restarted (0 = fine)",
        readyAfter && stillRunning ? 0 : 1,
        0,
      ),
    ];
  } finally {
    await receiver.close();
    await db.close();
  }
}

/** 20 receivers that never answer and one healthy one under a steady load: the healthy one's p99. */
export async function hangingReceivers(): Promise<Figure[]> {
  const name = "20 hanging receivers + 1 healthy, 50 events/s for 15 s";
  const db = await startDatabase();
  const receiver = await startReceiver();
  const held: { end(): void }[] = [];
  receiver.on("/hang", (_req, res) => held.push(res));
  try {
    const service = await startService(db.url);
    const urls = [...Array.from({ length: 20 }, () => `${receiver.url}/hang`), `${receiver.url}/healthy`];
    const project = await createWebhooks(service, urls);
    const emittedAt = new Map<string, number>();
    for (let tick = 0; tick < 15 * 50; tick++) {
      const started = Date.now();
      const [id] = await emit(db.pool, project, 1);
      if (id) emittedAt.set(id, started);
      await sleep(Math.max(0, 20 - (Date.now() - started)));
    }
    const healthy = () => receiver.requests.filter((r) => r.path === "/healthy");
    await until(() => healthy().length >= emittedAt.size, 30_000);
    const latencies = healthy()
      .map((r) => r.receivedAt - (emittedAt.get((JSON.parse(r.body) as { id: string }).id) ?? r.receivedAt))
      .sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? Number.POSITIVE_INFINITY;
    for (const res of held) res.end();
    service.child.kill("SIGKILL"); // the hanging sends would hold a graceful stop for their timeout
    await service.exited;
    return [
      figure(name, "healthy deliveries missing", emittedAt.size - healthy().length, 0),
      figure(name, "healthy p99 event→arrival", p99, 1000, " ms"),
    ];
  } finally {
    await receiver.close();
    await db.close();
  }
}

/** Receivers that fail in each way docs/api.md lists: each record's status_code and error_message. */
export async function failingReceivers(): Promise<Figure[]> {
  const name = "failing receivers (their delivery records)";
  const db = await startDatabase();
  const receiver = await startReceiver();
  receiver.on("/reset", (_req, res) => res.socket?.destroy());
  receiver.on("/500", (_req, res) => res.writeHead(500).end("boom"));
  receiver.on("/301", (_req, res) => res.writeHead(301, { location: "/elsewhere" }).end());
  receiver.on("/50mb", (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    const chunk = Buffer.alloc(1024 * 1024, "x");
    for (let i = 0; i < 50; i++) res.write(chunk);
    res.end();
  });
  const closed = `http://127.0.0.1:${await freePort()}/never`;
  const expected: Record<string, { status: number; message: string | null }> = {
    [`${receiver.url}/reset`]: { status: 0, message: connectionFailedMessage(`${receiver.url}/reset`) },
    [`${receiver.url}/500`]: { status: 500, message: httpErrorMessage(`${receiver.url}/500`, 500) },
    [`${receiver.url}/301`]: { status: 301, message: httpErrorMessage(`${receiver.url}/301`, 301) },
    [`${receiver.url}/50mb`]: { status: 200, message: null },
    [closed]: { status: 0, message: connectionFailedMessage(closed) },
  };
  try {
    const service = await startService(db.url);
    const project = await createWebhooks(service, Object.keys(expected));
    await emit(db.pool, project, 1);
    const rows = async () =>
      (
        await db.pool.query<{ url: string; status_code: number; error_message: string | null }>(
          `SELECT w.url, d.status_code, d.error_message FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE d.state = 'done'`,
        )
      ).rows;
    await until(async () => (await rows()).length === Object.keys(expected).length, 60_000);
    const wrong = (await rows()).filter(
      (row) =>
        row.status_code !== expected[row.url]?.status || row.error_message !== expected[row.url]?.message,
    );
    for (const row of wrong) process.stderr.write(`unexpected record: ${JSON.stringify(row)}\n`);
    const recorded = (await rows()).length;
    service.child.kill("SIGTERM");
    await service.exited;
    return [
      figure(name, "receivers without a record", Object.keys(expected).length - recorded, 0),
      figure(name, "records not as docs/api.md lists them", wrong.length, 0),
    ];
  } finally {
    await receiver.close();
    await db.close();
  }
}

/** SIGTERM (a rolling update) while a 20 s receiver holds deliveries: none is sent twice. */
export async function rollingRestart(): Promise<Figure[]> {
  const name = "rolling restart (SIGTERM) with a 20 s receiver";
  const db = await startDatabase();
  const receiver = await startReceiver();
  receiver.on("/slow", (_req, res) => setTimeout(() => res.writeHead(200).end("ok"), 20_000));
  try {
    let service = await startService(db.url);
    const project = await createWebhooks(service, [`${receiver.url}/slow`]);
    const ids = await emit(db.pool, project, 3);
    await until(() => receiver.requests.length >= 1, 30_000);
    service.child.kill("SIGTERM");
    await service.exited;
    service = await startService(db.url);
    await until(() => tally(ids, receiver.requests).lost === 0, 120_000);
    await sleep(1_000);
    service.child.kill("SIGTERM");
    await service.exited;
    const { lost, duplicates } = tally(ids, receiver.requests);
    return [figure(name, "lost", lost, 0), figure(name, "duplicates", duplicates, 0)];
  } finally {
    await receiver.close();
    await db.close();
  }
}
