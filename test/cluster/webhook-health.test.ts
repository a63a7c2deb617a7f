import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { findCondition } from "../../src/operator/api/conditions.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import {
  clusterPatience,
  createWebhook,
  eventsOf,
  getWebhook,
  waitForReady,
} from "../support/webhook-resources.js";

// A Webhook's delivery health on the real API server: a receiver that starts failing turns the resource
// Healthy=False and its recovery turns it back, each observed the way a user or a script would, with
// `kubectl wait --for=condition=…`; the Events and the columns of `kubectl get` and `kubectl describe`
// are the API server's own rendering of the CRD. The status is refreshed every second here (1 minute by
// default), so the waits are bounded by clusterPatience, not by the refresh.

let cluster: Cluster;
let database: TestDatabase;
let service: TestService;
let receiver: Receiver;
let failing = false;
const label = uniqueName("health");
const namespace = uniqueName("shop");
const name = "deploys";
const kubectlTimeout = `--timeout=${clusterPatience / 1000}s`;

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, namespace);
  database = await createTestDatabase();
  receiver = await startReceiver();
  receiver.on("/hook", (_request, res) => res.writeHead(failing ? 503 : 200).end());
  service = await startTestService(
    {
      NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
      LEADER_ELECTION_LEASE_NAME: label,
      LEADER_ELECTION_RETRY_PERIOD_MS: "100",
      LEADER_ELECTION_LEASE_DURATION_MS: "1000",
      WEBHOOK_STATUS_RESYNC_INTERVAL_MS: "1000",
    },
    { kubeConfig: cluster.kubeConfig(), database },
  );
});
afterAll(async () => {
  await service?.close();
  await receiver?.close();
  await deleteNamespaces(cluster, label);
  await database?.drop();
});

async function deliverOneEvent(projectId: number, attemptsBefore: number) {
  await withTransaction(service.pool, (client) =>
    emitEvent(client, { eventType: "deployment.created", projectId, payload: {} }),
  );
  await receiver.waitFor(attemptsBefore + 1);
}

const waitFor = (condition: string) =>
  cluster.kubectl([
    "-n",
    namespace,
    "wait",
    `--for=condition=${condition}`,
    kubectlTimeout,
    `webhooks.webhook-operator.io/${name}`,
  ]);

/** The Event of a health change, once the API server has it. */
function healthEvent(type: string, reason: string) {
  return waitUntil(
    `a ${type} Event ${reason} of ${name}`,
    async (saw) => {
      const events = await eventsOf(cluster, namespace, name);
      saw(events.map((e) => `${e.type}/${e.reason}`).join(", "));
      return events.find((e) => e.type === type && e.reason === reason);
    },
    { timeoutMs: clusterPatience },
  );
}

describe("a Webhook's delivery health on a real cluster", () => {
  it("turns Healthy=False when its receiver fails and back to True when it recovers", async () => {
    await createWebhook(cluster, namespace, name, {
      url: `${receiver.url}/hook`,
      events: ["deployment.created"],
    });
    const ready = await waitForReady(cluster, namespace, name, "True");
    const projectId = Number(ready.status?.projectId);
    await waitFor("Healthy=Unknown");

    failing = true;
    await deliverOneEvent(projectId, 0);
    await waitFor("Healthy=false");
    const failed = await getWebhook(cluster, namespace, name);
    expect(findCondition(failed?.status?.conditions, "Healthy")).toMatchObject({ reason: "Failing" });
    expect(failed?.status).toMatchObject({
      deliveriesLastHour: { succeeded: 0, failed: 1 },
      lastFailure: {
        statusCode: 503,
        reason: "HTTP 503 Service Unavailable",
        eventType: "deployment.created",
      },
    });
    expect(JSON.stringify(failed?.status)).not.toContain(receiver.url);
    expect((await healthEvent("Warning", "Failing"))?.message).toContain("HTTP 503 Service Unavailable");
    const table = await cluster.kubectl([
      "-n",
      namespace,
      "get",
      "webhooks.webhook-operator.io",
      name,
      "-o",
      "wide",
    ]);
    expect(table.split("\n")[0]).toMatch(
      /READY\s+REASON\s+HEALTHY\s+HEALTH\s+OK 1H\s+FAILED 1H\s+LAST DELIVERY/,
    );
    expect(table).toMatch(/\sTrue\s+Reconciled\s+False\s+Failing\s+0\s+1\s/);

    failing = false;
    await deliverOneEvent(projectId, 1);
    await waitFor("Healthy");
    const recovered = await getWebhook(cluster, namespace, name);
    expect(findCondition(recovered?.status?.conditions, "Healthy")).toMatchObject({ reason: "Delivering" });
    expect(recovered?.status).toMatchObject({
      deliveriesLastHour: { succeeded: 1, failed: 1 },
      lastSuccess: { statusCode: 200, reason: "HTTP 200 OK" },
      lastFailure: { statusCode: 503 },
    });
    expect(recovered?.status?.recentDeliveries?.map((attempt) => attempt.success)).toEqual([true, false]);
    await healthEvent("Normal", "Delivering");

    // What `kubectl describe` shows: the recent deliveries from the status, the health changes as Events.
    const described = await cluster.kubectl([
      "-n",
      namespace,
      "describe",
      "webhooks.webhook-operator.io",
      name,
    ]);
    expect(described).toContain("Recent Deliveries:");
    expect(described).toContain("HTTP 503 Service Unavailable");
    expect(described).toMatch(/Warning\s+Failing/);
    expect(described).toMatch(/Normal\s+Delivering/);
  });
});
