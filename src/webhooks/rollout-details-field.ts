import type { Queryable } from "../db/pool.js";
import { z } from "../http/openapi.js";
import { columns, type WebhookRow } from "./store.js";

// A webhook opts in with `rollout_details: true` to get, in the payload of each rollout event, one more
// key, `rollout`: the workload, what changed, links, and why a failed rollout failed (docs/formats.md,
// "Rollout details"). Off, the default, every body is byte for byte what it was without the field.

export const rolloutDetailsField = z.boolean({ error: "rollout_details must be a boolean" }).openapi({
  description:
    "true: each deployment event recorded from the cluster carries payload.rollout (the workload, " +
    "images before and after, version labels, links; on deployment.failed what the pods report). " +
    "Default false: bodies as without it.",
});

/** The row after applying a create's or an update's `rollout_details` (undefined: left as it is). */
export async function withRolloutDetails(
  db: Queryable,
  row: WebhookRow,
  given: boolean | undefined,
): Promise<WebhookRow> {
  if (given === undefined || given === row.rollout_details) return row;
  const { rows } = await db.query<WebhookRow>(
    `UPDATE webhooks SET rollout_details = $3 WHERE project_id = $1 AND id = $2 RETURNING ${columns}`,
    [row.project_id, row.id, given],
  );
  return rows[0] ?? row;
}
