import type { Queryable } from "../db/pool.js";
import { maskUrlIn } from "../webhooks/url-secret.js";
import type { ReadableResource } from "./backend.js";
import {
  type DeliveryAttemptRow,
  deliverySelectable,
  findAttempt,
  latestDeliveryId,
  listAttempts,
} from "./delivery-store.js";
import { DeliveryWatchCursor } from "./delivery-watch.js";
import { deliveryObject, outcomeOf } from "./objects.js";
import { ageCell } from "./table.js";

const wholeNumber = /^\d{1,15}$/;

/** `deliveries`: one finished attempt each, named by its delivery id. */
export function deliveriesResource(db: Queryable): ReadableResource<DeliveryAttemptRow> {
  return {
    selectable: deliverySelectable,
    list: (scope, page) => listAttempts(db, scope, { limit: page.limit, before: page.after }),
    currentVersion: async () => String(await latestDeliveryId(db)),
    find: (namespace, name) =>
      wholeNumber.test(name) ? findAttempt(db, namespace, Number(name)) : Promise.resolve(undefined),
    watch(scope, resourceVersion) {
      // No version (or "0", "any"): from now on. A delivery's version is its id.
      if (resourceVersion !== undefined && resourceVersion !== "" && !wholeNumber.test(resourceVersion)) {
        return undefined;
      }
      return (async () => {
        const from =
          resourceVersion && resourceVersion !== "0" ? Number(resourceVersion) : await latestDeliveryId(db);
        const cursor = new DeliveryWatchCursor(db, scope, from);
        return { next: async () => (await cursor.next()).map((row) => ({ type: "ADDED" as const, row })) };
      })();
    },
    positionOf: (row) => ({ createdAt: row.created_at, id: row.id }),
    toObject: deliveryObject,
    table: {
      columns: [
        { name: "Name", type: "string", format: "name", description: "The delivery's id" },
        { name: "Webhook", type: "string", description: "The Webhook resource (or /api webhook id)" },
        { name: "Event", type: "string", description: "The event type sent" },
        { name: "Outcome", type: "string", description: "succeeded or failed" },
        { name: "Status Code", type: "integer", description: "The receiver's HTTP status (0: none)" },
        { name: "Attempt", type: "integer", description: "The attempt's number for its event" },
        { name: "Age", type: "date", description: "Since the attempt was queued" },
        { name: "Rollout", type: "string", priority: 1, description: "The rollout the event belongs to" },
        { name: "Message", type: "string", priority: 1, description: "Why it failed" },
      ],
      cells: (row, now) => [
        String(row.id),
        row.webhook,
        row.event_type,
        outcomeOf(row),
        row.status_code ?? 0,
        row.attempt_number,
        ageCell(row.created_at, now),
        row.rollout_id === null ? "<none>" : String(row.rollout_id),
        maskUrlIn(row.error_message, row) ?? "",
      ],
      metadata: (row) => deliveryObject(row).metadata,
    },
  };
}
