import type { V1StatefulSet } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import { reconcileWorkload } from "../../src/operator/controllers/workload-rollout-controller.js";
import type { WorkloadSource } from "../../src/operator/controllers/workload-sources.js";
import { ProgressClock } from "../../src/operator/rollouts/progress-deadline.js";
import { RolloutDiagnosis } from "../../src/operator/rollouts/rollout-diagnosis.js";
import { noRouting } from "../../src/operator/rollouts/rollout-url.js";
import { statefulSetProgress } from "../../src/operator/rollouts/statefulset-phase.js";
import { ensureNamespaceProject, type ProjectRow } from "../../src/projects/store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { diagnosisDefaults } from "../support/diagnosis-defaults.js";
import { noPods, recorded, recordedPods, webNewPods } from "../support/recorded-pods.js";

// The StatefulSet/DaemonSet reconcile against a real database, its clock in the test's hands: a
// rollout that stops moving is looked at again when its deadline would pass, and fails then.

let database: TestDatabase;
let pool: Pool;
let project: ProjectRow;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 2);
  project = await ensureNamespaceProject(pool, { name: "infra", displayName: "Infra", repoUrl: null });
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

const stuck = (uid: string, annotations: Record<string, string> = {}): V1StatefulSet => ({
  metadata: { name: "db", namespace: "infra", uid, generation: 1, annotations },
  spec: { replicas: 2, serviceName: "db", selector: {}, template: {} },
  status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 0, availableReplicas: 0 },
});

function deps(workload: V1StatefulSet, now: { at: Date }) {
  const source: WorkloadSource<V1StatefulSet> = {
    kind: "StatefulSet",
    path: "/apis/apps/v1/statefulsets",
    list: async () => ({ items: [] }),
    revision: () => "1",
    progress: statefulSetProgress,
    startedAt: () => undefined,
    newPods: () => undefined,
    previousRevision: () => undefined,
  };
  return {
    pool,
    source,
    get: () => workload,
    isSelected: () => true,
    projectFor: async () => project,
    routing: noRouting,
    clock: new ProgressClock(),
    recorded: new Map<string, string>(),
    links: [],
    now: () => now.at,
    // Rules out failing early: these rollouts' pods are not known (newPods), the deadline decides.
    diagnosis: new RolloutDiagnosis(noPods, { ...diagnosisDefaults, failFast: false }),
  };
}

const statuses = async (uid: string) =>
  (await pool.query("SELECT status, error_message FROM deployments WHERE source_uid = $1", [uid])).rows;

describe("reconcileWorkload and the progress deadline", () => {
  it("asks to look again when the deadline would pass, then fails the rollout that did not move", async () => {
    const now = { at: new Date("2026-11-27T12:00:00Z") };
    const d = deps(stuck("uid-stuck", { "webhook-operator.io/progress-deadline-seconds": "30" }), now);
    expect(await reconcileWorkload(d, "infra/db")).toEqual({ requeueAfterMs: 30_100 });
    expect(await statuses("uid-stuck")).toEqual([{ status: "pending", error_message: null }]);
    now.at = new Date("2026-11-27T12:00:20Z");
    expect(await reconcileWorkload(d, "infra/db")).toEqual({ requeueAfterMs: 10_100 });
    now.at = new Date("2026-11-27T12:00:30Z");
    expect(await reconcileWorkload(d, "infra/db")).toBeUndefined();
    expect(await statuses("uid-stuck")).toEqual([
      {
        status: "failed",
        error_message:
          'StatefulSet "db" made no progress for 30 seconds (its progress deadline, ' +
          "webhook-operator.io/progress-deadline-seconds): 1 of 2 pods updated, 0 of 2 available.",
      },
    ]);
  });

  it("has no deadline for an OnDelete rollout without the annotation", async () => {
    const now = { at: new Date("2026-11-27T12:00:00Z") };
    const workload = stuck("uid-manual");
    workload.spec = { ...workload.spec, updateStrategy: { type: "OnDelete" } } as V1StatefulSet["spec"];
    const d = deps(workload, now);
    expect(await reconcileWorkload(d, "infra/db")).toBeUndefined();
    now.at = new Date("2026-11-28T12:00:00Z");
    expect(await reconcileWorkload(d, "infra/db")).toBeUndefined();
    expect(await statuses("uid-manual")).toEqual([{ status: "pending", error_message: null }]);
  });
});

describe("reconcileWorkload and the fail-fast rule", () => {
  it("fails a rollout whose pods cannot pull their image for the grace period, and recovers when it heals", async () => {
    const now = { at: new Date("2026-11-27T12:00:00Z") };
    const workload = stuck("uid-pull");
    const pods = recordedPods([recorded.imagePullBackOff]);
    const d = {
      ...deps(workload, now),
      diagnosis: new RolloutDiagnosis(pods, diagnosisDefaults, () => now.at.getTime()),
    };
    d.source.newPods = () => webNewPods;
    const at = async (seconds: number) => {
      now.at = new Date(Date.parse("2026-11-27T12:00:00Z") + seconds * 1000);
      return reconcileWorkload(d, "infra/db");
    };
    // First look after 15 s, then every 30 s; the problem seen at 15 s has stood 120 s at 135 s.
    expect(await at(0)).toEqual({ requeueAfterMs: 15_000 });
    for (const seconds of [15, 45, 75, 105]) expect(await at(seconds)).toEqual({ requeueAfterMs: 30_000 });
    expect(await statuses("uid-pull")).toEqual([{ status: "pending", error_message: null }]);
    await at(135);
    const [failed] = await statuses("uid-pull");
    expect(failed.status).toBe("failed");
    expect(failed.error_message).toMatch(
      /^ImagePullBackOff: container "web" of pod "web-7c9d8f6b5-pull1": Back-off pulling image "registry\.example\.com\/shop\/web:2\.0\.0"/,
    );
    // The failed event carries what the pods said, for webhooks with rollout details.
    const { rows: events } = await pool.query(
      `SELECT e.event_type, e.rollout_details FROM events e JOIN deployments d
         ON (e.envelope::jsonb -> 'payload' ->> 'deployment_id') = d.id::text
       WHERE d.source_uid = $1 ORDER BY e.created_at`,
      ["uid-pull"],
    );
    expect(events.map((e) => e.event_type)).toEqual(["deployment.created", "deployment.failed"]);
    expect(events[0].rollout_details.failure).toBeUndefined();
    expect(events[1].rollout_details.failure).toMatchObject({
      reason: "ImagePullBackOff",
      failed_early: true,
      pods_with_problems: 1,
      problems: [
        { pod: "web-7c9d8f6b5-pull1", container: "web", reason: "ImagePullBackOff", restart_count: 0 },
      ],
    });
    // Five polls of one request, then the report: the pods again and the events of the one pod.
    expect(pods.reads).toEqual([...Array(6).fill("pods"), "events web-7c9d8f6b5-pull1"]);
    // Failed: no more looks, and the controller still reporting progress does not undo it.
    expect(await at(300)).toEqual({ requeueAfterMs: 300_100 });
    expect(pods.reads).toHaveLength(7);
    // The image pushed late: every pod available, the rollout succeeds after its failure.
    workload.status = {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    };
    await at(320);
    const { rows } = await pool.query(
      "SELECT status, error_message, emitted_events FROM deployments WHERE source_uid = $1",
      ["uid-pull"],
    );
    expect(rows).toEqual([
      {
        status: "succeeded",
        error_message: null,
        emitted_events: [
          "deployment.created",
          "deployment.failed",
          "deployment.ready",
          "deployment.succeeded",
        ],
      },
    ]);
  });
});
