import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  type KubeObject,
  kindsOf,
  needing,
  only,
  productionValues,
  templateChart,
} from "../support/chart.js";
import { chartDir } from "../support/monitoring-files.js";
import { locateHelm, locateKubernetesValidate, repoRoot, run } from "../support/tools.js";

// What gets applied to a cluster besides the chart's own checks: every rendered object and example
// against the Kubernetes API schemas, the CRD copy in the chart, and manifests/install.yaml (rendered
// from the chart by scripts/render-manifests.sh) kept up to date.

const helm = locateHelm();

describe.skipIf(!helm.path)(needing("manifests", helm), { timeout: 60_000 }, () => {
  describe("against the Kubernetes API schemas (kubernetes-validate --strict)", () => {
    const kubernetesValidate = locateKubernetesValidate();
    const workDir = mkdtempSync(path.join(tmpdir(), "wo-chart-"));
    afterAll(() => rmSync(workDir, { recursive: true, force: true }));

    // The chart's oldest supported Kubernetes (Chart.yaml kubeVersion) and the newest schema known.
    for (const version of ["1.25.0", "1.37.0"]) {
      it.skipIf(!kubernetesValidate.path)(
        `every object of the default and production renderings is valid for ${version}`,
        () => {
          const files = [
            ["default", {}],
            ["production", { values: [productionValues] }],
            [
              "all toggles",
              { set: { "serviceMonitor.enabled": "true", "grafanaDashboard.enabled": "true" } },
            ],
            ["aggregated API", { set: { "aggregatedApi.enabled": "true", "networkPolicy.enabled": "true" } }],
            [
              "aggregated API from cert-manager",
              { set: { "aggregatedApi.enabled": "true", "aggregatedApi.certManager.enabled": "true" } },
            ],
          ].map(([label, options]) => {
            const result = templateChart(helm.path as string, {
              ...(options as { values?: string[] }),
              extraArgs: ["--kube-version", version],
            });
            expect(result.status, result.stderr).toBe(0);
            const file = path.join(workDir, `${String(label).replaceAll(" ", "-")}.yaml`);
            writeFileSync(file, result.stdout);
            return file;
          });
          const examples = ["webhook.yaml", "receiver.yaml", "deployment.yaml"].map((file) =>
            path.join(repoRoot, "manifests/examples", file),
          );
          const result = run("bash", [
            kubernetesValidate.path as string,
            "--strict",
            "--no-warn",
            "--kubernetes-version",
            version,
            ...files,
            ...examples,
            path.join(repoRoot, "manifests/install.yaml"),
          ]);
          expect(result.stdout + result.stderr).not.toContain("ERROR");
          expect(result.status).toBe(0);
        },
      );
    }
  });

  describe("CRDs and plain manifests", () => {
    it("installs the generated CRD from crds/ (run npm run render:manifests after npm run generate:crd)", () => {
      const generated = readFileSync(path.join(repoRoot, "crds/webhooks.webhook-operator.io.yaml"), "utf8");
      const inChart = readFileSync(path.join(chartDir, "crds/webhooks.webhook-operator.io.yaml"), "utf8");
      expect(inChart).toBe(generated);
    });

    it("manifests/install.yaml is the chart's current rendering (run npm run render:manifests)", () => {
      const fresh = run("bash", ["scripts/render-manifests.sh", "--stdout"]);
      expect(fresh.status, fresh.stderr).toBe(0);
      expect(readFileSync(path.join(repoRoot, "manifests/install.yaml"), "utf8")).toBe(fresh.stdout);
    });

    it("manifests/install.yaml holds the CRD and no generated secret values", () => {
      const objects = parseAllDocuments(readFileSync(path.join(repoRoot, "manifests/install.yaml"), "utf8"))
        .map((document) => document.toJS() as KubeObject | null)
        .filter((object): object is KubeObject => object !== null);
      expect(kindsOf(objects)).toContain("CustomResourceDefinition");
      expect(kindsOf(objects)).not.toContain("Secret");
      const pod = only(objects, "Deployment").spec.template.spec;
      expect(pod.volumes.find((v: KubeObject) => v.name === "api-key").secret.secretName).toBe(
        "webhook-operator-api-key",
      );
    });
  });
});
