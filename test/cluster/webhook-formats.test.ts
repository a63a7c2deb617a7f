import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import {
  clusterPatience,
  createWebhook,
  eventsOf,
  getWebhook,
  optInLabels,
  readyOf,
  waitForReady,
} from "../support/webhook-resources.js";

// The Webhook's format fields against the real API server: the CRD's CEL rules refuse bad specs at
// apply, and the reconciler reads the URL and header values from Secrets it then watches.

let cluster: Cluster;
let database: TestDatabase;
let service: TestService;
const label = uniqueName("webhook-formats");
const namespace = uniqueName("chat");
// A token in the path, as Slack's and Teams' webhook URLs carry one.
const slackUrl = "http://127.0.0.1:9/services/T000/B000/TOKENxTOKENxTOKEN";

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, namespace);
  database = await createTestDatabase();
  service = await startTestService(
    {
      NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
      LEADER_ELECTION_LEASE_NAME: label,
      LEADER_ELECTION_RETRY_PERIOD_MS: "100",
      LEADER_ELECTION_LEASE_DURATION_MS: "1000",
      // Loopback only: no name is looked up and nothing leaves the machine.
      DELIVERY_ALLOWED_DESTINATIONS: "127.0.0.1/32",
    },
    { kubeConfig: cluster.kubeConfig(), database },
  );
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
  await database?.drop();
});

const events = ["deployment.succeeded"];
const url = "http://127.0.0.1:9/hook";

describe("Webhook format fields on a real cluster", () => {
  it("are refused at apply by the CRD's rules, with messages that never quote a value", async () => {
    const refused: [string, Record<string, unknown>, string][] = [
      ["no url at all", { events }, "exactly one of url and urlSecretRef must be set"],
      ["url and urlSecretRef", { url, urlSecretRef: { name: "s", key: "k" }, events }, "exactly one of url"],
      ["template without its format", { url, events, template: "{}" }, "template is used only with format"],
      ["format template without a template", { url, events, format: "template" }, "template is required"],
      [
        "Standard Webhooks without a signing secret",
        { url, events, signatureScheme: "standard-webhooks" },
        "needs secretRef: every Standard Webhooks library refuses an unsigned delivery",
      ],
      ["an unknown format", { url, events, format: "xml" }, "Unsupported value"],
      [
        "a header with value and valueFrom",
        {
          url,
          events,
          headers: [{ name: "A", value: "s3cr3t", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }],
        },
        "exactly one of value and valueFrom",
      ],
      [
        "a reserved header",
        { url, events, headers: [{ name: "X-Webhook-Signature", value: "s3cr3t" }] },
        "may not be one the request sets",
      ],
      [
        "Host",
        { url, events, headers: [{ name: "host", value: "s3cr3t" }] },
        "may not be one the request sets",
      ],
      // The API's list, carried by the CRD's CEL: the names only the API refused before.
      [
        "User-Agent",
        { url, events, headers: [{ name: "User-Agent", value: "s3cr3t" }] },
        "may not be one the request sets",
      ],
      [
        "a CloudEvents header",
        { url, events, headers: [{ name: "ce-id", value: "s3cr3t" }] },
        "may not be one the request sets",
      ],
      [
        "a name longer than the API's 64 characters",
        { url, events, headers: [{ name: "X-".padEnd(65, "a"), value: "s3cr3t" }] },
        "Too long",
      ],
      [
        "a line break in a value",
        { url, events, headers: [{ name: "A", value: "s3cr3t\r\nX: 1" }] },
        "line breaks",
      ],
      [
        "a header name twice",
        {
          url,
          events,
          headers: [
            { name: "A", value: "s3cr3t" },
            { name: "a", value: "s3cr3t" },
          ],
        },
        "header names must be unique",
      ],
    ];
    for (const [what, spec, message] of refused) {
      const error = await createWebhook(cluster, namespace, "invalid", spec).then(
        () => undefined,
        (e: { code?: number; body?: string }) => e,
      );
      expect(error?.code, what).toBe(422);
      expect(error?.body, what).toContain(message);
      expect(error?.body, what).not.toContain("s3cr3t");
    }
    expect(await getWebhook(cluster, namespace, "invalid")).toBeUndefined();
  });

  it("take the URL and a header from Secrets, wait for them, and follow their changes", async () => {
    await createWebhook(cluster, namespace, "slack", {
      urlSecretRef: { name: "slack-url", key: "url" },
      format: "slack",
      events,
      secretRef: { name: "signing", key: "key" },
      headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "api", key: "token" } } }],
    });
    const missing = await waitForReady(cluster, namespace, "slack", "False");
    expect(readyOf(missing)).toMatchObject({
      reason: "SecretNotFound",
      message: expect.stringMatching(
        new RegExp(`^Secret ${namespace}/(api|slack-url) does not exist \\(spec\\.`),
      ),
    });
    for (const [name, key, value] of [
      ["signing", "key", "k3y"],
      ["api", "token", "Bearer t0ken"],
      ["slack-url", "url", `${slackUrl}\n`],
    ]) {
      await cluster.core.createNamespacedSecret({
        namespace,
        body: {
          metadata: { name: name as string, labels: optInLabels },
          stringData: { [key as string]: value as string },
        },
      });
    }
    const ready = await waitForReady(cluster, namespace, "slack", "True");
    const row = await service.pool.query("SELECT url FROM webhooks WHERE id = $1", [ready.status?.webhookId]);
    expect(row.rows[0].url).toBe(slackUrl);

    // A new URL in the Secret reaches the service without a change to the resource.
    const moved = `${slackUrl}-moved`;
    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "slack-url",
      body: [{ op: "replace", path: "/data/url", value: Buffer.from(moved).toString("base64") }],
    });
    await waitUntil(
      "rows[0].url === moved",
      async () => {
        const { rows } = await service.pool.query("SELECT url FROM webhooks WHERE id = $1", [
          ready.status?.webhookId,
        ]);
        return rows[0].url === moved ? true : undefined;
      },
      { timeoutMs: clusterPatience },
    );

    // A header's Secret losing its key: Ready=False naming the Secret, key and header, then paused.
    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "api",
      body: [{ op: "replace", path: "/data", value: { other: Buffer.from("x").toString("base64") } }],
    });
    const noKey = await waitUntil(
      'condition?.reason === "SecretKeyNotFound"',
      async () => {
        const condition = readyOf(await getWebhook(cluster, namespace, "slack"));
        return condition?.reason === "SecretKeyNotFound" ? condition : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(noKey.message).toBe(
      `Secret ${namespace}/api has no key 'token' (spec.headers Authorization). Deliveries are paused until this is fixed.`,
    );

    // A URL the URL rules refuse, with credentials in it: Ready=False, and the URL is nowhere.
    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "api",
      body: [
        { op: "replace", path: "/data", value: { token: Buffer.from("Bearer t0ken").toString("base64") } },
      ],
    });
    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "slack-url",
      body: [
        {
          op: "replace",
          path: "/data/url",
          value: Buffer.from("http://u:pw@127.0.0.1:9/x").toString("base64"),
        },
      ],
    });
    const invalid = await waitUntil(
      'condition?.reason === "InvalidSecretValue"',
      async () => {
        const condition = readyOf(await getWebhook(cluster, namespace, "slack"));
        return condition?.reason === "InvalidSecretValue" ? condition : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(invalid.message).toContain(
      `The URL in Secret ${namespace}/slack-url key 'url' (spec.urlSecretRef) must be`,
    );
    const resource = await getWebhook(cluster, namespace, "slack");
    const recorded = JSON.stringify([resource?.status, await eventsOf(cluster, namespace, "slack")]);
    expect(recorded).not.toContain("TOKENxTOKEN");
    expect(recorded).not.toContain("pw@");
    expect(recorded).not.toContain("t0ken");
  });
});
