// The delivery health a Webhook's status carries: counts over the last hour, the last success and the
// last failure, the latest attempts (what `kubectl describe webhook` shows), and the `Healthy` condition
// alerts and `kubectl wait` read. Types and CRD schema together, as webhook-v1alpha1.ts does for the rest.

/** The counts' window, named in the status field (`deliveriesLastHour`) and the printer columns. */
export const healthWindowMs = 60 * 60 * 1000;
/** How many attempts `status.recentDeliveries` lists, newest first. */
export const recentDeliveriesShown = 5;

export const healthyCondition = "Healthy";

/**
 * The `Healthy` condition's reasons. True: `Delivering` (the latest attempt succeeded). False: `Degraded`
 * (the latest attempt failed, another in the last hour succeeded) or `Failing` (the latest failed and
 * none in the last hour succeeded). Unknown: `NoDeliveries` (nothing has been attempted yet).
 */
export const healthReasons = {
  delivering: "Delivering",
  degraded: "Degraded",
  failing: "Failing",
  noDeliveries: "NoDeliveries",
} as const;

/** One finished attempt as the status shows it: `reason` is a fixed phrase, never the URL or a secret. */
export interface AttemptSummary {
  at: string;
  eventType: string;
  success: boolean;
  statusCode: number;
  attempt: number;
  reason: string;
}

/** null removes a field that no longer applies (the status is written as a JSON merge patch). */
export interface DeliveryHealthStatus {
  deliveriesLastHour?: { succeeded: number; failed: number };
  lastSuccess?: AttemptSummary | null;
  lastFailure?: AttemptSummary | null;
  recentDeliveries?: AttemptSummary[] | null;
}

const attemptSchema = (description: string) =>
  ({
    type: "object",
    description,
    properties: {
      at: { type: "string", format: "date-time" },
      eventType: { type: "string" },
      success: { type: "boolean" },
      statusCode: { type: "integer", description: "The receiver's HTTP status; 0 when none answered." },
      attempt: { type: "integer" },
      reason: {
        type: "string",
        description: "The outcome in a few words (HTTP 503 Service Unavailable, Timed out, …).",
      },
    },
  }) as const;

export const deliveryHealthSchema = {
  deliveriesLastHour: {
    type: "object",
    description: "Finished delivery attempts created in the last hour, counted at the last status refresh.",
    properties: { succeeded: { type: "integer" }, failed: { type: "integer" } },
  },
  lastSuccess: attemptSchema("The latest attempt that succeeded."),
  lastFailure: attemptSchema("The latest attempt that failed."),
  recentDeliveries: {
    type: "array",
    maxItems: recentDeliveriesShown,
    items: attemptSchema("A finished attempt."),
    description: `The latest ${recentDeliveriesShown} finished attempts, newest first.`,
  },
} as const;

const healthyPath = `.status.conditions[?(@.type=="${healthyCondition}")]`;

export const deliveryHealthColumns = [
  { name: "Healthy", type: "string", jsonPath: `${healthyPath}.status` },
  { name: "Health", type: "string", jsonPath: `${healthyPath}.reason`, priority: 1 },
  { name: "OK 1h", type: "integer", jsonPath: ".status.deliveriesLastHour.succeeded" },
  { name: "Failed 1h", type: "integer", jsonPath: ".status.deliveriesLastHour.failed" },
] as const;
