// Tests of the FAKE Kubernetes API server (test/support/fake-kube-apiserver.ts), driven through
// @kubernetes/client-node exactly as the operator drives a real cluster.
import {
  ApiException,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
  V1MicroTime,
  Watch,
} from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeKubeApiServer,
  type KubeObject,
  startFakeKubeApiServer,
} from "../support/fake-kube-apiserver.js";

const WH = { group: "webhook-operator.io", version: "v1alpha1", plural: "webhooks" } as const;
const MERGE = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

interface Webhook extends KubeObject {
  spec: { url: string; events: string[]; enabled?: boolean };
  status?: Record<string, unknown>;
}

function webhook(name: string, extra: Partial<KubeObject> = {}): Webhook {
  return {
    apiVersion: "webhook-operator.io/v1alpha1",
    kind: "Webhook",
    metadata: { name, namespace: "default" },
    spec: { url: "https://receiver.example/hook", events: ["deployment.created"] },
    ...extra,
  } as Webhook;
}

function deployment(name: string, namespace = "default", labels: Record<string, string> = {}): V1Deployment {
  return {
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  };
}

/** The metav1.Status of a failed client-node call (ApiException.body is the raw response text). */
async function failure(
  promise: Promise<unknown>,
): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiException);
    const e = err as ApiException<string>;
    return { code: e.code, status: JSON.parse(e.body) as Record<string, unknown> };
  }
  throw new Error("expected the call to fail");
}

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

let fake: FakeKubeApiServer;
let kc: KubeConfig;
const cleanups: Array<() => Promise<void> | void> = [];

beforeEach(async () => {
  fake = await startFakeKubeApiServer();
  kc = fake.kubeConfig();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await fake.close();
});

describe("Webhook custom objects through CustomObjectsApi", () => {
  it("creates with server-assigned metadata, prunes unknown fields, drops status and applies schema defaults", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const body = webhook("a", { status: { webhookId: 7 } });
    (body.spec as Record<string, unknown>).unknownField = 1;
    const created = (await api.createNamespacedCustomObject({
      ...WH,
      namespace: "default",
      body,
    })) as Webhook;
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.metadata?.generation).toBe(1);
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);
    expect(created.spec).toEqual({
      url: "https://receiver.example/hook",
      events: ["deployment.created"],
      enabled: true,
    });
    expect(created.status).toBeUndefined();
    expect(created.kind).toBe("Webhook");
    expect(created.apiVersion).toBe("webhook-operator.io/v1alpha1");
  });

  it("lists per namespace and across namespaces with kind WebhookList, a resourceVersion and selectors", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "shop" } } });
    const api = kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({
      ...WH,
      namespace: "default",
      body: webhook("a", { metadata: { name: "a", labels: { tier: "gold" } } }),
    });
    await api.createNamespacedCustomObject({
      ...WH,
      namespace: "shop",
      body: webhook("b", { metadata: { name: "b", namespace: "shop" } }),
    });

    const inDefault = await api.listNamespacedCustomObject({ ...WH, namespace: "default" });
    expect(inDefault.kind).toBe("WebhookList");
    expect(inDefault.metadata.resourceVersion).toBe(fake.resourceVersion());
    expect(inDefault.items.map((w: Webhook) => w.metadata?.name)).toEqual(["a"]);

    const all = await api.listClusterCustomObject({ ...WH });
    expect(all.items.map((w: Webhook) => `${w.metadata?.namespace}/${w.metadata?.name}`)).toEqual([
      "default/a",
      "shop/b",
    ]);
    expect(all.items[0].kind).toBe("Webhook"); // custom resource list items keep kind/apiVersion

    const gold = await api.listClusterCustomObject({ ...WH, labelSelector: "tier in (gold,silver)" });
    expect(gold.items.map((w: Webhook) => w.metadata?.name)).toEqual(["a"]);
    const notGold = await api.listClusterCustomObject({ ...WH, labelSelector: "tier!=gold" });
    expect(notGold.items.map((w: Webhook) => w.metadata?.name)).toEqual(["b"]);
    const byName = await api.listClusterCustomObject({ ...WH, fieldSelector: "metadata.name=b" });
    expect(byName.items.map((w: Webhook) => w.metadata?.name)).toEqual(["b"]);
    const byNs = await api.listClusterCustomObject({ ...WH, fieldSelector: "metadata.namespace!=shop" });
    expect(byNs.items.map((w: Webhook) => w.metadata?.name)).toEqual(["a"]);
    const bad = await failure(api.listClusterCustomObject({ ...WH, fieldSelector: "spec.url=x" }));
    expect(bad.code).toBe(400);
    expect(bad.status.message).toBe("field label not supported: spec.url");
  });

  it("answers get of a missing object with a 404 NotFound Status and create of an existing one with 409 AlreadyExists", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const missing = await failure(
      api.getNamespacedCustomObject({ ...WH, namespace: "default", name: "nope" }),
    );
    expect(missing).toEqual({
      code: 404,
      status: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'webhooks.webhook-operator.io "nope" not found',
        reason: "NotFound",
        details: { name: "nope", group: "webhook-operator.io", kind: "webhooks" },
        code: 404,
      },
    });
    await api.createNamespacedCustomObject({ ...WH, namespace: "default", body: webhook("a") });
    const again = await failure(
      api.createNamespacedCustomObject({ ...WH, namespace: "default", body: webhook("a") }),
    );
    expect(again.code).toBe(409);
    expect(again.status.reason).toBe("AlreadyExists");
  });

  it("sends JSON patch by default and merge patch with setHeaderOptions; spec changes bump generation", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({ ...WH, namespace: "default", body: webhook("a") });

    const merged = (await api.patchNamespacedCustomObject(
      { ...WH, namespace: "default", name: "a", body: { spec: { enabled: false } } },
      MERGE,
    )) as Webhook;
    expect(merged.spec.enabled).toBe(false);
    expect(merged.metadata?.generation).toBe(2);
    expect(fake.requests.at(-1)?.contentType).toBe("application/merge-patch+json");

    const patched = (await api.patchNamespacedCustomObject({
      ...WH,
      namespace: "default",
      name: "a",
      body: [{ op: "replace", path: "/spec/events", value: ["deployment.ready", "deployment.failed"] }],
    })) as Webhook;
    expect(fake.requests.at(-1)?.contentType).toBe("application/json-patch+json");
    expect(patched.spec.events).toEqual(["deployment.ready", "deployment.failed"]);
    expect(patched.metadata?.generation).toBe(3);

    const labelsOnly = (await api.patchNamespacedCustomObject(
      { ...WH, namespace: "default", name: "a", body: { metadata: { labels: { team: "x" } } } },
      MERGE,
    )) as Webhook;
    expect(labelsOnly.metadata?.generation).toBe(3); // metadata-only change: no bump
    expect(Number(labelsOnly.metadata?.resourceVersion)).toBeGreaterThan(
      Number(patched.metadata?.resourceVersion),
    );

    const smp = await failure(
      api.patchNamespacedCustomObject(
        { ...WH, namespace: "default", name: "a", body: { spec: {} } },
        setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(smp.code).toBe(415); // custom resources do not accept strategic merge patch
  });

  it("rejects a stale resourceVersion on PUT (409 Conflict) and accepts the fresh one", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const created = (await api.createNamespacedCustomObject({
      ...WH,
      namespace: "default",
      body: webhook("a"),
    })) as Webhook;
    const updated = (await api.replaceNamespacedCustomObject({
      ...WH,
      namespace: "default",
      name: "a",
      body: { ...created, spec: { ...created.spec, url: "https://other.example/" } },
    })) as Webhook;
    expect(updated.metadata?.generation).toBe(2);
    const stale = await failure(
      api.replaceNamespacedCustomObject({
        ...WH,
        namespace: "default",
        name: "a",
        body: { ...created, spec: { ...created.spec, enabled: false } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.status.reason).toBe("Conflict");
    expect(stale.status.message).toBe(
      'Operation cannot be fulfilled on webhooks.webhook-operator.io "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    const stalePatch = await failure(
      api.patchNamespacedCustomObject(
        {
          ...WH,
          namespace: "default",
          name: "a",
          body: {
            metadata: { resourceVersion: created.metadata?.resourceVersion },
            spec: { enabled: false },
          },
        },
        MERGE,
      ),
    );
    expect(stalePatch.code).toBe(409);
  });

  it("validates against the CRD schema with 422 Invalid and field causes (CEL rules are not evaluated)", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const bad = webhook("a");
    bad.spec = { url: "ftp://x", events: ["deployment.created", "deployment.created", "nope"] };
    const res = await failure(api.createNamespacedCustomObject({ ...WH, namespace: "default", body: bad }));
    expect(res.code).toBe(422);
    expect(res.status.reason).toBe("Invalid");
    const causes = (res.status.details as { causes: { field: string; reason: string }[] }).causes;
    expect(causes.map((c) => `${c.field} ${c.reason}`)).toEqual([
      "spec.url FieldValueInvalid",
      "spec.events[1] FieldValueDuplicate",
      "spec.events[2] FieldValueNotSupported",
    ]);
    expect(res.status.message).toMatch(
      /^Webhook\.webhook-operator\.io "a" is invalid: \[spec\.url: Invalid value: "ftp:\/\/x"/,
    );
    const missing = await failure(
      api.createNamespacedCustomObject({
        ...WH,
        namespace: "default",
        body: { ...webhook("b"), spec: { url: "http://x" } },
      }),
    );
    expect(missing.status.message).toBe(
      'Webhook.webhook-operator.io "b" is invalid: spec.events: Required value',
    );
  });

  it("deletes without finalizers at once: Success Status, then 404", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({ ...WH, namespace: "default", body: webhook("a") });
    const status = await api.deleteNamespacedCustomObject({ ...WH, namespace: "default", name: "a" });
    expect(status).toMatchObject({
      kind: "Status",
      status: "Success",
      details: { name: "a", kind: "webhooks" },
    });
    expect(
      (await failure(api.getNamespacedCustomObject({ ...WH, namespace: "default", name: "a" }))).code,
    ).toBe(404);
  });

  it("refuses objects in a namespace that does not exist", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const res = await failure(
      api.createNamespacedCustomObject({
        ...WH,
        namespace: "ghost",
        body: { ...webhook("a"), metadata: { name: "a" } },
      }),
    );
    expect(res.code).toBe(404);
    expect(res.status.message).toBe('namespaces "ghost" not found');
  });
});

describe("status subresource", () => {
  it("keeps status on main-resource writes and changes only status on /status writes", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const created = (await api.createNamespacedCustomObject({
      ...WH,
      namespace: "default",
      body: webhook("a"),
    })) as Webhook;

    const afterStatus = (await api.replaceNamespacedCustomObjectStatus({
      ...WH,
      namespace: "default",
      name: "a",
      body: {
        ...created,
        spec: { ...created.spec, url: "https://ignored.example/" },
        metadata: { ...created.metadata, labels: { ignored: "yes" } },
        status: { observedGeneration: 1, webhookId: 42 },
      },
    })) as Webhook;
    expect(afterStatus.status).toEqual({ observedGeneration: 1, webhookId: 42 });
    expect(afterStatus.spec.url).toBe("https://receiver.example/hook");
    expect(afterStatus.metadata?.labels).toBeUndefined();
    expect(afterStatus.metadata?.generation).toBe(1);

    const afterMain = (await api.patchNamespacedCustomObject(
      {
        ...WH,
        namespace: "default",
        name: "a",
        body: { status: { webhookId: 1 }, spec: { enabled: false } },
      },
      MERGE,
    )) as Webhook;
    expect(afterMain.status).toEqual({ observedGeneration: 1, webhookId: 42 });
    expect(afterMain.metadata?.generation).toBe(2);

    const merged = (await api.patchNamespacedCustomObjectStatus(
      {
        ...WH,
        namespace: "default",
        name: "a",
        body: { status: { observedGeneration: 2, hasSecret: false } },
      },
      MERGE,
    )) as Webhook;
    expect(merged.status).toEqual({ observedGeneration: 2, webhookId: 42, hasSecret: false });
    expect(merged.metadata?.generation).toBe(2);
  });

  it("does not write (no new resourceVersion, no event) when an update changes nothing", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({ ...WH, namespace: "default", body: webhook("a") });
    const first = (await api.patchNamespacedCustomObjectStatus(
      { ...WH, namespace: "default", name: "a", body: { status: { observedGeneration: 1 } } },
      MERGE,
    )) as Webhook;
    const again = (await api.patchNamespacedCustomObjectStatus(
      { ...WH, namespace: "default", name: "a", body: { status: { observedGeneration: 1 } } },
      MERGE,
    )) as Webhook;
    expect(again.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });

  it("validates status against the schema too", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({ ...WH, namespace: "default", body: webhook("a") });
    const res = await failure(
      api.patchNamespacedCustomObjectStatus(
        {
          ...WH,
          namespace: "default",
          name: "a",
          body: { status: { conditions: [{ type: "Ready", status: "Yes" }] } },
        },
        MERGE,
      ),
    );
    expect(res.code).toBe(422);
    const fields = (res.status.details as { causes: { field: string }[] }).causes.map((c) => c.field);
    expect(fields).toContain("status.conditions[0].status");
    expect(fields).toContain("status.conditions[0].lastTransitionTime");
  });

  it("Deployments: status reset on create, generation bumps on spec or annotation changes only", async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const created = await apps.createNamespacedDeployment({
      namespace: "default",
      body: { ...deployment("web"), status: { replicas: 9 } },
    });
    expect(created.metadata?.generation).toBe(1);
    expect(created.status?.replicas).toBeUndefined();
    expect(created.spec?.replicas).toBe(1); // defaulted
    const annotated = await apps.patchNamespacedDeployment(
      {
        namespace: "default",
        name: "web",
        body: { metadata: { annotations: { "example.com/commit": "abc" } } },
      },
      MERGE,
    );
    expect(annotated.metadata?.generation).toBe(2);
    const labelled = await apps.patchNamespacedDeployment(
      { namespace: "default", name: "web", body: { metadata: { labels: { x: "y" } } } },
      MERGE,
    );
    expect(labelled.metadata?.generation).toBe(2);
    const status = await apps.patchNamespacedDeploymentStatus(
      { namespace: "default", name: "web", body: { status: { observedGeneration: 2, replicas: 1 } } },
      MERGE,
    );
    expect(status.status?.observedGeneration).toBe(2);
    expect(status.metadata?.generation).toBe(2);
    const bad = await failure(
      apps.createNamespacedDeployment({
        namespace: "default",
        body: {
          ...deployment("bad"),
          spec: {
            ...deployment("bad").spec,
            selector: { matchLabels: { app: "other" } },
          } as V1Deployment["spec"],
        },
      }),
    );
    expect(bad.code).toBe(422);
  });
});

describe("finalizers and deletionTimestamp", () => {
  it("DELETE sets deletionTimestamp and keeps the object until the last finalizer is removed", async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const events: string[] = [];
    const watch = new Watch(kc);
    const req = await watch.watch(
      "/apis/webhook-operator.io/v1alpha1/namespaces/default/webhooks",
      { resourceVersion: fake.resourceVersion() },
      (type, obj: Webhook) =>
        events.push(
          `${type} ${obj.metadata?.deletionTimestamp ? "deleting" : "live"} ${obj.metadata?.generation}`,
        ),
      () => {},
    );
    cleanups.push(() => req.abort());
    await api.createNamespacedCustomObject({
      ...WH,
      namespace: "default",
      body: { ...webhook("a"), metadata: { name: "a", finalizers: ["webhook-operator.io/cleanup"] } },
    });

    const deleting = (await api.deleteNamespacedCustomObject({
      ...WH,
      namespace: "default",
      name: "a",
    })) as Webhook;
    expect(deleting.metadata?.deletionTimestamp).toBeDefined();
    expect(deleting.metadata?.generation).toBe(2); // the real apiserver bumps generation when deletion starts
    const stillThere = (await api.getNamespacedCustomObject({
      ...WH,
      namespace: "default",
      name: "a",
    })) as Webhook;
    expect(stillThere.metadata?.finalizers).toEqual(["webhook-operator.io/cleanup"]);

    const noNew = await failure(
      api.patchNamespacedCustomObject(
        {
          ...WH,
          namespace: "default",
          name: "a",
          body: { metadata: { finalizers: ["webhook-operator.io/cleanup", "other"] } },
        },
        MERGE,
      ),
    );
    expect(noNew.code).toBe(422);

    const gone = await api.patchNamespacedCustomObject(
      { ...WH, namespace: "default", name: "a", body: { metadata: { finalizers: null } } },
      MERGE,
    );
    expect(gone).toMatchObject({ kind: "Status", status: "Success" });
    expect(
      (await failure(api.getNamespacedCustomObject({ ...WH, namespace: "default", name: "a" }))).code,
    ).toBe(404);
    await waitFor(() => events.length === 3);
    expect(events).toEqual(["ADDED live 1", "MODIFIED deleting 2", "DELETED deleting 2"]);
  });

  it("deleting a namespace deletes its contents, waits for their finalizers, then the namespace goes", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "shop" } } });
    fake.create("webhooks", {
      ...webhook("a"),
      metadata: { name: "a", namespace: "shop", finalizers: ["f"] },
    });
    fake.create("secrets", { metadata: { name: "s", namespace: "shop" }, stringData: { token: "t" } });
    const ns = await core.deleteNamespace({ name: "shop" });
    expect(ns).toBeDefined();
    expect(fake.get("namespaces", { name: "shop" })?.status).toEqual({ phase: "Terminating" });
    expect(fake.get("secrets", { namespace: "shop", name: "s" })).toBeUndefined();
    expect(fake.get("webhooks", { namespace: "shop", name: "a" })?.metadata?.deletionTimestamp).toBeDefined();
    const refused = await failure(
      core.createNamespacedSecret({ namespace: "shop", body: { metadata: { name: "t" } } }),
    );
    expect(refused.code).toBe(403);
    fake.patch("webhooks", { namespace: "shop", name: "a" }, { metadata: { finalizers: [] } });
    expect(fake.get("namespaces", { name: "shop" })).toBeUndefined();
  });
});

describe("leases (leader election)", () => {
  it("create, then update with a stale resourceVersion answers 409 Conflict (ApiException code 409)", async () => {
    const coord = kc.makeApiClient(CoordinationV1Api);
    const now = new V1MicroTime();
    const created = await coord.createNamespacedLease({
      namespace: "default",
      body: {
        metadata: { name: "webhook-operator-leader" },
        spec: {
          holderIdentity: "pod-a",
          leaseDurationSeconds: 15,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        },
      },
    });
    expect(created.metadata?.resourceVersion).toBeDefined();
    // client-node 2.x sends V1MicroTime as "…:05.123000Z" but does NOT revive it on read: it comes back a string.
    expect(typeof created.spec?.renewTime).toBe("string");
    expect(String(created.spec?.renewTime)).toMatch(/\.\d{6}Z$/);

    const renewed = await coord.replaceNamespacedLease({
      namespace: "default",
      name: "webhook-operator-leader",
      body: { ...created, spec: { ...created.spec, renewTime: new V1MicroTime() } },
    });
    expect(renewed.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);

    const takeover = coord.replaceNamespacedLease({
      namespace: "default",
      name: "webhook-operator-leader",
      body: { ...created, spec: { ...created.spec, holderIdentity: "pod-b" } }, // stale resourceVersion
    });
    const res = await failure(takeover);
    expect(res.code).toBe(409);
    expect(res.status.reason).toBe("Conflict");
    expect(
      (await coord.readNamespacedLease({ namespace: "default", name: "webhook-operator-leader" })).spec
        ?.holderIdentity,
    ).toBe("pod-a");
  });

  it("rejects MicroTime fields without exactly six fractional digits (a plain Date), like the real decoder", async () => {
    const coord = kc.makeApiClient(CoordinationV1Api);
    const res = await failure(
      coord.createNamespacedLease({
        namespace: "default",
        body: {
          metadata: { name: "l" },
          spec: { holderIdentity: "a", renewTime: new Date() as V1MicroTime },
        },
      }),
    );
    expect(res.code).toBe(400);
  });
});

describe("events, secrets, pagination and fault injection", () => {
  it("creates core/v1 and events.k8s.io/v1 events, validating the events.k8s.io required fields", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedEvent({
      namespace: "default",
      body: {
        metadata: { generateName: "a." },
        involvedObject: { kind: "Webhook", namespace: "default", name: "a" },
        reason: "Reconciled",
        message: "ok",
        type: "Normal",
      },
    });
    expect(created.metadata?.name).toMatch(/^a\.[a-z0-9]{5}$/);
    const wrongNs = await failure(
      core.createNamespacedEvent({
        namespace: "default",
        body: { metadata: { name: "x" }, involvedObject: { kind: "Webhook", namespace: "shop", name: "a" } },
      }),
    );
    expect(wrongNs.code).toBe(422);

    const events = kc.makeApiClient(EventsV1Api);
    const ok = await events.createNamespacedEvent({
      namespace: "default",
      body: {
        metadata: { name: "e1" },
        eventTime: new V1MicroTime(),
        regarding: { kind: "Webhook", namespace: "default", name: "a" },
        reason: "Reconciled",
        action: "Reconcile",
        note: "ok",
        type: "Normal",
        reportingController: "webhook-operator.io/controller",
        reportingInstance: "pod-a",
      },
    });
    expect(ok.metadata?.uid).toBeDefined();
    const missing = await failure(
      events.createNamespacedEvent({
        namespace: "default",
        body: { metadata: { name: "e2" }, eventTime: new V1MicroTime() },
      }),
    );
    expect(missing.code).toBe(422);
  });

  it("folds Secret stringData into base64 data", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const secret = await core.createNamespacedSecret({
      namespace: "default",
      body: { metadata: { name: "hook" }, stringData: { signing: "s3cret" } },
    });
    expect(secret.data).toEqual({ signing: Buffer.from("s3cret").toString("base64") });
    expect(secret.stringData).toBeUndefined();
    expect(secret.type).toBe("Opaque");
  });

  it("pages lists with limit/continue on one snapshot; a continue token older than the history is 410", async () => {
    for (const name of ["a", "b", "c"]) fake.create("secrets", { metadata: { name, namespace: "default" } });
    const core = kc.makeApiClient(CoreV1Api);
    const page1 = await core.listNamespacedSecret({ namespace: "default", limit: 2 });
    expect(page1.items.map((s) => s.metadata?.name)).toEqual(["a", "b"]);
    expect(page1.items[0]?.kind).toBeUndefined(); // typed list items carry no kind on the wire
    expect(page1.metadata?.remainingItemCount).toBe(1);
    fake.create("secrets", { metadata: { name: "d", namespace: "default" } });
    const page2 = await core.listNamespacedSecret({
      namespace: "default",
      limit: 2,
      _continue: page1.metadata?._continue,
    });
    expect(page2.items.map((s) => s.metadata?.name)).toEqual(["c"]);
    expect(page2.metadata?._continue).toBeUndefined();
    expect(page2.metadata?.resourceVersion).toBe(page1.metadata?.resourceVersion);

    const again = await core.listNamespacedSecret({ namespace: "default", limit: 1 });
    fake.create("secrets", { metadata: { name: "e", namespace: "default" } });
    fake.compactHistory(); // the token's resourceVersion is now older than the kept history
    const expiredPage = await failure(
      core.listNamespacedSecret({ namespace: "default", limit: 1, _continue: again.metadata?._continue }),
    );
    expect(expiredPage.code).toBe(410);
    expect(expiredPage.status.reason).toBe("Expired");
  });

  it("answers injected failures with the given Status, once by default", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    fake.injectFailure({
      method: "GET",
      path: "/api/v1/namespaces",
      code: 503,
      reason: "ServiceUnavailable",
    });
    const res = await failure(core.listNamespace());
    expect(res.code).toBe(503);
    expect(res.status.reason).toBe("ServiceUnavailable");
    expect((await core.listNamespace()).items.map((n) => n.metadata?.name)).toEqual([
      "default",
      "kube-node-lease",
      "kube-public",
      "kube-system",
    ]);
  });

  it("serves a kubeconfig YAML that client-node loads (insecure-skip-tls-verify is required for http)", async () => {
    const fromYaml = new KubeConfig();
    fromYaml.loadFromString(fake.kubeConfigYaml("default"));
    const core = fromYaml.makeApiClient(CoreV1Api);
    expect((await core.readNamespace({ name: "default" })).status?.phase).toBe("Active");
    expect(fake.requests.at(-1)).toMatchObject({
      method: "GET",
      path: "/api/v1/namespaces/default",
      status: 200,
    });
  });
});

describe("watch streams and client-node informers", () => {
  function deploymentInformer() {
    const apps = kc.makeApiClient(AppsV1Api);
    const informer = makeInformer<V1Deployment>(kc, "/apis/apps/v1/deployments", () =>
      apps.listDeploymentForAllNamespaces(),
    );
    const seen: string[] = [];
    const errors: unknown[] = [];
    informer.on("add", (d) => seen.push(`add ${d.metadata?.name}`));
    informer.on("update", (d) => seen.push(`update ${d.metadata?.name}`));
    informer.on("delete", (d) => seen.push(`delete ${d.metadata?.name}`));
    informer.on("error", (err) => errors.push(err));
    cleanups.push(() => informer.stop());
    return { informer, seen, errors };
  }
  const names = (objs: readonly V1Deployment[]) => objs.map((d) => d.metadata?.name).sort();

  it("an informer on deployments receives ADDED, MODIFIED and DELETED", async () => {
    fake.create("deployments", deployment("pre"));
    const { informer, seen } = deploymentInformer();
    await informer.start();
    expect(seen).toEqual(["add pre"]);
    await fake.waitForWatches("deployments");
    fake.create("deployments", deployment("web"));
    fake.patchStatus(
      "deployments",
      { namespace: "default", name: "web" },
      { observedGeneration: 1, replicas: 1 },
    );
    fake.delete("deployments", { namespace: "default", name: "pre" });
    await waitFor(() => seen.length === 4);
    expect(seen).toEqual(["add pre", "add web", "update web", "delete pre"]);
    expect(informer.get("web", "default")?.status?.replicas).toBe(1);
    const watchReq = fake.requests.find((r) => r.watch);
    expect(watchReq?.query).toMatchObject({ watch: "true", resourceVersion: expect.any(String) });
  });

  it("survives expireWatches(): ERROR 410 ends the watch, the informer re-lists and reconciles its cache", async () => {
    fake.create("deployments", deployment("a"));
    fake.create("deployments", deployment("b"));
    const { informer, seen, errors } = deploymentInformer();
    await informer.start();
    await fake.waitForWatches("deployments");
    const listsBefore = fake.requests.filter(
      (r) => !r.watch && r.path === "/apis/apps/v1/deployments",
    ).length;

    fake.expireWatches();
    // Changes the informer cannot see as watch events: it must learn them from the re-list.
    fake.delete("deployments", { namespace: "default", name: "a" });
    fake.create("deployments", deployment("c"));
    fake.patch("deployments", { namespace: "default", name: "b" }, { metadata: { labels: { v: "2" } } });

    await waitFor(() => seen.length === 5);
    expect(seen.slice(2).sort()).toEqual(["add c", "delete a", "update b"]);
    expect(names(informer.list())).toEqual(["b", "c"]);
    expect(errors).toEqual([]);
    const listsAfter = fake.requests.filter((r) => !r.watch && r.path === "/apis/apps/v1/deployments").length;
    expect(listsAfter).toBe(listsBefore + 1);
    await fake.waitForWatches("deployments");
    fake.create("deployments", deployment("d"));
    await waitFor(() => informer.get("d", "default") !== undefined);
  });

  it("dropWatchConnections(): the informer emits 'error' and stops; start() again resumes from its resourceVersion", async () => {
    const { informer, seen, errors } = deploymentInformer();
    await informer.start();
    await fake.waitForWatches("deployments");

    fake.dropWatchConnections();
    await waitFor(() => errors.length === 1);
    const err = errors[0] as Error & { cause?: { code?: string } };
    expect(err.name).toBe("TypeError");
    expect(err.message).toBe("terminated");
    expect(err.cause?.code).toBe("UND_ERR_SOCKET");
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.openWatches()).toEqual([]); // client-node does not reconnect by itself after an error

    fake.create("deployments", deployment("while-down"));
    const requestsBefore = fake.requests.length;
    await informer.start(); // what the operator must do on 'error' (after a backoff delay)
    await waitFor(() => seen.includes("add while-down"));
    const resumed = fake.requests.slice(requestsBefore);
    expect(resumed.map((r) => (r.watch ? "watch" : "list"))).toEqual(["watch"]); // no re-list: replayed history
  });

  it("a failing list also emits 'error' and stops the informer; start() again re-lists", async () => {
    const { informer, seen, errors } = deploymentInformer();
    fake.injectFailure({ method: "GET", path: "/apis/apps/v1/deployments", watch: false, code: 500 });
    await informer.start();
    expect(errors).toHaveLength(1);
    expect((errors[0] as ApiException<string>).code).toBe(500);
    expect(fake.openWatches()).toEqual([]);
    fake.create("deployments", deployment("a"));
    await informer.start();
    expect(seen).toEqual(["add a"]);
    await fake.waitForWatches("deployments");
  });

  it("informer objects from the list are model instances (Date timestamps), from watch events plain JSON", async () => {
    fake.create("deployments", deployment("listed"));
    const { informer } = deploymentInformer();
    await informer.start();
    await fake.waitForWatches("deployments");
    fake.create("deployments", deployment("watched"));
    await waitFor(() => informer.get("watched", "default") !== undefined);
    expect(informer.get("listed", "default")?.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(typeof informer.get("watched", "default")?.metadata?.creationTimestamp).toBe("string");
    expect(informer.get("listed", "default")?.kind).toBeUndefined();
    expect(informer.get("watched", "default")?.kind).toBe("Deployment");
  });

  it("closeWatches() (server-side timeout) makes the informer re-watch from its resourceVersion without error", async () => {
    const { informer, seen, errors } = deploymentInformer();
    await informer.start();
    await fake.waitForWatches("deployments");
    fake.closeWatches();
    fake.create("deployments", deployment("after-close"));
    await waitFor(() => seen.includes("add after-close"), 8000);
    expect(errors).toEqual([]);
    expect(fake.requests.filter((r) => !r.watch && r.path === "/apis/apps/v1/deployments")).toHaveLength(1);
  });

  it("after a drop plus compaction, the restarted informer gets 410 and re-lists", async () => {
    fake.create("deployments", deployment("a"));
    const { informer, seen, errors } = deploymentInformer();
    await informer.start();
    await fake.waitForWatches("deployments");
    fake.dropWatchConnections();
    await waitFor(() => errors.length === 1);
    fake.delete("deployments", { namespace: "default", name: "a" });
    fake.compactHistory();
    await informer.start();
    await waitFor(() => seen.includes("delete a"));
    expect(informer.list()).toEqual([]);
    await fake.waitForWatches("deployments");
    const kinds = fake.requests.map((r) =>
      r.watch ? "watch" : r.path === "/apis/apps/v1/deployments" ? "list" : "other",
    );
    expect(kinds).toEqual(["list", "watch", "watch", "list", "watch"]);
  });

  it("a watch from a compacted resourceVersion gets HTTP 200 and one ERROR event with a 410 Expired Status", async () => {
    const old = fake.resourceVersion();
    fake.create("deployments", deployment("a"));
    fake.compactHistory();
    const events: Array<{ type: string; obj: Record<string, unknown> }> = [];
    let doneWith: unknown = "not yet";
    await new Watch(kc).watch(
      "/apis/apps/v1/deployments",
      { resourceVersion: old },
      (type, obj) => events.push({ type, obj }),
      (err) => {
        doneWith = err;
      },
    );
    await waitFor(() => doneWith !== "not yet");
    expect(doneWith).toBeNull();
    expect(events).toEqual([
      {
        type: "ERROR",
        obj: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `too old resource version: ${old} (${fake.resourceVersion()})`,
          reason: "Expired",
          code: 410,
        },
      },
    ]);
  });

  it("with expiredWatchResponse 'http-410' the Watch done callback gets an error with statusCode 410", async () => {
    await fake.close();
    fake = await startFakeKubeApiServer({ expiredWatchResponse: "http-410" });
    kc = fake.kubeConfig();
    const old = fake.resourceVersion();
    fake.create("deployments", deployment("a"));
    fake.compactHistory();
    let doneWith: unknown = "not yet";
    await new Watch(kc).watch(
      "/apis/apps/v1/deployments",
      { resourceVersion: old },
      () => {},
      (err) => {
        doneWith = err;
      },
    );
    await waitFor(() => doneWith !== "not yet");
    expect((doneWith as { statusCode?: number }).statusCode).toBe(410);
  });

  it("sends BOOKMARK events only to watches that asked for allowWatchBookmarks", async () => {
    const got: string[] = [];
    for (const allowWatchBookmarks of [true, false]) {
      const req = await new Watch(kc).watch(
        "/apis/apps/v1/deployments",
        { resourceVersion: fake.resourceVersion(), allowWatchBookmarks },
        (type, obj: V1Deployment) =>
          got.push(`${allowWatchBookmarks} ${type} ${obj.metadata?.resourceVersion}`),
        () => {},
      );
      cleanups.push(() => req.abort());
    }
    await fake.waitForWatches("deployments", 2);
    fake.sendBookmarks();
    await waitFor(() => got.length === 1);
    expect(got).toEqual([`true BOOKMARK ${fake.resourceVersion()}`]);
  });

  it("watches filter by namespace and selectors; leaving a selector is a DELETED event", async () => {
    const events: string[] = [];
    const req = await new Watch(kc).watch(
      "/apis/apps/v1/namespaces/default/deployments",
      { labelSelector: "track=stable" },
      (type, obj: V1Deployment) => events.push(`${type} ${obj.metadata?.name}`),
      () => {},
    );
    cleanups.push(() => req.abort());
    fake.create("deployments", deployment("a", "default", { track: "stable" }));
    fake.create("deployments", deployment("b", "default", { track: "canary" }));
    fake.create("deployments", deployment("c", "kube-system", { track: "stable" }));
    fake.patch(
      "deployments",
      { namespace: "default", name: "b" },
      { metadata: { labels: { track: "stable" } } },
    );
    fake.patch(
      "deployments",
      { namespace: "default", name: "a" },
      { metadata: { labels: { track: "canary" } } },
    );
    await waitFor(() => events.length === 3);
    expect(events).toEqual(["ADDED a", "ADDED b", "DELETED a"]);
  });
});
