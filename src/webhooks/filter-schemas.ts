import {
  type LabelExpression,
  type LabelSelector,
  labelOperators,
  type WebhookFilters,
} from "../delivery-engine/event-filters.js";
import { z } from "../http/openapi.js";
import {
  filterLimits,
  isLabelValue,
  labelKeyDocument,
  labelKeyProblem,
  labelValueDocument,
  quoted,
  workloadKinds,
} from "./filter-rules.js";

// A webhook's filters in the API (docs/api.md, Filters): which of its subscribed events it gets. The
// stored form is this shape (delivery-engine/event-filters.ts); lists lose their duplicates.

const where = "filters.label_selector";
const objectError = (message: string) => (issue: { code?: string }) =>
  issue.code === "unrecognized_keys" ? undefined : message;

const labelKey = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .superRefine((key, ctx) => {
      const problem = labelKeyProblem(key);
      if (problem)
        ctx.addIssue({ code: "custom", message: `${field} ${quoted(key)} is not a label key: ${problem}` });
    })
    .openapi(labelKeyDocument);

const labelValue = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine(isLabelValue, {
      error: `${field} must be empty or 1–${filterLimits.labelNameLength} letters, digits, '-', '_' or '.', starting and ending with a letter or digit`,
    })
    .openapi(labelValueDocument);

const matchLabelsDocument = {
  minProperties: 1,
  maxProperties: filterLimits.matchLabels,
  propertyNames: labelKeyDocument,
};

// Keys are checked after the record (a key schema's own message would be replaced by the record's).
const matchLabels = z
  .record(z.string(), labelValue(`${where}.match_labels value`), {
    error: `${where}.match_labels must be an object {"label": "value"}`,
  })
  .superRefine((labels, ctx) => {
    const keys = Object.keys(labels);
    if (keys.length === 0)
      ctx.addIssue({ code: "custom", message: `${where}.match_labels must name at least one label` });
    if (keys.length > filterLimits.matchLabels) {
      ctx.addIssue({
        code: "custom",
        message: `${where}.match_labels must name at most ${filterLimits.matchLabels} labels`,
      });
      return;
    }
    for (const key of keys) {
      const problem = labelKeyProblem(key);
      if (problem)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `${where}.match_labels key ${quoted(key)} is not a label key: ${problem}`,
        });
    }
  })
  .openapi({ ...matchLabelsDocument, example: { app: "payments" } });

// The values rule of a requirement, as the document says it: if/then/else, which generators leave to
// validators (an anyOf would make a class per variant).
const valuesRule = {
  if: { properties: { operator: { enum: ["In", "NotIn"] } } },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, never awaited
  then: {
    required: ["values"],
    properties: { values: { type: "array" as const, items: { type: "string" as const }, minItems: 1 } },
  },
  else: {
    properties: { values: { type: "array" as const, items: { type: "string" as const }, maxItems: 0 } },
  },
};

const expression = z
  .strictObject(
    {
      key: labelKey(`${where}.match_expressions key`),
      operator: z.enum(labelOperators, {
        error: `${where}.match_expressions operator must be one of: ${labelOperators.join(", ")}`,
      }),
      values: z
        .array(labelValue(`${where}.match_expressions value`), {
          error: `${where}.match_expressions values must be an array of strings`,
        })
        .max(
          filterLimits.expressionValues,
          `${where}.match_expressions values must list at most ${filterLimits.expressionValues} values`,
        )
        .transform((values) => [...new Set(values)])
        .optional(),
    },
    { error: objectError(`each of ${where}.match_expressions must be an object {key, operator, values?}`) },
  )
  .superRefine((requirement, ctx) => {
    const listed = (requirement.values?.length ?? 0) > 0;
    const wantsValues = requirement.operator === "In" || requirement.operator === "NotIn";
    if (wantsValues && !listed) {
      ctx.addIssue({
        code: "custom",
        path: ["values"],
        message: `${where}.match_expressions operator ${requirement.operator} needs at least one value`,
      });
    }
    // Kubernetes' rule: Exists and DoesNotExist take an empty list or none.
    if (!wantsValues && listed) {
      ctx.addIssue({
        code: "custom",
        path: ["values"],
        message: `${where}.match_expressions operator ${requirement.operator} takes no values`,
      });
    }
  })
  .openapi("LabelSelectorRequirement", {
    ...valuesRule,
    description:
      "In and NotIn need values; Exists and DoesNotExist take none (an empty list, or no values field). NotIn and DoesNotExist match a workload without the label.",
  });

const labelSelector = z
  .strictObject(
    {
      match_labels: matchLabels.optional(),
      match_expressions: z
        .array(expression, { error: `${where}.match_expressions must be an array` })
        .min(1, `${where}.match_expressions must list at least one requirement`)
        .max(
          filterLimits.matchExpressions,
          `${where}.match_expressions must list at most ${filterLimits.matchExpressions} requirements`,
        )
        .optional(),
    },
    { error: objectError(`${where} must be an object {match_labels?, match_expressions?}`) },
  )
  .refine(
    (selector) => selector.match_labels !== undefined || selector.match_expressions !== undefined,
    `${where} must have match_labels or match_expressions`,
  )
  .openapi("LabelSelector", {
    // The refine above, as the document says it: a client (or a fuzzer) knows {} is refused.
    minProperties: 1,
    description:
      "A Kubernetes label selector on the workload's labels: every match_labels pair and every requirement must hold.",
  });

const environments = z
  .array(
    z
      .string({ error: "filters.environments must be an array of strings" })
      .min(1, "filters.environments must not contain an empty name")
      .max(
        filterLimits.environmentLength,
        `each of filters.environments must be at most ${filterLimits.environmentLength} characters`,
      ),
    { error: "filters.environments must be an array of environment names" },
  )
  .min(1, "filters.environments must name at least one environment; leave it out to match every environment")
  .max(
    filterLimits.environments,
    `filters.environments must name at most ${filterLimits.environments} environments`,
  )
  .transform((names) => [...new Set(names)])
  .openapi({ example: ["production"] });

const kinds = z
  .array(
    z.enum(workloadKinds, { error: `each of filters.kinds must be one of: ${workloadKinds.join(", ")}` }),
    {
      error: "filters.kinds must be an array of workload kinds",
    },
  )
  .min(1, "filters.kinds must name at least one kind; leave it out to match every kind")
  .max(workloadKinds.length, `filters.kinds must name at most ${workloadKinds.length} kinds`)
  .transform((names) => [...new Set(names)])
  .openapi({ example: ["Deployment"] });

const filtersShape = {
  label_selector: labelSelector.optional(),
  environments: environments.optional(),
  kinds: kinds.optional(),
};

/** The filters a create or update takes; null (or left out on create) means every subscribed event. */
export const webhookFiltersInput = z
  .strictObject(filtersShape, {
    error: objectError("filters must be an object {label_selector?, environments?, kinds?} or null"),
  })
  .refine(
    (filters) => Object.values(filters).some((part) => part !== undefined),
    "filters must have label_selector, environments or kinds; send null for no filters",
  )
  .openapi("WebhookFilters", {
    minProperties: 1,
    description:
      "Which of the subscribed events the webhook gets: every part given must match (label_selector on " +
      "the workload's labels, environments on the rollout's environment, kinds on the workload's kind). " +
      "Left out or null: every subscribed event.",
  });

/** The filters as a response shows them: a fixed order of fields, label keys sorted. */
export function filtersJson(filters: WebhookFilters) {
  return {
    ...(filters.label_selector ? { label_selector: selectorJson(filters.label_selector) } : {}),
    ...(filters.environments ? { environments: filters.environments } : {}),
    ...(filters.kinds ? { kinds: filters.kinds } : {}),
  };
}

function selectorJson(selector: LabelSelector): LabelSelector {
  const labels = selector.match_labels;
  return {
    ...(labels
      ? {
          match_labels: Object.fromEntries(
            Object.keys(labels)
              .sort()
              .map((key) => [key, labels[key] as string]),
          ),
        }
      : {}),
    ...(selector.match_expressions
      ? { match_expressions: selector.match_expressions.map(expressionJson) }
      : {}),
  };
}

const expressionJson = (e: LabelExpression): LabelExpression => ({
  key: e.key,
  operator: e.operator,
  ...(e.values ? { values: e.values } : {}),
});
