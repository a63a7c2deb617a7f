// A webhook's filters as the emit statement applies them (sql/emit-events.sql, `targets`). The webhooks feature validates them
// (src/webhooks/filters.ts) and stores them in this shape in webhooks.filters (migration 019); the
// operator passes each event's workload. Matching happens in SQL, where the emit picks the subscribers,
// so a filtered-out event creates no delivery row and costs no extra round trip.

export const labelOperators = ["In", "NotIn", "Exists", "DoesNotExist"] as const;
export type LabelOperator = (typeof labelOperators)[number];

/** One requirement of a Kubernetes label selector; `values` only with In and NotIn. */
export interface LabelExpression {
  key: string;
  operator: LabelOperator;
  values?: string[];
}

export interface LabelSelector {
  match_labels?: Record<string, string>;
  match_expressions?: LabelExpression[];
}

/** The stored filters: each part that is present must match (an absent one matches every event). */
export interface WebhookFilters {
  label_selector?: LabelSelector;
  environments?: string[];
  kinds?: string[];
}

/** The workload an event comes from, as the operator saw it. */
export interface EventWorkload {
  kind: string;
  labels: Record<string, string>;
}

/** What filters are matched against: null where the event does not say (then a filter on it fails). */
export interface FilterSubject {
  environment: string | null;
  kind: string | null;
  labels: Record<string, string> | null;
}

/** The subject of an event: its workload, and the environment its payload carries. */
export function filterSubject(payload: object, workload: EventWorkload | undefined): FilterSubject {
  const environment = (payload as { environment?: unknown }).environment;
  return {
    environment: typeof environment === "string" ? environment : null,
    kind: workload?.kind ?? null,
    labels: workload?.labels ?? null,
  };
}
