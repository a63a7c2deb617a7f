import { type CloudEvent, HTTP } from "cloudevents";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.js";
import type { DeploymentPayload } from "../../src/deployments/payload.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { allDeploymentEvents, deploymentManifest, operatorEnv } from "../support/cluster-rollouts.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, optInLabels, waitForReady } from "../support/webhook-resources.js";

// A real rollout, driven by the real Deployment controller, delivered by Webhook resources in the two
// protocol formats and read the way their users read them: the CloudEvents SDK's HTTP.toEvent, and the
// Standard Webhooks library's verify, fed the raw bodies and headers a real receiver got.

let cluster: Cluster;
let database: TestDatabase;
let observer: Pool;
let receiver: Receiver;
let service: TestService | undefined;
const label = uniqueName("rollout-formats");
const namespace = uniqueName("shop");
// A Secret's raw bytes are the signing key; a Standard Webhooks receiver is given them as whsec_<base64>.
const signingKey = "rollout-signing-key-0123456789";
const authorization = "Bearer rollout-t0ken";

beforeAll(async () => {
  cluster = useCluster();
  database = await createTestDatabase();
  observer = createPool(database.url, 2);
  receiver = await startReceiver();
  await createNamespaces(cluster, label, namespace);
  service = await startTestService(operatorEnv(label), { kubeConfig: cluster.kubeConfig(), database });
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
  await receiver?.close();
  await observer?.end();
  await database?.drop();
});

const rolledOut = ["deployment.created", "deployment.ready", "deployment.succeeded"];
const requestsTo = (path: string) => receiver.requests.filter((request) => request.path === path);

it("a rollout reaches a CloudEvents receiver and a Standard Webhooks receiver, each read by its official library", async () => {
  for (const [name, key, value] of [
    ["signing", "key", signingKey],
    ["api", "token", authorization],
  ] as const) {
    await cluster.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name, labels: optInLabels }, stringData: { [key]: value } },
    });
  }
  await createWebhook(cluster, namespace, "broker", {
    url: `${receiver.url}/cloudevents`,
    events: allDeploymentEvents,
    format: "cloudevents",
  });
  await createWebhook(cluster, namespace, "signed", {
    url: `${receiver.url}/standard`,
    events: allDeploymentEvents,
    signatureScheme: "standard-webhooks",
    secretRef: { name: "signing", key: "key" },
    headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "api", key: "token" } } }],
  });
  const broker = await waitForReady(cluster, namespace, "broker", "True");
  const signed = await waitForReady(cluster, namespace, "signed", "True");

  await cluster.apps.createNamespacedDeployment({ namespace, body: deploymentManifest("web") });
  await waitUntil(
    "the rollout's events at both receivers",
    async () =>
      requestsTo("/cloudevents").length >= rolledOut.length &&
      requestsTo("/standard").length >= rolledOut.length
        ? true
        : undefined,
    { timeoutMs: clusterPatience },
  );
  // A delivery's record (its body as sent among it) is written once the receiver has answered.
  await waitUntil(
    "every delivery's outcome to be recorded",
    async () => {
      const { rows } = await observer.query<{ unrecorded: number }>(
        "SELECT count(*)::int AS unrecorded FROM deliveries WHERE webhook_id = ANY ($1) AND delivered_at IS NULL",
        [[broker.status?.webhookId, signed.status?.webhookId]],
      );
      return rows[0]?.unrecorded === 0 ? true : undefined;
    },
    { timeoutMs: clusterPatience },
  );
  const { rows: deployments } = await observer.query<{ id: number }>(
    "SELECT id FROM deployments WHERE name = 'web'",
  );
  const deploymentId = deployments[0]?.id;

  // CloudEvents (structured mode, the default), as the npm SDK reads an HTTP request.
  const events = requestsTo("/cloudevents").map(
    (request) =>
      HTTP.toEvent({ headers: request.headers, body: request.body }) as CloudEvent<DeploymentPayload>,
  );
  expect(requestsTo("/cloudevents")[0]?.headers["content-type"]).toBe("application/cloudevents+json");
  expect(events.map((event) => event.type).sort()).toEqual(
    rolledOut.map((type) => `io.webhook-operator.${type}`).sort(),
  );
  for (const event of events) {
    expect(event).toMatchObject({
      specversion: "1.0",
      source: `/projects/${broker.status?.projectId}`,
      subject: `deployments/${deploymentId}`,
      datacontenttype: "application/json",
    });
    expect(event.data).toMatchObject({ deployment_id: deploymentId, project_name: namespace });
  }
  // The CloudEvent id is the event's id, as the delivery records show it.
  const { rows: brokerRecords } = await observer.query<{ event_id: string; body: string }>(
    "SELECT event_id, body FROM deliveries WHERE webhook_id = $1",
    [broker.status?.webhookId],
  );
  expect(events.map((event) => event.id).sort()).toEqual(brokerRecords.map((row) => row.event_id).sort());
  // Each record holds the body exactly as it was sent.
  expect(brokerRecords.map((row) => row.body).sort()).toEqual(
    requestsTo("/cloudevents")
      .map((request) => request.body)
      .sort(),
  );

  // Standard Webhooks, as the npm library verifies a request; the envelope body, our ids, the header
  // from its Secret, and no X-Webhook-Signature beside the scheme's own.
  const verifier = new StandardWebhook(`whsec_${Buffer.from(signingKey).toString("base64")}`);
  const verified = requestsTo("/standard").map((request) => {
    const headers = request.headers as Record<string, string>;
    expect(() => verifier.verify(`${request.body} `, headers)).toThrow();
    expect(headers.authorization).toBe(authorization);
    expect(headers["x-webhook-signature"]).toBeUndefined();
    const envelope = verifier.verify(request.body, headers) as { id: string; event_type: string };
    expect(envelope).toEqual(JSON.parse(request.body));
    expect(headers["webhook-id"]).toBe(envelope.id);
    return envelope;
  });
  expect(verified.map((envelope) => envelope.event_type).sort()).toEqual([...rolledOut].sort());
  expect(signed.status?.hasSecret).toBe(true);

  // The header's value never reaches what the service shows or stores in clear.
  const { rows: signedRows } = await observer.query<{ headers: string; header_names: string[] }>(
    "SELECT headers, header_names FROM webhooks WHERE id = $1",
    [signed.status?.webhookId],
  );
  expect(signedRows[0]?.header_names).toEqual(["Authorization"]);
  expect(signedRows[0]?.headers).not.toContain("t0ken");
  const shown = await service?.api(
    "GET",
    `/projects/${signed.status?.projectId}/webhooks/${signed.status?.webhookId}/deliveries`,
  );
  expect(shown?.status).toBe(200);
  expect(shown?.text).not.toContain("t0ken");
});
