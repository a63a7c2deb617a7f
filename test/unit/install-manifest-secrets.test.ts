import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { type KubeObject, podSpecs } from "../support/chart.js";
import { repoRoot } from "../support/tools.js";

// `kubectl apply -f manifests/install.yaml` starts only when the Secrets it mounts exist with the keys
// it reads: the install steps (docs/kubernetes.md, and the manifest's own header) must create exactly
// those, no more and no fewer.

const manifest = readFileSync(path.join(repoRoot, "manifests/install.yaml"), "utf8");

/** Secret name → the keys the manifest's pods read from it (volumes and environment). */
function secretsTheManifestReads(): Record<string, string[]> {
  const objects = parseAllDocuments(manifest)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
  const reads: Record<string, Set<string>> = {};
  const add = (name: string, key: string) => {
    reads[name] ??= new Set();
    reads[name].add(key);
  };
  for (const { spec } of podSpecs(objects)) {
    for (const volume of spec.volumes ?? []) {
      for (const item of volume.secret?.items ?? []) add(volume.secret.secretName, item.key);
    }
    for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
      for (const variable of container.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        if (ref) add(ref.name, ref.key);
      }
    }
  }
  return Object.fromEntries(Object.entries(reads).map(([name, keys]) => [name, [...keys].sort()]));
}

/** Secret name → keys, from the `kubectl create secret generic` commands of a shell text. */
function secretsCreatedBy(commands: string): Record<string, string[]> {
  const created: Record<string, string[]> = {};
  for (const command of commands.replace(/\\\n\s*/g, " ").split("\n")) {
    const name = /create secret generic (\S+)/.exec(command)?.[1];
    if (name)
      created[name] = [...command.matchAll(/--from-literal=([^=]+)=/g)].map((m) => m[1] as string).sort();
  }
  return created;
}

describe("the Secrets of the kubectl install", () => {
  const needed = secretsTheManifestReads();

  it("are four: the API key, the Postgres password and its URL, the secret encryption key, the metrics token", () => {
    expect(needed).toEqual({
      "webhook-operator-api-key": ["api-key"],
      "webhook-operator-metrics-token": ["token"],
      "webhook-operator-postgres": ["database-url", "password"],
      "webhook-operator-secret-keys": ["keys"],
    });
  });

  it("are exactly those the steps in docs/kubernetes.md create", () => {
    const page = readFileSync(path.join(repoRoot, "docs/kubernetes.md"), "utf8");
    const section = page.split("## Install with kubectl (no helm)")[1]?.split("\n## ")[0] ?? "";
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    expect(block).toContain("kubectl apply --server-side -f manifests/install.yaml");
    expect(secretsCreatedBy(block)).toEqual(needed);
  });

  it("are exactly those the manifest's header creates", () => {
    const header = manifest
      .split("\n---")[0]
      ?.split("\n")
      .map((line) => line.replace(/^#\s?/, ""))
      .join("\n");
    expect(secretsCreatedBy(header ?? "")).toEqual(needed);
  });
});
