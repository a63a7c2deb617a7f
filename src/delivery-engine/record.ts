import { arrayLiteral } from "../db/array-literal.js";
import { loadSqlStatement } from "../db/sql-statement.js";
import type { DeliveryOutcome } from "./sender.js";

export interface RecordedOutcome {
  id: number;
  outcome: DeliveryOutcome;
  /** When the outcome was known, in ms since the epoch. */
  deliveredAtMs: number;
  /** A failed attempt of a webhook with a retry policy: schedule the next attempt this much later. */
  retryInMs?: number | null;
  /** A real attempt of a webhook with auto-disable: it counts the outcome (webhooks/auto-disable.ts). */
  countedByPolicy?: boolean;
  /** Its rollout's later events may be waiting for it (docs/deliveries.md, "Order"): claim again once it is recorded. */
  holdsLaterEvents?: boolean;
}

/** The record statement (sql/record-outcomes.sql says what it writes and sets off). */
export const recordStatement = loadSqlStatement<{
  ids: string;
  success: string;
  request_timestamps: string;
  signatures: string;
  durations_ms: string;
  status_codes: string;
  response_bodies: (string | null)[];
  error_messages: (string | null)[];
  delivered_at_ms: string;
  shaped_bodies: (string | null)[] | null;
  shaped_body_headers: (string | null)[] | null;
  request_headers: (string | null)[] | null;
  retry_in_ms: string;
  counted: string;
  disabled_channel: string;
}>(new URL("./sql/record-outcomes.sql", import.meta.url));

/**
 * The record statement's values: one array per column, each outcome at its position. Arrays of items
 * that need no quoting go as literals (arrayLiteral); the texts go as arrays, which node-postgres quotes.
 * The shaped columns only when the batch holds a shaped delivery (null otherwise: nothing to send).
 */
export function recordValues(outcomes: RecordedOutcome[], disabledChannel: string): unknown[] {
  const shaped = outcomes.some((o) => o.outcome.shaped !== undefined);
  return recordStatement.values({
    ids: arrayLiteral(outcomes.map((o) => o.id)),
    success: arrayLiteral(outcomes.map((o) => (o.outcome.success ? "t" : "f"))),
    request_timestamps: arrayLiteral(outcomes.map((o) => o.outcome.requestTimestamp)),
    // "sha256=<hex>" needs no quoting in an array literal.
    signatures: arrayLiteral(outcomes.map((o) => o.outcome.signature)),
    // Only an attempt that sent a request has a duration worth showing.
    durations_ms: arrayLiteral(
      outcomes.map((o) => (o.outcome.requestTimestamp === null ? null : o.outcome.durationMs)),
    ),
    status_codes: arrayLiteral(outcomes.map((o) => o.outcome.statusCode)),
    response_bodies: outcomes.map((o) => o.outcome.responseBody),
    error_messages: outcomes.map((o) => o.outcome.errorMessage),
    delivered_at_ms: arrayLiteral(outcomes.map((o) => o.deliveredAtMs)),
    shaped_bodies: shaped ? outcomes.map((o) => o.outcome.shaped?.body ?? null) : null,
    shaped_body_headers: shaped
      ? outcomes.map((o) => (o.outcome.shaped ? JSON.stringify(o.outcome.shaped.bodyHeaders) : null))
      : null,
    request_headers: shaped
      ? outcomes.map((o) => (o.outcome.shaped ? JSON.stringify(o.outcome.shaped.requestHeaders) : null))
      : null,
    retry_in_ms: arrayLiteral(outcomes.map((o) => o.retryInMs ?? null)),
    counted: arrayLiteral(outcomes.map((o) => (o.countedByPolicy ? "t" : "f"))),
    disabled_channel: disabledChannel,
  });
}
