import { arrayLiteral } from "../db/array-literal.js";
import type { DeliveryOutcome } from "./sender.js";
import type { StatementParams } from "./statement-params.js";

export interface RecordedOutcome {
  id: number;
  outcome: DeliveryOutcome;
  /** When the outcome was known, in ms since the epoch. */
  deliveredAtMs: number;
  /** A failed attempt of a webhook with a retry policy: schedule the next attempt this much later. */
  retryInMs?: number | null;
  /** A real attempt of a webhook the outcome policy applies to: the policy counts it (outcome-policy.ts). */
  countedByPolicy?: boolean;
  /** Its rollout's later events may be waiting for it (rollout-order.ts): claim again once it is recorded. */
  holdsLaterEvents?: boolean;
}

/** Whether a batch writes what shaped deliveries sent (recordedCte's variant with more columns). */
export const recordsShaped = (outcomes: RecordedOutcome[]): boolean =>
  outcomes.some((o) => o.outcome.shaped !== undefined);

/**
 * The `recorded` CTE: writes finished outcomes. An outcome is written whoever holds the row's lease now,
 * unless the row already has one. An attempt that finished is a fact: when a lease ran out (a database
 * outage, a stalled process) and another worker sent the row again, the first outcome recorded stands and
 * the later one is dropped (the receiver saw the same delivery twice, which at-least-once allows). Each
 * row finds its outcome by its position in the id array rather than by joining an unnest: the filter is
 * estimated at ~1 row, and with that estimate the planner joins by rescanning the unnest per row.
 *
 * Returns the CTE and the placeholder of the recorded ids, which a claim in the same statement must
 * leave alone (claim.ts) and the follow-ups look their outcomes up by.
 */
export function recordedCte(
  params: StatementParams,
  outcomes: RecordedOutcome[],
  returning: (ids: string) => string = () => "d.id",
): { cte: string; ids: string } {
  const ids = params.add(arrayLiteral(outcomes.map((o) => o.id)), "bigint[]");
  // Each row's value, at its position in the id array.
  const each = (values: unknown, type: string) =>
    `(${params.add(values, type)})[array_position(${ids}, d.id)]`;
  const success = each(arrayLiteral(outcomes.map((o) => (o.outcome.success ? "t" : "f"))), "boolean[]");
  const sentAt = each(arrayLiteral(outcomes.map((o) => o.outcome.requestTimestamp)), "bigint[]");
  // "sha256=<hex>" needs no quoting in an array literal.
  const signature = each(arrayLiteral(outcomes.map((o) => o.outcome.signature)), "text[]");
  const status = each(arrayLiteral(outcomes.map((o) => o.outcome.statusCode)), "int[]");
  const body = each(
    outcomes.map((o) => o.outcome.responseBody),
    "text[]",
  );
  const error = each(
    outcomes.map((o) => o.outcome.errorMessage),
    "text[]",
  );
  // Only an attempt that sent a request has a duration worth showing.
  const duration = each(
    arrayLiteral(outcomes.map((o) => (o.outcome.requestTimestamp === null ? null : o.outcome.durationMs))),
    "int[]",
  );
  const deliveredAtMs = each(arrayLiteral(outcomes.map((o) => o.deliveredAtMs)), "float8[]");
  // What shaped deliveries sent (delivery-shape.ts), only in a batch that has one: envelope deliveries
  // write nothing more than before. The prepared statements' names say which variant runs (queue.ts).
  // A row's kept body (a replay's) stays when its attempt sent nothing.
  const shaped = recordsShaped(outcomes)
    ? `, body = COALESCE(${each(
        outcomes.map((o) => o.outcome.shaped?.body ?? null),
        "text[]",
      )}, d.body), body_headers = COALESCE(${each(
        outcomes.map((o) => (o.outcome.shaped ? JSON.stringify(o.outcome.shaped.bodyHeaders) : null)),
        "jsonb[]",
      )}, d.body_headers), request_headers = ${each(
        outcomes.map((o) => (o.outcome.shaped ? JSON.stringify(o.outcome.shaped.requestHeaders) : null)),
        "jsonb[]",
      )}`
    : "";
  // Unfinished by the table's CHECK (state 'done' exactly when delivered_at is set), said so that the
  // rows are found by primary key, never through the partial index of unfinished rows.
  const cte = `
  recorded AS (
    UPDATE deliveries d
       SET state = 'done', success = ${success}, request_timestamp = ${sentAt}, signature = ${signature},
           duration_ms = ${duration}, status_code = ${status}, response_body = ${body}, error_message = ${error},
           delivered_at = to_timestamp(${deliveredAtMs} / 1000), locked_by = NULL, locked_until = NULL${shaped}
     WHERE d.id = ANY (${ids}) AND d.state <> 'done'
    RETURNING ${returning(ids)}
  )`;
  return { cte, ids };
}
