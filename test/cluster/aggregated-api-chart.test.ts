import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../support/chart.js";
import { type ChartRelease, chartRelease } from "../support/chart-release.js";
import { type Cluster, uniqueName, useCluster } from "../support/cluster.js";
import { chartDir } from "../support/monitoring-files.js";

// The chart's aggregated API objects against a real API server, without installing the APIService: an
// APIService with no server behind it would break discovery for every other test of the suite. So the
// objects are applied with a server-side dry run (the API server's own validation of the APIService, of
// RBAC bindings to its built-in roles in kube-system, of the aggregation labels), and helm's lookup, which
// keeps the generated certificate across upgrades, is exercised with a render against the cluster
// (`helm template --dry-run=server`) after the Secret of a first render is created for real.

let cluster: Cluster;
let chart: ChartRelease;
const enabled = ["--set", "aggregatedApi.enabled=true"];

const render = async (...args: string[]) =>
  parseAllDocuments(await chart.helm(["template", chart.release, chartDir, ...enabled, ...args]))
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
const find = (objects: KubeObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
};

beforeAll(async () => {
  cluster = useCluster();
  chart = chartRelease(cluster, uniqueName("agg"), uniqueName("agg-chart"));
  await cluster.kubectl(["create", "namespace", chart.namespace]);
});
afterAll(async () => {
  await cluster.core.deleteNamespace({ name: chart.namespace }).catch(() => {});
});

describe("the aggregated API in the chart, on a real API server", () => {
  it("passes the API server's validation: APIService, certificate Secret, bindings in kube-system, roles", async () => {
    const manifest = await chart.helm(["template", chart.release, chartDir, ...enabled]);
    const output = await cluster.kubectl(["apply", "--server-side", "--dry-run=server", "-f", "-"], manifest);
    for (const object of [
      "apiservice.apiregistration.k8s.io/v1alpha1.deliveries.webhook-operator.io",
      `secret/${chart.fullname}-aggregated-api-tls`,
      `rolebinding.rbac.authorization.k8s.io/${chart.fullname}-${chart.namespace}-authentication-reader`,
      `clusterrolebinding.rbac.authorization.k8s.io/${chart.fullname}-auth-delegator`,
      `clusterrole.rbac.authorization.k8s.io/${chart.fullname}-deliveries-viewer`,
      `clusterrole.rbac.authorization.k8s.io/${chart.fullname}-rollouts-viewer`,
      `clusterrole.rbac.authorization.k8s.io/${chart.fullname}-deliveries-replayer`,
    ])
      expect(output).toContain(`${object} serverside-applied (server dry run)`);
  });

  it("keeps the generated certificate and CA on upgrade: lookup reads the Secret back", async () => {
    const secretName = `${chart.fullname}-aggregated-api-tls`;
    const first = find(await render(), "Secret", secretName);
    // As an installed release leaves it: helm renders over objects that name their release.
    const owned = {
      ...first,
      metadata: {
        ...first.metadata,
        annotations: {
          "meta.helm.sh/release-name": chart.release,
          "meta.helm.sh/release-namespace": chart.namespace,
        },
      },
    };
    await cluster.kubectl(["apply", "-n", chart.namespace, "-f", "-"], JSON.stringify(owned));

    const again = await render("--dry-run=server");
    expect(find(again, "Secret", secretName).data).toEqual(first.data);
    expect(find(again, "APIService", "v1alpha1.deliveries.webhook-operator.io").spec.caBundle).toBe(
      first.data["ca.crt"],
    );
    // Without the cluster (plain helm template) a new one is generated each time: what lookup prevents.
    expect(find(await render(), "Secret", secretName).data["tls.crt"]).not.toBe(first.data["tls.crt"]);
  });
});
