import type { V1Deployment } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import {
  cancelRolloutsOfDeletedDeployments,
  recordRollout,
} from "../../src/operator/rollouts/record-rollout.js";
import { deploymentRollout } from "../../src/operator/rollouts/workload-kinds.js";
import { ensureNamespaceProject, type ProjectRow } from "../../src/projects/store.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deploymentFixture, rolloutStates } from "../support/deployments.js";

// Rollouts recorded as the operator records them, with a webhook that filters on the workload's labels
// and kind: each event (the superseded and deleted rollouts' cancellations too) carries the Deployment
// it belongs to, and a cancellation whose Deployment is gone unseen matches no label filter.

let database: TestDatabase;
let pool: Pool;
let project: ProjectRow;
const webhookIds: Record<"all" | "payments", number> = { all: 0, payments: 0 };

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 4);
  project = await ensureNamespaceProject(pool, { name: "shop", displayName: "Shop", repoUrl: null });
  for (const [name, filters] of [
    ["all", null],
    ["payments", { label_selector: { match_labels: { team: "payments" } }, kinds: ["Deployment"] }],
  ] as const) {
    const { rows } = await pool.query<{ id: number }>(
      `INSERT INTO webhooks (project_id, url, events, enabled, filters)
       VALUES ($1, $2, '{deployment.created,deployment.ready,deployment.succeeded,deployment.failed,deployment.cancelled}', true, $3::jsonb)
       RETURNING id::int`,
      [project.id, `http://127.0.0.1:9/${name}`, filters && JSON.stringify(filters)],
    );
    webhookIds[name] = rows[0]?.id as number;
  }
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

const labelled = (deployment: V1Deployment, labels: Record<string, string>): V1Deployment => ({
  ...deployment,
  metadata: { ...deployment.metadata, labels },
});

/** Per webhook, "type:revision" of the deliveries of the Deployment `uid`, in the order recorded. */
async function deliveries(uid: string) {
  const { rows } = await pool.query<{ webhook_id: number; event: string }>(
    `SELECT d.webhook_id::int, e.event_type || ':' || r.revision AS event
       FROM deliveries d JOIN events e ON e.id = d.event_id
       JOIN deployments r ON r.id = (e.envelope::jsonb -> 'payload' ->> 'deployment_id')::bigint
      WHERE r.source_uid = $1 ORDER BY d.id`,
    [uid],
  );
  const of = (id: number) => rows.filter((row) => row.webhook_id === id).map((row) => row.event);
  return { all: of(webhookIds.all), payments: of(webhookIds.payments) };
}

it("a labelled Deployment's events, and its cancellations when superseded and deleted, reach the filtered webhook", async () => {
  const uid = "uid-payments";
  const at = (revision: string, state: object) =>
    labelled(deploymentFixture({ uid, revision, ...state }), { team: "payments", tier: "web" });
  await recordRollout(pool, project, deploymentRollout(at("1", rolloutStates.started)));
  await recordRollout(pool, project, deploymentRollout(at("2", { generation: 2, ...rolloutStates.started })));
  const deleted = { kind: "Deployment" as const, workload: at("2", {}) };
  expect(await cancelRolloutsOfDeletedDeployments(pool, { sourceUid: uid }, deleted)).toBe(1);
  const expected = [
    "deployment.created:1",
    "deployment.cancelled:1",
    "deployment.created:2",
    "deployment.cancelled:2",
  ];
  expect(await deliveries(uid)).toEqual({ all: expected, payments: expected });
});

it("another team's Deployment, and a cancellation whose Deployment went unseen, reach only the unfiltered webhook", async () => {
  const other = "uid-shop";
  await recordRollout(
    pool,
    project,
    deploymentRollout(
      labelled(deploymentFixture({ uid: other, ...rolloutStates.started }), { team: "shop" }),
    ),
  );
  expect(await deliveries(other)).toEqual({ all: ["deployment.created:1"], payments: [] });

  const gone = "uid-gone";
  await recordRollout(
    pool,
    project,
    deploymentRollout(
      labelled(deploymentFixture({ uid: gone, ...rolloutStates.started }), { team: "payments" }),
    ),
  );
  // Only the unfinished rollout of the Deployment missing from a full list: this one.
  expect(
    await cancelRolloutsOfDeletedDeployments(pool, {
      notInSourceUids: ["uid-payments", other],
      workloadKind: "Deployment",
    }),
  ).toBe(1);
  expect(await deliveries(gone)).toEqual({
    all: ["deployment.created:1", "deployment.cancelled:1"],
    payments: ["deployment.created:1"],
  });
});
