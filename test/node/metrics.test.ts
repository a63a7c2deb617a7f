import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChartRelease, chartRelease } from "../support/chart-release.js";
import { type Cluster, useCluster } from "../support/cluster.js";
import {
  chartDir,
  dashboardQueries,
  type RuleGroups,
  readAlerts,
  withoutGrafanaVariables,
} from "../support/monitoring-files.js";
import { declareWebhook, deploymentBurst, deployReceiver } from "../support/node-workloads.js";
import {
  chartServiceMonitor,
  type Prometheus,
  prometheusToken,
  startPrometheus,
} from "../support/prometheus.js";
import { type ReleaseApi, releaseApi } from "../support/release-api.js";
import { waitUntil } from "../support/wait.js";

// The chart's monitoring for real: Prometheus (scripts/cluster/prometheus.sh) finds the operator's pods through the
// apiserver as the chart's ServiceMonitor selects them, scrapes them while real rollouts are delivered
// to a receiver that works and to one that refuses every delivery (a wrong signing secret: 401), and
// evaluates the chart's alert rules. Every panel of the Grafana dashboard must then return data, and
// the alerts this situation calls for must fire while the others stay quiet. The rules are loaded
// without their `for:` durations (5 minutes to an hour; test/monitoring/alerts.promtool.yaml tests
// those with promtool), so that "would fire" is seen as firing within the test.

const namespace = "wo-metrics";
const receiver = "wo-metrics-receiver";
const project = "wo-metrics-apps";
const shouldFire = [
  "WebhookOperatorDeliverySuccessRateLow", // half of all deliveries fail
  "WebhookOperatorWebhookSuccessRateLow", // all of the failing webhook's
  "WebhookOperatorWebhookResourcesInvalid", // a Webhook whose Secret does not exist
];

let cluster: Cluster;
let chart: ChartRelease;
let prometheus: Prometheus;
let api: ReleaseApi;

/** The chart's alert rules without their `for:` durations. */
function rulesFiringAtOnce(): RuleGroups {
  const rules = readAlerts();
  for (const group of rules.groups) for (const rule of group.rules) delete rule.for;
  return rules;
}

beforeAll(async () => {
  cluster = useCluster();
  chart = chartRelease(cluster, "webhook-operator", namespace);
  await chart.helm([
    "install",
    chart.release,
    chartDir,
    "--create-namespace",
    "--wait",
    "--timeout",
    "10m",
    "--set",
    `config.delivery.allowedDestinations={.${receiver}.svc.cluster.local}`,
    // Watches re-list every 15 s instead of 5 minutes: the dashboard's "Watch restarts" has data.
    "--set",
    "config.informerRelistIntervalMs=15000",
  ]);
  prometheus = await startPrometheus(
    cluster,
    await chartServiceMonitor(chart),
    await prometheusToken(cluster),
    rulesFiringAtOnce(),
  );
  api = await releaseApi(cluster, chart);
  await deployReceiver(cluster, receiver);
  await declareWebhook(cluster, project, receiver);
}, 900_000);

afterAll(async () => {
  api?.close();
  await prometheus?.stop();
  await cluster
    .kubectl(["delete", "wh", "--all", "-n", project, "--wait=true", "--timeout=120s"])
    .catch(() => {});
  await chart.helm(["uninstall", chart.release, "--wait"]).catch(() => {});
  await cluster
    .kubectl(["delete", "namespace", namespace, project, receiver, "wo-monitoring", "--timeout=300s"])
    .catch(() => {});
  await cluster.kubectl(["delete", "clusterrole,clusterrolebinding", "wo-prometheus"]).catch(() => {});
});

describe("Prometheus scraping the operator's pods on a real node", () => {
  it("discovers both replicas through the apiserver as the ServiceMonitor selects them", async () => {
    let seen: unknown[] = [];
    const targets = await waitUntil(
      "two healthy targets",
      async () => {
        seen = await prometheus.targets();
        const up = (seen as { health: string }[]).filter((t) => t.health === "up");
        return up.length === 2 ? (up as Awaited<ReturnType<Prometheus["targets"]>>) : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; targets: ${JSON.stringify(seen)}\n${prometheus.logTail()}`);
    });
    for (const target of targets) expect(target.labels).toMatchObject({ namespace, job: chart.fullname });
  });

  it("has data for every panel of the dashboard and fires the alerts a failing receiver calls for", async () => {
    // A second Webhook to the same receiver with another secret: every delivery answered 401.
    await cluster.kubectl([
      "-n",
      project,
      "create",
      "secret",
      "generic",
      "wrong-secret",
      "--from-literal=secret=not-the-receivers",
    ]);
    await cluster.kubectl([
      "-n",
      project,
      "label",
      "secret",
      "wrong-secret",
      "webhook-operator.io/allow-webhooks=true",
    ]);
    await cluster.kubectl(["-n", project, "get", "wh", "demo-receiver", "-o", "json"]).then(async (json) => {
      const webhook = JSON.parse(json);
      const failing = {
        apiVersion: webhook.apiVersion,
        kind: "Webhook",
        metadata: { name: "failing", namespace: project },
        spec: { ...webhook.spec, secretRef: { name: "wrong-secret", key: "secret" } },
      };
      const invalid = {
        ...failing,
        metadata: { name: "invalid", namespace: project },
        spec: { ...failing.spec, secretRef: { name: "no-such-secret", key: "secret" } },
      };
      await cluster.kubectl(
        ["apply", "-f", "-"],
        [failing, invalid].map((o) => JSON.stringify(o)).join("\n---\n"),
      );
    });
    await cluster.kubectl(["-n", project, "wait", "--for=condition=Ready", "wh/failing", "--timeout=120s"]);
    // Rollouts one after another over a minute, as a failing receiver meets them in a working day. Not
    // all at once: a counter series is first scraped at the value it was born with, which rate() and
    // increase() cannot count, so a burst that ends before the first scrape would show almost nothing.
    for (let i = 0; i < 15; i++) {
      await cluster.kubectl(["apply", "-f", "-"], deploymentBurst(project, `metrics-${i}`, 1));
      await new Promise((resolve) => setTimeout(resolve, 4_000));
    }

    // A replay and a test event, through the API, for the panel that counts them.
    const status = JSON.parse(
      await cluster.kubectl(["-n", project, "get", "wh", "failing", "-o", "jsonpath={.status}"]),
    );
    const base = `/api/projects/${status.projectId}/webhooks/${status.webhookId}`;
    const [failed] = await waitUntil(
      "a failed delivery to replay",
      async () => {
        const deliveries = (await api.call(`${base}/deliveries`)) as { id: number }[];
        return deliveries.length > 0 ? deliveries : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    await api.call(`${base}/deliveries/${failed?.id}/retry`, { method: "POST" });
    await api.call(`${base}/test`, { method: "POST", body: "{}" });

    // Grafana's variables as a person looking at this namespace would set them.
    const queries = dashboardQueries()
      .filter((query) => query.where.startsWith("panel"))
      .map((query) => ({
        ...query,
        expr: withoutGrafanaVariables(
          query.expr.replaceAll("$__rate_interval", "1m").replaceAll("$namespace", namespace),
        ),
      }));
    let empty: string[] = [];
    await waitUntil(
      "every dashboard panel with data",
      async () => {
        empty = [];
        for (const query of queries)
          if ((await prometheus.query(query.expr)).length === 0) empty.push(query.where);
        return empty.length === 0 ? true : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    ).catch(() => {});
    expect(empty, "panels without data").toEqual([]);

    let states = new Map<string, string>();
    await waitUntil(
      `${shouldFire.join(", ")} firing`,
      async () => {
        states = await prometheus.alertStates();
        return shouldFire.every((name) => states.get(name) === "firing") ? true : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    ).catch(() => {});
    const alerts = readAlerts().groups.flatMap((group) => group.rules.map((rule) => rule.alert ?? ""));
    // Should an alert fire that this situation does not call for, the figures behind it say why: how
    // late attempts started (the lag's buckets) and how sends ended (a timeout holds a rollout's later
    // events back).
    const figures = {
      lag: await prometheus.query(
        "sum by (le) (increase(webhook_operator_delivery_lag_seconds_bucket[10m]))",
      ),
      sends: await prometheus.query(
        "sum by (outcome, reason) (increase(webhook_operator_deliveries_total[10m]))",
      ),
    };
    expect(Object.fromEntries(states), `alert states; over 10 minutes: ${JSON.stringify(figures)}`).toEqual(
      Object.fromEntries(alerts.map((alert) => [alert, shouldFire.includes(alert) ? "firing" : "inactive"])),
    );
  });
});
