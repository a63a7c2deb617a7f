import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChartRelease,
  chartEnvironment,
  chartRelease,
  clusterValues,
  installChart,
  serviceAccountKubeconfig,
} from "../support/chart-release.js";
import { type Cluster, uniqueName, useCluster } from "../support/cluster.js";
import { createTestDatabase } from "../support/database.js";
import { startOperatorProcess } from "../support/operator-process.js";
import { repoRoot } from "../support/tools.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience } from "../support/webhook-resources.js";

// The chart and the plain manifests against a real API server: helm's lookup of the generated
// Secrets on upgrade, and the server's own validation of every rendered object (the RBAC the chart
// grants is exercised by test/cluster/end-to-end.test.ts, which runs the operator as its ServiceAccount).

let cluster: Cluster;
let chart: ChartRelease;

const secretValue = async (name: string, key: string) => {
  const secret = await cluster.core.readNamespacedSecret({ name, namespace: chart.namespace });
  return Buffer.from(secret.data?.[key] ?? "", "base64").toString("utf8");
};

beforeAll(async () => {
  cluster = useCluster();
  chart = chartRelease(cluster, uniqueName("wo"), uniqueName("chart"));
  await installChart(chart);
});
afterAll(async () => {
  await chart?.helm(["uninstall", chart.release, "--wait"]).catch(() => {});
  await cluster.core.deleteNamespace({ name: chart.namespace }).catch(() => {});
});

describe("the chart on a real cluster", () => {
  it("installs: the operator Deployment rolls out on the node and the first API key and password are generated", async () => {
    const status = await cluster.kubectl([
      "rollout",
      "status",
      `deployment/${chart.fullname}`,
      "-n",
      chart.namespace,
      "--timeout=120s",
    ]);
    expect(status).toContain("successfully rolled out");
    expect(await secretValue(`${chart.fullname}-api-key`, "api-key")).toMatch(/^wo_[A-Za-z0-9]{43}$/);
    expect(await secretValue(`${chart.fullname}-postgres`, "password")).toMatch(/^[A-Za-z0-9]{32}$/);
  });

  it("keeps the generated API key and Postgres password on helm upgrade (lookup reads them back)", async () => {
    const apiKey = await secretValue(`${chart.fullname}-api-key`, "api-key");
    const password = await secretValue(`${chart.fullname}-postgres`, "password");
    await installChart(chart, { ...clusterValues, "config.logLevel": "debug" }, "upgrade");
    const history = await chart.helm(["history", chart.release, "-o", "json"]);
    expect((JSON.parse(history) as unknown[]).length).toBe(2);
    const deployment = await cluster.apps.readNamespacedDeployment({
      name: chart.fullname,
      namespace: chart.namespace,
    });
    const env = deployment.spec?.template.spec?.containers[0]?.env ?? [];
    expect(env).toContainEqual({ name: "LOG_LEVEL", value: "debug" });
    expect(await secretValue(`${chart.fullname}-api-key`, "api-key")).toBe(apiKey);
    expect(await secretValue(`${chart.fullname}-postgres`, "password")).toBe(password);
  });
});

describe("the chart's RBAC", () => {
  it("refuses what it does not grant, and the end-to-end check sees the 403 (a Lease of another name)", async () => {
    const workDir = await mkdtemp(path.join(tmpdir(), "wo-chart-"));
    const database = await createTestDatabase();
    const operator = await startOperatorProcess({
      ...(await chartEnvironment(cluster, chart)),
      DATABASE_URL: database.url,
      API_KEY: "chart-test-admin-key-0123456789",
      KUBECONFIG: await serviceAccountKubeconfig(cluster, chart, workDir),
      LEADER_ELECTION_LEASE_NAME: "not-the-charts-lease",
      NAMESPACE_SELECTOR: "webhook-operator.io/test=none",
    });
    try {
      const refused = await waitUntil("operator.forbidden()[0]", async () => operator.forbidden()[0], {
        timeoutMs: clusterPatience,
      });
      expect(refused).toContain(
        `leases.coordination.k8s.io not-the-charts-lease is forbidden: User system:serviceaccount:${chart.namespace}:${chart.fullname} cannot get resource leases`,
      );
    } finally {
      await operator.stop();
      await database.drop();
      await rm(workDir, { recursive: true, force: true });
    }
  });
});

describe("manifests/install.yaml on a real cluster", () => {
  it("passes the API server's validation (kubectl apply --dry-run=server), as the README applies it", async () => {
    // The README creates the namespace first; install.yaml does not hold one.
    await cluster.kubectl(["create", "namespace", "webhook-operator"]).catch((error: Error) => {
      if (!/AlreadyExists/.test(error.message)) throw error;
    });
    const output = await cluster.kubectl([
      "apply",
      "--server-side",
      "--dry-run=server",
      "-f",
      path.join(repoRoot, "manifests/install.yaml"),
    ]);
    for (const object of [
      "clusterrole.rbac.authorization.k8s.io/webhook-operator",
      "deployment.apps/webhook-operator",
      "statefulset.apps/webhook-operator-postgres",
      "role.rbac.authorization.k8s.io/webhook-operator-leader-election",
    ])
      expect(output).toContain(`${object} serverside-applied (server dry run)`);
  });
});
