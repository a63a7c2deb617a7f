import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { emitEvent } from "../../src/delivery-engine/emit.js";
import { metrics } from "../../src/metrics.js";
import {
  type Cluster,
  createNamespaces,
  deleteNamespaces,
  uniqueName,
  useCluster,
} from "../support/cluster.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import {
  clusterPatience,
  createWebhook,
  eventsOf,
  getWebhook,
  optInLabels,
  patchWebhook,
  readyOf,
  waitForReady,
} from "../support/webhook-resources.js";

// The Webhook controller against the real API server: the CRD's schema and CEL rules, finalizers, the
// status subresource, Secrets and Events are Kubernetes' own.

let cluster: Cluster;
let database: TestDatabase;
let service: TestService;
const label = uniqueName("webhooks");
const namespace = uniqueName("team-a");

beforeAll(async () => {
  cluster = useCluster();
  await createNamespaces(cluster, label, namespace);
  await cluster.core.patchNamespace({
    name: namespace,
    body: [
      { op: "add", path: "/metadata/annotations", value: { "webhook-operator.io/project-name": "Team A" } },
    ],
  });
  database = await createTestDatabase();
  service = await startOperator();
});
afterAll(async () => {
  await service?.close();
  await deleteNamespaces(cluster, label);
  await database?.drop();
});

/** Reconciles of Webhook resources this process has made so far (any result). */
async function webhookReconciles(): Promise<number> {
  const { values } = await metrics.reconciles.get();
  return values.filter((v) => v.labels.controller === "webhook").reduce((sum, v) => sum + v.value, 0);
}

function startOperator(): Promise<TestService> {
  return startTestService(
    {
      NAMESPACE_SELECTOR: `webhook-operator.io/test=${label}`,
      LEADER_ELECTION_LEASE_NAME: label,
      LEADER_ELECTION_RETRY_PERIOD_MS: "100",
      LEADER_ELECTION_LEASE_DURATION_MS: "1000",
    },
    { kubeConfig: cluster.kubeConfig(), database },
  );
}

describe("Webhook resources on a real cluster", () => {
  it("are reconciled into the service: Ready, ids in status, finalizer, and API writes refused", async () => {
    await cluster.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: "hook-secret", labels: optInLabels },
        stringData: { token: "s3cret-from-k8s" },
      },
    });
    await createWebhook(cluster, namespace, "deploys", {
      url: "https://hooks.example.com/deploys",
      events: ["deployment.succeeded", "deployment.failed"],
      secretRef: { name: "hook-secret", key: "token" },
    });
    const resource = await waitForReady(cluster, namespace, "deploys", "True");
    expect(resource.metadata.finalizers).toContain("webhook-operator.io/finalizer");
    expect(resource.status).toMatchObject({ hasSecret: true, observedGeneration: 1 });
    const { webhookId, projectId } = resource.status ?? {};

    const row = await service.pool.query("SELECT * FROM webhooks WHERE id = $1", [webhookId]);
    expect(row.rows[0]).toMatchObject({
      project_id: projectId,
      url: "https://hooks.example.com/deploys",
      events: ["deployment.succeeded", "deployment.failed"],
      enabled: true,
      owner: `${namespace}/deploys`,
    });
    const project = await service.pool.query("SELECT name, slug FROM projects WHERE id = $1", [projectId]);
    expect(project.rows[0]).toEqual({ name: "Team A", slug: namespace });

    const put = await service.api("PUT", `/projects/${projectId}/webhooks/${webhookId}`, {
      body: { enabled: false },
    });
    expect(put.status).toBe(409);
    expect(put.body.error.message).toContain(`${namespace}/deploys`);

    const events = await waitUntil(
      'all.some((e) => e.reason === "Reconciled" && e.type === "Normal")',
      async () => {
        const all = await eventsOf(cluster, namespace, "deploys");
        return all.some((e) => e.reason === "Reconciled" && e.type === "Normal") ? all : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(events.length).toBeGreaterThan(0);
  });

  it("are refused by the CRD's schema and CEL rules when invalid, before the operator sees them", async () => {
    const invalid: [string, Record<string, unknown>][] = [
      ["unknown event", { url: "https://hooks.example.com/x", events: ["deployment.exploded"] }],
      ["non-http url", { url: "ftp://hooks.example.com/x", events: ["deployment.created"] }],
      ["no events", { url: "https://hooks.example.com/x", events: [] }],
      [
        "secretRef without key",
        { url: "https://hooks.example.com/x", events: ["deployment.created"], secretRef: { name: "s" } },
      ],
      [
        "retryPolicy beyond 6 attempts",
        {
          url: "https://hooks.example.com/x",
          events: ["deployment.created"],
          retryPolicy: { maxAttempts: 7 },
        },
      ],
      [
        "autoDisable without minDurationSeconds",
        {
          url: "https://hooks.example.com/x",
          events: ["deployment.created"],
          autoDisable: { afterFailures: 3 },
        },
      ],
      [
        "rateLimit without burst",
        {
          url: "https://hooks.example.com/x",
          events: ["deployment.created"],
          rateLimit: { perSecond: 5 },
        },
      ],
    ];
    for (const [what, spec] of invalid) {
      const error = await createWebhook(cluster, namespace, "invalid", spec).then(
        () => undefined,
        (e: { code?: number; body?: string }) => e,
      );
      expect(error?.code, what).toBe(422);
    }
    expect(await getWebhook(cluster, namespace, "invalid")).toBeUndefined();
  });

  it("are refused by the same URL rules as the API, with a message that does not quote the URL", async () => {
    const refused: [string, string, string][] = [
      ["credentials", "http://user:s3cr3tpw@x.example.com/h", "without credentials"],
      ["a short IPv4 spelling", "http://127.1/h", "absolute http"],
      ["an IPv4 address as one number", "http://2130706433/h", "absolute http"],
      ["a fragment", "http://rcv.example#@127.0.0.1:31101/", "must not have a fragment"],
    ];
    // The namespace's project (its slug is the namespace's name), made by the first test's reconcile.
    const { rows } = await service.pool.query("SELECT id FROM projects WHERE slug = $1", [namespace]);
    const projectId = rows[0].id;
    for (const [what, url, message] of refused) {
      const error = await createWebhook(cluster, namespace, "bad-url", {
        url,
        events: ["deployment.created"],
      }).then(
        () => undefined,
        (e: { code?: number; body?: string }) => e,
      );
      expect(error?.code, what).toBe(422);
      expect(error?.body, what).toContain(message);
      expect(error?.body, what).not.toContain(url);
      expect(error?.body, what).not.toContain("s3cr3tpw");
      // The same URL through the API: a 400.
      const api = await service.api("POST", `/projects/${projectId}/webhooks`, {
        body: { url, events: ["deployment.created"] },
      });
      expect(api.status, what).toBe(400);
    }
    expect(await getWebhook(cluster, namespace, "bad-url")).toBeUndefined();
  });

  it("report a url the destination policy refuses as Ready=False/DestinationRefused, with nothing to deliver to", async () => {
    await createWebhook(cluster, namespace, "metadata", {
      url: "http://169.254.169.254/latest/meta-data/",
      events: ["deployment.created"],
    });
    const refused = await waitForReady(cluster, namespace, "metadata", "False");
    expect(readyOf(refused)).toMatchObject({
      reason: "DestinationRefused",
      message:
        "spec.url is refused as a delivery destination: 169.254.169.254 is a link-local/cloud metadata address; every delivery would fail.",
    });
    expect(refused.status?.webhookId).toBeUndefined();
    await patchWebhook(cluster, namespace, "metadata", { spec: { url: "https://hooks.example.com/fixed" } });
    const fixed = await waitForReady(cluster, namespace, "metadata", "True", 2);
    expect(fixed.status?.webhookId).toEqual(expect.any(Number));
  });

  it("follow spec changes and Secret changes", async () => {
    const before = await waitForReady(cluster, namespace, "deploys", "True");
    await patchWebhook(cluster, namespace, "deploys", {
      spec: { events: ["deployment.created"], enabled: false },
    });
    await waitForReady(cluster, namespace, "deploys", "True", 2);
    const row = await service.pool.query("SELECT events, enabled FROM webhooks WHERE id = $1", [
      before.status?.webhookId,
    ]);
    expect(row.rows[0]).toEqual({ events: ["deployment.created"], enabled: false });

    const secretBefore = await service.pool.query("SELECT secret FROM webhooks WHERE id = $1", [
      before.status?.webhookId,
    ]);
    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "hook-secret",
      body: [{ op: "replace", path: "/data/token", value: Buffer.from("rotated").toString("base64") }],
    });
    await waitUntil(
      "rows[0].secret !== secretBefore.rows[0].secret",
      async () => {
        const { rows } = await service.pool.query("SELECT secret FROM webhooks WHERE id = $1", [
          before.status?.webhookId,
        ]);
        return rows[0].secret !== secretBefore.rows[0].secret ? true : undefined;
      },
      { timeoutMs: clusterPatience },
    );
  });

  it("report a missing Secret or key as Ready=False with a reason and a Warning Event, then recover", async () => {
    await createWebhook(cluster, namespace, "needs-secret", {
      url: "https://hooks.example.com/x",
      events: ["deployment.created"],
      secretRef: { name: "later", key: "k" },
    });
    const missing = await waitForReady(cluster, namespace, "needs-secret", "False");
    expect(readyOf(missing)).toMatchObject({
      reason: "SecretNotFound",
      message: `Secret ${namespace}/later does not exist.`,
    });
    await cluster.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: "later", labels: optInLabels }, stringData: { other: "x" } },
    });
    const noKey = await waitUntil(
      'ready?.reason === "SecretKeyNotFound"',
      async () => {
        const ready = readyOf(await getWebhook(cluster, namespace, "needs-secret"));
        return ready?.reason === "SecretKeyNotFound" ? ready : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(noKey.message).toBe(`Secret ${namespace}/later has no key 'k'.`);
    const warnings = await waitUntil(
      'reasons.includes("SecretKeyNotFound")',
      async () => {
        const reasons = (await eventsOf(cluster, namespace, "needs-secret"))
          .filter((e) => e.type === "Warning")
          .map((e) => e.reason);
        return reasons.includes("SecretKeyNotFound") ? reasons : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(warnings).toEqual(expect.arrayContaining(["SecretNotFound", "SecretKeyNotFound"]));

    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "later",
      body: [{ op: "add", path: "/data/k", value: Buffer.from("value").toString("base64") }],
    });
    await waitForReady(cluster, namespace, "needs-secret", "True");
  });

  it("do not loop: a Ready resource is not written again while nothing changes", async () => {
    await waitForReady(cluster, namespace, "deploys", "True", 2);
    await service.operator?.idle();
    const reconciled = await webhookReconciles();
    // A change that is no change to the operator (an annotation: same spec, same status) makes it
    // reconcile the resource, as its own status write does; a loop would write the status again.
    const patched = await cluster.kubectl([
      ...["-n", namespace, "annotate", "webhooks.webhook-operator.io", "deploys", "example.com/touched=1"],
      ...["--overwrite", "-o", "jsonpath={.metadata.resourceVersion}"],
    ]);
    await waitUntil(
      "(await webhookReconciles()) > reconciled",
      async () => ((await webhookReconciles()) > reconciled ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    await service.operator?.idle();
    expect((await getWebhook(cluster, namespace, "deploys"))?.metadata.resourceVersion).toBe(patched.trim());
  });

  it("delete the service's webhook through the finalizer when the resource is deleted", async () => {
    const resource = await waitForReady(cluster, namespace, "deploys", "True", 2);
    await cluster.customObjects.deleteNamespacedCustomObject({
      group: "webhook-operator.io",
      version: "v1alpha1",
      plural: "webhooks",
      namespace,
      name: "deploys",
    });
    await waitUntil(
      '(await getWebhook(cluster, namespace, "deploys")) === undefined',
      async () => ((await getWebhook(cluster, namespace, "deploys")) === undefined ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    const { rows } = await service.pool.query("SELECT count(*)::int AS n FROM webhooks WHERE id = $1", [
      resource.status?.webhookId,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it("pause delivering when the signing key is removed, and resume when it is back", async () => {
    await cluster.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: "rotating", labels: optInLabels }, stringData: { key: "first-key" } },
    });
    await createWebhook(cluster, namespace, "signed", {
      url: "https://hooks.example.com/signed",
      events: ["deployment.created"],
      secretRef: { name: "rotating", key: "key" },
    });
    const ready = await waitForReady(cluster, namespace, "signed", "True");
    const path = `/projects/${ready.status?.projectId}/webhooks/${ready.status?.webhookId}`;

    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "rotating",
      body: [{ op: "remove", path: "/data/key" }],
    });
    const paused = await waitUntil(
      'readyOf(resource)?.reason === "SecretKeyNotFound"',
      async () => {
        const resource = await getWebhook(cluster, namespace, "signed");
        return readyOf(resource)?.reason === "SecretKeyNotFound" ? resource : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect(readyOf(paused)?.message).toContain("Deliveries are paused");
    expect((await service.api("GET", path)).body).toMatchObject({ enabled: false });

    // A rollout now is recorded, and nothing is queued for the paused webhook.
    await cluster.apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "web" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "app", image: "app" }] },
          },
        },
      },
    });
    const eventId = await waitUntil(
      "the event the rollout recorded",
      async () => {
        const { rows } = await service.pool.query(
          `SELECT e.id FROM events e JOIN deployments d ON d.id = (e.envelope::jsonb->'payload'->>'deployment_id')::bigint
          WHERE d.name = 'web' AND d.project_id = $1 AND e.event_type = 'deployment.created'`,
          [ready.status?.projectId],
        );
        return rows[0]?.id as string | undefined;
      },
      { timeoutMs: clusterPatience },
    );
    const queued = await service.pool.query(
      "SELECT count(*)::int AS n FROM deliveries WHERE event_id = $1 AND webhook_id = $2",
      [eventId, ready.status?.webhookId],
    );
    expect(queued.rows[0].n).toBe(0);

    await cluster.core.patchNamespacedSecret({
      namespace,
      name: "rotating",
      // Removing the only key removed `data` itself.
      body: [{ op: "add", path: "/data", value: { key: Buffer.from("second-key").toString("base64") } }],
    });
    await waitUntil(
      'readyOf(resource)?.status === "True"',
      async () => {
        const resource = await getWebhook(cluster, namespace, "signed");
        return readyOf(resource)?.status === "True" ? true : undefined;
      },
      { timeoutMs: clusterPatience },
    );
    expect((await service.api("GET", path)).body).toMatchObject({ enabled: true, has_secret: true });
  });

  it("remove the service's webhook of a resource deleted while no operator ran", async () => {
    await createWebhook(cluster, namespace, "orphan", {
      url: "https://hooks.example.com/orphan",
      events: ["deployment.created"],
    });
    const resource = await waitForReady(cluster, namespace, "orphan", "True");
    await service.close();
    // As the README's Uninstall advises when no operator runs: release the finalizer, then delete.
    await patchWebhook(cluster, namespace, "orphan", { metadata: { finalizers: null } });
    await cluster.customObjects.deleteNamespacedCustomObject({
      group: "webhook-operator.io",
      version: "v1alpha1",
      plural: "webhooks",
      namespace,
      name: "orphan",
    });
    service = await startOperator();
    const path = `/projects/${resource.status?.projectId}/webhooks/${resource.status?.webhookId}`;
    await waitUntil(
      '(await service.api("GET", path)).status === 404',
      async () => ((await service.api("GET", path)).status === 404 ? true : undefined),
      { timeoutMs: clusterPatience },
    );
    // The others are untouched.
    const signed = await waitForReady(cluster, namespace, "signed", "True");
    expect(
      (await service.api("GET", `/projects/${signed.status?.projectId}/webhooks/${signed.status?.webhookId}`))
        .status,
    ).toBe(200);
  });

  it("carry rateLimit; a 410 Gone of a webhook with autoDisable shows as Ready=False/ReceiverGone", async () => {
    const receiver = await startReceiver();
    try {
      receiver.on("/gone", (_request, res) => res.writeHead(410).end());
      await createWebhook(cluster, namespace, "gone", {
        url: `${receiver.url}/gone`,
        events: ["deployment.failed"],
        autoDisable: { afterFailures: 100, minDurationSeconds: 0 },
        rateLimit: { perSecond: 2.5, burst: 3 },
      });
      const ready = await waitForReady(cluster, namespace, "gone", "True");
      const path = `/projects/${ready.status?.projectId}/webhooks/${ready.status?.webhookId}`;
      expect((await service.api("GET", path)).body).toMatchObject({
        enabled: true,
        rate_limit: { per_second: 2.5, burst: 3 },
      });
      await withTransaction(service.pool, (client) =>
        emitEvent(client, {
          eventType: "deployment.failed",
          projectId: Number(ready.status?.projectId),
          payload: {},
        }),
      );
      const gone = await waitUntil(
        "the Webhook gone to be Ready=False with reason ReceiverGone",
        async () => {
          const resource = await getWebhook(cluster, namespace, "gone");
          return readyOf(resource)?.reason === "ReceiverGone" ? resource : undefined;
        },
        { timeoutMs: clusterPatience },
      );
      expect(readyOf(gone)).toMatchObject({ status: "False" });
      expect(readyOf(gone)?.message).toMatch(/^Disabled automatically: the receiver answered 410 Gone/);
    } finally {
      await receiver.close();
    }
  });

  it("carry retryPolicy and autoDisable; an automatic disable shows as Ready=False/AutoDisabled with a Warning Event until the spec changes", async () => {
    const receiver = await startReceiver();
    try {
      receiver.on("/dead", (_request, res) => res.writeHead(500).end());
      await createWebhook(cluster, namespace, "fragile", {
        url: `${receiver.url}/dead`,
        events: ["deployment.failed"],
        retryPolicy: { maxAttempts: 2 },
        autoDisable: { afterFailures: 1, minDurationSeconds: 0 },
      });
      const ready = await waitForReady(cluster, namespace, "fragile", "True");
      const path = `/projects/${ready.status?.projectId}/webhooks/${ready.status?.webhookId}`;
      expect((await service.api("GET", path)).body).toMatchObject({
        enabled: true,
        retry_policy: { max_attempts: 2 },
        auto_disable: { after_failures: 1, min_duration_seconds: 0 },
      });

      await withTransaction(service.pool, (client) =>
        emitEvent(client, {
          eventType: "deployment.failed",
          projectId: Number(ready.status?.projectId),
          payload: {},
        }),
      );
      const disabled = await waitUntil(
        'readyOf(resource)?.reason === "AutoDisabled"',
        async () => {
          const resource = await getWebhook(cluster, namespace, "fragile");
          return readyOf(resource)?.reason === "AutoDisabled" ? resource : undefined;
        },
        { timeoutMs: clusterPatience },
      );
      expect(readyOf(disabled)).toMatchObject({ status: "False" });
      expect(readyOf(disabled)?.message).toMatch(
        /^Disabled automatically: 1 deliveries in a row failed since /,
      );
      expect(readyOf(disabled)?.message).toContain("Any change to this resource's spec enables it again.");
      const warning = await waitUntil(
        'events.find((e) => e.type === "Warning" && e.reason === "AutoDisabled")',
        async () => {
          const events = await eventsOf(cluster, namespace, "fragile");
          return events.find((e) => e.type === "Warning" && e.reason === "AutoDisabled");
        },
        { timeoutMs: clusterPatience },
      );
      expect(warning?.message).toContain("Disabled automatically");
      expect(
        await cluster.kubectl(["-n", namespace, "get", "webhooks.webhook-operator.io", "fragile"]),
      ).toMatch(/fragile\s+.*\sFalse\s+AutoDisabled\s/);

      // Reconciles that change nothing (status resyncs, a label) leave it disabled.
      await cluster.kubectl([
        "-n",
        namespace,
        "label",
        "webhooks.webhook-operator.io",
        "fragile",
        "touched=yes",
      ]);
      await service.operator?.idle();
      expect((await service.api("GET", path)).body).toMatchObject({ enabled: false });
      expect((await service.api("GET", path)).body.disabled_reason).toMatch(/^Disabled automatically/);

      // A spec change enables it again and clears the reason.
      receiver.on("/dead", (_request, res) => res.writeHead(200).end());
      await patchWebhook(cluster, namespace, "fragile", { spec: { retryPolicy: { maxAttempts: 3 } } });
      await waitForReady(cluster, namespace, "fragile", "True", 2);
      expect((await service.api("GET", path)).body).toMatchObject({
        enabled: true,
        disabled_reason: null,
        retry_policy: { max_attempts: 3 },
      });
    } finally {
      await receiver.close();
    }
  });

  it("sign with a binary Secret value's raw bytes, not a UTF-8 decoding of them", async () => {
    const receiver = await startReceiver();
    try {
      const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x41, 0xc3, 0x28]);
      await cluster.core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: "binary", labels: optInLabels }, data: { key: bytes.toString("base64") } },
      });
      await createWebhook(cluster, namespace, "binary-signed", {
        url: `${receiver.url}/binary`,
        events: ["deployment.succeeded"],
        secretRef: { name: "binary", key: "key" },
      });
      const ready = await waitForReady(cluster, namespace, "binary-signed", "True");
      const sent = await service.api(
        "POST",
        `/projects/${ready.status?.projectId}/webhooks/${ready.status?.webhookId}/test`,
      );
      expect(sent.body).toMatchObject({ success: true });
      const [request] = receiver.requests;
      const timestamp = request?.headers["x-webhook-timestamp"];
      const expected = createHmac("sha256", bytes).update(`${timestamp}.${request?.body}`).digest("hex");
      expect(request?.headers["x-webhook-signature"]).toBe(`sha256=${expected}`);
    } finally {
      await receiver.close();
    }
  });
});
