// Order per rollout (docs/deliveries.md, "Order"): a delivery of a rollout's event is sent to its webhook
// only once every earlier event of that rollout has finished there: succeeded, or failed with no automatic
// retry left. The claim (claim.ts) and the emit's hand-over (hand-over.ts) both ask this of each row,
// through the partial indexes of migration 020: one index probe per row, however long the queue.

/** The rollout an event belongs to and the event's place in it (0 for the rollout's first event). */
export interface RolloutKey {
  id: number;
  position: number;
}

/**
 * A boolean SQL expression: an earlier event of the rollout of `row` (a deliveries row, or any row with
 * webhook_id, rollout_id and rollout_position) is unfinished for the same webhook: queued, in flight
 * (a lease taken over included) or failed and waiting for its automatic retry.
 */
export const earlierEventUnfinished = (row: string) => `(${row}.rollout_id IS NOT NULL AND (
    EXISTS (SELECT 1 FROM deliveries o
             WHERE o.webhook_id = ${row}.webhook_id AND o.rollout_id = ${row}.rollout_id
               AND o.rollout_position < ${row}.rollout_position AND o.delivered_at IS NULL)
    OR EXISTS (SELECT 1 FROM scheduled_retries o
                WHERE o.webhook_id = ${row}.webhook_id AND o.rollout_id = ${row}.rollout_id
                  AND o.rollout_position < ${row}.rollout_position)))`;
