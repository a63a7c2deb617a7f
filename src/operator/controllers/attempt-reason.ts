import { STATUS_CODES } from "node:http";
import type { AttemptRow } from "../../deliveries/health-store.js";
import type { AttemptSummary } from "../api/delivery-health.js";

// A recorded failure message names the webhook's URL (sender.ts), which may carry a token in its path
// or query, and a Webhook's status is readable by anyone who may `get` the resource. So the status never
// quotes a message: it says which kind of outcome it was, in a fixed phrase, from the message's start.
const failurePhrases: Array<[RegExp, string]> = [
  [/^Connection failed/, "Connection failed"],
  [/^Request timeout/, "Timed out"],
  [/^Destination refused/, "Destination refused"],
  [/^Not sent: the \S+ body could not be rendered/, "Not sent: the body could not be rendered"],
  [/^Not sent: webhook \d+ was disabled/, "Not sent: the webhook was disabled"],
  [/^Not sent/, "Not sent"],
];

/** The outcome in a few words: the HTTP status when a receiver answered, else the kind of failure. */
export function attemptReason(row: Pick<AttemptRow, "status_code" | "error_message">): string {
  if (row.status_code > 0) return `HTTP ${row.status_code} ${STATUS_CODES[row.status_code] ?? ""}`.trim();
  const message = row.error_message ?? "";
  return failurePhrases.find(([start]) => start.test(message))?.[1] ?? "Failed without an HTTP response";
}

export function summariseAttempt(row: AttemptRow): AttemptSummary {
  return {
    at: row.delivered_at.toISOString(),
    eventType: row.event_type,
    success: row.success,
    statusCode: row.status_code,
    attempt: row.attempt_number,
    reason: attemptReason(row),
  };
}
