import { arrayLiteral } from "../db/array-literal.js";
import type { Queryable } from "../db/pool.js";
import { loadSqlStatement } from "../db/sql-statement.js";
import type { DeploymentEventType } from "../event-types.js";
import { createEnvelope, type Envelope } from "../formats/envelope.js";
import type { RolloutDetails } from "../formats/rollout-details.js";
import { metrics } from "../metrics.js";
import type { ClaimedDelivery } from "./claim.js";
import { type EventWorkload, filterSubject } from "./event-filters.js";
import { type EmitRow, type HandOver, handedOverDeliveries } from "./hand-over.js";

export type { HandOver } from "./hand-over.js";

/** The rollout an event belongs to and the event's place in it (0 for the rollout's first event). */
export interface RolloutKey {
  id: number;
  position: number;
}

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
  /** The rollout it belongs to: its deliveries keep the rollout's order (sql/claim.sql). */
  rollout?: RolloutKey;
  /** What it says beyond its payload, to webhooks that opted in (deployments/rollout-details.ts). */
  rolloutDetails?: RolloutDetails;
}

export interface EmittedEvent {
  envelope: Envelope;
  /** The exact body every delivery of this event sends. */
  body: string;
}

/** The outbox write (sql/emit-events.sql says what it decides and why). */
const emitStatement = loadSqlStatement<{
  ids: string;
  project_ids: string;
  event_types: string;
  envelopes: string;
  rollout_ids: string;
  rollout_positions: string;
  subjects: string;
  rollout_details: string;
  created_at: Date;
  channel: string;
  hand_over_worker: string | null;
  lease_ms: number | null;
  hand_over_limit: number | null;
  allowance_ids: number[] | null;
  allowances: number[] | null;
  default_allowance: number | null;
}>(new URL("./sql/emit-events.sql", import.meta.url));

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
  const handing = events.length <= handOverMaxEvents ? handOver : undefined;
  // Prepared (parsed and planned once per connection, then reused): planning it on every call was
  // more Postgres time than running it (bench/delivery.ts at 200 events/s).
  const { rows } = await db.query<EmitRow>({
    name: emitStatement.name,
    text: emitStatement.text,
    values: emitStatement.values({
      ids: arrayLiteral(emitted.map((e) => e.envelope.id)),
      project_ids: arrayLiteral(emitted.map((e) => e.envelope.project_id)),
      event_types: arrayLiteral(emitted.map((e) => e.envelope.event_type)),
      envelopes: emitted.map((e) => e.body).join("\n"),
      rollout_ids: arrayLiteral(events.map((e) => e.rollout?.id ?? null)),
      rollout_positions: arrayLiteral(events.map((e) => e.rollout?.position ?? null)),
      subjects: JSON.stringify(events.map((event) => filterSubject(event.payload, event.workload))),
      rollout_details: JSON.stringify(events.map((event) => event.rolloutDetails ?? null)),
      created_at: now,
      channel: deliveriesChannel,
      hand_over_worker: handing?.workerId ?? null,
      lease_ms: handing?.leaseMs ?? null,
      hand_over_limit: handing?.limit ?? null,
      allowance_ids: handing ? [...handing.allowances.keys()] : null,
      allowances: handing ? [...handing.allowances.values()] : null,
      default_allowance: handing?.defaultAllowance ?? null,
    }),
  });
  const counted = rows.find((row) => row.queued !== null);
  const queued = counted ? (counted.queued as number) : rows.length;
  const handedOver = counted
    ? []
    : handedOverDeliveries(
        rows,
        new Map(emitted.map((e, i) => [e.envelope.id, { body: e.body, rollout: events[i]?.rolloutDetails }])),
        now,
      );
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
