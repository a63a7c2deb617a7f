// The client suite's workflow (scripts/clients/run.sh) with openapi-fetch over openapi-typescript's types.
import createClient from "openapi-fetch";
import type { paths } from "./api.d.ts";

const env = (name: string) => process.env[name] ?? "";
const client = createClient<paths>({
  baseUrl: env("WO_BASE_URL"),
  headers: { Authorization: `Bearer ${env("WO_API_KEY")}` },
});
let steps = 0;

function step(name: string, ok: boolean, got?: unknown): void {
  if (!ok) {
    console.error(`step ${steps + 1} (${name}) failed: got ${JSON.stringify(got)}`);
    process.exit(1);
  }
  steps++;
  console.log(`ok ${steps} ${name}`);
}

/** The cursor of the Link header's rel="next" address, or undefined on the last page. */
function nextCursor(headers: Headers): string | undefined {
  const target = /^<([^>]*)>;\s*rel="next"/.exec(headers.get("Link") ?? "")?.[1];
  return target === undefined
    ? undefined
    : (new URL(target, "http://x").searchParams.get("cursor") ?? undefined);
}

function must<T>(data: T | undefined, error: unknown): T {
  if (data === undefined) {
    console.error(`step ${steps + 1} failed: ${JSON.stringify(error)}`);
    process.exit(1);
  }
  return data;
}

const slug = env("WO_CLIENT");
const created = await client.POST("/api/projects", { body: { name: slug, slug } });
const project = must(created.data, created.error);
step("create a project", project.slug === slug, project);

const listed: number[] = [];
for (let page = 1; ; page++) {
  const { data, error } = await client.GET("/api/projects", { params: { query: { page, per_page: 2 } } });
  const projects = must(data, error);
  listed.push(...projects.projects.map((p) => p.id));
  if (projects.projects.length === 0 || listed.length >= projects.total) break;
}
step("list projects page by page (per_page)", listed.includes(project.id), listed);

const path = { project_id: project.id };
const receiver = env("WO_RECEIVER_URL");
const events: ("deployment.succeeded" | "deployment.failed")[] = [
  "deployment.succeeded",
  "deployment.failed",
];
const made = await client.POST("/api/projects/{project_id}/webhooks", {
  params: { path },
  body: { url: receiver, events, secret: "s3cret" },
});
const webhook = must(made.data, made.error);
step("create a webhook", webhook.enabled && webhook.has_secret, webhook);

const hook = { project_id: project.id, webhook_id: webhook.id };
const bareAnswer = await client.GET("/api/projects/{project_id}/webhooks", { params: { path } });
const bare = must(bareAnswer.data, bareAnswer.error);
const pagedAnswer = await client.GET("/api/projects/{project_id}/webhooks", {
  params: { path, query: { page: 1, page_size: 1 } },
});
const paged = must(pagedAnswer.data, pagedAnswer.error);
step(
  "list webhooks, bare and paged (page_size)",
  Array.isArray(bare) && bare[0]?.id === webhook.id && !Array.isArray(paged) && paged.total === 1,
  { bare, paged },
);

const got = await client.GET("/api/projects/{project_id}/webhooks/{webhook_id}", { params: { path: hook } });
step("get the webhook", got.data?.id === webhook.id && got.data.url === receiver, got.data);

const off = await client.PUT("/api/projects/{project_id}/webhooks/{webhook_id}", {
  params: { path: hook },
  body: { enabled: false },
});
step("disable it", off.data?.enabled === false && off.data.events.join() === webhook.events.join(), off);
const on = await client.PUT("/api/projects/{project_id}/webhooks/{webhook_id}", {
  params: { path: hook },
  body: { enabled: true },
});
step("enable it", on.data?.enabled === true, on);

const testPath = "/api/projects/{project_id}/webhooks/{webhook_id}/test" as const;
const sent = await client.POST(testPath, { params: { path: hook } });
step("a test event with no body", sent.data?.success === true && sent.data.error_message === null, sent);
const failedAnswer = await client.POST(testPath, {
  params: { path: hook },
  body: { event_type: "deployment.failed" },
});
const failed = must(failedAnswer.data, failedAnswer.error);
step("a test event the receiver fails", failed.success === false && failed.status_code === 500, failed);
await client.POST(testPath, { params: { path: hook } });

const ids: number[] = [];
for (let cursor: string | undefined, more = true; more; ) {
  const { data, error, response } = await client.GET(
    "/api/projects/{project_id}/webhooks/{webhook_id}/deliveries",
    {
      params: { path: hook, query: { limit: 1, ...(cursor ? { cursor } : {}) } },
    },
  );
  ids.push(...must(data, error).map((d) => d.id));
  cursor = nextCursor(response.headers);
  more = cursor !== undefined;
}
step(
  "page through the deliveries with the Link header's cursor",
  ids.length === 3 && ids.every((id, i) => i === 0 || id < (ids[i - 1] ?? 0)),
  ids,
);

const one = { ...hook, delivery_id: failed.delivery_id };
const delivery = await client.GET(
  "/api/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}",
  {
    params: { path: one },
  },
);
step(
  "get one delivery",
  delivery.data?.event_type === "deployment.failed" && !delivery.data.success,
  delivery,
);

const replayed = await client.POST(
  "/api/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
  {
    params: { path: one },
  },
);
step(
  "replay it",
  (replayed.data?.delivery_id ?? 0) > failed.delivery_id && typeof replayed.data?.error_message === "string",
  replayed,
);

const bad = await client.POST("/api/projects/{project_id}/webhooks", {
  params: { path },
  body: { url: receiver, events, format: "template", template: "{% if %}" },
});
step(
  "a 400 with the field's path",
  bad.response.status === 400 && bad.error?.error.details?.[0]?.path === "body.template",
  bad.error,
);

const missing = await client.GET("/api/projects/{project_id}/webhooks/{webhook_id}", {
  params: { path: { ...hook, webhook_id: 999999 } },
});
step("a 404", missing.response.status === 404 && missing.error?.error.code === "not_found", missing.error);
console.log(`${steps}/${steps} steps passed`);
