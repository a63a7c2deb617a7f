import type { V1Secret } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { ConfigurationProblem } from "../../src/operator/controllers/configuration-problem.js";
import {
  allowWebhooksLabel,
  openToWebhooks,
  optedInSecrets,
  requireOptIn,
} from "../../src/operator/controllers/secret-opt-in.js";

// Which Secrets the Webhooks of a namespace may use: those labelled, and those the operator's setting
// lists. The cluster suite (test/cluster/secret-opt-in.test.ts) proves the same against a real API server.

const secret = (labels?: Record<string, string>): V1Secret => ({
  metadata: { name: "api", namespace: "shop", labels },
  data: { token: Buffer.from("Bearer s3cr3t-value").toString("base64") },
});

describe("openToWebhooks", () => {
  it.each([
    ["the label true", { [allowWebhooksLabel]: "true" }, [], true],
    ["no label", undefined, [], false],
    ["the label with another value", { [allowWebhooksLabel]: "yes" }, [], false],
    ["another label only", { "app.kubernetes.io/name": "api" }, [], false],
    ["no label, listed by name", undefined, ["shop/api"], true],
    ["no label, its namespace listed", undefined, ["shop/*"], true],
    ["no label, every Secret listed (*)", undefined, ["*"], true],
    ["no label, another Secret listed", undefined, ["shop/api-2", "shop/ap"], false],
    ["no label, another namespace listed", undefined, ["team-a/*", "team-a/api"], false],
  ])("%s: %s", (_case, labels, withoutLabel, open) => {
    expect(openToWebhooks(secret(labels), "shop", "api", withoutLabel)).toBe(open);
  });
});

describe("optedInSecrets", () => {
  it("refuses a Secret that did not opt in, naming it and the label, never quoting a value", async () => {
    const get = optedInSecrets(async () => secret(), "shop", []);
    const error = await get("api").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigurationProblem);
    expect(error).toMatchObject({ reason: "SecretNotOptedIn" });
    expect((error as Error).message).toContain(
      `Secret shop/api is not open to Webhooks, so the operator does not use it: label it ${allowWebhooksLabel}=true (kubectl -n shop label secret api ${allowWebhooksLabel}=true)`,
    );
    expect((error as Error).message).not.toContain("s3cr3t");
  });

  it("names every Secret that has not opted in at once, leaving out the open and the missing ones", async () => {
    const secrets: Record<string, V1Secret> = {
      signing: secret(),
      api: secret({ [allowWebhooksLabel]: "true" }),
      url: secret(),
      listed: secret(),
    };
    const error = await requireOptIn(
      async (name) => secrets[name],
      "shop",
      ["signing", "api", "missing", "url", "signing", "listed"],
      ["shop/listed"],
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ reason: "SecretNotOptedIn" });
    expect((error as Error).message).toBe(
      `Secrets shop/signing, shop/url are not open to Webhooks, so the operator does not use them: label them ${allowWebhooksLabel}=true (kubectl -n shop label secret signing url ${allowWebhooksLabel}=true) if the authors of this namespace's Webhooks may send what they hold.`,
    );
    await expect(
      requireOptIn(async (name) => secrets[name], "shop", ["api", "missing", "listed"], ["shop/listed"]),
    ).resolves.toBeUndefined();
  });

  it("hands over an opted-in Secret, and a missing one as missing", async () => {
    const labelled = secret({ [allowWebhooksLabel]: "true" });
    expect(await optedInSecrets(async () => labelled, "shop", [])("api")).toBe(labelled);
    expect(await optedInSecrets(async () => undefined, "shop", [])("api")).toBeUndefined();
  });
});
