import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { signPayload } from "../../src/delivery-engine/sender.js";
import type { DeploymentPayload as ServicePayload } from "../../src/deployments/payload.js";
import { createEnvelope } from "../../src/formats/envelope.js";
import { hmacKey, signingKeyFromSecretValue } from "../../src/formats/signing-key.js";
import {
  type DeploymentPayload,
  type VerificationFailure,
  verifyWebhook,
  WebhookVerificationError,
} from "../../src/verify.js";

// webhook-operator/verify against the service's own signer (sender.ts). The receivers' test
// (test/integration/receivers.test.ts) runs it, and the Python and Go recipes, against real deliveries.

const secret = "s3cret";
const body = JSON.stringify(
  createEnvelope("deployment.succeeded", 1, { deployment_id: 7, status: "succeeded", environment: "prod" }),
);
const now = () => String(Math.floor(Date.now() / 1000));
const signedHeaders = (timestamp = now(), text = body, key = secret) => ({
  "x-webhook-timestamp": timestamp,
  "x-webhook-signature": signPayload(key, timestamp, text),
});

function failureOf(run: () => unknown): VerificationFailure | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return undefined;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("verifyWebhook", () => {
  it("returns the envelope of a delivery signed by the service, whatever form body and headers take", () => {
    const headers = signedHeaders();
    const forms = [
      { body, headers },
      { body: Buffer.from(body), headers },
      { body: new TextEncoder().encode(body).buffer, headers: new Headers(headers) },
      // Plain objects of any case, as some frameworks hand them over.
      {
        body,
        headers: {
          "X-Webhook-Timestamp": headers["x-webhook-timestamp"],
          "X-WEBHOOK-SIGNATURE": headers["x-webhook-signature"],
        },
      },
    ];
    for (const form of forms) {
      expect(verifyWebhook({ secret, ...form })).toEqual(JSON.parse(body));
    }
  });

  it("verifies with the bytes of a Kubernetes Secret that is not text", () => {
    const bytes = Buffer.from([0xff, 0x00, 0x80, 0x41]);
    const timestamp = now();
    const signature = signPayload(signingKeyFromSecretValue(bytes), timestamp, body);
    expect(hmacKey(signingKeyFromSecretValue(bytes))).toEqual(bytes);
    const headers = { "x-webhook-timestamp": timestamp, "x-webhook-signature": signature };
    expect(verifyWebhook({ secret: bytes, body, headers }).id).toBe(JSON.parse(body).id);
  });

  it.each([
    {
      reason: "missing_timestamp",
      headers: { "x-webhook-signature": signedHeaders()["x-webhook-signature"] },
    },
    { reason: "missing_signature", headers: { "x-webhook-timestamp": now() } },
    { reason: "malformed_timestamp", headers: { ...signedHeaders(), "x-webhook-timestamp": "1.5e9" } },
    { reason: "malformed_signature", headers: { ...signedHeaders(), "x-webhook-signature": "sha1=abc" } },
    // A header sent twice (Node joins the values with ", ") is not a signature.
    {
      reason: "malformed_signature",
      headers: {
        ...signedHeaders(),
        "x-webhook-signature": [signedHeaders()["x-webhook-signature"], "sha256=00"],
      },
    },
    { reason: "bad_signature", headers: signedHeaders(now(), body, "another secret") },
    { reason: "bad_signature", headers: signedHeaders(now(), body.replace("prod", "test")) },
    {
      reason: "bad_signature",
      headers: { ...signedHeaders(), "x-webhook-timestamp": String(Number(now()) - 1) },
    },
  ] as { reason: VerificationFailure; headers: Record<string, string | string[]> }[])(
    "throws $reason",
    ({ reason, headers }) => {
      expect(failureOf(() => verifyWebhook({ secret, body, headers }))).toBe(reason);
    },
  );

  it("refuses a body parsed and serialised again (the signature covers the bytes received)", () => {
    const spaced = JSON.stringify(JSON.parse(body), null, 2);
    expect(failureOf(() => verifyWebhook({ secret, body: spaced, headers: signedHeaders() }))).toBe(
      "bad_signature",
    );
  });

  it("checks the timestamp's age both ways: 5 minutes by default, or toleranceSeconds", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-25T12:00:00Z"));
    const at = (offsetSeconds: number) => String(Math.floor(Date.now() / 1000) + offsetSeconds);
    const check = (offset: number, toleranceSeconds?: number) =>
      failureOf(() => verifyWebhook({ secret, body, headers: signedHeaders(at(offset)), toleranceSeconds }));
    expect(check(-300)).toBeUndefined();
    expect(check(-301)).toBe("timestamp_too_old");
    expect(check(300)).toBeUndefined();
    expect(check(301)).toBe("timestamp_in_future");
    expect(check(-3600, 3600)).toBeUndefined();
    expect(check(-61, 60)).toBe("timestamp_too_old");
  });

  it.each([
    { reason: "invalid_json", text: "{" },
    { reason: "invalid_envelope", text: "null" },
    { reason: "invalid_envelope", text: '{"id":"x","event_type":"deployment.failed","payload":null}' },
  ] as { reason: VerificationFailure; text: string }[])(
    "throws $reason for a signed $text",
    ({ reason, text }) => {
      expect(
        failureOf(() => verifyWebhook({ secret, body: text, headers: signedHeaders(now(), text) })),
      ).toBe(reason);
    },
  );

  it("is an Error with a message saying what failed, and never the secret", () => {
    const error = (() => {
      try {
        verifyWebhook({ secret, body, headers: signedHeaders(now(), body, "wrong") });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: "WebhookVerificationError",
      reason: "bad_signature",
      message:
        "Webhook verification failed: the signature does not match the body, the timestamp and the secret.",
    });
    expect(String(error)).not.toContain(secret);
  });

  it("refuses misuse with a TypeError: no secret, a parsed body, a negative tolerance", () => {
    const headers = signedHeaders();
    expect(() => verifyWebhook({ secret: "", body, headers })).toThrow(TypeError);
    expect(() => verifyWebhook({ secret, body: JSON.parse(body), headers })).toThrow(/express\.raw/);
    expect(() => verifyWebhook({ secret, body, headers, toleranceSeconds: -1 })).toThrow(TypeError);
  });

  it("types the payload as the service builds it", () => {
    expectTypeOf<DeploymentPayload>().toEqualTypeOf<ServicePayload>();
  });
});
