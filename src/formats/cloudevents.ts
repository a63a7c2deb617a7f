import type { Envelope } from "./envelope.js";
import type { RenderedBody } from "./types.js";

// The CloudEvents 1.0 HTTP binding (docs/formats.md, CloudEvents). One event per delivery: its id is the
// envelope's id, so every attempt, retry and replay of an event carries the same id and a receiver can
// drop duplicates by (source, id) as the spec intends.

/** The CloudEvents `type` of an event: our event name under a reverse-DNS prefix of ours. */
export const cloudEventType = (eventType: string): string => `io.webhook-operator.${eventType}`;

/** The CloudEvents `source`: the project the event belongs to (a Kubernetes namespace's project). */
export const cloudEventSource = (envelope: Envelope): string =>
  envelope.project_id === null ? "/webhook-operator" : `/projects/${envelope.project_id}`;

/** The CloudEvents `subject`: the deployment (one rollout) within the project, when the payload has one. */
function cloudEventSubject(envelope: Envelope): string | undefined {
  const id = (envelope.payload as { deployment_id?: unknown }).deployment_id;
  return typeof id === "number" ? `deployments/${id}` : undefined;
}

/** The context attributes, in the order they are written (structured) or sent (binary). */
function attributes(envelope: Envelope): Record<string, string> {
  const subject = cloudEventSubject(envelope);
  return {
    specversion: "1.0",
    id: envelope.id,
    source: cloudEventSource(envelope),
    type: cloudEventType(envelope.event_type),
    ...(subject === undefined ? {} : { subject }),
    time: envelope.timestamp,
  };
}

/**
 * Structured mode: the whole event as one JSON document (`application/cloudevents+json`), `data` the
 * envelope's payload. Binary mode: the payload alone as the body (`application/json`) and the
 * attributes as `ce-*` headers.
 */
export function renderCloudEvent(envelope: Envelope, mode: "structured" | "binary"): RenderedBody {
  const context = attributes(envelope);
  if (mode === "structured") {
    return {
      contentType: "application/cloudevents+json",
      body: JSON.stringify({ ...context, datacontenttype: "application/json", data: envelope.payload }),
    };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(context)) headers[`ce-${name}`] = value;
  return { contentType: "application/json", body: JSON.stringify(envelope.payload), headers };
}
