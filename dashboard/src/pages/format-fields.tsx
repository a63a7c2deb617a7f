import { FieldError } from "../components/errors";
import {
  type CloudEventsMode,
  type DeliveryFormat,
  deliveryFormats,
  formatLabels,
  type SignatureScheme,
  type WebhookFormatBody,
  type WebhookFormatFields,
} from "../webhook-formats";

// The shape of a webhook's deliveries in its form: the format, CloudEvents' mode, the signature scheme
// and, for the template format, the template and its content type.

export interface FormatValues {
  format: DeliveryFormat;
  cloudeventsMode: CloudEventsMode;
  signatureScheme: SignatureScheme;
  template: string;
  templateContentType: string;
}

export function formatValuesOf(webhook: WebhookFormatFields | undefined): FormatValues {
  return {
    format: webhook?.format ?? "envelope",
    cloudeventsMode: webhook?.cloudevents_mode ?? "structured",
    signatureScheme: webhook?.signature_scheme ?? "hmac-sha256",
    template: webhook?.template ?? "",
    templateContentType: webhook?.template_content_type ?? "application/json",
  };
}

/** Every format field as the values say (for a preview of the draft). */
export function fullFormatBody(values: FormatValues): WebhookFormatBody {
  const template = values.format === "template";
  return {
    format: values.format,
    // The service keeps a mode only for CloudEvents; every other format reads back "structured".
    cloudevents_mode: values.format === "cloudevents" ? values.cloudeventsMode : "structured",
    signature_scheme: values.signatureScheme,
    template: template ? values.template : null,
    ...(template ? { template_content_type: values.templateContentType } : {}),
  };
}

/**
 * Only the fields that differ from what the webhook has (the defaults for a new one): a webhook saved
 * without touching its format sends the same body as before formats existed.
 */
export function changedFormatBody(values: FormatValues, webhook: WebhookFormatFields | undefined) {
  const before = fullFormatBody(formatValuesOf(webhook));
  const after = fullFormatBody(values);
  const changed = (Object.keys(after) as (keyof WebhookFormatBody)[]).filter(
    (key) => after[key] !== before[key],
  );
  return Object.fromEntries(changed.map((key) => [key, after[key]])) as WebhookFormatBody;
}

export type FormatProblems = Partial<
  Record<"format" | "cloudevents_mode" | "signature_scheme" | "template" | "template_content_type", string>
>;

export function FormatFields(props: {
  values: FormatValues;
  onChange: (values: FormatValues) => void;
  problems: FormatProblems;
}) {
  const { values, problems } = props;
  const set = (change: Partial<FormatValues>) => props.onChange({ ...values, ...change });
  return (
    <fieldset class="field">
      <legend>Format</legend>
      <label for="format">Body format</label>
      <select
        id="format"
        value={values.format}
        onChange={(e) => set({ format: e.currentTarget.value as DeliveryFormat })}
        aria-describedby={problems.format ? "format-error" : "format-help"}
      >
        {deliveryFormats.map((format) => (
          <option key={format} value={format}>
            {formatLabels[format]}
          </option>
        ))}
      </select>
      <FieldError id="format-error" message={problems.format} />
      {!problems.format && (
        <p id="format-help" class="help">
          The envelope is what receivers written for this service expect; the chat formats post a card to a
          Slack, Teams, Discord or Google Chat webhook URL.
        </p>
      )}

      {values.format === "cloudevents" && (
        <div class="radios" role="radiogroup" aria-label="CloudEvents mode">
          {(["structured", "binary"] as const).map((mode) => (
            <label class="check" key={mode}>
              <input
                type="radio"
                name="cloudevents-mode"
                checked={values.cloudeventsMode === mode}
                onChange={() => set({ cloudeventsMode: mode })}
              />
              {mode === "structured"
                ? "Structured mode (application/cloudevents+json)"
                : "Binary mode (ce-* headers, the event's data as the body)"}
            </label>
          ))}
          <FieldError id="cloudevents-mode-error" message={problems.cloudevents_mode} />
        </div>
      )}

      {values.format === "template" && (
        <>
          <label for="template">Template</label>
          <textarea
            id="template"
            class="template-input mono"
            rows={10}
            spellcheck={false}
            value={values.template}
            onInput={(e) => set({ template: e.currentTarget.value })}
            aria-invalid={problems.template ? true : undefined}
            aria-describedby={problems.template ? "template-error" : "template-help"}
          />
          <FieldError id="template-error" message={problems.template} />
          {!problems.template && (
            <p id="template-help" class="help">
              Liquid, rendered for each event; the preview below shows the body it makes.
            </p>
          )}
          <label for="template-content-type">Content type</label>
          <input
            id="template-content-type"
            type="text"
            spellcheck={false}
            value={values.templateContentType}
            onInput={(e) => set({ templateContentType: e.currentTarget.value })}
            aria-invalid={problems.template_content_type ? true : undefined}
            aria-describedby={problems.template_content_type ? "template-content-type-error" : undefined}
          />
          <FieldError id="template-content-type-error" message={problems.template_content_type} />
        </>
      )}

      <label for="signature-scheme">Signature</label>
      <select
        id="signature-scheme"
        value={values.signatureScheme}
        onChange={(e) => set({ signatureScheme: e.currentTarget.value as SignatureScheme })}
        aria-describedby={problems.signature_scheme ? "signature-scheme-error" : undefined}
      >
        <option value="hmac-sha256">X-Webhook-Signature (HMAC-SHA256)</option>
        <option value="standard-webhooks">
          Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)
        </option>
      </select>
      <FieldError id="signature-scheme-error" message={problems.signature_scheme} />
    </fieldset>
  );
}
