import { hostname } from "node:os";
import { recordRollout } from "../src/operator/rollouts/record-rollout.js";
import { deploymentRollout } from "../src/operator/rollouts/workload-kinds.js";
import { findProject, type ProjectRow } from "../src/projects/store.js";
import { deploymentFixture, rolloutStates } from "../test/support/deployments.js";
import { apiKey, type Database, type Service, sleep, startDatabase, startService, until } from "./harness.js";
import {
  type Arrival,
  checkOrder,
  checkRate,
  pauseViolations,
  percentile,
  startStormReceiver,
} from "./rollout-storm-checks.js";
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
/**
 * How long after a 429 or 410 was answered a request may still arrive: sends already started are not
 * recalled, and the other replica learns of the pause or the disable once it is stored.
 */
const graceMs = 250;
/** Between one step of every rollout and the next. */
const stepGapMs = 2_000;
const allEvents = ["deployment.created", "deployment.ready", "deployment.succeeded"];

const paths = {
  throttled: ["/throttled-0", "/throttled-1"],
  gone: "/gone",
  healthy: Array.from({ length: 7 }, (_, i) => `/healthy-${i}`),
};

async function api(service: Service, pathname: string, body: unknown) {
  const res = await fetch(`${service.url}/api${pathname}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${pathname}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: number };
}

async function setUp(service: Service, db: Database, receiverUrl: string) {
  const created = await api(service, "/projects", { name: "Storm", slug: "storm" });
  const project = (await findProject(db.pool, created.id)) as ProjectRow;
  const hook = (path: string, fields: Record<string, unknown> = {}) =>
    api(service, `/projects/${project.id}/webhooks`, {
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
  for (const [n, step] of steps.entries()) {
    // Each step of all 300 at once; a rollout's steps seconds apart, as its pods start and become ready.
    if (n > 0) await sleep(stepGapMs);
    for (let first = 0; first < workloads; first += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          recordRollout(
            db.pool,
            project,
            deploymentRollout(
              deploymentFixture({ uid: `storm-${first + i}`, name: `w${first + i}`, ...step }),
            ),
          ),
        ),
      );
    }
  }
}

export async function rolloutStorm(): Promise<Figure[]> {
  const name = `rollout storm (${workloads} workloads × 3 events, 10 webhooks, one of 2 replicas SIGKILLed)`;
  const db = await startDatabase();
  const receiver = await startStormReceiver(throttleEvery);
  try {
    const doomed = await startService(db.url, env);
    const survivor = await startService(db.url, env);
    const { project, goneId } = await setUp(doomed, db, receiver.url);
    const delivered = workloads * 3 * (paths.throttled.length + paths.healthy.length);
    const storming = storm(db, project);
    await until(async () => (await receiver.arrivals()).length >= delivered / 4, 120_000);
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    // The rows the killed replica held: they wait for its lease to run out, and their rollouts' later
    // events for them (by design), so they are counted apart from the healthy p99.
    const { rows: held } = await db.pool.query<{ url: string; rollout_id: number }>(
      `SELECT w.url, d.rollout_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.delivered_at IS NULL AND d.locked_by LIKE $1`,
      [`${hostname()}-${doomed.child.pid}-%`],
    );
    const heldRollouts = new Set(held.map((row) => `${new URL(row.url).pathname}|${row.rollout_id}`));
    await storming;
    const { rows: events } = await db.pool.query<{ id: string; created_ms: number }>(
      "SELECT id, EXTRACT(EPOCH FROM created_at)::float8 * 1000 AS created_ms FROM events",
    );
    const everyPath = [...paths.throttled, ...paths.healthy];
    const lost = (arrivals: Arrival[]) =>
      everyPath.reduce((sum, path) => {
        const got = new Set(arrivals.filter((a) => a.path === path && a.status === 200).map((a) => a.id));
        return sum + events.filter((e) => !got.has(e.id)).length;
      }, 0);
    await until(async () => lost(await receiver.arrivals()) === 0, 180_000);
    const { rows: gone } = await db.pool.query<{ enabled: boolean; disabled_reason: string | null }>(
      "SELECT enabled, disabled_reason FROM webhooks WHERE id = $1",
      [goneId],
    );
    survivor.child.kill("SIGTERM");
    await survivor.exited;
    const arrivals = await receiver.arrivals();
    if (process.env.STORM_DUMP)
      (await import("node:fs")).writeFileSync(process.env.STORM_DUMP, JSON.stringify({ arrivals }));
    return figures(name, arrivals, lost(arrivals), events, gone[0], heldRollouts);
  } finally {
    await receiver.close();
    await db.close();
  }
}

function figures(
  name: string,
  arrivals: Arrival[],
  lost: number,
  events: { id: string; created_ms: number }[],
  gone: { enabled: boolean; disabled_reason: string | null } | undefined,
  heldRollouts: Set<string>,
): Figure[] {
  const at = (path: string) => arrivals.filter((a) => a.path === path);
  const createdAt = new Map(events.map((e) => [e.id, e.created_ms]));
  const latency = (a: Arrival) => a.at - (createdAt.get(a.id) ?? a.at);
  const healthy = arrivals.filter((a) => paths.healthy.includes(a.path));
  const heldBack = healthy.filter((a) => heldRollouts.has(`${a.path}|${a.rollout}`));
  const unheld = healthy.filter((a) => !heldRollouts.has(`${a.path}|${a.rollout}`));
  const everyPath = [...paths.throttled, paths.gone, ...paths.healthy];
  const firstGone = at(paths.gone)[0]?.at ?? 0;
  return [
    fig(name, "events lost (9 webhooks)", lost, 0),
    fig(
      name,
      "requests before an earlier event of their rollout (10 receivers)",
      everyPath.reduce((n, p) => n + checkOrder(at(p)), 0),
      0,
    ),
    ...paths.throttled.map((path, i) =>
      fig(
        name,
        `throttled-${i} (${rate.per_second}/s, burst ${rate.burst}; ${at(path).length} requests): most requests in any window beyond burst + rate × (window + 100 ms of arrival jitter)`,
        checkRate(at(path), rate),
        1,
      ),
    ),
    fig(
      name,
      `requests to a throttled webhook inside a Retry-After pause, ${graceMs} ms after the 429 on (the other replica learns of it once stored)`,
      pauseViolations(arrivals, graceMs),
      0,
    ),
    fig(
      name,
      "429 answers given (the pauses exercised)",
      arrivals.filter((a) => a.status === 429).length,
      Number.POSITIVE_INFINITY,
      "",
      1,
    ),
    fig(
      name,
      "410 webhook still enabled (0 = disabled, its reason says 410 Gone)",
      gone?.enabled === false && gone.disabled_reason?.includes("410 Gone") ? 0 : 1,
      0,
    ),
    fig(
      name,
      `requests to the 410 webhook ${graceMs} ms after its first 410 on`,
      at(paths.gone).filter((a) => a.at > firstGone + graceMs).length,
      0,
    ),
    fig(
      name,
      `healthy p99 event→arrival (${unheld.length} requests; not those of rollouts the killed replica held)`,
      percentile(unheld.map(latency), 0.99),
      1000,
      " ms",
    ),
    fig(
      name,
      `healthy p99 event→arrival of all ${healthy.length} requests (the killed replica's rows wait for its 5 s lease)`,
      percentile(healthy.map(latency), 0.99),
      Number.POSITIVE_INFINITY,
      " ms",
    ),
    fig(
      name,
      `healthy slowest event→arrival of the ${heldBack.length} requests of rollouts the killed replica held`,
      Math.max(0, ...heldBack.map(latency)),
      8000,
      " ms",
    ),
  ];
}

function fig(scenario: string, figure: string, value: number, max: number, unit = "", min?: number): Figure {
  return {
    scenario,
    figure,
    value: `${Number.isInteger(value) ? value : value.toFixed(1)}${unit}`,
    bound: min !== undefined ? `≥ ${min}` : Number.isFinite(max) ? `≤ ${max}${unit}` : "shown, no bound",
    ok: value <= max && (min === undefined || value >= min),
  };
}
