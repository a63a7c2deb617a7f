import type { ServiceInfo, Webhook } from "../api-types";
import { When } from "../components/badges";
import { FieldError } from "../components/errors";
import { retryWaits, useServiceInfo } from "../service-info";
import { rateLimitText } from "./pace-summary";

// The opt-in delivery policies of a webhook (automatic retries, auto-disable) and the automatic
// disable they may record: shown on the webhook's page, edited in its form.

export const maxRetryAttempts = 6;

/** Only the waits that apply: up to 3 attempts are 2 retries, after the first two waits. */
function retryText(webhook: Webhook, info: ServiceInfo | undefined): string {
  const attempts = webhook.retry_policy?.max_attempts;
  if (attempts === undefined) return "Off: a failed delivery is not retried automatically";
  if (attempts === 1) return "1 attempt per event: no automatic retry";
  const waits = info ? `: retries after ${retryWaits(info, attempts)}` : "";
  return `Up to ${attempts} attempts per event${waits}`;
}

const autoDisableText = (webhook: Webhook) =>
  webhook.auto_disable
    ? `After ${webhook.auto_disable.after_failures} failed deliveries in a row over at least ${duration(webhook.auto_disable.min_duration_seconds)}`
    : "Off";

function duration(seconds: number): string {
  if (seconds % 3600 === 0 && seconds > 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0 && seconds > 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

export function DeliveryPolicy({ webhook }: { webhook: Webhook }) {
  const info = useServiceInfo();
  return (
    <section class="card" aria-labelledby="policy-title">
      <h2 id="policy-title">Delivery policy</h2>
      <dl class="facts">
        <div class="fact">
          <dt>Automatic retries</dt>
          <dd>{retryText(webhook, info)}</dd>
        </div>
        <div class="fact">
          <dt>Auto-disable</dt>
          <dd>{autoDisableText(webhook)}</dd>
        </div>
        <div class="fact">
          <dt>Rate limit</dt>
          <dd>{rateLimitText(webhook)}</dd>
        </div>
      </dl>
    </section>
  );
}

/** The service disabled this webhook itself: why, when, and how to turn it back on. */
export function AutoDisabledNotice({ webhook }: { webhook: Webhook }) {
  if (webhook.disabled_reason === null) return null;
  const ref = webhook.managed_by;
  return (
    <div class="alert alert-warn" role="alert">
      <strong>
        Disabled automatically
        {webhook.disabled_at && (
          <>
            {" "}
            <When iso={webhook.disabled_at} />
          </>
        )}
      </strong>
      <p>{webhook.disabled_reason}</p>
      <p>
        {ref ? (
          <>
            Any change to the spec of Webhook <code>{`${ref.namespace}/${ref.name}`}</code> enables it again.
          </>
        ) : (
          "Enable it again (Edit, or the switch in the list) once the receiver works; deliveries recorded as not sent can then be retried."
        )}
      </p>
    </div>
  );
}

export interface PolicyValues {
  retries: number | null;
  autoDisable: boolean;
  afterFailures: string;
  minMinutes: string;
}

export const policyValuesOf = (webhook: Webhook | undefined): PolicyValues => ({
  retries: webhook?.retry_policy?.max_attempts ?? null,
  autoDisable: webhook?.auto_disable != null,
  afterFailures: String(webhook?.auto_disable?.after_failures ?? 10),
  minMinutes: String((webhook?.auto_disable?.min_duration_seconds ?? 3600) / 60),
});

/** The API's fields for the form's values; numbers the user typed badly are the API's 400 to report. */
export function policyBody(values: PolicyValues) {
  return {
    retry_policy: values.retries === null ? null : { max_attempts: values.retries },
    auto_disable: values.autoDisable
      ? {
          after_failures: Number(values.afterFailures),
          min_duration_seconds: Math.round(Number(values.minMinutes) * 60),
        }
      : null,
  };
}

export function PolicyFields(props: {
  values: PolicyValues;
  onChange: (values: PolicyValues) => void;
  problems: { retry_policy?: string | undefined; auto_disable?: string | undefined };
}) {
  const { values, onChange, problems } = props;
  const info = useServiceInfo();
  const set = (change: Partial<PolicyValues>) => onChange({ ...values, ...change });
  return (
    <>
      <div class="field">
        <label for="retries">Automatic retries</label>
        <select
          id="retries"
          value={values.retries === null ? "off" : String(values.retries)}
          onChange={(e) => {
            const value = e.currentTarget.value;
            set({ retries: value === "off" ? null : Number(value) });
          }}
          aria-invalid={problems.retry_policy ? true : undefined}
        >
          <option value="off">Off (no automatic retry)</option>
          {Array.from({ length: maxRetryAttempts - 1 }, (_, i) => i + 2).map((attempts) => (
            <option key={attempts} value={String(attempts)}>
              Up to {attempts} attempts
            </option>
          ))}
        </select>
        <FieldError id="retries-error" message={problems.retry_policy} />
        <p class="help">
          {values.retries === null
            ? "A failed delivery waits until someone replays it."
            : `${info ? `Retries wait ${retryWaits(info, values.retries)}; each` : "Each retry"} is a new delivery record.`}
        </p>
      </div>
      <fieldset class="field">
        <label class="check">
          <input
            type="checkbox"
            checked={values.autoDisable}
            onChange={(e) => set({ autoDisable: e.currentTarget.checked })}
          />
          <span>
            <strong>Disable after repeated failures</strong>
            <span class="help">Stops deliveries to a receiver that keeps failing; you enable it again.</span>
          </span>
        </label>
        {values.autoDisable && (
          <div class="inline-fields">
            <label>
              After{" "}
              <input
                type="number"
                min={1}
                max={1000}
                aria-label="Failed deliveries in a row"
                value={values.afterFailures}
                onInput={(e) => set({ afterFailures: e.currentTarget.value })}
              />{" "}
              failed deliveries in a row, over at least{" "}
              <input
                type="number"
                min={0}
                aria-label="Minutes"
                value={values.minMinutes}
                onInput={(e) => set({ minMinutes: e.currentTarget.value })}
              />{" "}
              minutes
            </label>
          </div>
        )}
        <FieldError id="auto-disable-error" message={problems.auto_disable} />
      </fieldset>
    </>
  );
}
