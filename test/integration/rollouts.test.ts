import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import type { ClaimedDelivery } from "../../src/delivery-engine/claim.js";
import type { EventHandOver } from "../../src/delivery-engine/engine.js";
import type { RolloutPhase } from "../../src/operator/rollouts/phase.js";
import {
  cancelRolloutsOfDeletedDeployments,
  recordRollout,
} from "../../src/operator/rollouts/record-rollout.js";
import { deploymentRollout } from "../../src/operator/rollouts/workload-kinds.js";
import { ensureNamespaceProject, type ProjectRow } from "../../src/projects/store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deploymentFixture, rolloutStates } from "../support/deployments.js";

// The rollout → event mapping against a real database, without Kubernetes: each test feeds the
// Deployment states a watch would deliver and checks the events recorded in the outbox.

let database: TestDatabase;
let pool: Pool;
let project: ProjectRow;
let uidCounter = 0;
let uid: string;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 4);
  project = await ensureNamespaceProject(pool, { name: "shop", displayName: "Shop", repoUrl: null });
  await pool.query(
    `INSERT INTO webhooks (project_id, url, events, enabled)
     VALUES ($1, 'http://127.0.0.1:9/all', '{deployment.created,deployment.ready,deployment.succeeded,deployment.failed,deployment.cancelled}', true)`,
    [project.id],
  );
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});
beforeEach(() => {
  uidCounter += 1;
  uid = `uid-${uidCounter}`;
});

/** The envelopes recorded for this test's Deployment, oldest first. */
async function recordedEvents() {
  const { rows } = await pool.query<{ envelope: string }>(
    `SELECT e.envelope FROM events e
       JOIN deliveries d ON d.event_id = e.id
      WHERE (e.envelope::jsonb -> 'payload' ->> 'deployment_id')::bigint IN
            (SELECT id FROM deployments WHERE source_uid = $1)
      ORDER BY e.created_at, d.id`,
    [uid],
  );
  return rows.map((row) => JSON.parse(row.envelope));
}

async function types() {
  return (await recordedEvents()).map((event) => `${event.event_type}:${event.payload.status}`);
}

describe("rollout paths", () => {
  it("new Deployment → created, ready, succeeded, each once, with the payload rules of spec §2.2", async () => {
    const annotations = {
      "webhook-operator.io/url": "https://shop.example.com",
      "webhook-operator.io/commit-sha": "abc",
    };
    expect(
      await recordRollout(pool, project, deploymentRollout(deploymentFixture({ uid, annotations }))),
    ).toEqual(["deployment.created"]);
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, annotations, ...rolloutStates.started })),
    );
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, annotations, ...rolloutStates.ready })),
    );
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, annotations, ...rolloutStates.ready })),
    );
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, annotations, ...rolloutStates.succeeded })),
    );
    expect(await types()).toEqual([
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);

    const [created, , succeeded] = await recordedEvents();
    expect(created.payload).toMatchObject({
      url: null,
      finished_at: null,
      status: "pending",
      commit_sha: "abc",
    });
    expect(typeof created.payload.started_at).toBe("string");
    expect(created.payload).toMatchObject({
      project_id: project.id,
      project_name: "Shop",
      environment: "production",
    });
    expect(succeeded.payload).toMatchObject({
      url: "https://shop.example.com",
      error_message: null,
      status: "succeeded",
    });
    expect(typeof succeeded.payload.finished_at).toBe("string");
    expect(Object.keys(created.payload).sort()).toEqual(
      [
        "branch",
        "commit_message",
        "commit_sha",
        "deployment_id",
        "environment",
        "error_message",
        "finished_at",
        "project_id",
        "project_name",
        "started_at",
        "status",
        "url",
      ].sort(),
    );
  });

  it("stuck rollout → created, failed with the controller's message and no url", async () => {
    const annotations = { "webhook-operator.io/url": "https://shop.example.com" };
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, annotations, ...rolloutStates.started })),
    );
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, annotations, ...rolloutStates.failed })),
    );
    expect(await types()).toEqual(["deployment.created:pending", "deployment.failed:failed"]);
    const failed = (await recordedEvents())[1];
    expect(failed.payload).toMatchObject({
      url: null,
      error_message: 'ReplicaSet "web-2" has timed out progressing.',
    });
    expect(typeof failed.payload.finished_at).toBe("string");
  });

  it("superseded by a newer revision before finishing → cancelled; the new revision is a new rollout", async () => {
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, revision: "1", ...rolloutStates.started })),
    );
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, revision: "2", generation: 2, ...rolloutStates.started })),
    );
    expect(await types()).toEqual([
      "deployment.created:pending",
      "deployment.cancelled:cancelled",
      "deployment.created:pending",
    ]);
    const { rows } = await pool.query(
      "SELECT revision, status FROM deployments WHERE source_uid = $1 ORDER BY id",
      [uid],
    );
    expect(rows).toEqual([
      { revision: "1", status: "cancelled" },
      { revision: "2", status: "pending" },
    ]);
  });

  it("deleted mid-rollout → cancelled; a finished rollout is left alone", async () => {
    await recordRollout(pool, project, deploymentRollout(deploymentFixture({ uid, ...rolloutStates.ready })));
    expect(await cancelRolloutsOfDeletedDeployments(pool, { sourceUid: uid })).toBe(1);
    expect(await cancelRolloutsOfDeletedDeployments(pool, { sourceUid: uid })).toBe(0);
    expect(await types()).toEqual([
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.cancelled:cancelled",
    ]);
  });

  it("scale-only change of a finished rollout → nothing", async () => {
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.succeeded })),
    );
    const before = await types();
    const scaled = deploymentFixture({
      uid,
      generation: 2,
      desired: 5,
      replicas: 5,
      updated: 5,
      available: 3,
      availableCondition: "True",
    });
    expect(await recordRollout(pool, project, deploymentRollout(scaled))).toEqual([]);
    expect(await types()).toEqual(before);
  });

  it("an operator restarted mid-rollout emits no duplicates and fills the gap it missed", async () => {
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.started })),
    );
    // The operator was down while the rollout became ready and succeeded; the re-list shows the end.
    expect(
      await recordRollout(
        pool,
        project,
        deploymentRollout(deploymentFixture({ uid, ...rolloutStates.succeeded })),
      ),
    ).toEqual(["deployment.ready", "deployment.succeeded"]);
    expect(
      await recordRollout(
        pool,
        project,
        deploymentRollout(deploymentFixture({ uid, ...rolloutStates.succeeded })),
      ),
    ).toEqual([]);
    expect(await types()).toEqual([
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
  });

  it("two instances racing on the same observation emit each event once", async () => {
    const state = deploymentFixture({ uid, ...rolloutStates.succeeded });
    const results = await Promise.all([
      recordRollout(pool, project, deploymentRollout(state)),
      recordRollout(pool, project, deploymentRollout(state)),
    ]);
    expect(results.flat().sort()).toEqual(
      ["deployment.created", "deployment.ready", "deployment.succeeded"].sort(),
    );
    expect(await types()).toHaveLength(3);
  });

  it("Deployments deleted while no operator ran are cancelled after the next full list", async () => {
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.started })),
    );
    const cancelled = await cancelRolloutsOfDeletedDeployments(pool, {
      notInSourceUids: ["some-other-uid"],
      workloadKind: "Deployment",
    });
    expect(cancelled).toBeGreaterThanOrEqual(1);
    expect((await types()).at(-1)).toBe("deployment.cancelled:cancelled");
  });

  it("hands the deliveries of the events it records to this replica's worker once they committed", async () => {
    const handed: ClaimedDelivery[] = [];
    const handOver: EventHandOver = {
      handOverLease: () => ({
        workerId: "this-replica",
        leaseMs: 60_000,
        limit: 10,
        allowances: new Map(),
        defaultAllowance: 2,
        countedBy: "false",
      }),
      handOver: (deliveries) => handed.push(...deliveries),
    };
    await recordRollout(
      pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.started })),
      { handOver },
    );
    expect(handed.map((delivery) => delivery.event_type)).toEqual(
      (await recordedEvents()).map((event) => event.event_type),
    );
    const { rows } = await pool.query("SELECT state, locked_by FROM deliveries WHERE id = ANY ($1)", [
      handed.map((delivery) => delivery.id),
    ]);
    expect(rows).toEqual(handed.map(() => ({ state: "in_flight", locked_by: "this-replica" })));
  });

  it("waits for the Deployment controller to stamp a revision", async () => {
    expect(
      await recordRollout(pool, project, deploymentRollout(deploymentFixture({ uid, revision: "" }))),
    ).toEqual([]);
    expect(await types()).toEqual([]);
  });
});

describe("rollouts of StatefulSets and DaemonSets", () => {
  const statefulSet = (phase: RolloutPhase) => ({
    kind: "StatefulSet" as const,
    workload: {
      metadata: {
        name: "db",
        namespace: "shop",
        uid,
        annotations: { "webhook-operator.io/commit-sha": "c0ffee" },
      },
      spec: { template: { metadata: { labels: { app: "db" } } } },
    },
    revision: "1",
    phase,
  });

  it("fire the same events with the same payload rules, and the row says which kind and name", async () => {
    await recordRollout(pool, project, statefulSet({ phase: "progressing" }));
    await recordRollout(pool, project, statefulSet({ phase: "succeeded" }));
    const events = await recordedEvents();
    expect(events.map((event) => `${event.event_type}:${event.payload.status}`)).toEqual([
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
    expect(Object.keys(events[2].payload).sort()).toEqual(Object.keys(events[0].payload).sort());
    expect(events[0].payload).toMatchObject({ url: null, finished_at: null, commit_sha: "c0ffee" });
    // Nothing routes to its pods: its url is the StatefulSet's own address in the Kubernetes API.
    expect(events[2].payload.url).toBe(
      "https://kubernetes.default.svc/apis/apps/v1/namespaces/shop/statefulsets/db",
    );
    const { rows } = await pool.query("SELECT workload_kind, name FROM deployments WHERE source_uid = $1", [
      uid,
    ]);
    expect(rows).toEqual([{ workload_kind: "StatefulSet", name: "db" }]);
  });

  it("a failure at the progress deadline carries its message", async () => {
    await recordRollout(pool, project, statefulSet({ phase: "failed", message: "made no progress" }));
    const events = await recordedEvents();
    expect(events.map((event) => event.event_type)).toEqual(["deployment.created", "deployment.failed"]);
    expect(events[1].payload).toMatchObject({
      status: "failed",
      error_message: "made no progress",
      url: null,
    });
  });

  it("a complete list of one kind cancels only the missing workloads of that kind", async () => {
    await recordRollout(pool, project, statefulSet({ phase: "progressing" }));
    await cancelRolloutsOfDeletedDeployments(pool, { notInSourceUids: [], workloadKind: "Deployment" });
    await cancelRolloutsOfDeletedDeployments(pool, { notInSourceUids: [], workloadKind: "DaemonSet" });
    expect(await types()).toEqual(["deployment.created:pending"]);
    await cancelRolloutsOfDeletedDeployments(pool, { notInSourceUids: [], workloadKind: "StatefulSet" });
    expect(await types()).toEqual(["deployment.created:pending", "deployment.cancelled:cancelled"]);
  });
});
