import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registry } from "../../src/metrics.js";
import { createProject, createWebhook, emit } from "../support/api-fixtures.js";
import { alertQueries, dashboardQueries, type Query, readDashboard } from "../support/monitoring-files.js";
import { labelsIn, metricNamesIn, parseLabelValuesQuery } from "../support/promql.js";
import { type Receiver, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";

// The Grafana dashboard and the alert rules may only name metrics the operator really exports: every
// metric name in their PromQL must be a family of a live /metrics scrape of the real service, after it
// has delivered something. prom-client prints # HELP/# TYPE for every registered metric, also for
// labelled counters never incremented and for the controller's metrics (no controller runs here).

// Labels Prometheus adds to every scraped series (static configs, or a ServiceMonitor's relabelling).
const targetLabels = new Set(["instance", "job", "namespace", "pod", "service", "endpoint", "container"]);
const histogramSuffixes = ["_bucket", "_sum", "_count"];

let service: TestService;
let receiver: Receiver;
let scrape: string;
// As the chart's ServiceMonitor scrapes: with the metrics token, so delivery counts are per webhook.
const metricsToken = "monitoring-metrics-token";
const scrapeAuth = { headers: { authorization: `Bearer ${metricsToken}` } };

beforeAll(async () => {
  receiver = await startReceiver();
  service = await startTestService({ DELIVERY_POLL_INTERVAL_MS: "200", METRICS_TOKEN: metricsToken });
  const project = await createProject(service, "monitoring", "Monitoring");
  await createWebhook(service, project, { url: `${receiver.url}/hooks`, events: ["deployment.succeeded"] });
  await emit(service.pool, project, "deployment.succeeded");
  await receiver.waitFor(1);
  // The outcome is counted when the attempt finishes; wait until the scrape shows it.
  scrape = await waitUntil("a successful delivery counted in the scrape", async () => {
    const text = await (await fetch(`${service.baseUrl}/metrics`, scrapeAuth)).text();
    return /^webhook_operator_deliveries_total\{[^}]*outcome="success"[^}]*\} [1-9]/m.test(text)
      ? text
      : undefined;
  });
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

/** Metric families of the scrape, from its # TYPE lines: name → type. */
function families(text: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(match[1] ?? "", match[2] ?? "");
  return types;
}

/** The family a sample name belongs to: itself, or a histogram's base for _bucket/_sum/_count. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of histogramSuffixes) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && ["histogram", "summary"].includes(types.get(base) ?? "")) return base;
  }
  return undefined;
}

function labelNamesOf(family: string): string[] {
  const metric = registry.getSingleMetric(family) as unknown as { labelNames?: string[] } | undefined;
  return metric?.labelNames ?? [];
}

const queries = (): Query[] => [...dashboardQueries(), ...alertQueries()];

describe("the dashboard and the alerts against a live /metrics scrape", () => {
  it("the scrape is live: the delivery was counted, histograms and operator metrics are declared", () => {
    const types = families(scrape);
    expect(types.get("webhook_operator_deliveries_total")).toBe("counter");
    expect(types.get("webhook_operator_delivery_duration_seconds")).toBe("histogram");
    // Registered in src/metrics.ts, so declared even though no controller runs in this test.
    expect(types.get("webhook_operator_reconciles_total")).toBe("counter");
    expect(types.get("webhook_operator_watch_restarts_total")).toBe("counter");
    expect(types.get("webhook_operator_leader")).toBe("gauge");
  });

  it("finds metric names in every dashboard panel and every alert", () => {
    const withoutNames = queries().filter((query) => metricNamesIn(query.expr).length === 0);
    expect(withoutNames).toEqual([]);
    expect(queries().length).toBeGreaterThan(25);
  });

  it("every metric name in the dashboard's and the alerts' PromQL is exported", () => {
    const types = families(scrape);
    const missing = queries().flatMap((query) =>
      metricNamesIn(query.expr)
        .filter((name) => familyOf(name, types) === undefined)
        .map((name) => `${query.where}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it("every label they select or group by is a label of those metrics (or one Prometheus adds)", () => {
    const types = families(scrape);
    const problems = queries().flatMap((query) => {
      const names = metricNamesIn(query.expr);
      const labelsOfExpr = new Set(names.flatMap((name) => labelNamesOf(familyOf(name, types) ?? name)));
      const isHistogramSample = names.some((name) => name.endsWith("_bucket"));
      return labelsIn(query.expr)
        .filter(({ metric, label }) => {
          if (targetLabels.has(label) || (label === "le" && isHistogramSample)) return false;
          const allowed = metric ? labelNamesOf(familyOf(metric, types) ?? metric) : [...labelsOfExpr];
          return !allowed.includes(label);
        })
        .map(({ metric, label }) => `${query.where}: ${metric ?? "grouping"} has no label ${label}`);
    });
    expect(problems).toEqual([]);
  });

  it("the dashboard's label_values variables name labels of their metric", () => {
    const problems = readDashboard().templating.list.flatMap((variable) => {
      const text = typeof variable.query === "string" ? variable.query : (variable.query?.query ?? "");
      const parsed = parseLabelValuesQuery(text);
      if (!parsed) return [];
      const [metric] = metricNamesIn(parsed.selector);
      const labels = [...labelNamesOf(metric ?? ""), ...targetLabels];
      return labels.includes(parsed.label)
        ? []
        : [`$${variable.name}: ${metric} has no label ${parsed.label}`];
    });
    expect(problems).toEqual([]);
  });
});

describe("the webhook_id label", () => {
  it("loses a webhook's series when the webhook is deleted", async () => {
    const project = await createProject(service, "doomed", "Doomed");
    const webhook = await createWebhook(service, project, {
      url: `${receiver.url}/doomed`,
      events: ["deployment.failed"],
    });
    const series = new RegExp(`^webhook_operator_deliveries_total\\{[^}]*webhook_id="${webhook.id}"`, "m");
    await emit(service.pool, project, "deployment.failed", {});
    await waitUntil("the webhook's series in the scrape", async () =>
      series.test(await (await fetch(`${service.baseUrl}/metrics`, scrapeAuth)).text()) ? true : undefined,
    );

    const deleted = await service.api("DELETE", `/projects/${project}/webhooks/${webhook.id}`);
    expect(deleted.status).toBe(204);
    const after = await (await fetch(`${service.baseUrl}/metrics`, scrapeAuth)).text();
    expect(after).not.toMatch(series);
    // The other webhook's series stay.
    expect(after).toMatch(/^webhook_operator_deliveries_total\{[^}]*outcome="success"[^}]*\} [1-9]/m);
  });
});
