// `webhook-operator/verify`: what a Node receiver calls to check a delivery. A leaf of the package,
// exported to users on its own: it imports nothing but node:crypto, so nothing of the service (and none
// of its dependencies) comes with it.
import { createHmac, timingSafeEqual } from "node:crypto";

/** Why a delivery was refused; `WebhookVerificationError.reason`. */
export type VerificationFailure =
  | "missing_timestamp"
  | "missing_signature"
  | "malformed_timestamp"
  | "malformed_signature"
  | "bad_signature"
  | "timestamp_too_old"
  | "timestamp_in_future"
  | "invalid_json"
  | "invalid_envelope";

export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

export type DeploymentEventType =
  | "deployment.created"
  | "deployment.ready"
  | "deployment.succeeded"
  | "deployment.failed"
  | "deployment.cancelled";

/** The payload all five deployment.* events share. */
export interface DeploymentPayload {
  deployment_id: number;
  project_id: number;
  project_name: string;
  environment: string;
  branch: string | null;
  commit_sha: string | null;
  commit_message: string | null;
  url: string | null;
  status: "pending" | "ready" | "succeeded" | "failed" | "cancelled";
  error_message: string | null;
  started_at: string | null;
  finished_at: string | null;
}

interface EnvelopeFields<T extends string, P> {
  /** The event's id (a UUID): the same in every attempt and replay of the event; deduplicate by it. */
  id: string;
  event_type: T;
  /** When the event happened (ISO 8601, UTC); a replay keeps it. */
  timestamp: string;
  project_id: number | null;
  payload: P;
}

/** Names a webhook may subscribe to that no release emits yet; their payloads are not settled. */
export type NotYetEmittedEventType =
  | "project.created"
  | "project.deleted"
  | "domain.created"
  | "domain.provisioned"
  | "email.delivered"
  | "email.bounced"
  | "email.complained";

/** The JSON body of a delivery; `event_type` tells which payload it carries. */
export type WebhookEnvelope =
  | EnvelopeFields<DeploymentEventType, DeploymentPayload>
  | EnvelopeFields<NotYetEmittedEventType, Record<string, unknown>>;

/** Node's `req.headers` (IncomingHttpHeaders), a Fetch `Headers`, or a plain object in any case. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The webhook's secret: its text, or the raw bytes of a Kubernetes Secret value. */
  secret: string | Uint8Array;
  /** The request body exactly as received: never JSON parsed and serialised again. */
  body: string | Uint8Array | ArrayBuffer;
  headers: WebhookHeaders;
  /** How far X-Webhook-Timestamp may be from this machine's clock, either way. Default 300 (5 minutes). */
  toleranceSeconds?: number;
}

const signaturePattern = /^sha256=([0-9a-f]{64})$/i;
const timestampPattern = /^\d{1,12}$/;

/**
 * Checks a delivery's signature (constant time) and the age of its timestamp, then parses the body.
 * Returns the envelope; throws WebhookVerificationError naming the check that failed. A delivery of a
 * webhook without a secret carries no signature and fails with `missing_signature`: whoever can reach
 * the URL can send such a request, so it proves nothing.
 */
export function verifyWebhook({
  secret,
  body,
  headers,
  toleranceSeconds = 300,
}: VerifyOptions): WebhookEnvelope {
  if (typeof secret === "string" ? secret === "" : !(secret instanceof Uint8Array) || secret.length === 0) {
    throw new TypeError("verifyWebhook: secret must be the webhook's non-empty secret (a string or bytes)");
  }
  if (!(toleranceSeconds >= 0)) throw new TypeError("verifyWebhook: toleranceSeconds must be 0 or more");
  const timestamp = header(headers, "x-webhook-timestamp");
  const signature = header(headers, "x-webhook-signature");
  if (timestamp === undefined) fail("missing_timestamp", "the X-Webhook-Timestamp header is missing");
  if (signature === undefined) {
    fail("missing_signature", "the X-Webhook-Signature header is missing: the delivery is unsigned");
  }
  if (!timestampPattern.test(timestamp)) {
    fail("malformed_timestamp", "X-Webhook-Timestamp must be Unix time in seconds");
  }
  const digest = signaturePattern.exec(signature)?.[1];
  if (digest === undefined) {
    fail("malformed_signature", "X-Webhook-Signature must be sha256= followed by 64 hex digits");
  }
  const bytes = bodyBytes(body);
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(bytes).digest();
  if (!timingSafeEqual(expected, Buffer.from(digest, "hex"))) {
    fail("bad_signature", "the signature does not match the body, the timestamp and the secret");
  }
  const age = Date.now() / 1000 - Number(timestamp);
  if (age > toleranceSeconds) {
    fail("timestamp_too_old", `the delivery was signed ${Math.round(age)} s ago, over ${toleranceSeconds} s`);
  }
  if (-age > toleranceSeconds) {
    fail("timestamp_in_future", `the timestamp is ${Math.round(-age)} s ahead of this clock`);
  }
  return parseEnvelope(bytes);
}

function fail(reason: VerificationFailure, message: string): never {
  throw new WebhookVerificationError(reason, `Webhook verification failed: ${message}.`);
}

/** One header's value; a header sent twice (joined with ", " by Node, or an array) is left malformed. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = name in record ? name : Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(", ") : value;
}

function bodyBytes(body: VerifyOptions["body"]): Buffer {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError(
    "verifyWebhook: body must be the raw request body (a string or bytes), not parsed JSON; " +
      'with express, use express.raw({ type: "application/json" }) on the webhook route',
  );
}

function parseEnvelope(bytes: Buffer): WebhookEnvelope {
  let envelope: unknown;
  try {
    envelope = JSON.parse(bytes.toString("utf8"));
  } catch {
    fail("invalid_json", "the body is not JSON");
  }
  const fields = envelope as Partial<Record<keyof WebhookEnvelope, unknown>> | null;
  if (
    typeof fields !== "object" ||
    fields === null ||
    typeof fields.id !== "string" ||
    typeof fields.event_type !== "string" ||
    typeof fields.payload !== "object" ||
    fields.payload === null
  ) {
    fail("invalid_envelope", "the body is not an event envelope (id, event_type, payload)");
  }
  return envelope as WebhookEnvelope;
}
