import type { FilterSubject, LabelExpression, WebhookFilters } from "../delivery-engine/event-filters.js";
import { quoted } from "./filter-rules.js";

// Why a webhook would not get an event of a workload, part by part, in words (docs/api.md, "Checking
// filters"). The emit statement decides in SQL (delivery-engine/sql/emit-events.sql); these are its
// rules in TypeScript, Kubernetes' for labels (NotIn and DoesNotExist hold when the label is absent),
// and filter-check.test.ts records a real event of each example to check that the two agree.

const list = (values: readonly string[]) => values.join(", ");

function expressionReason(expression: LabelExpression, labels: Record<string, string>): string | undefined {
  const { key, operator } = expression;
  const values = expression.values ?? [];
  const has = Object.hasOwn(labels, key);
  const value = labels[key];
  const actual = has ? `it is ${quoted(value as string)}` : "the workload has no such label";
  switch (operator) {
    case "In":
      return has && values.includes(value as string)
        ? undefined
        : `label ${key} must be one of (${list(values)}): ${actual}`;
    case "NotIn":
      return has && values.includes(value as string)
        ? `label ${key} must not be one of (${list(values)}): ${actual}`
        : undefined;
    case "Exists":
      return has ? undefined : `label ${key} must exist: the workload has no such label`;
    case "DoesNotExist":
      return has ? `label ${key} must not exist: ${actual}` : undefined;
    default:
      return `label ${key}: an operator this version does not know (${quoted(String(operator))})`;
  }
}

/** The reasons the filters leave out an event of `subject`; none when they let it through. */
export function filterReasons(filters: WebhookFilters | null, subject: FilterSubject): string[] {
  if (filters === null) return [];
  const reasons: string[] = [];
  if (filters.environments) {
    if (subject.environment === null) {
      reasons.push(
        `the event names no environment, and the webhook takes only: ${list(filters.environments)}`,
      );
    } else if (!filters.environments.includes(subject.environment)) {
      reasons.push(`environment ${quoted(subject.environment)} is not one of: ${list(filters.environments)}`);
    }
  }
  if (filters.kinds) {
    if (subject.kind === null) {
      reasons.push(`the event names no workload kind, and the webhook takes only: ${list(filters.kinds)}`);
    } else if (!filters.kinds.includes(subject.kind)) {
      reasons.push(`kind ${quoted(subject.kind)} is not one of: ${list(filters.kinds)}`);
    }
  }
  const selector = filters.label_selector;
  if (selector) {
    if (subject.labels === null) {
      reasons.push("the event names no workload labels, and the webhook has a label selector");
    } else {
      const labels = subject.labels;
      for (const [key, wanted] of Object.entries(selector.match_labels ?? {})) {
        if (labels[key] !== wanted || !Object.hasOwn(labels, key)) {
          const actual = Object.hasOwn(labels, key)
            ? `it is ${quoted(labels[key] as string)}`
            : "the workload has no such label";
          reasons.push(`label ${key} must be ${quoted(wanted)}: ${actual}`);
        }
      }
      for (const expression of selector.match_expressions ?? []) {
        const reason = expressionReason(expression, labels);
        if (reason !== undefined) reasons.push(reason);
      }
    }
  }
  return reasons;
}
