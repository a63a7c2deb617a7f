import { arrayLiteral } from "../db/array-literal.js";
import type { Queryable } from "../db/pool.js";
import type { DeploymentEventType } from "../event-types.js";
import { createEnvelope, type Envelope } from "../formats/envelope.js";
import { metrics } from "../metrics.js";
import type { ClaimedDelivery } from "./claim.js";
import { type EventWorkload, filterSubject, filtersMatch } from "./event-filters.js";
import {
  type HandOver,
  type HandOverRow,
  handedOverDeliveries,
  handOverColumns,
  handOverStatement,
  handOverStatementName,
} from "./hand-over.js";
import type { RolloutKey } from "./rollout-order.js";
import { StatementParams } from "./statement-params.js";

export type { HandOver } from "./hand-over.js";

export const deliveriesChannel = "webhook_operator_deliveries";

/**
 * The most events an emit hands over (a rollout step emits one to three). A larger emit is a burst,
 * which claims serve well, and the hand-over statement costs more than the plain one when it cannot
 * hand over (measured at 500 deliveries per emit: 12–20 µs more Postgres CPU per delivery).
 */
const handOverMaxEvents = 3;

export interface EventToEmit {
  /** Only the deployment.* events are emitted; the others are accepted in subscriptions only (src/event-types.ts). */
  eventType: DeploymentEventType;
  projectId: number;
  payload: object;
  /** The workload the event comes from: what a webhook's kind and label filters match (event-filters.ts). */
  workload?: EventWorkload;
  /** The rollout it belongs to: its deliveries keep the rollout's order (rollout-order.ts). */
  rollout?: RolloutKey;
}

export interface EmittedEvent {
  envelope: Envelope;
  /** The exact body every delivery of this event sends. */
  body: string;
}

/** The emit's values, as placeholders of the statement being composed. */
export interface EmitParams {
  ids: string;
  projectIds: string;
  eventTypes: string;
  envelopes: string;
  rolloutIds: string;
  rolloutPositions: string;
  createdAt: string;
  channel: string;
  /** A jsonb array: each event's FilterSubject, by position. */
  subjects: string;
}

// The events and their rows (the envelopes travel as one text joined by newlines: JSON.stringify never
// writes a raw newline, and a text[] parameter would escape every quote of the JSON and make Postgres
// parse it back), and the enabled webhooks subscribed to them, locked like a foreign key check would,
// once per webhook: a webhook deleted meanwhile takes the new rows along when it commits after us, or is
// skipped if it committed first. `columns` are the webhooks' columns the statement reads beyond these.
// Each event carries the subject its webhooks' filters are matched against (event-filters.ts).
const eventsAndSubscribers = (p: EmitParams, columns = "") => `
  given AS (
    SELECT g.*, ${p.subjects} -> (g.position::int - 1) AS subject
      FROM unnest(${p.ids}, ${p.projectIds}, ${p.eventTypes}, string_to_array(${p.envelopes}, E'\\n'),
                  ${p.rolloutIds}, ${p.rolloutPositions})
             WITH ORDINALITY AS g (id, project_id, event_type, envelope, rollout_id, rollout_position, position)
  ), new_events AS (
    INSERT INTO events (id, project_id, event_type, envelope, created_at)
    SELECT id, project_id, event_type, envelope, ${p.createdAt} FROM given
  ), subscribed AS (
    SELECT w.id, w.project_id, w.events, w.filters${columns} FROM webhooks w
     WHERE w.project_id = ANY (${p.projectIds}) AND w.enabled AND w.events && ${p.eventTypes}
       FOR KEY SHARE
  )`;

/**
 * Records events and their deliveries: one event row per event and one queued delivery per enabled
 * webhook of the project subscribed to its name, in a single statement. Call it with a client inside
 * the caller's transaction (the rollout update, the events and the deliveries commit together: nothing
 * is sent that was not recorded, nothing recorded is lost). Workers are woken by NOTIFY, which Postgres
 * delivers only when that transaction commits.
 *
 * With `handOver` (the engine's handOverLease), the deliveries of an emit of a few events that all fit
 * the local worker's free slots are inserted leased to it instead, and returned: hand them to the
 * engine (handOver) once the transaction has committed. No NOTIFY is sent for them.
 */
export async function emitEvents(
  db: Queryable,
  events: EventToEmit[],
  handOver?: HandOver,
): Promise<{ emitted: EmittedEvent[]; queued: number; handedOver: ClaimedDelivery[] }> {
  if (events.length === 0) return { emitted: [], queued: 0, handedOver: [] };
  const now = new Date();
  const emitted = events.map((event) => {
    const envelope = createEnvelope(event.eventType, event.projectId, event.payload, now);
    return { envelope, body: JSON.stringify(envelope) };
  });
  const params = new StatementParams();
  const p: EmitParams = {
    ids: params.add(arrayLiteral(emitted.map((e) => e.envelope.id)), "uuid[]"),
    projectIds: params.add(arrayLiteral(emitted.map((e) => e.envelope.project_id)), "bigint[]"),
    eventTypes: params.add(arrayLiteral(emitted.map((e) => e.envelope.event_type)), "text[]"),
    envelopes: params.add(emitted.map((e) => e.body).join("\n"), "text"),
    rolloutIds: params.add(arrayLiteral(events.map((e) => e.rollout?.id ?? null)), "bigint[]"),
    rolloutPositions: params.add(arrayLiteral(events.map((e) => e.rollout?.position ?? null)), "smallint[]"),
    createdAt: params.add(now, "timestamptz"),
    channel: params.add(deliveriesChannel, "text"),
    subjects: params.add(
      JSON.stringify(events.map((event) => filterSubject(event.payload, event.workload))),
      "jsonb",
    ),
  };
  const handing = events.length <= handOverMaxEvents ? handOver : undefined;
  // Prepared (parsed and planned once per connection, then reused): planning it on every call was
  // more Postgres time than running it (bench/delivery.ts at 200 events/s).
  let queued: number;
  let handedOver: ClaimedDelivery[] = [];
  if (handing) {
    const { rows } = await db.query<HandOverRow>({
      name: handOverStatementName(handing),
      text: `WITH ${eventsAndSubscribers(p, handOverColumns(handing))}, ${handOverStatement(params, handing, p.channel)}`,
      values: params.values,
    });
    queued = rows.length;
    handedOver = handedOverDeliveries(rows, new Map(emitted.map((e) => [e.envelope.id, e.body])), now);
  } else {
    const { rows } = await db.query<{ queued: number }>({
      name: "emit-events",
      // Deliveries are numbered in the order the events were given (the ordinality), so a rollout's
      // created is queued before its ready when both are emitted together.
      text: `WITH ${eventsAndSubscribers(p)}, queued AS (
       INSERT INTO deliveries (webhook_id, event_id, event_type, rollout_id, rollout_position)
       SELECT w.id, g.id, g.event_type, g.rollout_id, g.rollout_position
         FROM given g
         JOIN subscribed w ON w.project_id = g.project_id AND g.event_type = ANY (w.events)
                          AND ${filtersMatch("w", "g")}
        ORDER BY g.position, w.id
       RETURNING id
     )
     SELECT count(*)::int AS queued, CASE WHEN count(*) > 0 THEN pg_notify(${p.channel}, '') END::text AS notified
       FROM queued`,
      values: params.values,
    });
    queued = rows[0]?.queued ?? 0;
  }
  for (const event of events) metrics.eventsEmitted.inc({ event_type: event.eventType });
  return { emitted, queued, handedOver };
}

export async function emitEvent(
  db: Queryable,
  event: EventToEmit,
): Promise<EmittedEvent & { queued: number }> {
  const { emitted, queued } = await emitEvents(db, [event]);
  return { ...(emitted[0] as EmittedEvent), queued };
}
