// Scenario B of the operator benchmark: rollouts at a steady rate. A pool of Deployments exists (each
// rolled out once, revision 1, before timing starts); every rollout gives one of them a new revision and
// plays the Deployment controller with three writes ~50 ms apart:
//   0 ms    the new revision: spec.template changes and deployment.kubernetes.io/revision is set (one
//           merge patch; generation moves ahead of status.observedGeneration)   → deployment.created
//   50 ms   status: observedGeneration caught up, Available=True, new pods serving → deployment.ready
//   100 ms  status: Progressing=True/NewReplicaSetAvailable, all replicas updated → deployment.succeeded
// One Webhook per namespace subscribes to every deployment.* event and points at a loopback receiver
// (a child process). Lags are measured from each write to the event row's created_at, and to the
// receiver's arrival time.
import { performance } from "node:perf_hooks";
import type { V1Deployment } from "@kubernetes/client-node";
import type { Pool } from "../src/db/pool.js";
import type { WebhookResource } from "../src/operator/api/webhook-v1alpha1.js";
import { deploymentFixture, rolloutStates } from "../test/support/deployments.js";
import type { FakeKubeApiServer, KubeObject } from "../test/support/fake-kube-apiserver.js";
import type { BenchDatabase } from "./database.js";
import {
  benchNamespaces,
  createSigningSecret,
  measureWindow,
  type ProcessWindow,
  signingSecretRef,
  sleep,
  startOperatorSystem,
  waitFor,
} from "./operator-cluster.js";
import type { ReceiverProcess } from "./receiver-process.js";
import { percentile } from "./stats.js";

const steps = ["deployment.created", "deployment.ready", "deployment.succeeded"] as const;
type Step = (typeof steps)[number];
const stepOffsetsMs = [0, 50, 100];
const revisionAnnotation = "deployment.kubernetes.io/revision";

export interface LagStats {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface RolloutsResult {
  rollouts: number;
  writesPerRollout: number;
  deployments: number;
  namespaces: number;
  targetRate: number;
  /** Rollouts started per second, as achieved (first to last start). */
  achievedRate: number;
  /** How late the writes ran against their schedule (the driver shares the loop with the operator). */
  writeLateness: LagStats;
  events: number;
  /** Events recorded per second: every event of the run over first write → last event row. */
  eventsPerSecond: number;
  /** Rollouts with exactly created, ready, succeeded — once each, nothing else. */
  complete: number;
  duplicates: number;
  missing: number;
  /** Events of other kinds (cancelled, failed) or of rollouts the benchmark did not make. */
  unexpected: number;
  toEventRow: Map<Step | "all", LagStats>;
  toReceiver: Map<Step | "all", LagStats>;
  received: number;
  receivedDuplicates: number;
  /** From the last write to the last event row's created_at, and to the receiver's last arrival. */
  recordedAfterLastWriteMs: number;
  receivedAfterLastWriteMs: number;
  window: ProcessWindow;
}

function lagStats(values: number[]): LagStats {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

function statusOf(shape: (typeof rolloutStates)[keyof typeof rolloutStates], observedGeneration: number) {
  return { ...deploymentFixture(shape).status, observedGeneration };
}

async function count(system: { observer: Pool }, sql: string) {
  const { rows } = await system.observer.query<{ n: number }>(sql);
  return rows[0]?.n ?? 0;
}

function createPool(kube: FakeKubeApiServer, namespaces: string[], size: number) {
  return Array.from({ length: size }, (_, i) => {
    const namespace = namespaces[i % namespaces.length] as string;
    const name = `app-${String(i).padStart(4, "0")}`;
    const { status: _status, ...object } = deploymentFixture({ name, namespace, revision: "1" });
    delete object.metadata?.uid;
    const created = kube.create("deployments", object);
    kube.patchStatus(
      "deployments",
      { namespace, name },
      statusOf(rolloutStates.succeeded, created.metadata?.generation ?? 1),
    );
    return { namespace, name, revision: 1 };
  });
}

export async function runRollouts(
  database: BenchDatabase,
  receiver: ReceiverProcess,
  options: {
    rate: number;
    seconds: number;
    deployments: number;
    namespaces: number;
    timeoutMs: number;
    /** Status writes between created and ready that do not change the rollout's phase. */
    progressWrites: number;
    env?: Record<string, string>;
  },
): Promise<RolloutsResult> {
  const namespaces = benchNamespaces("roll", options.namespaces);
  const system = await startOperatorSystem(database, {
    namespaces,
    env: options.env ?? {},
    prepare: (kube) => {
      for (const namespace of namespaces) {
        createSigningSecret(kube, namespace);
        kube.create("webhooks", {
          apiVersion: "webhook-operator.io/v1alpha1",
          kind: "Webhook",
          metadata: { name: "all-deploys", namespace },
          spec: {
            url: `${receiver.url}/hooks/${namespace}`,
            events: [...steps, "deployment.failed", "deployment.cancelled"],
            secretRef: signingSecretRef,
          },
        });
      }
    },
  });
  const { kube } = system;
  try {
    await waitFor(
      "the Webhooks to be Ready",
      () =>
        kube
          .list<WebhookResource & KubeObject>("webhooks")
          .every((w) => w.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
          ? true
          : undefined,
      10_000,
    );

    // Warm-up, untimed: the pool's first rollouts (revision 1) go through the whole path once.
    const pool = createPool(kube, namespaces, options.deployments);
    await waitFor(
      "the pool's revision-1 events",
      async () =>
        (await count(system, "SELECT count(*)::int AS n FROM events")) >= 3 * pool.length ? true : undefined,
      options.timeoutMs,
      50,
    );
    await waitFor(
      "the pool's deliveries",
      async () =>
        (await count(system, "SELECT count(*)::int AS n FROM deliveries WHERE delivered_at IS NULL")) === 0
          ? true
          : undefined,
      options.timeoutMs,
      50,
    );
    await receiver.collect();
    const eventsBefore = await count(system, "SELECT count(*)::int AS n FROM events");

    // The paced run.
    const total = Math.round(options.rate * options.seconds);
    const writtenAt = new Map<string, number[]>();
    const lateness: number[] = [];
    const starts: number[] = [];
    const rolloutKey = (name: string, revision: number | string) => `${name}@${revision}`;
    let lastWrite = 0;
    let writesDone = 0;
    const writesPerRollout = steps.length + options.progressWrites;
    let allWritten: () => void = () => {};
    const written = new Promise<void>((resolve) => {
      allWritten = resolve;
    });
    const wrote = () => {
      lastWrite = Date.now();
      writesDone += 1;
      if (writesDone === total * writesPerRollout) allWritten();
    };

    const finish = await measureWindow(kube);
    const firstWrite = Date.now();
    const t0 = performance.now();
    for (let k = 0; k < total; k++) {
      const due = t0 + (k * 1000) / options.rate;
      const wait = due - performance.now();
      if (wait >= 1) await sleep(wait);
      const deployment = pool[k % pool.length] as (typeof pool)[number];
      deployment.revision += 1;
      const { namespace, name } = deployment;
      const revision = deployment.revision;
      const times: number[] = [];
      writtenAt.set(rolloutKey(name, revision), times);
      let generation = 0;
      const write = (step: number) => {
        const late = performance.now() - (due + (stepOffsetsMs[step] as number));
        if (step === 0) {
          const updated = kube.patch<V1Deployment & KubeObject>(
            "deployments",
            { namespace, name },
            {
              metadata: { annotations: { [revisionAnnotation]: String(revision) } },
              spec: { template: { metadata: { annotations: { "bench/rollout": String(revision) } } } },
            },
          );
          generation = updated.metadata?.generation ?? 0;
          starts.push(performance.now());
        } else {
          const shape = step === 1 ? rolloutStates.ready : rolloutStates.succeeded;
          kube.patchStatus("deployments", { namespace, name }, statusOf(shape, generation));
        }
        times[step] = Date.now();
        lateness.push(Math.max(0, late));
        wrote();
      };
      // Optional progress reports between created and ready (new pods coming up one by one): they change
      // the status but not the rollout's phase, so they must produce no event.
      const progress = (i: number) => {
        kube.patchStatus(
          "deployments",
          { namespace, name },
          { ...statusOf(rolloutStates.started, generation), readyReplicas: i + 1 },
        );
        wrote();
      };
      write(0);
      for (let i = 0; i < options.progressWrites; i++) {
        const at = due + ((stepOffsetsMs[1] as number) * (i + 1)) / (options.progressWrites + 1);
        setTimeout(() => progress(i), at - performance.now());
      }
      setTimeout(() => write(1), due + (stepOffsetsMs[1] as number) - performance.now());
      setTimeout(() => write(2), due + (stepOffsetsMs[2] as number) - performance.now());
    }
    await written;

    // Every event, or no new one for 5 s with the queues idle (a shortfall is reported as missing events).
    const expectedEvents = eventsBefore + total * steps.length;
    let events = 0;
    let progressAt = performance.now();
    await waitFor(
      "every event",
      async () => {
        const now = await count(system, "SELECT count(*)::int AS n FROM events");
        if (now > events) {
          events = now;
          progressAt = performance.now();
        }
        if (events >= expectedEvents) return true;
        if (performance.now() - progressAt < 5_000) return undefined;
        await system.service.operator?.idle();
        return true;
      },
      options.timeoutMs,
      20,
    ).catch(() => {});
    await waitFor(
      "every delivery",
      async () =>
        (await count(system, "SELECT count(*)::int AS n FROM deliveries WHERE delivered_at IS NULL")) === 0
          ? true
          : undefined,
      options.timeoutMs,
      20,
    ).catch(() => {});
    const window = await finish();
    // A little longer, so that a late duplicate would be caught.
    await sleep(500);

    const { rows } = await system.observer.query<{
      id: string;
      event_type: string;
      created_ms: number;
      name: string;
      revision: string;
    }>(
      `SELECT e.id, e.event_type, (extract(epoch FROM e.created_at) * 1000)::float8 AS created_ms,
              d.name, d.revision
         FROM events e
         JOIN deployments d ON d.id = ((e.envelope::jsonb) #>> '{payload,deployment_id}')::bigint
        WHERE e.created_at >= to_timestamp($1::float8 / 1000) - interval '1 second'`,
      [firstWrite],
    );
    const arrivals = await receiver.collect();

    const byRollout = new Map<string, typeof rows>();
    let unexpected = 0;
    const eventStep = new Map<string, { key: string; step: number }>();
    for (const row of rows) {
      const key = rolloutKey(row.name, row.revision);
      const step = steps.indexOf(row.event_type as Step);
      if (!writtenAt.has(key) || step < 0) {
        // Revision-1 events recorded late would show here too.
        if (row.created_ms >= firstWrite) unexpected += 1;
        continue;
      }
      byRollout.set(key, [...(byRollout.get(key) ?? []), row]);
      eventStep.set(row.id, { key, step });
    }
    let complete = 0;
    let duplicates = 0;
    let missing = 0;
    const rowLags = new Map<Step | "all", number[]>([
      ["all", []],
      ...steps.map((s) => [s, []] as [Step, []]),
    ]);
    for (const [key, times] of writtenAt) {
      const events = byRollout.get(key) ?? [];
      const perStep = steps.map((step) => events.filter((e) => e.event_type === step).length);
      if (perStep.every((n) => n === 1)) complete += 1;
      duplicates += perStep.reduce((sum, n) => sum + Math.max(0, n - 1), 0);
      missing += perStep.filter((n) => n === 0).length;
      for (const event of events) {
        const step = steps.indexOf(event.event_type as Step);
        const lag = event.created_ms - (times[step] as number);
        rowLags.get(event.event_type as Step)?.push(lag);
        rowLags.get("all")?.push(lag);
      }
    }
    const receiverLags = new Map<Step | "all", number[]>([
      ["all", []],
      ...steps.map((s) => [s, []] as [Step, []]),
    ]);
    const seen = new Set<string>();
    let receivedDuplicates = 0;
    let received = 0;
    arrivals.ids.forEach((id, i) => {
      const known = eventStep.get(id);
      if (!known) return;
      received += 1;
      if (seen.has(id)) receivedDuplicates += 1;
      seen.add(id);
      const written = writtenAt.get(known.key)?.[known.step] as number;
      const lag = (arrivals.times[i] as number) - written;
      receiverLags.get(steps[known.step] as Step)?.push(lag);
      receiverLags.get("all")?.push(lag);
    });
    const recorded = rows.filter((row) => eventStep.has(row.id));
    const lastEvent = Math.max(...recorded.map((row) => row.created_ms));
    return {
      rollouts: total,
      writesPerRollout,
      deployments: pool.length,
      namespaces: namespaces.length,
      targetRate: options.rate,
      achievedRate: (starts.length - 1) / (((starts.at(-1) ?? 0) - (starts[0] ?? 0)) / 1000),
      writeLateness: lagStats(lateness),
      events: recorded.length,
      eventsPerSecond: recorded.length / ((lastEvent - firstWrite) / 1000),
      complete,
      duplicates,
      missing,
      unexpected,
      toEventRow: new Map([...rowLags].map(([k, v]) => [k, lagStats(v)])),
      toReceiver: new Map([...receiverLags].map(([k, v]) => [k, lagStats(v)])),
      received,
      receivedDuplicates,
      recordedAfterLastWriteMs: lastEvent - lastWrite,
      receivedAfterLastWriteMs: Math.max(...arrivals.times) - lastWrite,
      window,
    };
  } finally {
    await system.close();
  }
}
