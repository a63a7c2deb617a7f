import { arrayLiteral } from "../db/array-literal.js";
import { loadSqlStatement } from "../db/sql-statement.js";
import type { DeliveryShape } from "./delivery-shape.js";
import type { ClaimPlan } from "./receiver-limits.js";

/** A delivery claimed by a worker, with what it needs to send it. */
export interface ClaimedDelivery {
  id: number;
  webhook_id: number;
  event_type: string;
  url: string;
  secret: string | null;
  body: string;
  /**
   * When the row was queued, in ms since the epoch: its event's recording for a first attempt, the
   * queueing of an automatic retry when it fell due, a recovery's request. The delivery lag runs from it.
   */
  queued_at_ms: number;
  attempt_number: number;
  /** The rollout its event belongs to (docs/deliveries.md, "Order"), null for none. */
  rollout_id: number | null;
  /** 1000 / the webhook's rate limit per second, null for a webhook without one (pace.ts). */
  pace_interval_ms: number | null;
  /** The webhook as the claim saw it: disabled webhooks' deliveries are not sent (README). */
  enabled: boolean;
  retry_max_attempts: number | null;
  /** Its outcomes are counted by auto-disable (webhooks/auto-disable.ts). */
  counted_by_policy: boolean;
  /** True when a webhook had more due rows than this claim's share gave it: claim again. */
  more_due: boolean;
  /** Its format, signature scheme and headers; null for a webhook that chose none (delivery-shape.ts). */
  shape: DeliveryShape | null;
}

export interface ClaimRequest {
  limit: number;
  leaseMs: number;
  /** Per-webhook allowances and the restricted webhooks' shared budget (receiver-limits.ts). */
  plan: ClaimPlan;
}

/** The claim (sql/claim.sql says what it decides and why). */
export const claimStatement = loadSqlStatement<{
  worker: string;
  limit: number;
  lease_ms: number;
  known_ids: number[];
  allowances: number[];
  restricted: boolean[];
  held: number[];
  default_allowance: number;
  restricted_budget: number;
  recording_ids: string;
}>(new URL("./sql/claim.sql", import.meta.url));

/**
 * The claim's values: what the worker knows of each webhook, as parallel arrays, and the rows whose
 * outcomes it is recording meanwhile (left alone even when their lease ran out).
 */
export function claimValues(workerId: string, claim: ClaimRequest, recordingIds: number[] = []): unknown[] {
  const known = [...claim.plan.allowances];
  const held = claim.plan.held ?? new Map<number, number>();
  return claimStatement.values({
    worker: workerId,
    limit: claim.limit,
    lease_ms: claim.leaseMs,
    known_ids: known.map(([id]) => id),
    allowances: known.map(([, a]) => a.allowance),
    restricted: known.map(([, a]) => a.restricted),
    held: known.map(([id]) => held.get(id) ?? 0),
    default_allowance: claim.plan.defaultAllowance,
    restricted_budget: claim.plan.restrictedBudget,
    recording_ids: arrayLiteral(recordingIds),
  });
}
