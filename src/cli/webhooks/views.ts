import type {
  Delivery,
  EventTypeDescriptor,
  RetryResult,
  TestEventResult,
  Webhook,
} from "../../client/api-client.js";
import { eventTypeNames } from "../../webhooks/event-types.js";
import { cell, formatFields, formatTable } from "./output.js";

// How each resource reads in a terminal. Keys are the API's field names, so the text output, --json
// and the spec use one vocabulary.

/** In a table a full subscription reads as `all`; `show` lists every name. */
function subscribedEvents(events: string[]): string {
  const everything = eventTypeNames.every((name) => events.includes(name));
  return everything ? `all (${events.length})` : cell(events);
}

export function webhookTable(webhooks: Webhook[]): string {
  if (webhooks.length === 0) return "No webhooks.\n";
  return formatTable(
    ["ID", "URL", "EVENTS", "ENABLED", "HAS_SECRET", "UPDATED_AT"],
    webhooks.map((w) => [
      cell(w.id),
      w.url,
      subscribedEvents(w.events),
      cell(w.enabled),
      cell(w.has_secret),
      w.updated_at,
    ]),
  );
}

export function webhookFields(webhook: Webhook): string {
  const { managed_by: managedBy, ...fields } = webhook;
  const owner = managedBy ? `${managedBy.kind} ${managedBy.namespace}/${managedBy.name}` : null;
  return formatFields([...Object.entries(fields), ["managed_by", owner]]);
}

export function eventTypeTable(types: EventTypeDescriptor[]): string {
  return formatTable(
    ["EVENT_TYPE", "CATEGORY", "DESCRIPTION"],
    types.map((type) => [type.event_type, type.category, type.description]),
  );
}

/** First line of an error, cut to fit a table; `deliveries show` has the whole text. */
function shortError(message: string | null): string {
  const first = (message ?? "-").split("\n", 1)[0] ?? "";
  return first.length > 60 ? `${first.slice(0, 59)}…` : first;
}

export function deliveryTable(deliveries: Delivery[]): string {
  if (deliveries.length === 0) return "No deliveries.\n";
  return formatTable(
    ["ID", "EVENT_TYPE", "ATTEMPT", "SUCCESS", "STATUS_CODE", "DELIVERED_AT", "ERROR"],
    deliveries.map((d) => [
      cell(d.id),
      d.event_type,
      cell(d.attempt_number),
      cell(d.success),
      cell(d.status_code),
      d.delivered_at,
      shortError(d.error_message),
    ]),
  );
}

/** The delivery's fields, then the receiver's answer and the envelope as sent (pretty-printed). */
export function deliveryDetails(delivery: Delivery): string {
  const { payload, response_body: responseBody, ...fields } = delivery;
  let envelope: string;
  try {
    envelope = JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    envelope = payload;
  }
  const answer = responseBody.trimEnd() === "" ? "(empty)" : responseBody.trimEnd();
  return `${formatFields(Object.entries(fields))}\nresponse_body:\n${answer}\n\npayload:\n${envelope}\n`;
}

export function attemptFields(result: RetryResult | TestEventResult): string {
  return formatFields(Object.entries(result));
}
