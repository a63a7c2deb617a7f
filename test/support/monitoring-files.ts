import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { parseLabelValuesQuery } from "./promql.js";
import { repoRoot } from "./tools.js";

// The Grafana dashboard and the alert rules shipped with the chart, read the way the tests need them.

export const chartDir = path.join(repoRoot, "charts/webhook-operator");
export const dashboardPath = path.join(chartDir, "files/dashboard.json");
export const alertsPath = path.join(chartDir, "files/alerts.yaml");

export interface Query {
  /** Where it is, for messages: a panel title and refId, or a variable name. */
  where: string;
  expr: string;
}

interface Target {
  expr: string;
  refId: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  query?: string | { query: string };
}
export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(dashboardPath, "utf8")) as Dashboard;
}

export function dashboardPanels(dashboard = readDashboard()): Panel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** Every PromQL expression of the panels, and the selector of every label_values variable. */
export function dashboardQueries(dashboard = readDashboard()): Query[] {
  const panelQueries = dashboardPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `panel "${panel.title}" ${target.refId}`,
      expr: target.expr,
    })),
  );
  const variableQueries = dashboard.templating.list.flatMap((variable) => {
    if (variable.type !== "query") return [];
    const text = typeof variable.query === "string" ? variable.query : (variable.query?.query ?? "");
    const labelValues = parseLabelValuesQuery(text);
    return [{ where: `variable $${variable.name}`, expr: labelValues ? labelValues.selector : text }];
  });
  return [...panelQueries, ...variableQueries];
}

/** Grafana's variables replaced by values Prometheus accepts, so promtool can parse the expression. */
export function withoutGrafanaVariables(expr: string): string {
  return expr
    .replaceAll("$__rate_interval", "5m")
    .replaceAll("$__interval", "1m")
    .replaceAll("$__range", "1h")
    .replace(/\$\{?\w+\}?/g, ".*");
}

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleGroups {
  groups: Array<{ name: string; rules: Rule[] }>;
}

export function readAlerts(): RuleGroups {
  return parse(readFileSync(alertsPath, "utf8")) as RuleGroups;
}

export function alertQueries(rules = readAlerts()): Query[] {
  return rules.groups.flatMap((group) =>
    group.rules.map((rule) => ({ where: `rule ${rule.alert ?? rule.record}`, expr: rule.expr })),
  );
}
