import { randomUUID } from "node:crypto";
import type { EventType } from "../webhooks/event-types.js";

/** The JSON body of every delivery (spec §2.1). Key order is fixed here and kept in the stored text. */
export interface Envelope {
  id: string;
  event_type: EventType;
  timestamp: string;
  project_id: number | null;
  payload: object;
}

export function createEnvelope(
  eventType: EventType,
  projectId: number | null,
  payload: object,
  now: Date = new Date(),
): Envelope {
  return {
    id: randomUUID(),
    event_type: eventType,
    timestamp: now.toISOString(),
    project_id: projectId,
    payload,
  };
}
