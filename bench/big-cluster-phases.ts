// The big-cluster benchmark's measurements of one build: idle, then with every workload in place the
// start, a restart and a leader change, each with a live rollout made as it begins.
import type { Pool } from "../src/db/pool.js";
import type { Cluster } from "../test/support/cluster.js";
import {
  type Build,
  residentSet,
  rollLive,
  type Scrape,
  scrape,
  type startLiveReceiver,
  startOperator,
} from "./big-cluster-operator.js";
import { wallClockMs } from "./clock.js";
import { sleep } from "./operator-cluster.js";
import type { ServiceProcess } from "./service-process.js";

export interface Memory {
  rssMiB: number;
  heapMiB: number;
  peakRssMiB: number;
}

export interface Phase {
  /** From start (or the old leader's stop) until every workload was reconciled; undefined: not within the cap. */
  catchUpMs?: number;
  /** Reconciled by then, or when the cap ran out. */
  reconciled: number;
  /** The rollout made as the phase began (before the operator's first list) and one made during catch-up. */
  first: Live;
  during: Live;
}

export interface Live {
  /** Reconciles done when it was made. */
  reconciledAt: number;
  /** From its write to its created (pending) and succeeded deliveries; undefined: not within the cap. */
  createdMs?: number;
  succeededMs?: number;
}

type Receiver = Awaited<ReturnType<typeof startLiveReceiver>>;

async function poll<T>(check: () => Promise<T | undefined>, deadline: number): Promise<T | undefined> {
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined || wallClockMs() > deadline) return value;
    await sleep(100);
  }
}

const settle = 10_000;

async function memoryOf(operator: ServiceProcess): Promise<Memory> {
  const [{ heapMiB }, { rssMiB, peakMiB }] = await Promise.all([scrape(operator), residentSet(operator.pid)]);
  return { rssMiB, heapMiB, peakRssMiB: peakMiB };
}

/** The operator on a cluster without the workloads: leading, its caches filled, 10 s later. */
export async function measureIdle(build: Build, databaseUrl: string, cluster: Cluster, lease: string) {
  const operator = await startOperator(build, databaseUrl, cluster, lease);
  try {
    await poll(async () => ((await scrape(operator)).leader ? true : undefined), wallClockMs() + 60_000);
    await sleep(settle);
    return await memoryOf(operator);
  } finally {
    await operator.stop();
  }
}

/**
 * Runs one phase: `begin` starts it (an operator started, a leader stopped) and returns the operator
 * that is to catch up; the live rollout is written right after, as a team would deploy just then.
 */
async function phase(
  options: { cluster: Cluster; receiver: Receiver; workloads: number; capMs: number; commit: string },
  begin: () => Promise<ServiceProcess>,
  recorded: (metrics: Scrape) => Promise<boolean>,
  beforeLive?: () => Promise<boolean>,
): Promise<{ result: Phase; operator: ServiceProcess }> {
  const started = wallClockMs();
  const deadline = started + options.capMs;
  const operator = await begin();
  if (beforeLive) await poll(async () => ((await beforeLive()) ? true : undefined), deadline);
  const makeLive = async (name: string, suffix: string) => {
    const reconciledAt = (await scrape(operator).catch(() => undefined))?.reconciles ?? 0;
    const commit = `${options.commit}-${suffix}`;
    return { commit, reconciledAt, written: await rollLive(options.cluster, name, commit) };
  };
  const first = await makeLive("app-0", "first");
  let during: Awaited<ReturnType<typeof makeLive>> | undefined;
  let last: Scrape | undefined;
  const caughtUp = await poll(async () => {
    last = await scrape(operator);
    // The second live rollout once a tenth of the workloads are reconciled: behind it, the rest.
    if (!during && last.reconciles >= options.workloads / 10) during = await makeLive("app-1", "during");
    return (await recorded(last)) ? wallClockMs() - started : undefined;
  }, deadline);
  during ??= await makeLive("app-1", "during");
  const delivered = (live: { commit: string; written: number }, status: string) =>
    poll(
      async () => {
        const at = options.receiver.arrival(live.commit, status);
        return at === undefined ? undefined : at - live.written;
      },
      Math.max(deadline, live.written + 60_000),
    );
  const measureLive = async (live: Awaited<ReturnType<typeof makeLive>>): Promise<Live> => ({
    reconciledAt: live.reconciledAt,
    createdMs: await delivered(live, "pending"),
    succeededMs: await delivered(live, "succeeded"),
  });
  return {
    operator,
    result: {
      catchUpMs: caughtUp,
      reconciled: last?.reconciles ?? 0,
      first: await measureLive(first),
      during: await measureLive(during),
    },
  };
}

export interface BuildFigures {
  start: Phase;
  restart: Phase;
  leaderChange: Phase;
  withWorkloads: Memory;
}

/** Start, memory, restart, leader change of one build on a fresh database, with the workloads in place. */
export async function measureBuild(
  build: Build,
  database: { url: string; observer: Pool },
  options: { cluster: Cluster; receiver: Receiver; workloads: number; capMs: number; lease: string },
): Promise<BuildFigures> {
  const { cluster, workloads, lease } = options;
  const common = { ...options };
  const everyRolloutRecorded = async () => {
    const { rows } = await database.observer.query<{ count: string }>(
      "SELECT count(*) FROM deployments WHERE status = 'succeeded'",
    );
    return Number(rows[0]?.count) >= workloads;
  };
  const everyWorkloadReconciled = async (metrics: Scrape) => metrics.reconciles >= workloads;
  const start = await phase(
    { ...common, commit: `${build.name}-start` },
    () => startOperator(build, database.url, cluster, lease),
    everyRolloutRecorded,
    // A fresh database: the live rollout is made once the Webhook it is to reach is in it.
    async () => (await database.observer.query("SELECT 1 FROM webhooks")).rowCount === 1,
  );
  await sleep(settle);
  const withWorkloads = await memoryOf(start.operator);

  const restart = await phase(
    { ...common, commit: `${build.name}-restart` },
    async () => {
      await start.operator.stop();
      return startOperator(build, database.url, cluster, lease);
    },
    everyWorkloadReconciled,
  );
  // The standby is up before the leader goes; the phase times from the leader's stop.
  const standby = await startOperator(build, database.url, cluster, lease);
  const leaderChange = await phase(
    { ...common, commit: `${build.name}-leader` },
    async () => {
      await restart.operator.stop();
      return standby;
    },
    everyWorkloadReconciled,
  );
  await leaderChange.operator.stop();
  return { start: start.result, restart: restart.result, leaderChange: leaderChange.result, withWorkloads };
}
