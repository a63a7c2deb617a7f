// A webhook's filters as the emit statement applies them (emit.ts). The webhooks feature validates them
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

/**
 * A boolean SQL expression: the webhook `w` (with its `filters` column) takes the event `g` (with a jsonb
 * `subject`, a FilterSubject). A webhook without filters takes every event and costs one IS NULL test.
 * A part the event cannot answer (no workload known, say) does not match: a filter is a promise of what
 * the receiver gets. The label rules are Kubernetes': NotIn and DoesNotExist hold when the label is
 * absent. The values come from the rows, never from SQL text: nothing a tenant sends is spliced in.
 */
export const filtersMatch = (w: string, g: string) => `(${w}.filters IS NULL OR (
      (NOT (${w}.filters ? 'environments')
        OR COALESCE((${w}.filters -> 'environments') ? (${g}.subject ->> 'environment'), false))
      AND (NOT (${w}.filters ? 'kinds') OR COALESCE((${w}.filters -> 'kinds') ? (${g}.subject ->> 'kind'), false))
      AND (NOT (${w}.filters ? 'label_selector') OR (
        jsonb_typeof(${g}.subject -> 'labels') = 'object'
        AND (${g}.subject -> 'labels') @> COALESCE(${w}.filters -> 'label_selector' -> 'match_labels', '{}')
        AND NOT EXISTS (
          SELECT 1 FROM jsonb_array_elements(COALESCE(${w}.filters -> 'label_selector' -> 'match_expressions', '[]')) e
           WHERE NOT CASE e ->> 'operator'
             WHEN 'In' THEN COALESCE((e -> 'values') ? (${g}.subject -> 'labels' ->> (e ->> 'key')), false)
             WHEN 'NotIn' THEN NOT COALESCE((e -> 'values') ? (${g}.subject -> 'labels' ->> (e ->> 'key')), false)
             WHEN 'Exists' THEN (${g}.subject -> 'labels') ? (e ->> 'key')
             WHEN 'DoesNotExist' THEN NOT ((${g}.subject -> 'labels') ? (e ->> 'key'))
             ELSE false END)))))`;
