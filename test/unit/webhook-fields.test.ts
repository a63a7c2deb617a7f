import type { V1Secret } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { checkTemplate } from "../../src/formats/template.js";
import { validateWebhookSpec } from "../../src/operator/api/validate-spec.js";
import type { WebhookSpec } from "../../src/operator/api/webhook-v1alpha1.js";
import { ConfigurationProblem } from "../../src/operator/controllers/configuration-problem.js";
import { fieldSecretNames, webhookFieldsFromSpec } from "../../src/operator/controllers/webhook-fields.js";

// A Webhook resource's spec as the service's webhook fields, with the Secrets of its namespace as the
// API server hands them over (values base64 in `data`).

const slackUrl = "https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX";
const secrets: Record<string, Record<string, string>> = {
  slack: { url: `${slackUrl}\n` },
  api: { token: "Bearer abc.def", broken: "one\ntwo\nthree", binary: "\u0000" },
  bad: { url: "http://user:pw@hooks.example.com/x", file: "ftp://hooks.example.com/x" },
};
const getSecret = async (name: string): Promise<V1Secret | undefined> => {
  const values = secrets[name];
  if (!values) return undefined;
  const data = Object.fromEntries(
    Object.entries(values).map(([key, value]) => [
      key,
      key === "binary" ? Buffer.from([0xff, 0xfe]).toString("base64") : Buffer.from(value).toString("base64"),
    ]),
  );
  return { metadata: { name }, data };
};

function validSpec(spec: Record<string, unknown>): WebhookSpec {
  const result = validateWebhookSpec({ events: ["deployment.succeeded"], ...spec });
  if ("problems" in result) throw new Error(result.problems.join("; "));
  return result.spec;
}

async function problemOf(spec: WebhookSpec): Promise<ConfigurationProblem> {
  const error = await webhookFieldsFromSpec(spec, "shop", getSecret).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ConfigurationProblem);
  return error as ConfigurationProblem;
}

describe("webhookFieldsFromSpec", () => {
  it("gives a spec of today the API's defaults: envelope, hmac-sha256, no headers", async () => {
    const fields = await webhookFieldsFromSpec(
      validSpec({ url: "https://h.example.com/x" }),
      "shop",
      getSecret,
    );
    expect(fields).toEqual({
      url: "https://h.example.com/x",
      format: "envelope",
      cloudevents_mode: "structured",
      template: null,
      template_content_type: "application/json",
      signature_scheme: "hmac-sha256",
      headers: null,
      filters: null,
      rollout_details: false,
    });
  });

  it("carries every format setting, the URL from its Secret (trimmed) and header values from both sources", async () => {
    const spec = validSpec({
      urlSecretRef: { name: "slack", key: "url" },
      format: "template",
      template: '{"text": "{{ event }}"}',
      templateContentType: "text/plain",
      cloudEventsMode: "binary",
      signatureScheme: "standard-webhooks",
      secretRef: { name: "signing", key: "secret" },
      rolloutDetails: true,
      headers: [
        { name: "Authorization", valueFrom: { secretKeyRef: { name: "api", key: "token" } } },
        { name: "X-Team", value: "payments" },
      ],
    });
    expect(fieldSecretNames(spec)).toEqual(["api", "slack"]);
    expect(await webhookFieldsFromSpec(spec, "shop", getSecret)).toEqual({
      url: slackUrl,
      format: "template",
      cloudevents_mode: "binary",
      template: '{"text": "{{ event }}"}',
      template_content_type: "text/plain",
      signature_scheme: "standard-webhooks",
      headers: { Authorization: "Bearer abc.def", "X-Team": "payments" },
      filters: null,
      rollout_details: true,
    });
  });

  it("carries spec.filters in the API's form and shape", async () => {
    const spec = validSpec({
      url: "https://h.example.com/x",
      filters: {
        labelSelector: {
          matchLabels: { app: "payments" },
          matchExpressions: [{ key: "canary", operator: "DoesNotExist" }],
        },
        environments: ["production", "production"],
        kinds: ["Deployment"],
      },
    });
    expect((await webhookFieldsFromSpec(spec, "shop", getSecret)).filters).toEqual({
      label_selector: {
        match_labels: { app: "payments" },
        match_expressions: [{ key: "canary", operator: "DoesNotExist" }],
      },
      environments: ["production"],
      kinds: ["Deployment"],
    });
  });

  it("reports a label key the API refuses as InvalidFilters, in the resource's spelling", async () => {
    const problem = await problemOf(
      validSpec({
        url: "https://h.example.com/x",
        filters: { labelSelector: { matchLabels: { "-app": "x" } } },
      }),
    );
    expect(problem.reason).toBe("InvalidFilters");
    expect(problem.message).toContain('spec.filters.labelSelector.matchLabels key "-app" is not a label key');
  });

  it.each([
    [{}, "must NOT have fewer than 1 properties"],
    [{ kinds: ["Pod"] }, "spec.filters.kinds.0 must be equal to one of the allowed values"],
    [{ labelSelector: {} }, "spec.filters.labelSelector must NOT have fewer than 1 properties"],
    [{ environments: [] }, "spec.filters.environments must NOT have fewer than 1 items"],
  ])("refuses spec.filters %j by the CRD's schema", (filters, message) => {
    const result = validateWebhookSpec({
      url: "https://h.example.com/x",
      events: ["deployment.succeeded"],
      filters,
    });
    expect("problems" in result && result.problems.join("; ")).toContain(message);
  });

  it.each([
    [
      "a missing url Secret",
      { urlSecretRef: { name: "gone", key: "url" } },
      "SecretNotFound",
      "Secret shop/gone does not exist (spec.urlSecretRef).",
    ],
    [
      "a missing url key",
      { urlSecretRef: { name: "slack", key: "nope" } },
      "SecretKeyNotFound",
      "Secret shop/slack has no key 'nope' (spec.urlSecretRef).",
    ],
    [
      "a missing header Secret",
      {
        url: "https://h.example.com/x",
        headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "gone", key: "t" } } }],
      },
      "SecretNotFound",
      "Secret shop/gone does not exist (spec.headers Authorization).",
    ],
    [
      "a header key missing",
      {
        url: "https://h.example.com/x",
        headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "api", key: "nope" } } }],
      },
      "SecretKeyNotFound",
      "Secret shop/api has no key 'nope' (spec.headers Authorization).",
    ],
  ])("refuses %s with a reason naming the Secret and key", async (_what, spec, reason, message) => {
    const problem = await problemOf(validSpec(spec));
    expect(problem.reason).toBe(reason);
    expect(problem.message).toBe(message);
  });

  it.each([
    ["credentials", "url", "must be an absolute http:// or https:// URL without credentials"],
    ["another scheme", "file", "must be an absolute http:// or https:// URL"],
  ])("refuses a URL from a Secret with %s like spec.url, never quoting it", async (_what, key, expected) => {
    const problem = await problemOf(validSpec({ urlSecretRef: { name: "bad", key } }));
    expect(problem.reason).toBe("InvalidSecretValue");
    expect(problem.message).toContain(
      `The URL in Secret shop/bad key '${key}' (spec.urlSecretRef) ${expected}`,
    );
    expect(problem.message).not.toContain("hooks.example.com");
    expect(problem.message).not.toContain("pw");
  });

  it.each([
    ["line breaks", "broken"],
    ["bytes that are not UTF-8", "binary"],
  ])("refuses a header value from a Secret with %s, never quoting it", async (_what, key) => {
    const spec = validSpec({
      url: "https://h.example.com/x",
      headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "api", key } } }],
    });
    const problem = await problemOf(spec);
    expect(problem.reason).toBe("InvalidSecretValue");
    expect(problem.message).toContain(`Secret shop/api key '${key}' (spec.headers Authorization)`);
    expect(problem.message).not.toContain("three");
  });
});

describe("webhookFieldsFromSpec with the template format's parser", () => {
  // The parser the controller hands in: formats/template.ts, whose errors carry the line.

  it("refuses a template that does not parse with InvalidTemplate naming the line", async () => {
    const spec = validSpec({ url: "https://h.example.com/x", format: "template", template: "ok\n{% if %}" });
    const error = await webhookFieldsFromSpec(spec, "shop", getSecret, checkTemplate).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      reason: "InvalidTemplate",
      message: expect.stringMatching(/^spec\.template does not parse: Line 2: /),
    });
  });

  it("passes a template that parses", async () => {
    const spec = validSpec({
      url: "https://h.example.com/x",
      format: "template",
      template: "{{ event.event_type }}",
    });
    expect((await webhookFieldsFromSpec(spec, "shop", getSecret, checkTemplate)).template).toBe(
      "{{ event.event_type }}",
    );
  });
});
