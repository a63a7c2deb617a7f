import { parseNextLink } from "../../src/http/link-header.js";
import type {
  CreateWebhook,
  Delivery,
  DeliveryStats,
  EventType,
  FilterCheck,
  FilterCheckRequest,
  ProjectList,
  RecoverResult,
  RetryResult,
  ServiceInfo,
  TestEventResult,
  UpdateWebhook,
  Webhook,
} from "./api-types";
import { session } from "./session";
import type { DeliveryPreview, DraftPreview } from "./webhook-formats";

export interface FieldProblem {
  path: string;
  message: string;
}

/** An error answer of /api: {"error": {code, message, details?}}, or a network failure (status 0). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | boolean | undefined>;

async function call<T>(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown; key?: string } = {},
): Promise<{ data: T; headers: Headers }> {
  const url = new URL(`/api${path}`, location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return send<T>(method, `${url.pathname}${url.search}`, options);
}

async function send<T>(
  method: string,
  address: string,
  options: { body?: unknown; key?: string },
): Promise<{ data: T; headers: Headers }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${options.key ?? session.key() ?? ""}` };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(address, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiFailure(0, "network", "The service did not answer. Check that it is running and reachable.");
  }
  const text = await response.text();
  const json = text === "" ? undefined : safeJson(text);
  if (!response.ok) {
    const error = (json as { error?: { code?: string; message?: string; details?: FieldProblem[] } })?.error;
    throw new ApiFailure(
      response.status,
      error?.code ?? "http",
      error?.message ?? `The service answered ${response.status}.`,
      Array.isArray(error?.details) ? error.details : [],
    );
  }
  return { data: json as T, headers: response.headers };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const hooks = (projectId: number) => `/projects/${projectId}/webhooks`;
const hook = (projectId: number, webhookId: number) => `${hooks(projectId)}/${webhookId}`;

export interface DeliveryPage {
  deliveries: Delivery[];
  next: string | undefined;
}

export const api = {
  serviceInfo: async () => (await call<ServiceInfo>("GET", "/service-info")).data,
  /** Checks a key before it is kept: a 401 means it is wrong. */
  verifyKey: (key: string) => call<ProjectList>("GET", "/projects", { query: { per_page: 1 }, key }),
  projects: async (page: number) =>
    (await call<ProjectList>("GET", "/projects", { query: { page, per_page: 50 } })).data,
  eventTypes: async () => (await call<EventType[]>("GET", "/webhook-event-types")).data,
  webhooks: async (projectId: number) => (await call<Webhook[]>("GET", hooks(projectId))).data,
  webhook: async (projectId: number, webhookId: number) =>
    (await call<Webhook>("GET", hook(projectId, webhookId))).data,
  /** Renders an event for a draft of a webhook (the create body's fields) as it would be sent; sends nothing. */
  previewDraft: async (projectId: number, body: DraftPreview) =>
    (await call<DeliveryPreview>("POST", `${hooks(projectId)}/preview`, { body })).data,
  createWebhook: async (projectId: number, body: CreateWebhook) =>
    (await call<Webhook>("POST", hooks(projectId), { body })).data,
  updateWebhook: async (projectId: number, webhookId: number, body: UpdateWebhook) =>
    (await call<Webhook>("PUT", hook(projectId, webhookId), { body })).data,
  deleteWebhook: async (projectId: number, webhookId: number) => {
    await call<undefined>("DELETE", hook(projectId, webhookId));
  },
  /** Whether the webhook would get an event of an example workload, and why not; sends nothing. */
  checkFilters: async (projectId: number, webhookId: number, body: FilterCheckRequest) =>
    (await call<FilterCheck>("POST", `${hook(projectId, webhookId)}/filter-check`, { body })).data,
  sendTestEvent: async (projectId: number, webhookId: number, eventType: string) =>
    (
      await call<TestEventResult>("POST", `${hook(projectId, webhookId)}/test`, {
        body: { event_type: eventType },
      })
    ).data,
  stats: async (projectId: number, webhookId: number, range: "24h" | "30d") =>
    (await call<DeliveryStats>("GET", `${hook(projectId, webhookId)}/stats`, { query: { range } })).data,
  /** The first page with these filters, or the page at a Link header's address. */
  deliveries: async (
    projectId: number,
    webhookId: number,
    filter: { success?: boolean; eventType?: string; limit?: number },
    next?: string,
  ): Promise<DeliveryPage> => {
    const { data, headers } = next
      ? await send<Delivery[]>("GET", next, {})
      : await call<Delivery[]>("GET", `${hook(projectId, webhookId)}/deliveries`, {
          query: { limit: filter.limit ?? 25, success: filter.success, event_type: filter.eventType },
        });
    return { deliveries: data, next: parseNextLink(headers.get("Link")) };
  },
  delivery: async (projectId: number, webhookId: number, deliveryId: number) =>
    (await call<Delivery>("GET", `${hook(projectId, webhookId)}/deliveries/${deliveryId}`)).data,
  /** Queues a new attempt of every event whose latest attempt failed since `since` (sent by the workers). */
  recover: async (projectId: number, webhookId: number, body: { since: string; event_type?: string }) =>
    (await call<RecoverResult>("POST", `${hook(projectId, webhookId)}/recover`, { body })).data,
  replay: async (projectId: number, webhookId: number, deliveryId: number) =>
    (await call<RetryResult>("POST", `${hook(projectId, webhookId)}/deliveries/${deliveryId}/retry`)).data,
};
