import { createHmac, timingSafeEqual } from "node:crypto";

// What the example receiver (manifests/examples/receiver.yaml) logs for each delivery, read back from
// `kubectl logs`, and the signature checked again here, independently of the receiver's own verdict.

export interface LoggedDelivery {
  event: string;
  delivery: string;
  /** The receiver's verdict: "valid" or "INVALID". */
  signature: string;
  timestamp: string;
  signature_header: string;
  /** The raw request body, byte for byte as received. */
  body: string;
}

export interface DeploymentEvent {
  id: string;
  event_type: string;
  payload: { deployment_id: number; status: string; commit_sha: string | null; url: string | null };
}

export function deliveriesIn(log: string): LoggedDelivery[] {
  return log.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return []; // "webhook receiver listening on :8080"
    const value = JSON.parse(line) as Partial<LoggedDelivery>;
    return typeof value.event === "string" && typeof value.body === "string" ? [value as LoggedDelivery] : [];
  });
}

export const eventOf = (delivery: LoggedDelivery) => JSON.parse(delivery.body) as DeploymentEvent;

/** X-Webhook-Signature is sha256= + hex HMAC-SHA256 of "<X-Webhook-Timestamp>.<body>" with the secret. */
export function signedWith(secret: string, delivery: LoggedDelivery): boolean {
  const expected = `sha256=${createHmac("sha256", secret).update(`${delivery.timestamp}.${delivery.body}`).digest("hex")}`;
  return (
    expected.length === delivery.signature_header.length &&
    timingSafeEqual(Buffer.from(expected), Buffer.from(delivery.signature_header))
  );
}
