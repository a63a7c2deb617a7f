import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { only, renderChart } from "../support/chart.js";
import {
  alertsPath,
  chartDir,
  dashboardPanels,
  dashboardQueries,
  readAlerts,
  readDashboard,
  withoutGrafanaVariables,
} from "../support/monitoring-files.js";
import { locateHelm, locatePromtool, repoRoot, run } from "../support/tools.js";

// The alert rules and the dashboard as files: promtool checks and unit-tests the rules, and parses
// every dashboard query; the dashboard's shape is checked here too. Whether the metric names exist is
// test/integration/monitoring.test.ts (it needs the running service).

const promtool = locatePromtool();
const workDir = mkdtempSync(path.join(tmpdir(), "wo-monitoring-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

function promtoolCheckRules(file: string) {
  const result = run(promtool.path as string, ["check", "rules", file]);
  return { ok: result.status === 0, output: result.stdout + result.stderr };
}

describe.skipIf(!promtool.path)(`promtool${promtool.reason ? ` (skipped: ${promtool.reason})` : ""}`, () => {
  it("accepts the alert rules (promtool check rules), annotation templates included", () => {
    const { ok, output } = promtoolCheckRules(alertsPath);
    expect(output).toContain("SUCCESS");
    expect(ok).toBe(true);
  });

  it("passes the alerts' unit tests (promtool test rules test/monitoring/alerts.promtool.yaml)", () => {
    // promtool compares every annotation of a firing alert; the tests are about when alerts fire, so
    // they run against a copy of the rules without annotations.
    const rules = readAlerts();
    for (const group of rules.groups) for (const rule of group.rules) delete rule.annotations;
    writeFileSync(path.join(workDir, "alerts.yaml"), stringify(rules));
    copyFileSync(
      path.join(repoRoot, "test/monitoring/alerts.promtool.yaml"),
      path.join(workDir, "alerts.promtool.yaml"),
    );
    const result = run(promtool.path as string, ["test", "rules", "alerts.promtool.yaml"], { cwd: workDir });
    expect(result.stdout + result.stderr).toContain("SUCCESS");
    expect(result.status).toBe(0);
  });

  it("parses every PromQL query of the dashboard", () => {
    const queries = dashboardQueries();
    const groups = [
      {
        name: "dashboard",
        rules: queries.map((query, index) => ({
          record: `dashboard:query_${index}`,
          expr: withoutGrafanaVariables(query.expr),
        })),
      },
    ];
    const file = path.join(workDir, "dashboard-queries.yaml");
    writeFileSync(file, stringify({ groups }));
    const { ok, output } = promtoolCheckRules(file);
    expect(output).toContain(`SUCCESS: ${queries.length} rules found`);
    expect(ok).toBe(true);
  });

  const helm = locateHelm();
  it.skipIf(!helm.path)("accepts the rules as the chart renders them into the PrometheusRule", () => {
    const objects = renderChart(helm.path as string, { set: { "prometheusRule.enabled": "true" } });
    const spec = only(objects, "PrometheusRule").spec;
    expect(spec).toEqual(readAlerts());
    const file = path.join(workDir, "rendered-rules.yaml");
    writeFileSync(file, stringify(spec));
    expect(promtoolCheckRules(file).ok).toBe(true);
  });
});

describe("the alert rules", () => {
  const rules = readAlerts().groups.flatMap((group) => group.rules);

  it("cover delivery success, queue lag, reconcile errors and leadership", () => {
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        "WebhookOperatorDeliverySuccessRateLow",
        "WebhookOperatorWebhookSuccessRateLow",
        "WebhookOperatorDeliveryQueueLagGrowing",
        "WebhookOperatorReconcileErrors",
        "WebhookOperatorNoLeader",
      ]),
    );
  });

  it("each have a severity, a summary, a description and a runbook", () => {
    for (const rule of rules) {
      expect(["critical", "warning", "info"], rule.alert).toContain(rule.labels?.severity);
      for (const annotation of ["summary", "description", "runbook"]) {
        expect(rule.annotations?.[annotation]?.trim(), `${rule.alert} ${annotation}`).toBeTruthy();
      }
    }
  });

  it("are the alerts values.schema.json lets prometheusRule.disabledAlerts name", () => {
    const schema = JSON.parse(readFileSync(path.join(chartDir, "values.schema.json"), "utf8"));
    expect(schema.properties.prometheusRule.properties.disabledAlerts.items.enum).toEqual(
      rules.map((rule) => rule.alert),
    );
  });
});

describe("the Grafana dashboard", () => {
  const dashboard = readDashboard();
  const panels = dashboardPanels(dashboard).filter((panel) => panel.type !== "row");

  it("has a stable uid and picks its Prometheus data source through a variable", () => {
    expect(dashboard.uid).toBe("webhook-operator");
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual([
      "datasource",
      "namespace",
      "webhook_id",
    ]);
    // Grafana's variable syntax, not a template string.
    const datasourceVariable = ["$", "{datasource}"].join("");
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual({ type: "prometheus", uid: datasourceVariable });
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
    const ids = dashboardPanels(dashboard).map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("shows success rate per webhook and overall, throughput by outcome and event type, latency, queue and controller health", () => {
    const titles = panels.map((panel) => panel.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        "Delivery success rate (5m)",
        "Delivery success rate per webhook",
        "Deliveries/s by outcome",
        "Deliveries/s by event type",
        "Delivery latency",
        "Delivery lag",
        "Queue depth and oldest unfinished delivery",
        "Reconciles/s by controller and result",
        "Leader by pod",
        "Watch restarts",
      ]),
    );
    const perWebhook = panels.find((panel) => panel.title === "Delivery success rate per webhook");
    expect(perWebhook?.targets?.map((target) => target.expr).join("\n")).toContain("sum by (webhook_id)");
  });

  it("reads the queue gauges with max: every replica reports the same database-wide value", () => {
    for (const gauge of [
      "webhook_operator_delivery_queue_depth",
      "webhook_operator_delivery_queue_oldest_age_seconds",
    ]) {
      const reading = dashboardQueries(dashboard).filter((query) => query.expr.includes(gauge));
      expect(reading.length, `no panel reads ${gauge}`).toBeGreaterThan(0);
      for (const query of reading) expect(query.expr, query.where).toMatch(new RegExp(`max\\(${gauge}`));
    }
  });
});
