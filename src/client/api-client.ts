import axios, { type AxiosInstance, type AxiosRequestConfig } from "axios";
import type { z } from "zod";
import type {
  deliverySchema,
  recoverResultSchema,
  retryResultSchema,
  testEventResultSchema,
} from "../deliveries/schemas.js";
import { parseNextLink } from "../http/link-header.js";
import type { createProjectBody, projectListSchema, projectSchema } from "../projects/schemas.js";
import type { filterCheckSchema } from "../webhooks/filter-check-schemas.js";
import type { previewSchema } from "../webhooks/preview-schemas.js";
import type {
  createWebhookBody,
  eventTypeSchema,
  updateWebhookBody,
  webhookSchema,
} from "../webhooks/schemas.js";
import { toClientError } from "./errors.js";

export { ApiClientError, ApiNetworkError, type FieldProblem } from "./errors.js";

// Response types come from the server's own zod schemas (type-only imports: nothing of the server is
// loaded at run time), so client and server cannot disagree about a field.
export type Webhook = z.infer<typeof webhookSchema>;
export type EventTypeDescriptor = z.infer<typeof eventTypeSchema>;
export type Delivery = z.infer<typeof deliverySchema>;
export type RetryResult = z.infer<typeof retryResultSchema>;
export type RecoverResult = z.infer<typeof recoverResultSchema>;
export type TestEventResult = z.infer<typeof testEventResultSchema>;
export type WebhookPreview = z.infer<typeof previewSchema>;
export type FilterCheck = z.infer<typeof filterCheckSchema>;
export interface ExampleWorkload {
  kind?: string;
  labels?: Record<string, string>;
  environment?: string;
}
export type Project = z.infer<typeof projectSchema>;
export type ProjectList = z.infer<typeof projectListSchema>;

// Request bodies are the server's input types, except that event names are plain strings: they come
// from users, the server checks them, and its 400 lists the valid names.
export type CreateWebhookRequest = Omit<z.input<typeof createWebhookBody>, "events"> & { events: string[] };
export type UpdateWebhookRequest = Omit<z.input<typeof updateWebhookBody>, "events"> & { events?: string[] };
export type CreateProjectRequest = z.input<typeof createProjectBody>;

export interface ApiClientOptions {
  /** The service's address without /api, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  apiKey: string;
  /** Retry and test calls wait for the receiver (30 s by default), so the default allows for that. */
  timeoutMs?: number;
  userAgent?: string;
}

const defaultTimeoutMs = 65_000;

/** One method per endpoint of /api. Failures throw ApiClientError or ApiNetworkError. */
export class ApiClient {
  readonly baseUrl: string;
  readonly #http: AxiosInstance;

  constructor(options: ApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#http = axios.create({
      baseURL: `${this.baseUrl}/api`,
      timeout: options.timeoutMs ?? defaultTimeoutMs,
      headers: {
        Authorization: `Bearer ${options.apiKey}`,
        ...(options.userAgent ? { "User-Agent": options.userAgent } : {}),
      },
      responseType: "json",
    });
  }

  listEventTypes(): Promise<EventTypeDescriptor[]> {
    return this.#call({ method: "get", url: "/webhook-event-types" });
  }

  createWebhook(projectId: number, body: CreateWebhookRequest): Promise<Webhook> {
    return this.#call({ method: "post", url: webhooksPath(projectId), data: body });
  }

  listWebhooks(projectId: number): Promise<Webhook[]> {
    return this.#call({ method: "get", url: webhooksPath(projectId) });
  }

  getWebhook(projectId: number, webhookId: number): Promise<Webhook> {
    return this.#call({ method: "get", url: webhookPath(projectId, webhookId) });
  }

  updateWebhook(projectId: number, webhookId: number, body: UpdateWebhookRequest): Promise<Webhook> {
    return this.#call({ method: "put", url: webhookPath(projectId, webhookId), data: body });
  }

  async deleteWebhook(projectId: number, webhookId: number): Promise<void> {
    await this.#call({ method: "delete", url: webhookPath(projectId, webhookId) });
  }

  /** Newest first; the server defaults `limit` to 50 and clamps it to 1–100. */
  async listDeliveries(
    projectId: number,
    webhookId: number,
    options: DeliveryListOptions = {},
  ): Promise<Delivery[]> {
    return (await this.listDeliveriesPage(projectId, webhookId, options)).deliveries;
  }

  /**
   * One page and the address of the next (the Link rel="next" header), undefined on the last page.
   * With `next` the filters and limit are those the address already carries.
   */
  async listDeliveriesPage(
    projectId: number,
    webhookId: number,
    options: DeliveryListOptions = {},
    next?: string,
  ): Promise<{ deliveries: Delivery[]; next: string | undefined }> {
    const config: AxiosRequestConfig = next
      ? { method: "get", url: `${this.baseUrl}${next}` }
      : {
          method: "get",
          url: `${webhookPath(projectId, webhookId)}/deliveries`,
          params: { limit: options.limit, success: options.success, event_type: options.eventType },
        };
    try {
      const response = await this.#http.request<Delivery[]>(config);
      return { deliveries: response.data, next: parseNextLink(response.headers.link) };
    } catch (error) {
      throw toClientError(error, this.baseUrl);
    }
  }

  getDelivery(projectId: number, webhookId: number, deliveryId: number): Promise<Delivery> {
    return this.#call({
      method: "get",
      url: `${webhookPath(projectId, webhookId)}/deliveries/${deliveryId}`,
    });
  }

  /** Queues a new attempt of each event whose latest attempt failed since `since` (endpoint …/recover). */
  recoverDeliveries(
    projectId: number,
    webhookId: number,
    window: { since: string; until?: string | undefined; eventType?: string | undefined },
  ): Promise<RecoverResult> {
    return this.#call({
      method: "post",
      url: `${webhookPath(projectId, webhookId)}/recover`,
      data: {
        since: window.since,
        ...(window.until === undefined ? {} : { until: window.until }),
        ...(window.eventType === undefined ? {} : { event_type: window.eventType }),
      },
    });
  }

  retryDelivery(projectId: number, webhookId: number, deliveryId: number): Promise<RetryResult> {
    return this.#call({
      method: "post",
      url: `${webhookPath(projectId, webhookId)}/deliveries/${deliveryId}/retry`,
    });
  }

  /** Without an event type the server sends deployment.succeeded. */
  sendTestEvent(projectId: number, webhookId: number, eventType?: string): Promise<TestEventResult> {
    return this.#call({
      method: "post",
      url: `${webhookPath(projectId, webhookId)}/test`,
      data: eventType === undefined ? {} : { event_type: eventType },
    });
  }

  /** The request a delivery of an example event would make; nothing is sent. */
  previewWebhook(projectId: number, webhookId: number, eventType?: string): Promise<WebhookPreview> {
    return this.#call({
      method: "post",
      url: `${webhookPath(projectId, webhookId)}/preview`,
      data: eventType === undefined ? {} : { event_type: eventType },
    });
  }

  /** Whether the webhook would get an event of the example workload, and why not; nothing is sent. */
  checkWebhookFilters(
    projectId: number,
    webhookId: number,
    workload: ExampleWorkload,
    eventType?: string,
  ): Promise<FilterCheck> {
    return this.#call({
      method: "post",
      url: `${webhookPath(projectId, webhookId)}/filter-check`,
      data: { ...(eventType === undefined ? {} : { event_type: eventType }), workload },
    });
  }

  createProject(body: CreateProjectRequest): Promise<Project> {
    return this.#call({ method: "post", url: "/projects", data: body });
  }

  listProjects(options: { page?: number; perPage?: number } = {}): Promise<ProjectList> {
    return this.#call({
      method: "get",
      url: "/projects",
      params: { page: options.page, per_page: options.perPage },
    });
  }

  async #call<T>(config: AxiosRequestConfig): Promise<T> {
    try {
      return (await this.#http.request<T>(config)).data;
    } catch (error) {
      throw toClientError(error, this.baseUrl);
    }
  }
}

export interface DeliveryListOptions {
  limit?: number | undefined;
  /** false: failed attempts only; true: successful ones only. */
  success?: boolean | undefined;
  eventType?: string | undefined;
}

const webhooksPath = (projectId: number) => `/projects/${projectId}/webhooks`;
const webhookPath = (projectId: number, webhookId: number) => `${webhooksPath(projectId)}/${webhookId}`;
