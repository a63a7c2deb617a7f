// Reads the metric and label names out of PromQL expressions (the dashboard's and the alerts'), so a
// test can check them against what the operator exports. Not a PromQL parser: enough of the grammar to
// tell metric names from functions, keywords, label names, strings and durations.

const nonMetricWords = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "and",
  "or",
  "unless",
  "offset",
  "bool",
  "inf",
  "nan",
]);

const stringLiteral = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;
const groupingClause = /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/** Metric names selected by a PromQL expression. Grafana variables ($x, ${x}) may appear anywhere. */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(stringLiteral, '""')
    .replace(/\{[^}]*\}/g, " ") // label matchers
    .replace(/\[[^\]]*\]/g, " ") // ranges and subqueries
    .replace(groupingClause, " ");
  const names = new Set<string>();
  // An identifier not preceded by a word character (so not the 'e3' of 1e3 or the 'm' of 5m) and not
  // followed by '(' (a function or aggregation).
  for (const match of stripped.matchAll(/(?<![\w:$.])[a-zA-Z_:][\w:]*(?![\w:])(?!\s*\()/g)) {
    if (!nonMetricWords.has(match[0])) names.add(match[0]);
  }
  return [...names];
}

export interface LabelUse {
  /** The metric whose selector names the label, or undefined for a grouping clause (by, on, …). */
  metric: string | undefined;
  label: string;
}

/** Label names an expression uses: in selectors' matchers and in grouping clauses. */
export function labelsIn(expr: string): LabelUse[] {
  const uses: LabelUse[] = [];
  const withoutStrings = expr.replace(stringLiteral, '""');
  for (const selector of withoutStrings.matchAll(/([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g)) {
    for (const matcher of (selector[2] ?? "").matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) {
      uses.push({ metric: selector[1], label: matcher[1] ?? "" });
    }
  }
  for (const clause of withoutStrings.matchAll(groupingClause)) {
    for (const label of (clause[2] ?? "").split(",")) {
      if (label.trim() !== "") uses.push({ metric: undefined, label: label.trim() });
    }
  }
  return uses;
}

/** Grafana's label_values(<selector>, <label>) variable query, split; undefined for other queries. */
export function parseLabelValuesQuery(query: string): { selector: string; label: string } | undefined {
  const match = /^\s*label_values\((.*),\s*([a-zA-Z_]\w*)\s*\)\s*$/.exec(query);
  return match ? { selector: match[1] ?? "", label: match[2] ?? "" } : undefined;
}
