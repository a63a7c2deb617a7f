import { recordRollout } from "../src/operator/rollouts/record-rollout.js";
import { findProject, type ProjectRow } from "../src/projects/store.js";
import { deploymentFixture, rolloutStates } from "../test/support/deployments.js";
import type { ReceivedRequest } from "../test/support/receiver.js";
import { startReceiver } from "../test/support/receiver.js";
import { apiKey, type Database, type Service, startDatabase, startService, until } from "./harness.js";
import { checkOrder, checkRate, pauseViolations, percentile } from "./rollout-storm-checks.js";
import type { Figure } from "./scenarios.js";

// A platform-wide change: 300 workloads roll out at once (created, ready, succeeded each, recorded
// through the operator's own path, recordRollout), fanned out to 10 webhooks of their namespace. Two are
// throttled (a rate limit, and their receivers answer some requests 429 with Retry-After), one answers
// 410 Gone (auto-disable on), seven are healthy. Two replicas share the queue; one is SIGKILLed mid-storm.

const workloads = 300;
const rate = { per_second: 50, burst: 10 };
/** Every this many requests, a throttled receiver answers 429 with Retry-After: 1. */
const throttleEvery = 150;
const env = { DELIVERY_TIMEOUT_MS: "2000", DELIVERY_LEASE_MS: "5000", DELIVERY_POLL_INTERVAL_MS: "500" };
const allEvents = ["deployment.created", "deployment.ready", "deployment.succeeded"];

const paths = {
  throttled: ["/throttled-0", "/throttled-1"],
  gone: "/gone",
  healthy: Array.from({ length: 7 }, (_, i) => `/healthy-${i}`),
};

async function api(service: Service, method: string, pathname: string, body?: unknown) {
  const res = await fetch(`${service.url}/api${pathname}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown> & { id: number };
}

async function setUp(service: Service, db: Database, receiverUrl: string) {
  const created = await api(service, "POST", "/projects", { name: "Storm", slug: "storm" });
  const project = (await findProject(db.pool, created.id)) as ProjectRow;
  const hook = (path: string, fields: Record<string, unknown> = {}) =>
    api(service, "POST", `/projects/${project.id}/webhooks`, {
      url: `${receiverUrl}${path}`,
      events: allEvents,
      ...fields,
    });
  for (const path of paths.throttled) await hook(path, { rate_limit: rate });
  const gone = await hook(paths.gone, { auto_disable: { after_failures: 1000, min_duration_seconds: 0 } });
  for (const path of paths.healthy) await hook(path);
  return { project, goneId: gone.id };
}

/** Every workload's rollout steps, each recorded as the operator records a watch event. */
async function storm(db: Database, project: ProjectRow): Promise<void> {
  const steps = [{}, rolloutStates.ready, rolloutStates.succeeded];
  for (const step of steps) {
    for (let first = 0; first < workloads; first += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          recordRollout(
            db.pool,
            project,
            deploymentFixture({ uid: `storm-${first + i}`, name: `w${first + i}`, ...step }),
          ),
        ),
      );
    }
  }
}

export async function rolloutStorm(): Promise<Figure[]> {
  const name = `rollout storm (${workloads} workloads × 3 events, 10 webhooks, one of 2 replicas SIGKILLed)`;
  const db = await startDatabase();
  const receiver = await startReceiver();
  const pauses: { path: string; answeredAt: number; untilMs: number }[] = [];
  /** Requests answered 429: not delivered, sent again after the pause. */
  const throttledRequests = new WeakSet<ReceivedRequest>();
  for (const path of paths.throttled) {
    let seen = 0;
    receiver.on(path, (request, res) => {
      seen += 1;
      if (seen % throttleEvery !== 0) return void res.writeHead(200).end();
      throttledRequests.add(request);
      pauses.push({ path, answeredAt: Date.now(), untilMs: Date.now() + 1_000 });
      res.writeHead(429, { "retry-after": "1" }).end();
    });
  }
  receiver.on(paths.gone, (_request, res) => res.writeHead(410).end());
  try {
    const doomed = await startService(db.url, env);
    const survivor = await startService(db.url, env);
    const { project, goneId } = await setUp(doomed, db, receiver.url);
    const expected = workloads * 3 * (paths.throttled.length + paths.healthy.length);
    const received = () => receiver.requests.filter((r) => r.path !== paths.gone);
    const storming = storm(db, project);
    await until(() => received().length >= expected / 4, 120_000);
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    await storming;
    const { rows: events } = await db.pool.query<{ id: string; created_ms: number }>(
      "SELECT id, EXTRACT(EPOCH FROM created_at)::float8 * 1000 AS created_ms FROM events",
    );
    const lostAt = (path: string) => {
      const got = new Set(
        receiver.requests.filter((r) => r.path === path && !throttledRequests.has(r)).map((r) => idOf(r)),
      );
      return events.filter((e) => !got.has(e.id)).length;
    };
    const everyPath = [...paths.throttled, ...paths.healthy];
    await until(() => everyPath.every((path) => lostAt(path) === 0), 180_000);
    const { rows: gone } = await db.pool.query<{ enabled: boolean; disabled_reason: string | null }>(
      "SELECT enabled, disabled_reason FROM webhooks WHERE id = $1",
      [goneId],
    );
    survivor.child.kill("SIGTERM");
    await survivor.exited;

    const createdAt = new Map(events.map((e) => [e.id, e.created_ms]));
    const healthyLatencies = receiver.requests
      .filter((r) => paths.healthy.includes(r.path))
      .map((r) => r.receivedAt - (createdAt.get(idOf(r)) ?? r.receivedAt));
    const lost = everyPath.reduce((sum, path) => sum + lostAt(path), 0);
    const outOfOrder = everyPath.reduce(
      (sum, path) => sum + checkOrder(requestsAt(receiver.requests, path)),
      0,
    );
    const overLimit = paths.throttled.map((path) => checkRate(requestsAt(receiver.requests, path), rate));
    const throttledDeliveries = paths.throttled.map((path) => requestsAt(receiver.requests, path).length);
    return [
      fig(name, "events lost (9 webhooks)", lost, 0),
      fig(name, "requests before an earlier event of their rollout (all receivers)", outOfOrder, 0),
      ...overLimit.map((excess, i) =>
        fig(
          name,
          `throttled-${i} (${rate.per_second}/s, burst ${rate.burst}; ${throttledDeliveries[i]} requests): most requests in any window beyond burst + rate × window`,
          excess,
          1,
        ),
      ),
      fig(
        name,
        "requests to a throttled webhook inside its Retry-After pause",
        pauseViolations(receiver.requests, pauses),
        0,
      ),
      fig(name, "429 answers given (the pauses exercised)", -pauses.length, -1),
      fig(
        name,
        "410 webhook still enabled (0 = disabled with its reason)",
        gone[0]?.enabled === false && gone[0]?.disabled_reason?.includes("410 Gone") ? 0 : 1,
        0,
      ),
      fig(
        name,
        "requests to the 410 webhook after the first",
        Math.max(0, requestsAt(receiver.requests, paths.gone).length - 1),
        0,
      ),
      fig(name, "healthy p99 event→arrival", percentile(healthyLatencies, 0.99), 1000, " ms"),
    ];
  } finally {
    await receiver.close();
    await db.close();
  }
}

const idOf = (request: ReceivedRequest) => (JSON.parse(request.body) as { id: string }).id;
const requestsAt = (requests: ReceivedRequest[], path: string) => requests.filter((r) => r.path === path);

function fig(scenario: string, figure: string, value: number, max: number, unit = ""): Figure {
  return {
    scenario,
    figure,
    value: `${Number.isInteger(value) ? Math.abs(value) : value.toFixed(1)}${unit}`,
    bound: max < 0 ? `≥ ${-max}` : `≤ ${max}${unit}`,
    ok: value <= max,
  };
}
