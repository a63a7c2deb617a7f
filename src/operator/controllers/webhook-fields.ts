import type { WebhookFilters } from "../../delivery-engine/event-filters.js";
import { httpUrl } from "../../http/schemas.js";
import type { OwnedWebhookFormat } from "../../webhooks/owned-store.js";
import { validHeaderValue } from "../api/spec-rules.js";
import type { WebhookSpec } from "../api/webhook-v1alpha1.js";
import { ConfigurationProblem } from "./configuration-problem.js";
import { filtersFromSpec } from "./filter-fields.js";
import { type SecretGetter, secretText } from "./secret-values.js";

/** What a Webhook resource asks of its service webhook: the address, the format settings, the filters. */
export type OwnedWebhookFields = {
  url: string;
  filters: WebhookFilters | null;
} & Required<OwnedWebhookFormat>;

/**
 * Throws for a template that does not parse, with the line in `.line` when known: the template
 * format's own parser (formats/template.ts `checkTemplate`, on a template thread), handed in by the
 * controller.
 */
export type TemplateCheck = (source: string) => Promise<void>;

/** The names of the Secrets a spec references for its address and headers (the signing one aside). */
export function fieldSecretNames(spec: WebhookSpec): string[] {
  const names = (spec.headers ?? []).flatMap((header) =>
    header.valueFrom ? [header.valueFrom.secretKeyRef.name] : [],
  );
  if (spec.urlSecretRef) names.push(spec.urlSecretRef.name);
  return names;
}

/**
 * A validated spec as the service's webhook fields, each absent setting at the API's default (so one
 * removed from the spec is reset, not kept). Values held in Secrets are read here; a URL from a Secret
 * passes the API's URL rule like `spec.url`, and neither it nor a header's value is ever quoted.
 */
export async function webhookFieldsFromSpec(
  spec: WebhookSpec,
  namespace: string,
  getSecret: SecretGetter,
  checkTemplate?: TemplateCheck,
): Promise<OwnedWebhookFields> {
  if (spec.template !== undefined && checkTemplate) await templateProblem(spec.template, checkTemplate);
  const filters = filtersFromSpec(spec.filters);
  const headers: Record<string, string> = {};
  for (const header of spec.headers ?? []) {
    const field = `spec.headers ${header.name}`;
    const ref = header.valueFrom?.secretKeyRef;
    const value = ref ? await secretText(getSecret, namespace, ref, field) : (header.value ?? "");
    if (ref && !validHeaderValue(value)) {
      throw new ConfigurationProblem(
        "InvalidSecretValue",
        `Secret ${namespace}/${ref.name} key '${ref.key}' (${field}) is not a valid header value: a header value must be printable ASCII, with no line breaks or other control characters.`,
      );
    }
    headers[header.name] = value;
  }
  return {
    url: await specUrl(spec, namespace, getSecret),
    format: spec.format ?? "envelope",
    cloudevents_mode: spec.cloudEventsMode ?? "structured",
    template: spec.template ?? null,
    template_content_type: spec.templateContentType ?? "application/json",
    signature_scheme: spec.signatureScheme ?? "hmac-sha256",
    headers: Object.keys(headers).length > 0 ? headers : null,
    filters,
    rollout_details: spec.rolloutDetails ?? false,
  };
}

async function specUrl(spec: WebhookSpec, namespace: string, getSecret: SecretGetter): Promise<string> {
  const ref = spec.urlSecretRef;
  // validateWebhookSpec has made sure of exactly one of url and urlSecretRef.
  if (!ref) return spec.url as string;
  const url = await secretText(getSecret, namespace, ref, "spec.urlSecretRef");
  const where = `The URL in Secret ${namespace}/${ref.name} key '${ref.key}' (spec.urlSecretRef)`;
  const problem = httpUrl(where).safeParse(url).error?.issues[0];
  if (problem) throw new ConfigurationProblem("InvalidSecretValue", `${problem.message}.`);
  return url;
}

/** A template that does not parse is Ready=False naming the line, as the API answers 400. */
async function templateProblem(source: string, checkTemplate: TemplateCheck): Promise<void> {
  try {
    await checkTemplate(source);
  } catch (error) {
    // The parser's message names the line when it knows it ("Line 3: …"); `.line` alone is added.
    const line = (error as { line?: unknown }).line;
    const message = error instanceof Error ? error.message : String(error);
    const where = typeof line === "number" && !message.startsWith(`Line ${line}:`) ? `Line ${line}: ` : "";
    throw new ConfigurationProblem("InvalidTemplate", `spec.template does not parse: ${where}${message}`);
  }
}
