import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookResource } from "../../src/operator/api/webhook-v1alpha1.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import {
  clusterPatience,
  createWebhook,
  eventsOf,
  getWebhook,
  readyOf,
  waitForReady,
} from "../support/webhook-resources.js";

// The operator reads Secrets with its own permissions, wider than those of a Webhook's author: it
// uses a Secret for a Webhook only when the Secret opted in (the label, or WEBHOOK_SECRETS_WITHOUT_LABEL),
// whichever of the three references names it. Labels, watches, RBAC and Events are the API server's own.

let cluster: Cluster;
let database: TestDatabase;
let service: TestService;
let receiver: Receiver;
const label = uniqueName("secret-opt-in");
const namespace = uniqueName("tenant");
const optIn = "webhook-operator.io/allow-webhooks";

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, namespace);
  database = await createTestDatabase();
  receiver = await startReceiver();
  service = await startTestService(
    {
      NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
      LEADER_ELECTION_LEASE_NAME: label,
      LEADER_ELECTION_RETRY_PERIOD_MS: "100",
      LEADER_ELECTION_LEASE_DURATION_MS: "1000",
      DELIVERY_ALLOWED_DESTINATIONS: "127.0.0.1/32",
      WEBHOOK_SECRETS_WITHOUT_LABEL: `${namespace}/listed`,
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

const events = ["deployment.succeeded"];

/** A Webhook's spec that takes `secret` (key "value") through one reference, and what a delivery then shows. */
interface Reference {
  spec(secret: string): Record<string, unknown>;
  value: string;
  /** The delivery carries the Secret's value (in clear, or as the HMAC key). */
  carried(request: ReceivedRequest): boolean;
}
const references: Record<string, Reference> = {
  "a header value (spec.headers valueFrom)": {
    spec: (secret) => ({
      url: `${receiver.url}/header`,
      events,
      headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: secret, key: "value" } } }],
    }),
    value: "Bearer db-password-h3ader",
    carried: (request) => request.headers.authorization === "Bearer db-password-h3ader",
  },
  "the URL (spec.urlSecretRef)": {
    spec: (secret) => ({ urlSecretRef: { name: secret, key: "value" }, events }),
    get value() {
      return `${receiver.url}/from-secret/t0ken-in-path`;
    },
    carried: (request) => request.path === "/from-secret/t0ken-in-path",
  },
  "the signing key (spec.secretRef)": {
    spec: (secret) => ({ url: `${receiver.url}/signed`, events, secretRef: { name: secret, key: "value" } }),
    value: "db-password-s1gning",
    carried: (request) => {
      const expected = createHmac("sha256", "db-password-s1gning")
        .update(`${request.headers["x-webhook-timestamp"]}.${request.body}`)
        .digest("hex");
      return request.headers["x-webhook-signature"] === `sha256=${expected}`;
    },
  },
};

async function createSecret(name: string, value: string, labels?: Record<string, string>) {
  await cluster.core.createNamespacedSecret({
    namespace,
    body: { metadata: { name, labels }, stringData: { value } },
  });
}

/** Sends a test event through the API and returns what the receiver got. */
async function testDelivery(resource: WebhookResource): Promise<ReceivedRequest> {
  const before = receiver.requests.length;
  const sent = await service.api(
    "POST",
    `/projects/${resource.status?.projectId}/webhooks/${resource.status?.webhookId}/test`,
  );
  expect(sent.body).toMatchObject({ success: true });
  return receiver.requests[before] as ReceivedRequest;
}

function waitForReason(name: string, reason: string) {
  return waitUntil(
    `Webhook ${namespace}/${name} Ready condition with reason ${reason}`,
    async (saw) => {
      const condition = readyOf(await getWebhook(cluster, namespace, name));
      saw(condition);
      return condition?.reason === reason ? condition : undefined;
    },
    { timeoutMs: clusterPatience },
  );
}

describe("Secrets a Webhook references, on a real cluster", () => {
  it.each(Object.entries(references).map(([what, reference], i) => [what, reference, `ref-${i}`] as const))(
    "are used for %s only once labelled, and no longer once the label goes",
    async (_what, reference, name) => {
      await createSecret(name, reference.value);
      await createWebhook(cluster, namespace, name, reference.spec(name));

      const refused = await waitForReady(cluster, namespace, name, "False");
      const message = `Secret ${namespace}/${name} is not open to Webhooks, so the operator does not use it: label it ${optIn}=true (kubectl -n ${namespace} label secret ${name} ${optIn}=true) if the authors of this namespace's Webhooks may send what it holds.`;
      expect(readyOf(refused)).toMatchObject({ reason: "SecretNotOptedIn", message });
      // Nothing was made of it: no service webhook, so nothing can be sent with its value.
      expect(refused.status?.webhookId).toBeUndefined();
      const warning = await waitUntil(
        `a Warning Event SecretNotOptedIn on ${name}`,
        async () =>
          (await eventsOf(cluster, namespace, name)).find(
            (e) => e.type === "Warning" && e.reason === "SecretNotOptedIn",
          ),
        { timeoutMs: clusterPatience },
      );
      expect(warning.message).toBe(message);

      // Labelling the Secret is enough: its watch reconciles the Webhook, which sends the value.
      await cluster.kubectl(["-n", namespace, "label", "secret", name, `${optIn}=true`]);
      const ready = await waitForReady(cluster, namespace, name, "True");
      expect(reference.carried(await testDelivery(ready))).toBe(true);

      // Taking the label away pauses the webhook, as a Secret that went away does.
      await cluster.kubectl(["-n", namespace, "label", "secret", name, `${optIn}-`]);
      const paused = await waitForReason(name, "SecretNotOptedIn");
      expect(paused.message).toBe(`${message} Deliveries are paused until this is fixed.`);
      const { rows } = await service.pool.query("SELECT enabled FROM webhooks WHERE id = $1", [
        ready.status?.webhookId,
      ]);
      expect(rows).toEqual([{ enabled: false }]);

      const recorded = JSON.stringify([
        (await getWebhook(cluster, namespace, name))?.status,
        await eventsOf(cluster, namespace, name),
      ]);
      expect(recorded).not.toContain("db-password");
      expect(recorded).not.toContain("t0ken-in-path");
    },
  );

  it("are used without the label when WEBHOOK_SECRETS_WITHOUT_LABEL lists them, and only those", async () => {
    const header = references["a header value (spec.headers valueFrom)"] as Reference;
    await createSecret("listed", header.value);
    await createSecret("listed-not", header.value, { [optIn]: "false" });
    await createWebhook(cluster, namespace, "listed", header.spec("listed"));
    await createWebhook(cluster, namespace, "listed-not", header.spec("listed-not"));
    const listed = await waitForReady(cluster, namespace, "listed", "True");
    expect(header.carried(await testDelivery(listed))).toBe(true);
    // A label that says anything but "true" opens nothing.
    expect(readyOf(await waitForReady(cluster, namespace, "listed-not", "False"))?.reason).toBe(
      "SecretNotOptedIn",
    );
  });
});
