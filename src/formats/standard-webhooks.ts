import { createHmac } from "node:crypto";
import { hmacKey } from "./signing-key.js";

// Standard Webhooks v1 signatures (docs/formats.md, Standard Webhooks): `webhook-id`, `webhook-timestamp`
// and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. The id is the event's
// (the envelope id): the same for every attempt, retry and replay of an event, as the scheme's
// idempotency key must be.

const secretPrefix = "whsec_";

/**
 * The HMAC key a webhook secret stands for. A secret written the scheme's way (`whsec_` + base64 of the
 * key, as its libraries generate) is that key's bytes, so a secret made for a Standard Webhooks receiver
 * is pasted as it is. Any other secret is its own bytes (a Kubernetes Secret's raw bytes included), and
 * the receiver's secret is then `whsec_` + base64 of them (standardWebhooksSecret).
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(secretPrefix)) return Buffer.from(secret.slice(secretPrefix.length), "base64");
  const key = hmacKey(secret);
  return typeof key === "string" ? Buffer.from(key, "utf8") : key;
}

/** The secret a Standard Webhooks library verifies with, for a webhook secret. */
export function standardWebhooksSecret(secret: string): string {
  return secret.startsWith(secretPrefix)
    ? secret
    : secretPrefix + standardWebhooksKey(secret).toString("base64");
}

/** `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` under the secret's key. */
export function standardWebhooksSignature(
  secret: string,
  id: string,
  timestamp: string,
  body: string,
): string {
  const mac = createHmac("sha256", standardWebhooksKey(secret));
  return `v1,${mac.update(id).update(".").update(timestamp).update(".").update(body).digest("base64")}`;
}
