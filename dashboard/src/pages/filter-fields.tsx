import { type WorkloadKind, workloadKinds } from "../../../src/webhooks/filter-rules.js";
import { parseSelector, SelectorSyntaxError, selectorText } from "../../../src/webhooks/selector-syntax.js";
import type { CreateWebhook, Webhook } from "../api-types";
import { FieldError } from "../components/errors";

// A webhook's filters (docs/api.md, Filters): shown on its page, edited in its form. The label
// selector is written as kubectl writes one, read by the same code as the CLI's -l.

export function FilterSummary({ webhook }: { webhook: Webhook }) {
  const filters = webhook.filters;
  const labels = selectorText(filters?.label_selector);
  return (
    <section class="card" aria-labelledby="filters-title">
      <h2 id="filters-title">Filters</h2>
      {!filters ? (
        <p class="muted">None: every subscribed event of every workload.</p>
      ) : (
        <dl class="facts">
          <div class="fact">
            <dt>Workload labels</dt>
            <dd>{labels ? <code>{labels}</code> : "Any"}</dd>
          </div>
          <div class="fact">
            <dt>Environments</dt>
            <dd>{filters.environments ? filters.environments.join(", ") : "Any"}</dd>
          </div>
          <div class="fact">
            <dt>Workload kinds</dt>
            <dd>{filters.kinds ? filters.kinds.join(", ") : "Any"}</dd>
          </div>
        </dl>
      )}
    </section>
  );
}

export interface FilterValues {
  selector: string;
  environments: string;
  kinds: WorkloadKind[];
}

type Filters = NonNullable<CreateWebhook["filters"]>;

export const filterValuesOf = (webhook: Webhook | undefined): FilterValues => ({
  selector: selectorText(webhook?.filters?.label_selector),
  environments: webhook?.filters?.environments?.join(", ") ?? "",
  kinds: webhook?.filters?.kinds ?? [],
});

/**
 * The API's `filters` for the form's values: null when every field is empty. A selector that does not
 * read is the form's own problem, reported before anything is sent.
 */
export function filtersBody(values: FilterValues): { filters: Filters | null } | { problem: string } {
  let selector: Filters["label_selector"];
  if (values.selector.trim() !== "") {
    try {
      selector = parseSelector(values.selector);
    } catch (error) {
      if (error instanceof SelectorSyntaxError) return { problem: error.message };
      throw error;
    }
  }
  const environments = values.environments
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const filters: Filters = {
    ...(selector ? { label_selector: selector } : {}),
    ...(environments.length > 0 ? { environments } : {}),
    ...(values.kinds.length > 0 ? { kinds: values.kinds } : {}),
  };
  return { filters: Object.keys(filters).length > 0 ? filters : null };
}

export function FilterFields(props: {
  values: FilterValues;
  onChange: (values: FilterValues) => void;
  problem: string | undefined;
}) {
  const { values, onChange, problem } = props;
  const set = (change: Partial<FilterValues>) => onChange({ ...values, ...change });
  const toggle = (kind: WorkloadKind, on: boolean) =>
    set({ kinds: workloadKinds.filter((k) => (k === kind ? on : values.kinds.includes(k))) });
  return (
    <fieldset class="field">
      <legend>Filters</legend>
      <p class="help">
        Optional: only the subscribed events that match all you fill in. Leave empty for all.
      </p>
      <label for="filter-selector">Workload labels</label>
      <input
        id="filter-selector"
        type="text"
        placeholder="app=payments,tier in (web,api),!canary"
        value={values.selector}
        onInput={(e) => set({ selector: e.currentTarget.value })}
        aria-invalid={problem ? true : undefined}
        aria-describedby="filters-error"
      />
      <label for="filter-environments">Environments</label>
      <input
        id="filter-environments"
        type="text"
        placeholder="production, staging"
        value={values.environments}
        onInput={(e) => set({ environments: e.currentTarget.value })}
      />
      <fieldset class="inline-fields">
        <legend>Workload kinds</legend>
        {workloadKinds.map((kind) => (
          <label key={kind} class="check">
            <input
              type="checkbox"
              checked={values.kinds.includes(kind)}
              onChange={(e) => toggle(kind, e.currentTarget.checked)}
            />
            <span>{kind}</span>
          </label>
        ))}
      </fieldset>
      <FieldError id="filters-error" message={problem} />
    </fieldset>
  );
}
