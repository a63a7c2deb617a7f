import type { RolloutDetails } from "../formats/rollout-details.js";
import type { ClaimedDelivery } from "./claim.js";
import type { DeliveryShape } from "./delivery-shape.js";

// The emit's hand-over of deliveries to the emitting process's own worker (emit.ts, sql/emit-events.sql):
// at moderate rates each event otherwise costs a NOTIFY, a wake-up and a claim of one row, a
// transaction of its own (bench/delivery.ts). The rows are leased as a claim leases them, so nothing
// changes for the other replicas: they see in-flight rows, and take them over when the lease ends.

/**
 * What the local worker can take at once (engine.ts, handOverLease): its free slots and what each
 * webhook may be given now, so a hand-over never goes where a claim would not (receiver-limits.ts).
 */
export interface HandOver {
  workerId: string;
  leaseMs: number;
  /** The worker's free slots: an emit queueing more deliveries than this hands none over. */
  limit: number;
  /** Per known webhook, how many rows it may be given now (0 for a restricted one). */
  allowances: Map<number, number>;
  /** How many a webhook the worker has not seen may be given. */
  defaultAllowance: number;
}

/** A row of the emit statement: a handed-over delivery, or (all columns null but these) the queued count. */
export interface EmitRow {
  id: number | null;
  webhook_id: number;
  event_id: string;
  event_type: string;
  attempt_number: number;
  rollout_id: number | null;
  url: string;
  secret: string | null;
  retry_max_attempts: number | null;
  counted_by_policy: boolean;
  /** The webhook's shape without the event (filled in per delivery), null for an envelope webhook. */
  shape: Omit<DeliveryShape, "event_id" | "body" | "body_headers" | "rollout"> | null;
  /** Set only on the one row of an emit that handed nothing over: how many it queued. */
  queued: number | null;
}

/** The handed-over rows as the worker takes claimed ones, with each event's body and details (by id). */
export function handedOverDeliveries(
  rows: EmitRow[],
  events: Map<string, { body: string; rollout: RolloutDetails | undefined }>,
  createdAt: Date,
): ClaimedDelivery[] {
  // In id order, the order they were queued in (a rollout's created before its ready).
  return rows
    .filter((row) => row.id !== null)
    .sort((a, b) => (a.id as number) - (b.id as number))
    .map((row) => ({
      id: row.id as number,
      webhook_id: row.webhook_id,
      event_type: row.event_type,
      attempt_number: row.attempt_number,
      rollout_id: row.rollout_id,
      pace_interval_ms: null,
      url: row.url,
      secret: row.secret,
      retry_max_attempts: row.retry_max_attempts,
      counted_by_policy: row.counted_by_policy,
      body: events.get(row.event_id)?.body as string,
      queued_at_ms: createdAt.getTime(),
      enabled: true,
      more_due: false,
      shape:
        row.shape === null
          ? null
          : {
              ...row.shape,
              event_id: row.event_id,
              body: null,
              body_headers: null,
              rollout: events.get(row.event_id)?.rollout ?? null,
            },
    }));
}
