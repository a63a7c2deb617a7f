import { createHmac } from "node:crypto";
import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import type { Dispatcher } from "undici";
import { hmacKey } from "../formats/signing-key.js";
import { deliveryHeaders } from "./delivery-headers.js";
import type { DeliveryShape } from "./delivery-shape.js";
import { DestinationRefusedError } from "./destination-policy.js";
import { pausingStatuses } from "./retry-after.js";
import { prepareShapedSend, type SentShape } from "./shaped-send.js";

// Required, not imported: importing "node:http" as an ES module reads every export of http, and its lazy
// WebSocket loads Node's bundled undici (about 10 MiB resident) that the engine never uses.
const { STATUS_CODES } = createRequire(import.meta.url)("node:http") as typeof import("node:http");

export interface OutboundDelivery {
  url: string;
  /** The envelope JSON text, sent byte for byte. */
  body: string;
  eventType: string;
  deliveryId: number | string;
  /** The webhook's secret as stored (sealed); opened only to sign. */
  secret: string | null;
  /** Its format, signature scheme and custom headers when not the default (delivery-shape.ts). */
  shape?: DeliveryShape | null;
}

export interface DeliveryOutcome {
  success: boolean;
  /** The receiver's HTTP status, or 0 when no response was obtained. */
  statusCode: number;
  /** The response body, decoded as UTF-8 and truncated to the configured limit. */
  responseBody: string;
  errorMessage: string | null;
  /** Why it failed, for metrics; null on success. */
  failure: FailureKind | null;
  durationMs: number;
  /** X-Webhook-Timestamp as sent (Unix seconds); null when no request was made (refused). */
  requestTimestamp: number | null;
  /** X-Webhook-Signature as sent; null when unsigned or when no request was made. */
  signature: string | null;
  /** A shaped delivery's request as sent, kept with its record (shaped-send.ts). */
  shaped?: SentShape;
  /** The Retry-After header of a 429 or 503 answer (retry-after.ts). */
  retryAfter?: string;
}

/** `render`: the webhook's format could not make a body of the event; nothing was sent. */
export type FailureKind = "http" | "timeout" | "connection" | "refused" | "render";

/** `sha256=` + hex HMAC-SHA256 of `<timestamp>.<body>` (docs/api.md, "What a receiver gets"). */
export function signPayload(secret: string, timestamp: string, body: string): string {
  // Fed in three parts, which is the same message without building "<timestamp>.<body>" in memory.
  return `sha256=${createHmac("sha256", hmacKey(secret)).update(timestamp).update(".").update(body).digest("hex")}`;
}

// The failure messages docs/api.md lists for delivery records. The url is the webhook's own URL; secrets never appear here.
export const connectionFailedMessage = (url: string): string =>
  `Connection failed to ${url}. The receiver may not be running, the URL may be wrong, or the endpoint may not be listening on the right port.`;

export const timeoutMessage = (url: string, timeoutMs: number): string =>
  `Request timeout after ${timeoutMs / 1000} seconds. The endpoint ${url} did not respond in time; check that the receiver responds quickly.`;

export const httpErrorMessage = (url: string, status: number): string =>
  `HTTP ${status} error from ${url}: ${STATUS_CODES[status] ?? "Unknown Status"}. The endpoint rejected the request.`;

export const destinationRefusedMessage = (url: string, reason: string): string =>
  `Destination refused for ${url}: ${reason}.`;

/** The DestinationRefusedError behind an undici error, looking through `cause` and AggregateError. */
function findRefusal(err: unknown, depth = 0): DestinationRefusedError | null {
  if (err instanceof DestinationRefusedError) return err;
  if (!(err instanceof Error) || depth > 5) return null;
  const inner = [err.cause, ...(err instanceof AggregateError ? err.errors : [])];
  for (const candidate of inner) {
    const found = findRefusal(candidate, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * Reads at most `limitBytes` of the body. A body whose Content-Length is within the limit (the usual
 * short answer) is read whole; any other is streamed and cut at the limit, and the rest is discarded
 * by destroying the stream. What was read before an error stays in `into`.
 */
async function readLimited(response: Dispatcher.ResponseData, limitBytes: number, into: string[]) {
  if (Number(response.headers["content-length"]) <= limitBytes) {
    into.push(await response.body.text());
    return;
  }
  const decoder = new TextDecoder("utf-8");
  let remaining = limitBytes;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    const part = chunk.length > remaining ? chunk.subarray(0, remaining) : chunk;
    remaining -= part.length;
    // stream: true holds back a multi-byte character cut by the limit instead of emitting U+FFFD.
    into.push(decoder.decode(part, { stream: true }));
    // Leaving the loop destroys the rest of the body (and its socket) instead of reading it all.
    if (part.length < chunk.length) break;
  }
}

/**
 * A webhook URL as undici's dispatcher takes it, parsed once per distinct URL (undici.request(url)
 * parses the string again for every request). Webhook URLs are few and reused; the cache is bounded.
 */
const targets = new Map<string, { origin: string; path: string }>();
function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (!target) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= 10_000) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/** Opens a webhook's stored (sealed) secret; throws, saying why, when it cannot. */
export type OpenSecret = (sealed: string) => string;

// Opening a sealed secret (AES-256-GCM) costs about 15 µs, as much as a third of what the engine
// spends on a delivery: each is opened once and kept, by its sealed text (a changed or re-encrypted
// secret is a new entry), as many as there are active webhooks, the map cleared past 10,000. Kept per
// sender, so per set of keys: a service started with other keys has a sender of its own.
function openOnce(open: OpenSecret): OpenSecret {
  const opened = new Map<string, string>();
  return (sealed) => {
    let secret = opened.get(sealed);
    if (secret === undefined) {
      secret = open(sealed);
      if (opened.size >= 10_000) opened.clear();
      opened.set(sealed, secret);
    }
    return secret;
  };
}

/**
 * One send's state, kept in an object the outcome is made from, so that a send creates no functions of
 * its own: each was a closure per delivery.
 */
interface Exchange {
  url: string;
  started: number;
  statusCode: number;
  /** The two headers computed at send time, kept with the outcome so the record shows them as sent. */
  sent: { timestamp: number; signature: string | null } | null;
  /** A shaped delivery's request, once built. */
  shaped: DeliveryOutcome["shaped"];
  retryAfter: string | undefined;
  bodyParts: string[];
  timedOut: boolean;
  /**
   * The request's abort signal, an EventEmitter (undici takes one as well as an AbortSignal): an
   * AbortController and the EventTarget listener undici adds to it cost about 1 µs more per send.
   */
  deadline: EventEmitter;
}

function abortAtDeadline(exchange: Exchange): void {
  exchange.timedOut = true;
  exchange.deadline.emit("abort");
}

function outcomeOf(
  exchange: Exchange,
  failure: FailureKind | null,
  errorMessage: string | null,
): DeliveryOutcome {
  const { sent } = exchange;
  return {
    success: failure === null,
    failure,
    statusCode: exchange.statusCode,
    // Postgres text cannot hold NUL; a receiver's binary answer is stored without those bytes.
    responseBody: exchange.bodyParts.join("").replaceAll("\u0000", ""),
    errorMessage,
    durationMs: Math.round(performance.now() - exchange.started),
    requestTimestamp: failure === "refused" ? null : (sent?.timestamp ?? null),
    signature: failure === "refused" ? null : (sent?.signature ?? null),
    ...(exchange.shaped === undefined ? {} : { shaped: exchange.shaped }),
    ...(exchange.retryAfter === undefined ? {} : { retryAfter: exchange.retryAfter }),
  };
}

function answered(exchange: Exchange): DeliveryOutcome {
  const { statusCode } = exchange;
  return statusCode >= 200 && statusCode <= 299
    ? outcomeOf(exchange, null, null)
    : outcomeOf(exchange, "http", httpErrorMessage(exchange.url, statusCode));
}

/** The User-Agent of every delivery (previews show it too). */
export const defaultUserAgent = "webhook-operator";

export function createSender(opts: {
  dispatcher: Dispatcher;
  timeoutMs: number;
  responseBodyLimitBytes: number;
  /** Opens the stored secrets the sender signs with (the secret keys, handed in by the service). */
  openSecret: OpenSecret;
  userAgent?: string;
}): (delivery: OutboundDelivery) => Promise<DeliveryOutcome> {
  const userAgent = opts.userAgent ?? defaultUserAgent;
  const openSecret = openOnce(opts.openSecret);

  return async function send(d) {
    const exchange: Exchange = {
      url: d.url,
      started: performance.now(),
      statusCode: 0,
      sent: null,
      shaped: undefined,
      retryAfter: undefined,
      bodyParts: [],
      timedOut: false,
      deadline: new EventEmitter(),
    };
    // One deadline over the whole exchange: connecting, any number of 1xx answers, the head and the
    // body. undici's own headersTimeout restarts on every 1xx (a receiver streaming `102 Processing`
    // held a send for minutes), so it is not used; aborting the request ends it wherever it is.
    const deadlineTimer = setTimeout(abortAtDeadline, opts.timeoutMs, exchange);

    try {
      const timestamp = Math.floor(Date.now() / 1000);
      let key: string | null = null;
      try {
        key = d.secret === null ? null : openSecret(d.secret);
      } catch (error) {
        // Nothing is sent: a secret this replica cannot open must not go out unsigned.
        return outcomeOf(
          exchange,
          "refused",
          `Not sent: the webhook secret cannot be decrypted; ${(error as Error).message}.`,
        );
      }
      let body = d.body;
      let headers: Record<string, string>;
      if (d.shape) {
        const prepared = await prepareShapedSend({
          shape: d.shape,
          envelopeText: d.body,
          eventType: d.eventType,
          deliveryId: d.deliveryId,
          timestamp,
          key,
          openSecret,
          sign: signPayload,
        });
        if (!prepared.ok) return outcomeOf(exchange, prepared.failure, prepared.message);
        ({ body, headers } = prepared);
        exchange.sent = { timestamp, signature: prepared.signature };
        exchange.shaped = prepared.sent;
      } else {
        const signature = key === null ? null : signPayload(key, String(timestamp), d.body);
        exchange.sent = { timestamp, signature };
        headers = deliveryHeaders({
          eventType: d.eventType,
          deliveryId: d.deliveryId,
          timestamp,
          signature,
        });
      }
      headers["User-Agent"] = userAgent;

      // The dispatcher never follows redirects, so a 3xx is answered like any other non-2xx.
      const response = await opts.dispatcher.request({
        ...targetOf(d.url),
        method: "POST",
        body,
        headers,
        signal: exchange.deadline,
      });
      exchange.statusCode = response.statusCode;
      const retryAfter = pausingStatuses.has(response.statusCode)
        ? response.headers["retry-after"]
        : undefined;
      if (typeof retryAfter === "string") exchange.retryAfter = retryAfter;
      await readLimited(response, opts.responseBodyLimitBytes, exchange.bodyParts);
      return answered(exchange);
    } catch (err) {
      if (exchange.timedOut) return outcomeOf(exchange, "timeout", timeoutMessage(d.url, opts.timeoutMs));
      const refused = findRefusal(err);
      if (refused) return outcomeOf(exchange, "refused", destinationRefusedMessage(d.url, refused.reason));
      // The receiver answered with a status and then broke off its body: the status stands.
      if (exchange.statusCode !== 0) return answered(exchange);
      return outcomeOf(exchange, "connection", connectionFailedMessage(d.url));
    } finally {
      clearTimeout(deadlineTimer);
    }
  };
}
