import { eventTypeNames, eventTypes } from "../../../src/event-types.js";

// Names outside the Deployment category are accepted in subscriptions but not emitted in this release
// (docs/api.md, "Event types"); the form takes names, categories and descriptions from the event catalogue (GET /api/event-types).
export function isEmitted(category: string): boolean {
  return category === "Deployment";
}

export function subscribesToAll(events: string[]): boolean {
  return eventTypeNames.every((name) => events.includes(name));
}

export function eventSummary(events: string[]): string {
  if (subscribesToAll(events)) return "All events";
  if (events.length <= 2) return events.join(", ");
  return `${events.slice(0, 2).join(", ")} +${events.length - 2}`;
}

/** The deployment.* names: what a test event may be, and what deliveries carry today. */
export const emittedEventTypes: string[] = eventTypes.filter((t) => t.emitted).map((t) => t.event_type);
