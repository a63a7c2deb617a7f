// The dashboard's view of /api, taken (type-only, nothing is bundled) from the zod schemas that
// validate the API and generate its OpenAPI document: a field renamed on the server fails this
// package's typecheck instead of breaking in the browser.
import type { z } from "zod";
import type { ServiceInfo as ServiceInfoOf } from "../../src/app/service-info.js";
import type {
  deliverySchema,
  deliveryStatsSchema,
  recoverResultSchema,
  retryResultSchema,
} from "../../src/deliveries/schemas.js";
import type { projectListSchema } from "../../src/projects/schemas.js";
import type { filterCheckBody, filterCheckSchema } from "../../src/webhooks/filter-check-schemas.js";
import type {
  createWebhookBody,
  eventTypeSchema,
  updateWebhookBody,
  webhookSchema,
} from "../../src/webhooks/schemas.js";

export type Webhook = z.infer<typeof webhookSchema>;
export type EventType = z.infer<typeof eventTypeSchema>;
export type Delivery = z.infer<typeof deliverySchema>;
export type DeliveryStats = z.infer<typeof deliveryStatsSchema>;
export type RetryResult = z.infer<typeof retryResultSchema>;
export type RecoverResult = z.infer<typeof recoverResultSchema>;
export type TestEventResult = RetryResult & { event_id: string };
export type ServiceInfo = ServiceInfoOf;
export type ProjectList = z.infer<typeof projectListSchema>;
export type Project = ProjectList["projects"][number];
export type CreateWebhook = Omit<z.input<typeof createWebhookBody>, "events"> & { events: string[] };
export type UpdateWebhook = Omit<z.input<typeof updateWebhookBody>, "events"> & { events?: string[] };
export type FilterCheck = z.infer<typeof filterCheckSchema>;
export type FilterCheckRequest = z.input<typeof filterCheckBody>;
