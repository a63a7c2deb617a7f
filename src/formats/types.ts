import type { Envelope } from "./envelope.js";
import type { RolloutDetails } from "./rollout-details.js";

/**
 * The shapes a webhook's deliveries can take. `envelope` is the default: the event's own JSON body and
 * our X-Webhook-* headers, byte for byte as without any format. Every other one is a view of the same
 * recorded event, chosen per webhook.
 */
export const deliveryFormats = [
  "envelope",
  "cloudevents",
  "slack",
  "msteams",
  "discord",
  "googlechat",
  "template",
] as const;
export type DeliveryFormat = (typeof deliveryFormats)[number];

/** What a renderer gets: the recorded event (its envelope, as stored) and the webhook's own settings. */
export interface FormatInput {
  envelope: Envelope;
  /** The webhook's template (Liquid) for the `template` format; null for the others. */
  template: string | null;
  /** The content type the webhook declared for its template's output; null for the others. */
  templateContentType: string | null;
  /**
   * The event's rollout details (deployments/rollout-details.ts), which chat cards and templates show
   * whenever the event has them; null for an event without them. JSON formats carry them only in the
   * envelope, and only for a webhook that opted in.
   */
  rollout?: RolloutDetails | null;
}

/** A delivery's body as it is sent and recorded, with the Content-Type it is sent with. */
export interface RenderedBody {
  contentType: string;
  body: string;
  /** Headers the format itself adds (for example CloudEvents' binary mode `ce-*`), in send order. */
  headers?: Record<string, string>;
}

/**
 * A render that cannot produce a body (a template that fails, or renders more than the limit). The
 * delivery is recorded as failed with this message and nothing is sent. The message never quotes
 * secrets or the template's output.
 */
export class RenderError extends Error {
  override name = "RenderError";
}

/** A template that does not parse, or breaks a bound of its source; `line` is 1-based when known. */
export class TemplateSyntaxError extends Error {
  override name = "TemplateSyntaxError";
  constructor(
    message: string,
    readonly line: number | null,
  ) {
    super(message);
  }
}
