import type { LabelExpression, LabelSelector, WebhookFilters } from "../delivery-engine/event-filters.js";

// A label selector written as kubectl writes one (`app=payments,tier in (web,api),!canary`), read by
// the CLI's -l and the dashboard's filter field, and written back for display. Shapes only: the
// service checks keys, values and bounds. Our patterns, applied to one short term at a time.

export class SelectorSyntaxError extends Error {}

const list = (text: string) =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

/** Terms joined by commas outside parentheses: key=value (or ==), key!=value, key in (…), key notin (…), key, !key. */
export function parseSelector(text: string): LabelSelector {
  const terms = (text.match(/([^,(]|\([^)]*\))+/g) ?? []).map((term) => term.trim()).filter((t) => t !== "");
  if (terms.length === 0) throw new SelectorSyntaxError("The selector is empty.");
  const labels: Record<string, string> = {};
  const expressions: LabelExpression[] = [];
  for (const term of terms) {
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    const equality = /^([^!=\s]+)\s*(==|=|!=)\s*([^!=\s()]*)$/.exec(term);
    const exists = /^(!?)\s*([^!=\s()]+)$/.exec(term);
    if (set) {
      const operator = set[2] === "in" ? "In" : "NotIn";
      expressions.push({ key: set[1] as string, operator, values: list(set[3] ?? "") });
    } else if (equality?.[2] === "!=") {
      expressions.push({ key: equality[1] as string, operator: "NotIn", values: [equality[3] ?? ""] });
    } else if (equality) {
      const key = equality[1] as string;
      if (key in labels) throw new SelectorSyntaxError(`The label ${key} is given twice.`);
      labels[key] = equality[3] ?? "";
    } else if (exists) {
      const operator = exists[1] === "!" ? "DoesNotExist" : "Exists";
      expressions.push({ key: exists[2] as string, operator });
    } else {
      throw new SelectorSyntaxError(
        `'${term}' is not a selector term: use key=value, key!=value, 'key in (a,b)', 'key notin (a,b)', key or !key.`,
      );
    }
  }
  return {
    ...(Object.keys(labels).length > 0 ? { match_labels: labels } : {}),
    ...(expressions.length > 0 ? { match_expressions: expressions } : {}),
  };
}

/** A selector in kubectl's syntax, `NotIn` with one value written as `in`/`notin` (either reads back). */
export function selectorText(selector: LabelSelector | undefined): string {
  const terms = [
    ...Object.entries(selector?.match_labels ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(selector?.match_expressions ?? []).map(({ key, operator, values }) =>
      operator === "Exists"
        ? key
        : operator === "DoesNotExist"
          ? `!${key}`
          : `${key} ${operator === "In" ? "in" : "notin"} (${(values ?? []).join(",")})`,
    ),
  ];
  return terms.join(",");
}

/** Filters in one line: `labels app=payments,!canary; environments production; kinds Deployment`. */
export function filtersText(filters: WebhookFilters): string {
  const labels = selectorText(filters.label_selector);
  return [
    ...(labels ? [`labels ${labels}`] : []),
    ...(filters.environments ? [`environments ${filters.environments.join(",")}`] : []),
    ...(filters.kinds ? [`kinds ${filters.kinds.join(",")}`] : []),
  ].join("; ");
}
