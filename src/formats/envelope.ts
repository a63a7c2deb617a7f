import { randomUUID } from "node:crypto";
import type { EventType } from "../event-types.js";

/** The JSON body of every delivery (docs/api.md, "What a receiver gets"). Key order is fixed here and kept in the stored text. */
export interface Envelope {
  id: string;
  event_type: EventType;
  timestamp: string;
  project_id: number | null;
  payload: object;
}

let prefixMs = -1;
let prefix = "";

/**
 * A UUIDv7 (RFC 9562): the time in milliseconds, then 74 random bits. Time-ordered ids are appended to
 * the end of the events key's index instead of landing on a random page of it. Built from a v4 of
 * Node's cached random pool: the `uuid` package's v7 cost 1.4 µs per id here, this 0.2–0.3 µs.
 */
export function uuidV7(now: Date): string {
  const ms = now.getTime();
  if (ms !== prefixMs) {
    const time = ms.toString(16).padStart(12, "0");
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
    prefixMs = ms;
  }
  return prefix + randomUUID().slice(15); // v4: xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx
}

export function createEnvelope(
  eventType: EventType,
  projectId: number | null,
  payload: object,
  now: Date = new Date(),
): Envelope {
  return {
    id: uuidV7(now),
    event_type: eventType,
    timestamp: now.toISOString(),
    project_id: projectId,
    payload,
  };
}
