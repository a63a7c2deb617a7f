import { once } from "node:events";
import { type AddressInfo, createServer, type Server } from "node:net";
import { startReceiver } from "../test/support/receiver.js";
import { apiKey, createWebhooks, emit, sleep, startDatabase, startService, until } from "./harness.js";
import type { Figure } from "./scenarios.js";

// Receivers that hold sends against the rest: 20 that never answer and 20 that stream `102 Processing`
// forever, a backlog queued for them, and a healthy webhook that must not wait behind them: one created
// after the backlog, and one the worker knew before a restart. Without the restart, 20 more answer
// their first send at once and then hang (answering one send in five): a receiver that has answered is
// given longer before it counts as slow (a restarted worker knows no answers, so they would be the
// hanging ones again). Figures of the issue "Hostile receivers and tenants stall no one".

const timeoutMs = 10_000;
const hostileEach = 20;
const backlogEvents = 20; // 800 rows for 40 hostile webhooks, 1,200 for 60
const healthyEvents = 100;

const figure = (scenario: string, name: string, value: number, max: number, unit = ""): Figure => ({
  scenario,
  figure: name,
  value: `${Number.isInteger(value) ? value : value.toFixed(1)}${unit}`,
  bound: `≤ ${max}${unit}`,
  ok: value <= max,
});

/** How long the sends a receiver saw lasted: those still open count until now. */
class Sends {
  private readonly endedMs: number[] = [];
  private readonly open = new Set<{ at: number }>();

  /** A send begins; call the result when it ends. */
  opened(at = Date.now()): () => void {
    const send = { at };
    this.open.add(send);
    return () => {
      if (this.open.delete(send)) this.endedMs.push(Date.now() - at);
    };
  }

  longestMs(): number {
    const now = Date.now();
    return Math.max(0, ...this.endedMs, ...[...this.open].map((send) => now - send.at));
  }
}

/** A raw receiver (node's http server sends no unasked 1xx): `102 Processing` every 300 ms, never more. */
async function startProcessingReceiver(): Promise<{ url: string; sends: Sends; close(): Promise<void> }> {
  const sends = new Sends();
  const server: Server = createServer((socket) => {
    const ended = sends.opened();
    let ticking: NodeJS.Timeout | undefined;
    socket.once("data", () => {
      ticking = setInterval(() => socket.write("HTTP/1.1 102 Processing\r\n\r\n"), 300);
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearInterval(ticking);
      ended();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sends,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function addWebhook(serviceUrl: string, projectId: number, url: string): Promise<void> {
  const res = await fetch(`${serviceUrl}/api/projects/${projectId}/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ url, events: ["deployment.created"] }),
  });
  if (!res.ok) throw new Error(`creating a webhook: ${res.status} ${await res.text()}`);
}

/**
 * The hostile webhooks with their backlog queued, then `healthyEvents` events at 20/s: the healthy
 * webhook's deliveries, their p99 event→arrival, and the longest send the hostile receivers saw end.
 */
async function hostileRun(name: string, restart: boolean): Promise<Figure[]> {
  const db = await startDatabase();
  const receiver = await startReceiver();
  const processing = await startProcessingReceiver();
  const hanging = new Sends();
  receiver.on("/hang", (request, res) => {
    res.on("close", hanging.opened(request.receivedAt));
  });
  // Answered first, a receiver is given longer before it counts as slow: these use it to hang.
  const answerOnce = Array.from({ length: restart ? 0 : hostileEach }, (_, i) => `/answer-once-${i}`);
  for (const path of answerOnce) {
    let sends = 0;
    receiver.on(path, (request, res) => {
      if (sends++ % 5 === 0) res.end("ok");
      else res.on("close", hanging.opened(request.receivedAt));
    });
  }
  // SIGTERM lets open sends finish for at most a second: the hanging ones go back to the queue.
  const env = { DELIVERY_TIMEOUT_MS: String(timeoutMs), SHUTDOWN_TIMEOUT_MS: "1000" };
  try {
    let service = await startService(db.url, env);
    const hostile = [
      ...Array.from({ length: hostileEach }, () => `${receiver.url}/hang`),
      ...Array.from({ length: hostileEach }, () => `${processing.url}/processing`),
      ...answerOnce.map((path) => `${receiver.url}${path}`),
    ];
    const project = await createWebhooks(
      service,
      restart ? [`${receiver.url}/healthy`, ...hostile] : hostile,
    );
    if (restart) {
      // The healthy webhook's receiver has answered this worker before the restart.
      await emit(db.pool, project, 1);
      await until(() => receiver.requests.some((r) => r.path === "/healthy"), 10_000);
    }
    await emit(db.pool, project, backlogEvents);
    // Every slot the hostile receivers can take is taken before the healthy webhook has anything.
    await sleep(2_000);
    if (restart) {
      service.child.kill("SIGTERM");
      await service.exited;
      service = await startService(db.url, env);
    } else {
      await addWebhook(service.url, project, `${receiver.url}/healthy`);
    }
    const emittedAt = new Map<string, number>();
    for (let i = 0; i < healthyEvents; i++) {
      const started = Date.now();
      const [id] = await emit(db.pool, project, 1);
      if (id) emittedAt.set(id, started);
      await sleep(Math.max(0, 50 - (Date.now() - started)));
    }
    const healthy = () =>
      receiver.requests.filter((r) => r.path === "/healthy" && emittedAt.has(idOf(r.body)));
    await until(() => healthy().length >= emittedAt.size, 30_000);
    // Long enough for sends that began before the healthy events to reach their deadline.
    await sleep(timeoutMs + 2_000);
    const latencies = healthy()
      .map((r) => r.receivedAt - (emittedAt.get(idOf(r.body)) ?? r.receivedAt))
      .sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? Number.POSITIVE_INFINITY;
    const longest = Math.max(hanging.longestMs(), processing.sends.longestMs());
    service.child.kill("SIGKILL"); // the hostile sends would hold a graceful stop
    await service.exited;
    return [
      figure(name, `healthy deliveries of ${healthyEvents} missing`, emittedAt.size - healthy().length, 0),
      figure(name, "healthy p99 event→arrival", p99, 1000, " ms"),
      figure(name, `longest hostile send (timeout ${timeoutMs / 1000} s)`, longest, timeoutMs + 1000, " ms"),
    ];
  } finally {
    await receiver.close();
    await processing.close();
    await db.close();
  }
}

const idOf = (body: string) => (JSON.parse(body) as { id: string }).id;

export const hostileNewWebhook = () =>
  hostileRun(
    "20 hanging + 20 1xx + 20 answer-then-hang receivers, backlog, then a new healthy webhook",
    false,
  );

export const hostileAfterRestart = () =>
  hostileRun("20 hanging + 20 1xx receivers, backlog, restart, a known healthy webhook", true);
