import type { WebhookFilters } from "../../delivery-engine/event-filters.js";
import { webhookFiltersInput } from "../../webhooks/filter-schemas.js";
import type { WebhookSpecFilters } from "../api/filters-schema.js";
import { ConfigurationProblem } from "./configuration-problem.js";

/**
 * spec.filters as the service stores them, checked by the API's own schema, so a resource and an API
 * request are held to the same rules and messages; a problem is Ready=False with reason InvalidFilters,
 * its message naming the field as the resource spells it.
 */
export function filtersFromSpec(filters: WebhookSpecFilters | undefined): WebhookFilters | null {
  if (filters === undefined) return null;
  const selector = filters.labelSelector;
  const asApi = {
    ...(selector
      ? {
          label_selector: {
            ...(selector.matchLabels ? { match_labels: selector.matchLabels } : {}),
            ...(selector.matchExpressions ? { match_expressions: selector.matchExpressions } : {}),
          },
        }
      : {}),
    ...(filters.environments ? { environments: filters.environments } : {}),
    ...(filters.kinds ? { kinds: filters.kinds } : {}),
  };
  const parsed = webhookFiltersInput.safeParse(asApi);
  if (parsed.success) return parsed.data;
  const messages = parsed.error.issues.slice(0, 5).map((issue) => resourceSpelling(issue.message));
  throw new ConfigurationProblem("InvalidFilters", `spec.${messages.join("; spec.")}`);
}

/** The API's field names in a message as the resource spells them. */
const resourceSpelling = (message: string) =>
  message
    .replaceAll("label_selector", "labelSelector")
    .replaceAll("match_labels", "matchLabels")
    .replaceAll("match_expressions", "matchExpressions");
