import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { crdPath, renderCrd } from "../../scripts/generate-crd.js";
import { validateWebhookSpec } from "../../src/operator/api/validate-spec.js";
import { eventTypeNames } from "../../src/webhooks/event-types.js";

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
});
