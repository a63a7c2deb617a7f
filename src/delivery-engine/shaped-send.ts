import { RenderError } from "../formats/types.js";
import { type DeliveryShape, maskedHeaderValue, shapedBody, shapedHeaders } from "./delivery-shape.js";

// The sender's part for a shaped delivery (delivery-shape.ts): its custom headers opened, its body
// rendered (or taken as kept), its headers built and signed, and what its record keeps. Apart from
// sender.ts so that an envelope delivery's send reads as it always did.

/** What a shaped delivery's record keeps of its request (record.ts). */
export interface SentShape {
  /** The body sent; null when it was the event's envelope (the record shows the envelope then). */
  body: string | null;
  /** Content-Type and the format's headers, sent again by a replay with the same body. */
  bodyHeaders: Record<string, string>;
  /** Every header as sent, custom header values masked. */
  requestHeaders: Record<string, string>;
}

export type ShapedSend =
  | { ok: true; body: string; headers: Record<string, string>; signature: string | null; sent: SentShape }
  | { ok: false; failure: "refused" | "render"; message: string };

// "Not sent:" already says it: a renderer's own closing "Nothing was sent." is not said twice.
export const notRenderedMessage = (format: string, error: Error): string =>
  `Not sent: the ${format} body could not be rendered: ${error.message.replace(/ Nothing was sent\.$/, "")}`;

/** A webhook's custom headers, opened: the sealed JSON object of delivery-shape.ts. */
function openCustomHeaders(shape: DeliveryShape, open: (sealed: string) => string): Record<string, string> {
  return shape.headers === null ? {} : (JSON.parse(open(shape.headers)) as Record<string, string>);
}

/** Headers as a record shows them: custom values replaced by asterisks, never stored or shown. */
function maskCustomHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  const masked = { ...headers };
  for (const name of names) if (Object.hasOwn(masked, name)) masked[name] = maskedHeaderValue;
  return masked;
}

/**
 * Prepares a shaped delivery's request. Nothing is to be sent when its custom headers cannot be opened
 * (the receiver would get the request without its credentials) or its body cannot be rendered.
 */
export async function prepareShapedSend(facts: {
  shape: DeliveryShape;
  envelopeText: string;
  eventType: string;
  deliveryId: number | string;
  timestamp: number;
  /** The opened secret, or null when unsigned. */
  key: string | null;
  openSecret: (sealed: string) => string;
  /** The sender's X-Webhook-Signature signer. */
  sign: (key: string, timestamp: string, body: string) => string;
}): Promise<ShapedSend> {
  const { shape, key, timestamp } = facts;
  let custom: Record<string, string>;
  try {
    custom = openCustomHeaders(shape, facts.openSecret);
  } catch (error) {
    const message = `Not sent: the webhook's custom headers cannot be decrypted; ${(error as Error).message}.`;
    return { ok: false, failure: "refused", message };
  }
  let rendered: Awaited<ReturnType<typeof shapedBody>>;
  try {
    rendered = await shapedBody(shape, facts.envelopeText);
  } catch (error) {
    if (!(error instanceof RenderError)) throw error;
    return { ok: false, failure: "render", message: notRenderedMessage(shape.format, error) };
  }
  const { body, bodyHeaders } = rendered;
  const hmacSignature =
    key === null || shape.signature_scheme !== "hmac-sha256"
      ? null
      : facts.sign(key, String(timestamp), body);
  const { headers, signature } = shapedHeaders({
    shape,
    bodyHeaders,
    body,
    eventType: facts.eventType,
    deliveryId: facts.deliveryId,
    timestamp,
    key,
    hmacSignature,
    customHeaders: custom,
  });
  const sent: SentShape = {
    // The envelope itself is not kept again; one with payload.rollout added is, for replays.
    body: shape.format === "envelope" && shape.body === null && body === facts.envelopeText ? null : body,
    bodyHeaders,
    requestHeaders: maskCustomHeaders(headers, Object.keys(custom)),
  };
  return { ok: true, body, headers, signature, sent };
}
