import { ConflictError, ValidationError } from "../errors.js";
import type { DeploymentEventType } from "../event-types.js";
import type { ProjectRow } from "../projects/store.js";
import type { FormatSettings } from "./format-fields.js";
import { previewDelivery } from "./preview.js";

// Checks made when a webhook is saved that need more than its fields' own rules: settings each valid
// alone that together would make every delivery fail. Refused now, with what to change, rather than
// accepted and then failing at every delivery.

const invalid = (path: string, message: string) =>
  new ValidationError(`Invalid request: ${path}: ${message}`, [{ path, message }]);

const isDeploymentEvent = (name: string): name is DeploymentEventType => name.startsWith("deployment.");

/**
 * A template webhook renders the example event of each deployment event it subscribes to (the only
 * events emitted), as a preview does: a template whose output for one of them is refused (not JSON
 * while the content type is JSON, over the output limit, a render that fails) would fail every such
 * delivery. The renderer's message says where ("at position 12"), never quoting the output.
 */
export async function assertTemplateRenders(
  project: Pick<ProjectRow, "id" | "name">,
  settings: FormatSettings,
  events: string[],
): Promise<void> {
  if (settings.format !== "template") return;
  const subscribed = events.filter(isDeploymentEvent);
  const examples: DeploymentEventType[] = subscribed.length > 0 ? subscribed : ["deployment.succeeded"];
  for (const eventType of examples) {
    const preview = await previewDelivery(
      project,
      { settings, secret: null, customHeaderNames: [] },
      eventType,
    );
    if (preview.error !== undefined) {
      // A stopped template's message ends without a full stop; the others with " Nothing was sent.".
      const stripped = preview.error.replace(/ Nothing was sent\.$/, "");
      const reason = /[.!?]$/.test(stripped) ? stripped : `${stripped}.`;
      throw invalid(
        "body.template",
        `the example ${eventType} event does not render to a body that can be sent: ${reason} Preview the webhook to see its output.`,
      );
    }
  }
}

/**
 * Standard Webhooks receivers refuse a delivery without webhook-signature, so that scheme needs a secret.
 * Checked when a request names the scheme or the secret. In an update a request that is fine by itself
 * but leaves the stored webhook unsigned (the scheme set on a webhook without a secret, or its secret
 * removed) is a conflict (409), as the format rules are.
 */
export function assertStandardWebhooksSigned(
  body: { signature_scheme?: string | undefined; secret?: string | null | undefined },
  scheme: FormatSettings["signatureScheme"],
  stored: { hasSecret: boolean } | undefined,
): void {
  if (scheme !== "standard-webhooks") return;
  if (body.signature_scheme === undefined && body.secret === undefined) return;
  const hasSecret = body.secret === undefined ? (stored?.hasSecret ?? false) : body.secret !== null;
  if (hasSecret) return;
  const message =
    'signature_scheme "standard-webhooks" needs a secret: every Standard Webhooks library refuses an unsigned delivery. Give a secret, or use signature_scheme "hmac-sha256"';
  if (stored === undefined || (body.signature_scheme !== undefined && body.secret === null)) {
    throw invalid("body.secret", message);
  }
  throw new ConflictError(`The webhook would be left without a secret: ${message}.`);
}
