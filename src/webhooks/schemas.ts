import { eventTypeNames } from "../event-types.js";
import { z } from "../http/openapi.js";
import { pageNumber, pageSize } from "../http/pagination.js";
import { httpUrl, idParam, isoTimestamp, numberError } from "../http/schemas.js";
import { webhookFiltersInput } from "./filter-schemas.js";
import { formatFields, formatReadFields, templateRule } from "./format-fields.js";
import { paceReadFields, rateLimit } from "./rate-limit.js";
import { rolloutDetailsField } from "./rollout-details-field.js";
import { urlSecretField } from "./url-secret.js";

export const webhookParams = z.object({
  project_id: idParam("project_id"),
  webhook_id: idParam("webhook_id"),
});

// Only a short string is quoted back: a hostile value (an array nested thousands deep, a huge string)
// must not be serialised into the message, where JSON.stringify could throw or bloat the answer.
const eventName = z.enum(eventTypeNames, {
  error: (issue) =>
    typeof issue.input === "string" && issue.input.length <= 100
      ? `unknown event type ${JSON.stringify(issue.input)}; valid event types are: ${eventTypeNames.join(", ")}`
      : `each event type must be one of: ${eventTypeNames.join(", ")}`,
});

const events = z
  .array(eventName, { error: "events must be an array of event type names" })
  .min(1, "events must name at least one event type")
  .max(100, "events must list at most 100 names")
  .transform((names) => [...new Set(names)])
  .openapi({ example: ["deployment.succeeded", "deployment.failed"] });

const secret = z
  .string({ error: "secret must be a string" })
  .min(1, "secret must not be empty; send null to remove it")
  .max(256, "secret must be at most 256 characters")
  // NUL marks a key kept as bytes (src/formats/signing-key.ts): no API secret may start one.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this refuses
  .regex(/^[^\u0000]*$/, "secret must not contain NUL characters")
  .openapi({ writeOnly: true, description: "Signing secret; never returned" });

// Opt-in delivery policies (additions to the spec, whose default is no automatic retry and no
// automatic disable): null or absent keeps that default.
export const maxRetryAttempts = 6;

/** The message for a value that is not an object; unknown keys keep zod's message, which names them. */
const objectError = (message: string) => (issue: { code?: string }) =>
  issue.code === "unrecognized_keys" ? undefined : message;

const retryPolicy = z
  .strictObject(
    {
      max_attempts: z
        .number({ error: numberError("retry_policy.max_attempts") })
        .int("retry_policy.max_attempts must be a whole number")
        .min(1, "retry_policy.max_attempts must be at least 1")
        .max(maxRetryAttempts, `retry_policy.max_attempts must be at most ${maxRetryAttempts}`),
    },
    { error: objectError("retry_policy must be an object {max_attempts} or null") },
  )
  .openapi("RetryPolicy", {
    description:
      "Automatic retries of failed deliveries: up to max_attempts attempts of an event in all (the " +
      "first included), each retry a new delivery record with attempt_number + 1, by default after 5 s, 1 min, " +
      "5 min, 30 min and 2 h (±20 % jitter). null (the default): no automatic retry.",
  });

const autoDisable = z
  .strictObject(
    {
      after_failures: z
        .number({ error: numberError("auto_disable.after_failures") })
        .int("auto_disable.after_failures must be a whole number")
        .min(1, "auto_disable.after_failures must be at least 1")
        .max(1000, "auto_disable.after_failures must be at most 1000"),
      min_duration_seconds: z
        .number({ error: numberError("auto_disable.min_duration_seconds") })
        .int("auto_disable.min_duration_seconds must be a whole number")
        .min(0, "auto_disable.min_duration_seconds must be at least 0")
        .max(2_592_000, "auto_disable.min_duration_seconds must be at most 2592000 (30 days)"),
    },
    { error: objectError("auto_disable must be an object {after_failures, min_duration_seconds} or null") },
  )
  .openapi("AutoDisable", {
    description:
      "Disable the webhook once after_failures deliveries in a row failed, the first of them at " +
      "least min_duration_seconds ago. null (the default): never disabled automatically.",
  });

export const createWebhookBody = z
  .strictObject({
    url: httpUrl("url").openapi({ example: "https://example.com/hooks/deployments" }),
    events,
    enabled: z
      .boolean({ error: "enabled must be a boolean" })
      .default(true)
      .openapi({ description: "Default true" }),
    secret: secret.nullable().optional(),
    retry_policy: retryPolicy.nullable().optional(),
    auto_disable: autoDisable.nullable().optional(),
    rate_limit: rateLimit.nullable().optional(),
    ...formatFields,
    filters: webhookFiltersInput.nullable().optional(),
    url_secret: urlSecretField.optional(),
    rollout_details: rolloutDetailsField.optional(),
  })
  .openapi("CreateWebhook", templateRule.create);

export const updateWebhookBody = z
  .strictObject({
    url: httpUrl("url").optional(),
    // null is taken as left out: generated clients that start a list as null send it (openapi-generator's
    // Java client sends [] for a list nobody set unless the document allows null).
    events: events
      .nullable()
      .optional()
      .transform((names) => names ?? undefined)
      .openapi({ description: "The subscribed event types; null or left out keeps them" }),
    enabled: z
      .boolean({ error: "enabled must be a boolean" })
      .optional()
      .openapi({ description: "true also clears an automatic disable (disabled_reason)" }),
    secret: secret
      .nullable()
      .optional()
      .openapi({ description: "A string replaces the secret; null removes it" }),
    retry_policy: retryPolicy.nullable().optional().openapi({ description: "null turns retries off" }),
    auto_disable: autoDisable.nullable().optional().openapi({ description: "null turns it off" }),
    rate_limit: rateLimit.nullable().optional().openapi({ description: "null removes it" }),
    ...formatFields,
    filters: webhookFiltersInput
      .nullable()
      .optional()
      .openapi({ description: "Replaces the filters; null removes them (every subscribed event again)" }),
    url_secret: urlSecretField.optional(),
    rollout_details: rolloutDetailsField.optional(),
  })
  .openapi("UpdateWebhook", templateRule.update);

export const listWebhooksQuery = z.object({
  page: pageNumber
    .optional()
    .openapi({ description: "With page or page_size the answer is a page envelope" }),
  page_size: pageSize.optional(),
});

export const webhookSchema = z
  .object({
    id: z.number().int(),
    project_id: z.number().int(),
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    has_secret: z.boolean(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    managed_by: z
      .object({ kind: z.literal("Webhook"), namespace: z.string(), name: z.string() })
      .nullable()
      .openapi({
        description:
          "The Kubernetes Webhook resource that declares this webhook, or null " +
          "for webhooks created through the API. A managed webhook is read-only through the API (409).",
      }),
    retry_policy: retryPolicy.nullable(),
    auto_disable: autoDisable.nullable(),
    disabled_reason: z.string().nullable().openapi({
      description:
        "Why the service disabled this webhook itself (auto_disable), or null. Cleared by enabling it.",
    }),
    disabled_at: isoTimestamp.nullable().openapi({ description: "When it was auto-disabled, or null" }),
    ...formatReadFields,
    // Absent when the webhook has none and gets every subscribed event. No description here: one
    // beside a $ref becomes an allOf, whose nullability generators drop (docs/api.md, Filters).
    filters: webhookFiltersInput.optional(),
    ...paceReadFields,
    // A boolean, not the literal true: openapi-generator's Java client reads `enum: [true]` as a string.
    url_secret: z.boolean().optional().openapi({
      description: "Present (true) when the url is a secret: url is then shown as scheme://host/********",
    }),
    rollout_details: z.boolean().optional().openapi({
      description: "Present (true) when rollout events carry payload.rollout (docs/formats.md)",
    }),
  })
  .openapi("Webhook");

export const webhookPageSchema = z
  .object({
    data: z.array(webhookSchema),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
  })
  .openapi("WebhookPage");

export const eventTypeSchema = z
  .object({ event_type: z.string(), description: z.string(), category: z.string() })
  .openapi("EventType");
