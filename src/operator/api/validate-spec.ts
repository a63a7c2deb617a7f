import { Ajv } from "ajv";
import { specSchema, type WebhookSpec } from "./webhook-v1alpha1.js";

// The API server enforces the CRD schema; checking again here covers objects that reached the
// operator some other way (an older CRD, a server without CEL) and yields a reason for Ready=False.
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
const validate = ajv.compile<WebhookSpec>(specSchema);

/** Returns the spec with defaults applied, or the list of problems. */
export function validateWebhookSpec(spec: unknown): { spec: WebhookSpec } | { problems: string[] } {
  const copy = structuredClone(spec ?? {});
  if (validate(copy)) return { spec: copy };
  const problems = (validate.errors ?? []).map((error) => {
    const where = `spec${error.instancePath.replaceAll("/", ".")}`;
    const allowed =
      error.keyword === "enum"
        ? ` (${(error.params as { allowedValues: string[] }).allowedValues.join(", ")})`
        : "";
    return `${where} ${error.message ?? "is invalid"}${allowed}`;
  });
  return { problems };
}
