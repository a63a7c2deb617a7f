import { startReceiver } from "../test/support/receiver.js";
import {
  apiKey,
  createWebhooks,
  emit,
  type Service,
  sleep,
  startDatabase,
  startService,
  tally,
  until,
} from "./harness.js";
import { dropPacketsTo } from "./packet-drop.js";
import { type Figure, figure } from "./scenarios.js";

// Postgres blackholed mid-burst: packets to its port dropped, not refused, for 25 s (by default),
// with two replicas delivering. Their claims' lease is 15 s (the default's 60 s would need a minute's
// hole), so the leases on the rows they claimed run out during the hole, and the API requests begun in
// its first 5 s reach their bound before it ends. Measured with the service's default database
// timeouts: how soon /readyz says 503 and how long each probe takes, that no API request hangs past
// its bound (statement timeout 15 s + 5 s), how soon deliveries flow once packets pass, and what was
// lost or sent twice. The scenario runs without Kubernetes, so there is no leader's Lease
// (it lives in the Kubernetes API, not in Postgres, which this cannot reach); the Postgres side of
// "one owner at a time" is the rows' claims, which the duplicates and the unfinished rows measure.

const readyBoundMs = 2_000;
const apiBoundMs = 15_000 + 5_000;
const events = 3_000;
// The lease must cover the longest send (timeout + connect bound + 1 s): 5 + 5 + 1 s.
const leased = { DELIVERY_TIMEOUT_MS: "5000", DELIVERY_LEASE_MS: "15000" };

interface Timed {
  at: number;
  tookMs: number;
  status: number;
}

async function timedGet(url: string, limitMs: number): Promise<Timed> {
  const at = Date.now();
  const status = await fetch(url, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(limitMs),
  }).then(
    async (res) => {
      await res.arrayBuffer();
      return res.status;
    },
    () => 0, // no answer within the limit
  );
  return { at, tookMs: Date.now() - at, status };
}

/** Calls `probe` every `everyMs` until `stop()` is true; all calls' results, the slow ones included. */
async function probeUntil(
  probe: () => Promise<Timed>,
  everyMs: number,
  stop: () => boolean,
): Promise<Timed[]> {
  const calls: Promise<Timed>[] = [];
  while (!stop()) {
    calls.push(probe());
    await sleep(everyMs);
  }
  return Promise.all(calls);
}

export async function blackholedDatabase(blackholeMs = 25_000): Promise<Figure[]> {
  const name = `Postgres blackholed ${blackholeMs / 1000} s mid-burst (2 replicas, ${events} events)`;
  const db = await startDatabase();
  const port = Number(new URL(db.url).port);
  const receiver = await startReceiver();
  receiver.on("/slow", (_req, res) => setTimeout(() => res.writeHead(200).end("ok"), 20));
  const replicas: Service[] = [];
  let drop: ReturnType<typeof dropPacketsTo> | undefined;
  try {
    replicas.push(await startService(db.url, leased), await startService(db.url, leased));
    const [a, b] = replicas as [Service, Service];
    const project = await createWebhooks(a, [`${receiver.url}/slow`]);
    const ids = await emit(db.pool, project, events);
    await until(() => receiver.requests.length >= 500, 60_000);

    drop = dropPacketsTo(port);
    const droppedAt = Date.now();
    const receivedAtDrop = receiver.requests.length;
    let holeOpen = true;
    const stopWhenLifted = () => !holeOpen;
    const during = Promise.all([
      probeUntil(() => timedGet(`${a.url}/readyz`, 30_000), 500, stopWhenLifted),
      probeUntil(() => timedGet(`${b.url}/api/projects/${project}/webhooks`, 60_000), 2_000, stopWhenLifted),
    ]);
    await sleep(blackholeMs);
    holeOpen = false;
    const sentDuring = receiver.requests.filter((r) => r.receivedAt > droppedAt).length;
    drop.lift();
    const liftedAt = Date.now();
    const [readyProbes, apiCalls] = await during;

    const readyAgain = await until(async () => (await a.ready()) && (await b.ready()), 60_000);
    const readyAgainS = (Date.now() - liftedAt) / 1000;
    // Flowing: a hundred more deliveries arrived (not one send that was already on its way).
    const afterLift = () => receiver.requests.filter((r) => r.receivedAt > liftedAt);
    const flowing = await until(() => afterLift().length >= 100, 120_000);
    const hundredth = afterLift()[99];
    const flowingAgainS = flowing && hundredth ? (hundredth.receivedAt - liftedAt) / 1000 : Infinity;
    const firstAfterS = ((afterLift()[0]?.receivedAt ?? Infinity) - liftedAt) / 1000;
    await until(() => tally(ids, receiver.requests).lost === 0, 180_000);
    const unfinished = async () =>
      (
        await db.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM deliveries WHERE delivered_at IS NULL",
        )
      ).rows[0]?.n ?? 0;
    await until(async () => (await unfinished()) === 0, 30_000);
    const left = await unfinished();
    const running = replicas.every((r) => r.child.exitCode === null);
    for (const replica of replicas) replica.child.kill("SIGTERM");
    await Promise.all(replicas.map((r) => r.exited));

    const first503 = readyProbes.find((p) => p.status === 503);
    // Probes begun once the bound had passed and answered before packets passed again.
    const cutOff = (p: Timed) => p.at > droppedAt + readyBoundMs && p.at + p.tookMs < liftedAt;
    const during503 = readyProbes.filter(cutOff);
    const { lost, duplicates } = tally(ids, receiver.requests);
    process.stderr.write(
      `blackhole: ${receivedAtDrop} received before the drop, ${sentDuring} during, the first after ${firstAfterS} s; API statuses during: ${apiCalls.map((c) => c.status).join(",")}\n`,
    );
    return [
      figure(name, "lost", lost, 0),
      figure(name, "duplicates (sends in flight when cut off, 2 × 64 at most)", duplicates, 128),
      figure(name, "unfinished rows left (claims not retaken)", left, 0),
      figure(
        name,
        "time to the first /readyz 503",
        first503 ? (first503.at + first503.tookMs - droppedAt) / 1000 : Infinity,
        (2 * readyBoundMs) / 1000,
        " s",
      ),
      figure(
        name,
        "slowest /readyz answer while cut off",
        Math.max(...readyProbes.map((p) => p.tookMs)) / 1000,
        readyBoundMs / 1000 + 0.5,
        " s",
      ),
      figure(
        name,
        `/readyz probes not 503 while cut off (of ${during503.length})`,
        during503.filter((p) => p.status !== 503).length,
        0,
      ),
      figure(
        name,
        "slowest API request while cut off",
        Math.max(...apiCalls.map((c) => c.tookMs)) / 1000,
        apiBoundMs / 1000 + 1,
        " s",
      ),
      figure(name, "API requests unanswered (no status)", apiCalls.filter((c) => c.status === 0).length, 0),
      figure(name, "/readyz ready again after packets pass", readyAgain ? readyAgainS : Infinity, 15, " s"),
      figure(name, "deliveries flowing again after packets pass (100 more arrived)", flowingAgainS, 35, " s"),
      figure(name, "replicas restarted or exited (0 = none)", running ? 0 : 1, 0),
    ];
  } finally {
    drop?.lift();
    for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill("SIGKILL");
    await receiver.close();
    await db.close();
  }
}
