import { Ajv } from "ajv";
import { httpUrl } from "../../http/schemas.js";
import { brokenRules, headerListRules, headerRules, specRules } from "./spec-rules.js";
import { specSchema, type WebhookSpec } from "./webhook-v1alpha1.js";

// The API server enforces the CRD schema; checking again here covers objects that reached the
// operator some other way (an older CRD, a server without CEL) and yields a reason for Ready=False.
// The URL is checked by the API's own rule (the CEL rules' counterpart), whose messages never quote it;
// the rules across fields are the CRD's CEL rules' twins (spec-rules.ts).
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
const validate = ajv.compile<WebhookSpec>(specSchema);
const urlRule = httpUrl("spec.url");

/** Returns the spec with defaults applied, or the list of problems. */
export function validateWebhookSpec(spec: unknown): { spec: WebhookSpec } | { problems: string[] } {
  const copy = structuredClone(spec ?? {});
  const url = (copy as { url?: unknown }).url;
  const urlProblems =
    typeof url === "string" ? (urlRule.safeParse(url).error?.issues.map((issue) => issue.message) ?? []) : [];
  if (!validate(copy)) {
    const schemaProblems = (validate.errors ?? []).map((error) => {
      const where = `spec${error.instancePath.replaceAll("/", ".")}`;
      const allowed =
        error.keyword === "enum"
          ? ` (${(error.params as { allowedValues: string[] }).allowedValues.join(", ")})`
          : "";
      return `${where} ${error.message ?? "is invalid"}${allowed}`;
    });
    return { problems: [...schemaProblems, ...urlProblems] };
  }
  const headers = copy.headers ?? [];
  const ruleProblems = [
    ...brokenRules(specRules, copy).map((message) => `spec: ${message}`),
    ...brokenRules(headerListRules, headers).map((message) => `spec.headers: ${message}`),
    ...headers.flatMap((header, index) =>
      brokenRules(headerRules, header).map((message) => `spec.headers.${index}: ${message}`),
    ),
  ];
  const problems = [...urlProblems, ...ruleProblems];
  return problems.length === 0 ? { spec: copy } : { problems };
}
