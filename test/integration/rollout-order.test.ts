import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, withTransaction } from "../../src/db/pool.js";
import { emitEvents, type HandOver } from "../../src/delivery-engine/emit.js";
import { recordRollout } from "../../src/operator/rollouts/record-rollout.js";
import { deploymentRollout } from "../../src/operator/rollouts/workload-kinds.js";
import { findProject, type ProjectRow } from "../../src/projects/store.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { deploymentFixture, rolloutStates } from "../support/deployments.js";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// Order per rollout (docs/deliveries.md, "Order"): rollouts recorded through the operator's own path
// (recordRollout, with the hand-over to this replica's worker), delivered to real receivers on
// loopback. A later event of a rollout reaches a webhook only after the earlier ones were sent to it,
// across an automatic retry, a lease taken over from a dead replica, and replays.

let database: TestDatabase;
let service: TestService;
let receiver: Receiver;
const settings = { DELIVERY_POLL_INTERVAL_MS: "100", DELIVERY_RETRY_DELAYS_MS: "300,300,300,300,300" };
const allEvents = [
  "deployment.created",
  "deployment.ready",
  "deployment.succeeded",
  "deployment.failed",
  "deployment.cancelled",
];

beforeAll(async () => {
  receiver = await startReceiver();
  database = await createTestDatabase();
  service = await startTestService(settings, { database });
});
afterAll(async () => {
  await service.close();
  await receiver.close();
  await database.drop();
});

/** A project (namespace) with one webhook at the receiver's `path`. */
async function projectWithWebhook(path: string, webhook: Record<string, unknown> = {}) {
  const projectId = await createProject(service, path.slice(1));
  const created = await createWebhook(service, projectId, {
    url: `${receiver.url}${path}`,
    events: allEvents,
    ...webhook,
  });
  return {
    project: (await findProject(service.pool, projectId)) as ProjectRow,
    webhookId: created.id as number,
  };
}

const eventsAt = (path: string) =>
  receiver.requests
    .filter((request) => request.path === path)
    .map((request) => {
      const envelope = JSON.parse(request.body);
      return `${envelope.event_type}`;
    });

/** Answers the requests to `path` with the status `status` gives, 200 when it gives none. */
function answer(path: string, status: (request: ReceivedRequest) => number | undefined) {
  receiver.on(path, (request, res: ServerResponse) => {
    res.writeHead(status(request) ?? 200).end();
  });
}

describe("order per rollout", () => {
  it("holds a rollout's later events while an earlier one is retried, then sends them in order", async () => {
    const { project } = await projectWithWebhook("/retried", { retry_policy: { max_attempts: 3 } });
    let createdAttempts = 0;
    answer("/retried", (request) =>
      request.body.includes('"deployment.created"') && ++createdAttempts === 1 ? 500 : undefined,
    );
    const uid = "uid-retried";
    const handOver = service.engine;
    // First seen ready (created and ready in one emit), then succeeded: the operator's own path.
    await recordRollout(
      service.pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.ready })),
      {
        handOver,
      },
    );
    await recordRollout(
      service.pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.succeeded })),
      {
        handOver,
      },
    );
    await waitUntil("four requests at /retried", async (saw) => {
      saw(eventsAt("/retried"));
      return eventsAt("/retried").length >= 4 ? true : undefined;
    });
    expect(eventsAt("/retried")).toEqual([
      "deployment.created",
      "deployment.created",
      "deployment.ready",
      "deployment.succeeded",
    ]);
  });

  it("sends the later events once the earlier one is finally failed (retries exhausted)", async () => {
    const { project } = await projectWithWebhook("/exhausted", { retry_policy: { max_attempts: 2 } });
    answer("/exhausted", (request) => (request.body.includes('"deployment.created"') ? 500 : undefined));
    const uid = "uid-exhausted";
    await recordRollout(service.pool, project, deploymentRollout(deploymentFixture({ uid })), {
      handOver: service.engine,
    });
    await recordRollout(
      service.pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.ready })),
      {
        handOver: service.engine,
      },
    );
    await waitUntil("three requests at /exhausted", async (saw) => {
      saw(eventsAt("/exhausted"));
      return eventsAt("/exhausted").length >= 3 ? true : undefined;
    });
    expect(eventsAt("/exhausted")).toEqual(["deployment.created", "deployment.created", "deployment.ready"]);
  });

  it("holds the later events behind an earlier one leased to a replica that died, until it is taken over and sent", async () => {
    const { project, webhookId } = await projectWithWebhook("/taken-over");
    // What a replica that crashed right after its emit committed leaves behind: a row leased to it.
    const crashed: HandOver = {
      workerId: "crashed-replica",
      leaseMs: 1_000,
      limit: 10,
      allowances: new Map(),
      defaultAllowance: 2,
    };
    const rollout = 1_000_001;
    await withTransaction(service.pool, (client) =>
      emitEvents(
        client,
        [
          {
            eventType: "deployment.created",
            projectId: project.id,
            payload: {},
            rollout: { id: rollout, position: 0 },
          },
        ],
        crashed,
      ),
    );
    // Recorded by this replica meanwhile; its worker may not send it before the dead one's row.
    const { handedOver } = await withTransaction(service.pool, (client) =>
      emitEvents(
        client,
        [
          {
            eventType: "deployment.ready",
            projectId: project.id,
            payload: {},
            rollout: { id: rollout, position: 1 },
          },
        ],
        service.engine.handOverLease(),
      ),
    );
    expect(handedOver).toEqual([]);
    service.engine.wake();
    await waitUntil("two requests at /taken-over", async (saw) => {
      saw(eventsAt("/taken-over"));
      return eventsAt("/taken-over").length >= 2 ? true : undefined;
    });
    expect(eventsAt("/taken-over")).toEqual(["deployment.created", "deployment.ready"]);
    const rows = await waitUntil("both outcomes recorded", async (saw) => {
      const { rows } = await service.pool.query(
        "SELECT event_type, success FROM deliveries WHERE webhook_id = $1 ORDER BY delivered_at, id",
        [webhookId],
      );
      saw(rows);
      return rows.every((row) => row.success !== null) ? rows : undefined;
    });
    expect(rows).toEqual([
      { event_type: "deployment.created", success: true },
      { event_type: "deployment.ready", success: true },
    ]);
  });

  it("does not hold a rollout's later events behind a replay of an earlier one, nor the replay behind them", async () => {
    const { project, webhookId } = await projectWithWebhook("/replayed");
    let releaseReplay: (() => void) | undefined;
    receiver.on("/replayed", (request, res) => {
      const replay = request.body.includes('"deployment.created"') && eventsAt("/replayed").length > 1;
      if (replay) releaseReplay = () => res.writeHead(200).end();
      else res.writeHead(200).end();
    });
    const uid = "uid-replayed";
    await recordRollout(service.pool, project, deploymentRollout(deploymentFixture({ uid })), {
      handOver: service.engine,
    });
    const rows = await waitUntil("the created event recorded", async () => {
      const { rows } = await service.pool.query<{ id: number }>(
        "SELECT id FROM deliveries WHERE webhook_id = $1 AND delivered_at IS NOT NULL",
        [webhookId],
      );
      return rows.length === 1 ? rows : undefined;
    });
    // The replay hangs at the receiver while the rollout goes on.
    const replay = service.api(
      "POST",
      `/projects/${project.id}/webhooks/${webhookId}/deliveries/${rows[0]?.id}/retry`,
    );
    await waitUntil("the replay at the receiver", async () => (releaseReplay ? true : undefined));
    await recordRollout(
      service.pool,
      project,
      deploymentRollout(deploymentFixture({ uid, ...rolloutStates.ready })),
      {
        handOver: service.engine,
      },
    );
    await waitUntil("the ready event", async (saw) => {
      saw(eventsAt("/replayed"));
      return eventsAt("/replayed").includes("deployment.ready") ? true : undefined;
    });
    releaseReplay?.();
    expect((await replay).body).toMatchObject({ success: true, attempt_number: 2 });
    expect(eventsAt("/replayed")).toEqual(["deployment.created", "deployment.created", "deployment.ready"]);
  });

  it("keeps the order across a restart: rows recorded while no service ran are sent in order by the next one", async () => {
    const { project } = await projectWithWebhook("/restarted", { retry_policy: { max_attempts: 2 } });
    let failedOnce = false;
    answer("/restarted", (request) => {
      if (!request.body.includes('"deployment.created"') || failedOnce) return undefined;
      failedOnce = true;
      return 503;
    });
    await service.close();
    // Recorded while the service is down (the operator of another replica, say): both rows queued.
    const pool = createPool(database.url, 1);
    try {
      await recordRollout(
        pool,
        project,
        deploymentRollout(deploymentFixture({ uid: "uid-restarted", ...rolloutStates.ready })),
      );
    } finally {
      await pool.end();
    }
    service = await startTestService(settings, { database });
    await waitUntil("three requests at /restarted", async (saw) => {
      saw(eventsAt("/restarted"));
      return eventsAt("/restarted").length >= 3 ? true : undefined;
    });
    expect(eventsAt("/restarted")).toEqual(["deployment.created", "deployment.created", "deployment.ready"]);
  });
});
