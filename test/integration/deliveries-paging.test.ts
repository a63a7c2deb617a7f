import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseNextLink } from "../../src/http/link-header.js";
import { createProject, createWebhook } from "../support/api-fixtures.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { insertDeliveryHistory, markManagedByResource } from "../support/dashboard-data.js";
import { startTestService, type TestService } from "../support/service.js";

// Endpoint 7's cursor (Link rel="next"), its success/event_type filters, the stats endpoint and the
// CLI options built on them (`hooks deliveries list --failed --event-type --all`).

let service: TestService;
let projectId: number;
let webhookId: number;
const path = () => `/projects/${projectId}/webhooks/${webhookId}`;
/** When each attempt of `history` was recorded. */
let written: Date[] = [];

// 130 attempts, one per hour back from now: every 10th failed, odd hours deployment.failed.
const history = Array.from({ length: 130 }, (_, i) => ({
  hoursAgo: i + 0.5,
  success: i % 10 !== 0,
  eventType: i % 2 ? "deployment.failed" : "deployment.succeeded",
}));

beforeAll(async () => {
  assertBuilt();
  service = await startTestService();
  projectId = await createProject(service, "paging", "Paging");
  ({ id: webhookId } = await createWebhook(service, projectId, {
    url: "http://127.0.0.1:9/hook",
    events: ["deployment.succeeded"],
  }));
  written = await insertDeliveryHistory(service.pool, webhookId, projectId, history);
});

afterAll(async () => {
  await service?.close();
});

/** Follows Link rel="next" from the first page; returns every page's ids. */
async function allPages(first: string): Promise<number[][]> {
  const pages: number[][] = [];
  let address: string | undefined = first;
  while (address) {
    const response = await fetch(`${service.baseUrl}${address}`, {
      headers: { authorization: `Bearer ${service.adminKey}` },
    });
    expect(response.status).toBe(200);
    pages.push(((await response.json()) as { id: number }[]).map((d) => d.id));
    address = parseNextLink(response.headers.get("link"));
  }
  return pages;
}

describe("GET …/deliveries (endpoint 7)", () => {
  it("keeps its bare array and default limit of 50, with a Link to the next page", async () => {
    const response = await service.api("GET", `${path()}/deliveries`);
    expect(Array.isArray(response.body)).toBe(true);
    expect(response.body).toHaveLength(50);
    const next = parseNextLink(response.headers.get("link"));
    expect(next).toMatch(new RegExp(`^/api${path()}/deliveries\\?cursor=[A-Za-z0-9_-]+$`));
  });

  it("pages through every attempt newest first, without repeats, and has no Link on the last page", async () => {
    const pages = await allPages(`/api${path()}/deliveries?limit=40`);
    expect(pages.map((p) => p.length)).toEqual([40, 40, 40, 10]);
    const ids = pages.flat();
    expect(new Set(ids).size).toBe(130);
    const { rows } = await service.pool.query<{ id: number }>(
      "SELECT id FROM deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC",
      [webhookId],
    );
    expect(ids).toEqual(rows.map((r) => Number(r.id)));
  });

  it("is stable when deliveries arrive while a client pages", async () => {
    const first = await service.api("GET", `${path()}/deliveries?limit=30`);
    const next = parseNextLink(first.headers.get("link")) as string;
    await insertDeliveryHistory(service.pool, webhookId, projectId, [{ hoursAgo: 0, success: true }]);
    const pages = await allPages(next);
    const seen = [...first.body.map((d: { id: number }) => d.id), ...pages.flat()];
    expect(new Set(seen).size).toBe(130);
    await service.pool.query(
      "DELETE FROM deliveries WHERE webhook_id = $1 AND id = (SELECT max(id) FROM deliveries WHERE webhook_id = $1)",
      [webhookId],
    );
  });

  it.each([
    ["success=false", (h: (typeof history)[number]) => !h.success],
    ["success=true", (h: (typeof history)[number]) => h.success],
    ["event_type=deployment.failed", (h: (typeof history)[number]) => h.eventType === "deployment.failed"],
    [
      "success=false&event_type=deployment.succeeded",
      (h: (typeof history)[number]) => !h.success && h.eventType === "deployment.succeeded",
    ],
  ])("filters by %s, and the next page keeps the filter", async (filter, keep) => {
    const pages = await allPages(`/api${path()}/deliveries?limit=20&${filter}`);
    const ids = pages.flat();
    expect(ids).toHaveLength(history.filter(keep).length);
    const response = await service.api("GET", `${path()}/deliveries?limit=100&${filter}`);
    for (const delivery of response.body) {
      if (filter.includes("success=false")) expect(delivery.success).toBe(false);
      if (filter.includes("success=true")) expect(delivery.success).toBe(true);
      if (filter.includes("event_type=")) expect(delivery.event_type).toBe(filter.split("event_type=")[1]);
    }
  });

  it.each([
    ["cursor=not-a-cursor", "query.cursor"],
    [`cursor=${Buffer.from("1:x").toString("base64url")}`, "query.cursor"],
    ["success=maybe", "query.success"],
    ["event_type=", "query.event_type"],
  ])("answers 400 naming the parameter for %s", async (query, where) => {
    const response = await service.api("GET", `${path()}/deliveries?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.details.map((d: { path: string }) => d.path)).toContain(where);
  });

  it("reads a well-formed cursor it did not issue as a position in the list, not an error", async () => {
    // A cursor is a sort key (created_at in ms, id), not a secret: one made up names a place in the
    // list, and the page is what lies below it. It shows nothing a plain list does not.
    const first = await service.api("GET", `${path()}/deliveries?limit=10`);
    const forged = await service.api("GET", `${path()}/deliveries?limit=10&cursor=9999999999999-99999999`);
    expect(forged.status).toBe(200);
    expect(forged.body.map((d: { id: number }) => d.id)).toEqual(first.body.map((d: { id: number }) => d.id));
    const bottom = await service.api("GET", `${path()}/deliveries?cursor=0-0`);
    expect(bottom.status).toBe(200);
    expect(bottom.body).toEqual([]);
    expect(bottom.headers.get("link")).toBeNull();
  });
});

describe("GET …/stats", () => {
  it("counts per hour for 24 hours, every bucket present, oldest first, with the newest attempt", async () => {
    const response = await service.api("GET", `${path()}/stats`);
    expect(response.status).toBe(200);
    const stats = response.body;
    expect(stats).toMatchObject({ range: "24h", bucket: "hour" });
    expect(stats.buckets).toHaveLength(24);
    const starts = stats.buckets.map((b: { start: string }) => Date.parse(b.start));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBe(3_600_000);
    // The window is 24 whole hours up to the current one, from its first bucket's start: the attempts
    // recorded since then, by the times they were written with.
    const inWindow = history.filter((_, i) => (written[i]?.getTime() ?? 0) >= starts[0]);
    expect(inWindow.length).toBeGreaterThanOrEqual(23);
    expect(stats.succeeded).toBe(inWindow.filter((h) => h.success).length);
    expect(stats.failed).toBe(inWindow.filter((h) => !h.success).length);
    expect(stats.last_delivery).toMatchObject({
      success: false,
      status_code: 503,
      event_type: "deployment.succeeded",
    });
  });

  it("counts per UTC day for 30 days", async () => {
    const stats = (await service.api("GET", `${path()}/stats?range=30d`)).body;
    expect(stats).toMatchObject({ range: "30d", bucket: "day", succeeded: 117, failed: 13 });
    expect(stats.buckets).toHaveLength(30);
    expect(stats.buckets.every((b: { start: string }) => b.start.endsWith("T00:00:00.000Z"))).toBe(true);
  });

  it("answers zeros and no last delivery for a webhook without attempts, and 400 for an unknown range", async () => {
    const { id: empty } = await createWebhook(service, projectId, {
      url: "http://127.0.0.1:9/empty",
      events: ["deployment.failed"],
    });
    const stats = (await service.api("GET", `/projects/${projectId}/webhooks/${empty}/stats`)).body;
    expect(stats).toMatchObject({ succeeded: 0, failed: 0, last_delivery: null });
    expect(
      stats.buckets.every((b: { succeeded: number; failed: number }) => b.succeeded + b.failed === 0),
    ).toBe(true);
    const bad = await service.api("GET", `${path()}/stats?range=1y`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("range must be 24h or 30d");
  });
});

describe("managed_by", () => {
  it("is null for API webhooks and names the Webhook resource for managed ones", async () => {
    expect((await service.api("GET", path())).body.managed_by).toBeNull();
    const { id: managed } = await createWebhook(service, projectId, {
      url: "http://127.0.0.1:9/m",
      events: ["deployment.failed"],
    });
    await markManagedByResource(service.pool, managed, "team-a/release-notes");
    const response = await service.api("GET", `/projects/${projectId}/webhooks/${managed}`);
    expect(response.body.managed_by).toEqual({ kind: "Webhook", namespace: "team-a", name: "release-notes" });
  });
});

describe("hooks deliveries list", () => {
  const cli = (...args: string[]) =>
    runCli({ baseUrl: service.baseUrl, apiKey: service.adminKey }, [
      "hooks",
      "deliveries",
      "list",
      "--project-id",
      String(projectId),
      "--webhook-id",
      String(webhookId),
      "--json",
      ...args,
    ]);

  it.each([
    [[], 50],
    [["--all"], 130],
    [["--failed"], 13],
    [["--failed", "--all", "--limit", "5"], 13],
    [["--event-type", "deployment.failed", "--all"], 65],
    [["--failed", "--event-type", "deployment.succeeded", "--all"], 13],
  ])("%j lists %i attempts", async (args, count) => {
    const result = await cli(...args);
    expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" });
    const list = JSON.parse(result.stdout);
    expect(list).toHaveLength(count);
    if (args.includes("--failed")) expect(list.every((d: { success: boolean }) => !d.success)).toBe(true);
  });
});
