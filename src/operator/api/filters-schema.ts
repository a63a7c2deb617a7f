import { labelOperators } from "../../delivery-engine/event-filters.js";
import { filterLimits, workloadKinds } from "../../webhooks/filter-rules.js";

// spec.filters of the Webhook resource: the API's filters (docs/api.md, Filters) spelled the way
// Kubernetes spells them (labelSelector with matchLabels and matchExpressions, as a Deployment's
// selector). The bounds are the API's; label keys and values are checked by the operator with the
// API's own rules (a CEL rule over a map's keys would cost the API server more than it is worth).

export interface WebhookSpecFilters {
  labelSelector?: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: (typeof labelOperators)[number]; values?: string[] }[];
  };
  environments?: string[];
  kinds?: (typeof workloadKinds)[number][];
}

const expressionSchema = {
  type: "object",
  required: ["key", "operator"],
  properties: {
    key: {
      type: "string",
      minLength: 1,
      maxLength: filterLimits.labelPrefixLength + 1 + filterLimits.labelNameLength,
    },
    operator: { type: "string", enum: [...labelOperators] },
    values: {
      type: "array",
      maxItems: filterLimits.expressionValues,
      items: { type: "string", maxLength: filterLimits.labelNameLength },
    },
  },
  "x-kubernetes-validations": [
    {
      rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
      message:
        "In and NotIn need at least one value; Exists and DoesNotExist take none (an empty list at most)",
    },
  ],
} as const;

export const filtersSchema = {
  type: "object",
  minProperties: 1,
  description:
    "Opt-in: which of the subscribed events this webhook gets. Every part given must match: labelSelector (the workload's labels, as a Deployment's selector), environments (the rollout's environment), kinds (Deployment, StatefulSet, DaemonSet). Absent: every subscribed event.",
  properties: {
    labelSelector: {
      type: "object",
      minProperties: 1,
      properties: {
        matchLabels: {
          type: "object",
          minProperties: 1,
          maxProperties: filterLimits.matchLabels,
          additionalProperties: { type: "string", maxLength: filterLimits.labelNameLength },
        },
        matchExpressions: {
          type: "array",
          minItems: 1,
          maxItems: filterLimits.matchExpressions,
          items: expressionSchema,
        },
      },
    },
    environments: {
      type: "array",
      minItems: 1,
      maxItems: filterLimits.environments,
      items: { type: "string", minLength: 1, maxLength: filterLimits.environmentLength },
    },
    kinds: {
      type: "array",
      minItems: 1,
      maxItems: workloadKinds.length,
      items: { type: "string", enum: [...workloadKinds] },
      "x-kubernetes-list-type": "set",
    },
  },
} as const;
