import type { Webhook } from "../api-types";
import { formatNames } from "../webhook-formats";

/** How the webhook's deliveries look on the wire: format, signature and custom header names. */
export function FormatSummary({ webhook }: { webhook: Webhook }) {
  const fields = webhook;
  const format = fields?.format ?? "envelope";
  const mode = format === "cloudevents" ? ` (${fields?.cloudevents_mode ?? "structured"} mode)` : "";
  const signature = !webhook.has_secret
    ? "None (no secret)"
    : fields?.signature_scheme === "standard-webhooks"
      ? "Standard Webhooks (webhook-signature)"
      : "X-Webhook-Signature (HMAC-SHA256)";
  const headers = fields?.header_names ?? [];
  return (
    <section class="card" aria-labelledby="format-title">
      <h2 id="format-title">Format</h2>
      <dl class="facts">
        <div class="fact">
          <dt>Body</dt>
          <dd>
            {formatNames[format]}
            {mode}
            {format === "template" && fields?.template_content_type && (
              <span class="muted"> · {fields.template_content_type}</span>
            )}
          </dd>
        </div>
        <div class="fact">
          <dt>Signature</dt>
          <dd>{signature}</dd>
        </div>
        <div class="fact">
          <dt>Custom headers</dt>
          <dd>
            {headers.length === 0
              ? "None"
              : headers.map((name, i) => (
                  <span key={name}>
                    {i > 0 && ", "}
                    <code>{name}</code>
                  </span>
                ))}
          </dd>
        </div>
      </dl>
    </section>
  );
}
