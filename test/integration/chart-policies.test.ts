import { describe, expect, it } from "vitest";
import {
  type KubeObject,
  kindsOf,
  needing,
  only,
  podSpecs,
  releaseName,
  releaseNamespace,
  renderChart,
  rulesOf,
  templateChart,
} from "../support/chart.js";
import { locateHelm } from "../support/tools.js";

// What a platform team's linters ask of the chart: images by digest, an optional NetworkPolicy, Secrets
// readable only in chosen namespaces, and a PodDisruptionBudget that never blocks a drain.

const helm = locateHelm();
const name = releaseName;
const digest = `sha256:${"0123456789abcdef".repeat(4)}`;
const render = (set: Record<string, string> = {}, extraArgs: string[] = []) =>
  renderChart(helm.path as string, { set, extraArgs });
const images = (objects: KubeObject[]) =>
  podSpecs(objects).flatMap(({ spec }) =>
    [...(spec.initContainers ?? []), ...spec.containers].map((c: KubeObject) => c.image),
  );

describe.skipIf(!helm.path)(needing("chart policies", helm), { timeout: 60_000 }, () => {
  it("pulls images as repository@digest when a digest is given, else by the pinned tags", () => {
    expect(new Set(images(render()))).toEqual(new Set(["webhook-operator:0.2.0", "postgres:18.4-bookworm"]));
    const pinned = render({ "image.digest": digest, "postgres.image.digest": digest });
    expect(new Set(images(pinned))).toEqual(new Set([`webhook-operator@${digest}`, `postgres@${digest}`]));
    const refused = templateChart(helm.path as string, { set: { "image.digest": "latest" } });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("at '/image/digest': 'latest' does not match pattern");
  });

  it("creates no NetworkPolicy unless asked", () => {
    expect(kindsOf(render())).not.toContain("NetworkPolicy");
  });

  it("lets only the operator's pods reach Postgres, and the chosen namespaces and Prometheus its port", () => {
    const objects = render({
      "networkPolicy.enabled": "true",
      "networkPolicy.apiNamespaces[0]": "team-a",
      "networkPolicy.apiNamespaces[1]": "ci",
    });
    const operatorPods = only(objects, "Deployment").spec.selector.matchLabels;
    const postgres = only(objects, "NetworkPolicy", `${name}-postgres`);
    expect(postgres.spec).toEqual({
      podSelector: only(objects, "StatefulSet").spec.selector,
      policyTypes: ["Ingress"],
      ingress: [
        {
          ports: [{ port: "postgres", protocol: "TCP" }],
          from: [{ podSelector: { matchLabels: operatorPods } }],
        },
      ],
    });
    const operator = only(objects, "NetworkPolicy", name);
    expect(operator.spec.podSelector).toEqual({ matchLabels: operatorPods });
    expect(operator.spec.policyTypes).toEqual(["Ingress"]); // deliveries go anywhere
    expect(operator.spec.ingress).toEqual([
      {
        ports: [{ port: "http", protocol: "TCP" }],
        from: [
          {
            namespaceSelector: {
              matchExpressions: [
                { key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a", "ci"] },
              ],
            },
          },
          {
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
            podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
          },
        ],
      },
    ]);
  });

  it("with no namespace and no Prometheus let in, denies every connection to the operator's port", () => {
    const objects = render({ "networkPolicy.enabled": "true", "networkPolicy.prometheus.namespace": "" });
    expect(only(objects, "NetworkPolicy", name).spec.ingress).toBeNull();
  });

  it("grants Secrets in the namespaces of rbac.secretNamespaces only, instead of cluster-wide", () => {
    expect(rulesOf(only(render(), "ClusterRole", name))["core/secrets"]).toEqual(["get", "watch"]);
    const objects = render({ "rbac.secretNamespaces[0]": "team-a", "rbac.secretNamespaces[1]": "team-b" });
    expect(rulesOf(only(objects, "ClusterRole", name))["core/secrets"]).toBeUndefined();
    for (const namespace of ["team-a", "team-b"]) {
      const role = objects.find((o) => o.kind === "Role" && o.metadata.namespace === namespace) as KubeObject;
      expect(rulesOf(role)).toEqual({ "core/secrets": ["get", "watch"] });
      const binding = objects.find(
        (o) => o.kind === "RoleBinding" && o.metadata.namespace === namespace,
      ) as KubeObject;
      expect(binding.roleRef.name).toBe(role.metadata.name);
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name, namespace: releaseNamespace }]);
    }
  });

  it("sets the PodDisruptionBudget's unhealthyPodEvictionPolicy where Kubernetes has it (1.27+)", () => {
    const policy = (version: string, set = {}) =>
      only(render(set, ["--kube-version", version]), "PodDisruptionBudget").spec.unhealthyPodEvictionPolicy;
    expect(policy("1.27.0")).toBe("AlwaysAllow");
    expect(policy("1.31.0", { "podDisruptionBudget.unhealthyPodEvictionPolicy": "IfHealthyBudget" })).toBe(
      "IfHealthyBudget",
    );
    expect(policy("1.25.0")).toBeUndefined();
  });
});
