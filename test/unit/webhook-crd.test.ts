import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { crdPath, renderCrd } from "../../scripts/generate-crd.js";
import { eventTypeNames } from "../../src/event-types.js";
import { customHeadersProblems, reservedHeaderNames } from "../../src/formats/custom-header-rules.js";
import { templateLimits } from "../../src/formats/template-limits.js";
import { validateWebhookSpec } from "../../src/operator/api/validate-spec.js";

describe("Webhook CRD", () => {
  it("in crds/ is the one generated from the TypeScript definition (run npm run generate:crd)", () => {
    expect(readFileSync(crdPath, "utf8")).toBe(renderCrd());
  });

  it("lists every subscribable event name, and the status subresource", () => {
    const crd = parse(renderCrd());
    const version = crd.spec.versions[0];
    expect(version.schema.openAPIV3Schema.properties.spec.properties.events.items.enum).toEqual(
      eventTypeNames,
    );
    expect(version.subresources).toEqual({ status: {} });
    expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
      "URL",
      "Events",
      "Enabled",
      "Ready",
      "Reason",
      "Healthy",
      "Health",
      "OK 1h",
      "Failed 1h",
      "Last Delivery",
      "Age",
    ]);
  });
});

describe("validateWebhookSpec", () => {
  it("accepts a valid spec and defaults enabled to true", () => {
    expect(validateWebhookSpec({ url: "https://example.com/h", events: ["deployment.failed"] })).toEqual({
      spec: { url: "https://example.com/h", events: ["deployment.failed"], enabled: true },
    });
  });

  it("names every problem of a bad spec", () => {
    const result = validateWebhookSpec({
      url: "ftp://x",
      events: ["deployment.nope"],
      secretRef: { name: "s" },
    });
    expect("problems" in result && result.problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining("spec.url"),
        expect.stringContaining("spec.events.0 must be equal to one of the allowed values"),
        expect.stringContaining("spec.secretRef must have required property 'key'"),
      ]),
    );
  });

  it.each([
    ["credentials", "http://user:pw@x.example.com/h"],
    ["an IPv4 address in a short spelling", "http://127.1/h"],
    ["an IPv4 address as one number", "http://2130706433/h"],
    ["a fragment", "http://rcv.example#@127.0.0.1:31101/"],
  ])("refuses a url with %s as the API does, without quoting it", (_what, url) => {
    const result = validateWebhookSpec({ url, events: ["deployment.failed"] });
    expect("problems" in result).toBe(true);
    const problems = "problems" in result ? result.problems.join("; ") : "";
    expect(problems).toMatch(/^spec\.url must (be an absolute http|not have a fragment)/m);
    expect(problems).not.toContain(url);
    expect(problems).not.toContain("pw");
  });
});

describe("validateWebhookSpec, the rules across fields (the CRD's CEL rules' twins)", () => {
  const events = ["deployment.failed"];
  const url = "https://example.com/h";
  const slack = { name: "slack", key: "url" };
  const problemsOf = (spec: Record<string, unknown>) => {
    const result = validateWebhookSpec({ events, ...spec });
    return "problems" in result ? result.problems : [];
  };

  it("keeps a spec of today valid, unchanged (no format default written in)", () => {
    expect(validateWebhookSpec({ url, events })).toEqual({ spec: { url, events, enabled: true } });
  });

  it("accepts every format setting with a URL from a Secret", () => {
    expect(
      problemsOf({
        urlSecretRef: slack,
        format: "template",
        template: "{{ event }}",
        templateContentType: "text/plain",
        signatureScheme: "standard-webhooks",
        secretRef: { name: "signing", key: "secret" },
        cloudEventsMode: "binary",
        headers: [
          { name: "Authorization", valueFrom: { secretKeyRef: { name: "api", key: "token" } } },
          { name: "X-Team", value: "payments" },
        ],
      }),
    ).toEqual([]);
  });

  it.each([
    ["neither url nor urlSecretRef", {}, "spec: exactly one of url and urlSecretRef must be set"],
    [
      "both url and urlSecretRef",
      { url, urlSecretRef: slack },
      "spec: exactly one of url and urlSecretRef must be set",
    ],
    [
      "format template without a template",
      { url, format: "template" },
      "spec: template is required when format is template",
    ],
    [
      "a template with another format",
      { url, format: "slack", template: "x" },
      "spec: template is used only with format: template",
    ],
    [
      "Standard Webhooks without a signing secret",
      { url, signatureScheme: "standard-webhooks" },
      'spec: signatureScheme "standard-webhooks" needs secretRef',
    ],
    [
      "a header with value and valueFrom",
      { url, headers: [{ name: "A", value: "1", valueFrom: { secretKeyRef: slack } }] },
      "spec.headers.0: a header takes exactly one of value and valueFrom",
    ],
    [
      "a header with neither",
      { url, headers: [{ name: "A" }] },
      "spec.headers.0: a header takes exactly one of value and valueFrom",
    ],
    [
      "a header value with a line break",
      { url, headers: [{ name: "A", value: "1\r\nX-Evil: 1" }] },
      "spec.headers.0: a header value must be printable ASCII",
    ],
    [
      "header names twice, in two cases",
      {
        url,
        headers: [
          { name: "A", value: "1" },
          { name: "a", value: "2" },
        ],
      },
      "spec.headers: header names must be unique (ignoring case)",
    ],
  ])("refuses %s", (_what, spec, message) => {
    expect(problemsOf(spec)).toEqual([expect.stringContaining(message)]);
  });

  it.each([
    "Host",
    "content-length",
    "Content-Type",
    "Transfer-Encoding",
    "Connection",
    "X-Webhook-Signature",
    "x-webhook-id",
    "Webhook-Signature",
    "webhook-id",
  ])("refuses the header %s, which the request sets itself or which would pass for ours", (name) => {
    expect(problemsOf({ url, headers: [{ name, value: "1" }] })).toEqual([
      expect.stringContaining("spec.headers.0: a header may not be one the request sets itself"),
    ]);
  });

  // One list for the API and the resource: every name the API refuses, the CRD's rule refuses too.
  it.each([
    ...Object.keys(reservedHeaderNames),
    "User-Agent",
    "Expect",
    "Content-Encoding",
    "ce-id",
    "CE-Source",
    "webhook-version",
    "__proto__",
    "constructor",
    "toString",
  ])("refuses the header %s as the API does", (name) => {
    expect(customHeadersProblems({ [name]: "1" })).toHaveLength(1);
    expect(problemsOf({ url, headers: [{ name, value: "1" }] })).toEqual([
      expect.stringContaining("spec.headers.0: a header may not be one the request sets itself"),
    ]);
  });

  it("bounds names, values and templates as the API does", () => {
    const name = "X-".padEnd(65, "a");
    expect(customHeadersProblems({ [name]: "1" })).toHaveLength(1);
    expect(problemsOf({ url, headers: [{ name, value: "1" }] })).toEqual([
      expect.stringContaining("spec.headers.0.name must NOT have more than 64 characters"),
    ]);
    expect(problemsOf({ url, headers: [{ name: "X-A", value: "é" }] })).toHaveLength(1);
    const template = "x".repeat(templateLimits.sourceChars + 1);
    expect(problemsOf({ url, format: "template", template })).toEqual([
      expect.stringContaining(
        `spec.template must NOT have more than ${templateLimits.sourceChars} characters`,
      ),
    ]);
  });

  it.each([
    [
      "an unknown format",
      { url, format: "xml" },
      "spec.format must be equal to one of the allowed values (envelope, cloudevents, slack, msteams, discord, googlechat, template)",
    ],
    [
      "a header name that is no HTTP token",
      { url, headers: [{ name: "Bad Name", value: "1" }] },
      "spec.headers.0.name must match pattern",
    ],
    [
      "an unknown signature scheme",
      { url, signatureScheme: "rsa" },
      "spec.signatureScheme must be equal to one of the allowed values",
    ],
  ])("refuses %s by the schema", (_what, spec, message) => {
    expect(problemsOf(spec)).toEqual(expect.arrayContaining([expect.stringContaining(message)]));
  });

  it("never quotes a header value it refuses", () => {
    const problems = problemsOf({ url, headers: [{ name: "Authorization", value: "Bearer s3cret\n" }] });
    expect(problems.length).toBe(1);
    expect(problems.join()).not.toContain("s3cret");
  });
});

describe("docs/kubernetes.md", () => {
  // The Webhook examples a reader copies: each complete `spec:` block must pass the schema and its rules.
  const page = readFileSync("docs/kubernetes.md", "utf8");
  const specs = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((block) => parse(block[1] ?? "") as { spec?: { events?: unknown } } | null)
    .filter((document) => document?.spec?.events !== undefined)
    .map((document) => document?.spec);

  it.each(specs.map((spec, index) => [index, spec]))("Webhook example %i is a valid spec", (_index, spec) => {
    expect(validateWebhookSpec(spec)).toHaveProperty("spec");
  });

  it("shows a Slack webhook whose URL is in a Secret", () => {
    expect(specs).toContainEqual(
      expect.objectContaining({ format: "slack", urlSecretRef: expect.anything() }),
    );
  });
});
