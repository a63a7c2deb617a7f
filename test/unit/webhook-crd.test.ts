import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { crdPath, renderCrd } from "../../scripts/generate-crd.js";
import { eventTypeNames } from "../../src/event-types.js";
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
