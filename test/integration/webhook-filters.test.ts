import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/pool.js";
import { type EventToEmit, emitEvents } from "../../src/delivery-engine/emit.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { webhookFields } from "../support/spec-fields.js";

// Webhook filters (docs/api.md, Filters): the API keeps and shows them, refuses bad ones with a 400
// naming the field, and the emit statement creates deliveries only for the webhooks whose filters match
// the event; a webhook without filters answers and receives exactly as before.

let service: TestService;
let receiver: Receiver;
let projectId: number;

beforeAll(async () => {
  receiver = await startReceiver();
  service = await startTestService();
  projectId = await createProject(service, "filters");
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

const base = () => ({ url: `${receiver.url}/hook`, events: ["deployment.succeeded"] });
const webhooksPath = () => `/projects/${projectId}/webhooks`;

describe("filters through the API", () => {
  it("are kept, shown in one order and removed with null; a webhook without them shows no field", async () => {
    const plain = await createWebhook(service, projectId, base());
    expect(Object.keys(plain)).toEqual(webhookFields);
    const filters = {
      kinds: ["StatefulSet", "Deployment", "Deployment"],
      environments: ["production", "staging"],
      label_selector: {
        match_expressions: [
          { key: "tier", operator: "In", values: ["web", "api"] },
          { key: "canary", operator: "DoesNotExist" },
        ],
        match_labels: { "app.kubernetes.io/name": "payments", app: "payments" },
      },
    };
    const created = await createWebhook(service, projectId, { ...base(), filters });
    const shown = {
      label_selector: {
        match_labels: { app: "payments", "app.kubernetes.io/name": "payments" },
        match_expressions: [
          { key: "tier", operator: "In", values: ["web", "api"] },
          { key: "canary", operator: "DoesNotExist" },
        ],
      },
      environments: ["production", "staging"],
      kinds: ["StatefulSet", "Deployment"],
    };
    expect(JSON.stringify(created.filters)).toBe(JSON.stringify(shown));
    const read = await service.api("GET", `${webhooksPath()}/${created.id}`);
    expect(JSON.stringify(read.body.filters)).toBe(JSON.stringify(shown));

    const kept = await service.api("PUT", `${webhooksPath()}/${created.id}`, { body: { enabled: false } });
    expect(kept.body.filters).toEqual(shown);
    const replaced = await service.api("PUT", `${webhooksPath()}/${created.id}`, {
      body: { filters: { environments: ["staging"] } },
    });
    expect(replaced.body.filters).toEqual({ environments: ["staging"] });
    const removed = await service.api("PUT", `${webhooksPath()}/${created.id}`, { body: { filters: null } });
    expect(removed.status).toBe(200);
    expect("filters" in removed.body).toBe(false);
    const { rows } = await service.pool.query("SELECT filters FROM webhooks WHERE id = $1", [created.id]);
    expect(rows[0].filters).toBeNull();
  });

  const long = "x".repeat(300);
  const refusals: [unknown, string, string][] = [
    [{}, "body.filters", "filters must have label_selector, environments or kinds"],
    [[], "body.filters", "filters must be an object"],
    [{ colour: ["red"] }, "body.filters", "colour"],
    [{ environments: [] }, "body.filters.environments", "at least one environment"],
    [{ environments: [""] }, "body.filters.environments.0", "empty name"],
    [{ environments: [long] }, "body.filters.environments.0", "at most 255 characters"],
    [
      { environments: Array.from({ length: 21 }, (_, i) => `e${i}`) },
      "body.filters.environments",
      "at most 20",
    ],
    [{ kinds: ["Pod"] }, "body.filters.kinds.0", "one of: Deployment, StatefulSet, DaemonSet"],
    [{ kinds: [] }, "body.filters.kinds", "at least one kind"],
    [{ label_selector: {} }, "body.filters.label_selector", "must have match_labels or match_expressions"],
    [
      { label_selector: { match_labels: {} } },
      "body.filters.label_selector.match_labels",
      "at least one label",
    ],
    [
      { label_selector: { match_labels: { "-app": "x" } } },
      "body.filters.label_selector.match_labels.-app",
      "is not a label key",
    ],
    [
      { label_selector: { match_labels: { "Example.COM/app": "x" } } },
      "body.filters.label_selector.match_labels",
      "prefix",
    ],
    [
      { label_selector: { match_labels: { app: "a b" } } },
      "body.filters.label_selector.match_labels.app",
      "match_labels value",
    ],
    [
      { label_selector: { match_labels: { app: 1 } } },
      "body.filters.label_selector.match_labels.app",
      "must be a string",
    ],
    [
      {
        label_selector: {
          match_labels: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`l${i}`, "v"])),
        },
      },
      "body.filters.label_selector.match_labels",
      "at most 20 labels",
    ],
    [
      { label_selector: { match_expressions: [] } },
      "body.filters.label_selector.match_expressions",
      "at least one",
    ],
    [
      { label_selector: { match_expressions: [{ key: "tier", operator: "Matches", values: ["w.*"] }] } },
      "body.filters.label_selector.match_expressions.0.operator",
      "one of: In, NotIn, Exists, DoesNotExist",
    ],
    [
      { label_selector: { match_expressions: [{ key: "tier", operator: "In" }] } },
      "body.filters.label_selector.match_expressions.0.values",
      "In needs at least one value",
    ],
    [
      { label_selector: { match_expressions: [{ key: "tier", operator: "Exists", values: ["a"] }] } },
      "body.filters.label_selector.match_expressions.0.values",
      "Exists takes no values",
    ],
    [
      {
        label_selector: { match_expressions: [{ key: "tier", operator: "In", values: Array(51).fill("v") }] },
      },
      "body.filters.label_selector.match_expressions.0.values",
      "at most 50 values",
    ],
    [
      { label_selector: { match_expressions: Array(21).fill({ key: "k", operator: "Exists" }) } },
      "body.filters.label_selector.match_expressions",
      "at most 20 requirements",
    ],
  ];
  it.each(refusals.map(([filters, path, message]) => ({ filters, path, message })))(
    "refuses filters at $path ($message) with a 400 and writes nothing",
    async ({ filters, path, message }) => {
      const count = async () =>
        (await service.pool.query("SELECT count(*)::int AS n FROM webhooks")).rows[0].n as number;
      const before = await count();
      const response = await service.api("POST", webhooksPath(), { body: { ...base(), filters } });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("validation_failed");
      const detail = (response.body.error.details as { path: string; message: string }[]).find((d) =>
        d.path.startsWith(path),
      );
      expect(detail?.message ?? response.body.error.message).toContain(message);
      expect(response.body.error.message.length).toBeLessThan(1000);
      expect(await count()).toBe(before);
      // The same refusal on update, and the stored webhook unchanged.
      const stored = await createWebhook(service, projectId, base());
      const update = await service.api("PUT", `${webhooksPath()}/${stored.id}`, { body: { filters } });
      expect(update.status).toBe(400);
      expect((await service.api("GET", `${webhooksPath()}/${stored.id}`)).body).toEqual(stored);
      await service.api("DELETE", `${webhooksPath()}/${stored.id}`);
    },
  );
});

describe("filters at emit", () => {
  const selectors = {
    none: null,
    production: { environments: ["production"] },
    staging: { environments: ["staging"] },
    statefulSets: { kinds: ["StatefulSet"] },
    deployments: { kinds: ["Deployment", "DaemonSet"] },
    payments: { label_selector: { match_labels: { app: "payments" } } },
    webTier: { label_selector: { match_expressions: [{ key: "tier", operator: "In", values: ["web"] }] } },
    notWeb: { label_selector: { match_expressions: [{ key: "tier", operator: "NotIn", values: ["web"] }] } },
    hasTier: { label_selector: { match_expressions: [{ key: "tier", operator: "Exists" }] } },
    noCanary: { label_selector: { match_expressions: [{ key: "canary", operator: "DoesNotExist" }] } },
    paymentsInProduction: {
      environments: ["production"],
      kinds: ["Deployment"],
      label_selector: {
        match_labels: { app: "payments" },
        match_expressions: [{ key: "tier", operator: "In", values: ["web", "api"] }],
      },
    },
  } as const;
  type Name = keyof typeof selectors;
  let projects = 0;

  /** A project of its own with one webhook per selector; the names of the webhooks by id. */
  async function projectWithWebhooks(slug: string) {
    const project = await createProject(service, slug);
    const names = new Map<number, Name>();
    for (const [name, filters] of Object.entries(selectors) as [Name, unknown][]) {
      const webhook = await createWebhook(service, project, {
        url: `${receiver.url}/${slug}/${name}`,
        events: ["deployment.created", "deployment.succeeded"],
        ...(filters === null ? {} : { filters }),
      });
      names.set(webhook.id, name);
    }
    return { project, names };
  }

  async function deliveredTo(names: Map<number, Name>, eventId: string): Promise<Name[]> {
    const { rows } = await service.pool.query<{ webhook_id: number }>(
      "SELECT webhook_id FROM deliveries WHERE event_id = $1 ORDER BY webhook_id",
      [eventId],
    );
    return rows.map((row) => names.get(Number(row.webhook_id)) as Name).sort();
  }

  type Case = [string, Omit<EventToEmit, "eventType" | "projectId">, Name[]];
  const cases: Case[] = [
    [
      "a production Deployment app=payments tier=web",
      {
        payload: { environment: "production" },
        workload: { kind: "Deployment", labels: { app: "payments", tier: "web" } },
      },
      [
        "deployments",
        "hasTier",
        "noCanary",
        "none",
        "payments",
        "paymentsInProduction",
        "production",
        "webTier",
      ],
    ],
    [
      "a staging StatefulSet app=payments tier=db canary=yes",
      {
        payload: { environment: "staging" },
        workload: { kind: "StatefulSet", labels: { app: "payments", tier: "db", canary: "yes" } },
      },
      ["hasTier", "none", "notWeb", "payments", "staging", "statefulSets"],
    ],
    [
      "a production DaemonSet without labels",
      { payload: { environment: "production" }, workload: { kind: "DaemonSet", labels: {} } },
      ["deployments", "noCanary", "none", "notWeb", "production"],
    ],
    [
      "an event whose workload is not known (a rollout deleted while no operator ran)",
      { payload: { environment: "production" } },
      ["none", "production"],
    ],
  ];

  it.each(cases)(
    "%s is delivered only to the webhooks whose filters match",
    async (_name, event, expected) => {
      projects += 1;
      const { project, names } = await projectWithWebhooks(`emit-${projects}`);
      const { emitted, queued } = await withTransaction(service.pool, (client) =>
        emitEvents(client, [{ eventType: "deployment.succeeded", projectId: project, ...event }]),
      );
      expect(queued).toBe(expected.length);
      expect(await deliveredTo(names, emitted[0]?.envelope.id as string)).toEqual(expected);
    },
  );

  it("filters the same when the emit hands its deliveries to the local worker, per event of the emit", async () => {
    const [first, second] = cases as [Case, Case];
    const { project, names } = await projectWithWebhooks("emit-handing-over");
    const handOver = service.engine.handOverLease();
    expect(handOver).toBeDefined();
    const { emitted, handedOver } = await withTransaction(service.pool, (client) =>
      emitEvents(
        client,
        [first, second].map(([, event]) => ({
          eventType: "deployment.created" as const,
          projectId: project,
          ...event,
        })),
        handOver,
      ),
    );
    service.engine.handOver(handedOver);
    expect(await deliveredTo(names, emitted[0]?.envelope.id as string)).toEqual(first[2]);
    expect(await deliveredTo(names, emitted[1]?.envelope.id as string)).toEqual(second[2]);
  });
});
