import type { Queryable } from "../../src/db/pool.js";
import { emitEvents, type HandOver } from "../../src/delivery-engine/emit.js";
import { type RecordedOutcome, recordAndClaim, recordOutcomes } from "../../src/delivery-engine/queue.js";
import type { DeliveryOutcome } from "../../src/delivery-engine/sender.js";
import { autoDisablePolicy } from "../../src/webhooks/auto-disable.js";

// The delivery engine composes its statements from parts (record.ts, claim.ts, follow-ups.ts, emit.ts,
// hand-over.ts). This catalogue runs the engine's own functions once per variant against a database
// that only writes the statement down, so what lands in src/delivery-engine/sql/ is the exact text the
// engine prepares, never a copy kept by hand.

/** One statement variant the engine runs: its file, its prepared statement's name and when it runs. */
export interface EngineStatement {
  file: string;
  /** The prepared statement's name, or undefined for a statement sent unprepared. */
  name: string | undefined;
  runsWhen: string;
  text: string;
}

/** A Queryable that keeps the statement it is given and answers with no rows. */
function recordingDatabase() {
  const seen: { name: string | undefined; text: string }[] = [];
  const db = {
    query: async (statement: string | { name?: string; text: string }) => {
      seen.push(
        typeof statement === "string"
          ? { name: undefined, text: statement }
          : { name: statement.name, text: statement.text },
      );
      return { rows: [], rowCount: 0 };
    },
  } as unknown as Queryable;
  return { db, only: () => seen[0] as { name: string | undefined; text: string } };
}

const failed: DeliveryOutcome = {
  success: false,
  statusCode: 500,
  responseBody: "",
  errorMessage: null,
  failure: "http",
  durationMs: 1,
  requestTimestamp: 1,
  signature: null,
};
const shaped: DeliveryOutcome = { ...failed, shaped: { body: "{}", bodyHeaders: {}, requestHeaders: {} } };

const outcome = (o: DeliveryOutcome, followUp: boolean): RecordedOutcome => ({
  id: 1,
  outcome: o,
  deliveredAtMs: 0,
  retryInMs: followUp ? 1_000 : null,
  countedByPolicy: followUp,
});

const plan = { allowances: new Map(), defaultAllowance: 2, restrictedBudget: 1 };

async function recordAndClaimVariant(claiming: boolean, followUps: boolean, isShaped: boolean) {
  const { db, only } = recordingDatabase();
  const outcomes = [outcome(isShaped ? shaped : failed, followUps)];
  await recordAndClaim(
    db,
    "worker",
    outcomes,
    { limit: claiming ? 1 : 0, leaseMs: 1, plan },
    autoDisablePolicy,
  );
  return only();
}

const recordAndClaimWhen = (claiming: boolean, followUps: boolean, isShaped: boolean) =>
  [
    claiming
      ? "a worker's turn records outcomes and claims due deliveries"
      : "a worker's turn only records outcomes (no free slot or nothing due)",
    followUps
      ? "an outcome has a retry to schedule or counts for auto-disable"
      : "no outcome has a follow-up",
    isShaped
      ? "an outcome was sent with a format or custom headers (its body and headers are kept)"
      : "every outcome is an envelope's",
  ].join("; ");

const handOver: HandOver = {
  workerId: "worker",
  leaseMs: 1,
  limit: 1,
  allowances: new Map(),
  defaultAllowance: 2,
  countedBy: autoDisablePolicy.appliesTo,
};

async function emitVariant(handingOver: boolean) {
  const { db, only } = recordingDatabase();
  const event = { eventType: "deployment.created" as const, projectId: 1, payload: {} };
  await emitEvents(db, [event], handingOver ? handOver : undefined);
  return only();
}

async function recordOutcomesVariant(isShaped: boolean) {
  const { db, only } = recordingDatabase();
  await recordOutcomes(db, [outcome(isShaped ? shaped : failed, false)]);
  return only();
}

/** Every statement variant of the engine, in a fixed order. */
export async function engineStatements(): Promise<EngineStatement[]> {
  const statements: EngineStatement[] = [];
  for (const claiming of [true, false])
    for (const followUps of [false, true])
      for (const isShaped of [false, true]) {
        const { name, text } = await recordAndClaimVariant(claiming, followUps, isShaped);
        statements.push({
          file: `${name}.sql`,
          name,
          runsWhen: recordAndClaimWhen(claiming, followUps, isShaped),
          text,
        });
      }
  for (const isShaped of [false, true]) {
    const { name, text } = await recordOutcomesVariant(isShaped);
    statements.push({
      file: `record-outcomes${isShaped ? "-shaped" : ""}.sql`,
      name,
      runsWhen: `a replay or a test event records its outcome${isShaped ? ", sent with a format or custom headers" : ""}`,
      text,
    });
  }
  const emit = await emitVariant(false);
  statements.push({
    file: "emit-events.sql",
    runsWhen: "an event is recorded and its deliveries queued",
    ...emit,
  });
  const handing = await emitVariant(true);
  statements.push({
    file: "emit-events-handing-over.sql",
    runsWhen: "an emit of up to three events may hand its deliveries straight to this replica's worker",
    ...handing,
  });
  return statements;
}
