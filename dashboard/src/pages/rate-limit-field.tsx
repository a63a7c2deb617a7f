import type { Webhook } from "../api-types";
import { FieldError } from "../components/errors";

// A webhook's rate limit in its form (docs/deliveries.md, "Pace"): off, or at most `burst` deliveries at
// once refilled at `per_second` a second. Sent only when changed, so a form saved without touching it
// sends the body it always did.

export interface RateLimitValues {
  on: boolean;
  perSecond: string;
  burst: string;
}

export const rateLimitValuesOf = (webhook: Webhook | undefined): RateLimitValues => ({
  on: webhook?.rate_limit != null,
  perSecond: String(webhook?.rate_limit?.per_second ?? 1),
  burst: String(webhook?.rate_limit?.burst ?? 10),
});

/** The API's `rate_limit` for the values, only when it differs from the saved one (numbers as typed: the API's 400 names a bad one). */
export function rateLimitBody(values: RateLimitValues, webhook: Webhook | undefined) {
  const wanted = values.on ? { per_second: Number(values.perSecond), burst: Number(values.burst) } : null;
  const saved = webhook?.rate_limit ?? null;
  const same =
    wanted === null || saved === null
      ? wanted === saved
      : wanted.per_second === saved.per_second && wanted.burst === saved.burst;
  return same ? {} : { rate_limit: wanted };
}

export function RateLimitField(props: {
  values: RateLimitValues;
  onChange: (values: RateLimitValues) => void;
  problem: string | undefined;
}) {
  const { values, onChange, problem } = props;
  const set = (change: Partial<RateLimitValues>) => onChange({ ...values, ...change });
  return (
    <fieldset class="field">
      <label class="check">
        <input type="checkbox" checked={values.on} onChange={(e) => set({ on: e.currentTarget.checked })} />
        <span>
          <strong>Limit the rate</strong>
          <span class="help">
            For a receiver that takes only so many requests: deliveries over the limit wait, they do not fail.
            Test events and replays are sent at once.
          </span>
        </span>
      </label>
      {values.on && (
        <div class="inline-fields">
          <label>
            At most{" "}
            <input
              type="number"
              min={0.001}
              max={10000}
              step="any"
              aria-label="Deliveries a second"
              value={values.perSecond}
              onInput={(e) => set({ perSecond: e.currentTarget.value })}
            />{" "}
            deliveries a second, in bursts of up to{" "}
            <input
              type="number"
              min={1}
              max={10000}
              aria-label="Burst"
              value={values.burst}
              onInput={(e) => set({ burst: e.currentTarget.value })}
            />
          </label>
        </div>
      )}
      <FieldError id="rate-limit-error" message={problem} />
    </fieldset>
  );
}
