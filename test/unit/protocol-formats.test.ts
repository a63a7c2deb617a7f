import { HTTP } from "cloudevents";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { renderCloudEvent } from "../../src/formats/cloudevents.js";
import { customHeadersProblems } from "../../src/formats/custom-header-rules.js";
import { createEnvelope } from "../../src/formats/envelope.js";
import { signingKeyFromSecretValue } from "../../src/formats/signing-key.js";
import {
  standardWebhooksKey,
  standardWebhooksSecret,
  standardWebhooksSignature,
} from "../../src/formats/standard-webhooks.js";

// The protocol formats against their official npm libraries, and the custom header rules, without a
// service: the integration suite (webhook-formats.test.ts) sends them for real.

const envelope = createEnvelope("deployment.failed", 7, { deployment_id: 3, status: "failed" });
const body = JSON.stringify(envelope);

describe("Standard Webhooks signatures", () => {
  it.each([
    ["a plain text secret", "plain-secret"],
    ["a whsec_ secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    [
      "a Kubernetes Secret's non-UTF-8 bytes",
      signingKeyFromSecretValue(Buffer.from([0xff, 0x00, 0x80, 0x41])),
    ],
  ])("signs as the npm library does, with %s", (_name, secret) => {
    const timestamp = new Date(1_795_342_502_000);
    const expected = new Webhook(standardWebhooksSecret(secret)).sign(envelope.id, timestamp, body);
    expect(standardWebhooksSignature(secret, envelope.id, "1795342502", body)).toBe(expected);
  });

  it("maps a secret to the whsec_ form a receiver verifies with", () => {
    expect(standardWebhooksSecret("my-signing-secret")).toBe("whsec_bXktc2lnbmluZy1zZWNyZXQ=");
    expect(standardWebhooksSecret("whsec_abc=")).toBe("whsec_abc=");
    expect(standardWebhooksKey(signingKeyFromSecretValue(Buffer.from([0xff, 1])))).toEqual(
      Buffer.from([0xff, 1]),
    );
  });
});

describe("CloudEvents", () => {
  it.each(["structured", "binary"] as const)("%s mode reads back with the npm SDK", (mode) => {
    const rendered = renderCloudEvent(envelope, mode);
    const event = HTTP.toEvent({
      headers: { "content-type": rendered.contentType, ...rendered.headers },
      body: rendered.body,
    });
    expect(event).toMatchObject({
      id: envelope.id,
      type: "io.webhook-operator.deployment.failed",
      source: "/projects/7",
      subject: "deployments/3",
      time: envelope.timestamp,
      data: envelope.payload,
    });
  });
});

describe("custom header rules", () => {
  it.each([
    [{ Authorization: "Bearer value-1", "X-Api-Key": "value-2" }, []],
    [{ host: "value-3" }, [/"host" cannot be set/]],
    [{ "X-WEBHOOK-EVENT": "value-4" }, [/service's own/]],
    [{ "Webhook-Id": "value-5" }, [/Standard Webhooks/]],
    [{ "CE-Source": "value-6" }, [/CloudEvents/]],
    [{ TE: "value-7" }, [/hop-by-hop/]],
    [{ "x-a": "value-8\nbreak" }, [/printable ASCII/]],
    [{ "x-a": "value-9 é" }, [/printable ASCII/]],
  ] as [Record<string, string>, RegExp[]][])("%o", (headers, expected) => {
    const problems = customHeadersProblems(headers);
    expect(problems).toEqual(expected.map((pattern) => expect.stringMatching(pattern)));
    for (const problem of problems)
      for (const value of Object.values(headers)) expect(problem).not.toContain(value);
  });

  it.each(["__proto__", "constructor", "toString", "hasOwnProperty"])(
    "refuses %s, a name JavaScript objects hold themselves",
    (name) => {
      expect(customHeadersProblems(JSON.parse(`{"${name}": "x"}`))).toEqual([
        `header "${name}" cannot be set: it is a name JavaScript objects hold themselves`,
      ]);
    },
  );
});
