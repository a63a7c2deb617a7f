import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { validateWebhookSpec } from "../../src/operator/api/validate-spec.js";
import { apiVersion, customResourceDefinition, kind } from "../../src/operator/api/webhook-v1alpha1.js";
import { annotationSources } from "../../src/operator/rollouts/annotations.js";
import type { KubeObject } from "../support/chart.js";
import { repoRoot } from "../support/tools.js";

// The example manifests are the first thing a user applies: the Webhook must pass the CRD's schema (as
// the API server would check it), and the objects must fit together (names, Secrets, annotations).

function readManifests(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(path.join(repoRoot, "manifests/examples", file), "utf8"))
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
}

// The CRD's structural schema, as the API server applies it; x-kubernetes-* keywords are not JSON
// Schema, hence strict: false. The CEL rule (url starts with http:// or https://) repeats the pattern.
const crdSchema = customResourceDefinition().spec.versions[0]?.schema.openAPIV3Schema;
// The CRD names the formats Kubernetes knows (date-time, int64); the API server checks those, not this test.
const validateWebhook = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(
  crdSchema ?? {},
);

const webhookManifests = readManifests("webhook.yaml");
const webhooks = webhookManifests.filter((object) => object.kind === kind);

describe("manifests/examples/webhook.yaml", () => {
  it("declares one Webhook, its Secret and its namespace", () => {
    expect(webhookManifests.map((object) => object.kind)).toEqual(["Namespace", "Secret", "Webhook"]);
    expect(webhooks[0]?.apiVersion).toBe(apiVersion);
  });

  it("validates against the CRD schema", () => {
    for (const webhook of webhooks) {
      const valid = validateWebhook(webhook);
      expect(validateWebhook.errors ?? [], webhook.metadata.name).toEqual([]);
      expect(valid).toBe(true);
    }
  });

  it("is accepted by the operator's own spec validation", () => {
    for (const webhook of webhooks) expect(validateWebhookSpec(webhook.spec)).toHaveProperty("spec");
  });

  it("the schema check is real: a broken Webhook fails it", () => {
    const broken = structuredClone(webhooks[0]) as KubeObject;
    broken.spec.url = "ftp://example.com";
    broken.spec.events = ["deployment.nope"];
    expect(validateWebhook(broken)).toBe(false);
    expect(validateWebhook.errors?.map((error) => error.instancePath)).toEqual(
      expect.arrayContaining(["/spec/url", "/spec/events/0"]),
    );
  });

  it("references a Secret and key it declares, in the Webhook's namespace", () => {
    for (const webhook of webhooks) {
      const secret = webhookManifests.find(
        (object) =>
          object.kind === "Secret" &&
          object.metadata.name === webhook.spec.secretRef.name &&
          object.metadata.namespace === webhook.metadata.namespace,
      );
      expect(secret?.stringData?.[webhook.spec.secretRef.key]).toBeTruthy();
    }
  });
});

describe("manifests/examples/receiver.yaml", () => {
  const objects = readManifests("receiver.yaml");

  it("serves the URL the example Webhook delivers to, in a namespace of its own", () => {
    const url = new URL(webhooks[0]?.spec.url);
    const [serviceName, namespace] = url.hostname.split(".");
    const service = objects.find((object) => object.kind === "Service");
    expect(service?.metadata).toMatchObject({ name: serviceName, namespace });
    expect(service?.spec.ports[0].port).toBe(Number(url.port));
    // Its own rollouts must not be delivered to it: no Webhook in its namespace.
    expect(namespace).not.toBe(webhooks[0]?.metadata.namespace);
  });

  it("verifies signatures with the same secret value as the Webhook's", () => {
    const secretOf = (manifests: KubeObject[], namespace: string, ref: { name: string; key: string }) =>
      manifests.find(
        (object) =>
          object.kind === "Secret" &&
          object.metadata.name === ref.name &&
          object.metadata.namespace === namespace,
      )?.stringData?.[ref.key];
    const deployment = objects.find((object) => object.kind === "Deployment") as KubeObject;
    const container = deployment.spec.template.spec.containers[0];
    const ref = container.env.find((e: KubeObject) => e.name === "WEBHOOK_SECRET").valueFrom.secretKeyRef;
    const webhook = webhooks[0] as KubeObject;
    expect(secretOf(objects, deployment.metadata.namespace as string, ref)).toBe(
      secretOf(webhookManifests, webhook.metadata.namespace as string, webhook.spec.secretRef),
    );
  });
});

describe("manifests/examples/deployment.yaml", () => {
  const [deployment] = readManifests("deployment.yaml");

  it("is a Deployment in the example Webhook's namespace", () => {
    expect(deployment?.kind).toBe("Deployment");
    expect(deployment?.metadata.namespace).toBe(webhooks[0]?.metadata.namespace);
  });

  it("uses only annotations the operator reads, and shows every field it reads", () => {
    const known = Object.values(annotationSources).flat() as string[];
    const ours = (annotations: Record<string, string> = {}) =>
      Object.keys(annotations).filter((key) => key.startsWith("webhook-operator.io/"));
    const used = [
      ...ours(deployment?.metadata.annotations),
      ...ours(deployment?.spec.template.metadata.annotations),
    ];
    for (const annotation of used) expect(known).toContain(annotation);
    const firstChoices = Object.values(annotationSources).map((names) => names[0]);
    expect(used.sort()).toEqual([...firstChoices].sort());
  });
});
