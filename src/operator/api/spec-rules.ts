import {
  headerValuePattern,
  isReservedHeaderName,
  objectPropertyNames,
  reservedHeaderNames,
  reservedHeaderPrefixes,
} from "../../formats/custom-header-rules.js";

// The Webhook spec's rules that span fields, written twice side by side: as CEL for the API server
// (refused at `kubectl apply`, with the message and never the value) and as a check for the operator
// (validate-spec.ts), which also sees objects that came through an older CRD or a server without CEL.

// The parts of the spec the rules read, spelled here: webhook-v1alpha1.ts imports these rules.
interface RuledSpec {
  url?: string;
  urlSecretRef?: unknown;
  format?: string;
  template?: string;
  signatureScheme?: string;
  secretRef?: unknown;
}
interface RuledHeader {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

export interface SpecRule<T> {
  rule: string;
  message: string;
  holds(value: T): boolean;
}

// The refused header names are the API's list (formats/custom-header-rules.ts), turned into CEL here.
const celString = (text: string) => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
const celNames = Object.keys(reservedHeaderNames).map(celString).join(", ");
const celObjectNames = objectPropertyNames.map(celString).join(", ");
const celPrefixes = reservedHeaderPrefixes.map(([prefix]) => celString(prefix)).join(", ");
const refusedNamesText = [
  ...Object.keys(reservedHeaderNames),
  "names JavaScript objects hold themselves (__proto__, constructor, toString, …)",
  ...reservedHeaderPrefixes.map(([prefix]) => `${prefix}*`),
].join(", ");

export const specRules: SpecRule<RuledSpec>[] = [
  {
    rule: "has(self.url) != has(self.urlSecretRef)",
    message: "exactly one of url and urlSecretRef must be set",
    holds: (spec) => (spec.url !== undefined) !== (spec.urlSecretRef !== undefined),
  },
  {
    rule: "!has(self.format) || self.format != 'template' || has(self.template)",
    message: "template is required when format is template",
    holds: (spec) => spec.format !== "template" || spec.template !== undefined,
  },
  {
    rule: "!has(self.template) || (has(self.format) && self.format == 'template')",
    message: "template is used only with format: template",
    holds: (spec) => spec.template === undefined || spec.format === "template",
  },
  {
    // As the API refuses it (webhooks/save-checks.ts): every delivery would go unsigned, and every
    // Standard Webhooks library refuses an unsigned delivery.
    rule: "!has(self.signatureScheme) || self.signatureScheme != 'standard-webhooks' || has(self.secretRef)",
    message:
      'signatureScheme "standard-webhooks" needs secretRef: every Standard Webhooks library refuses an unsigned delivery',
    holds: (spec) => spec.signatureScheme !== "standard-webhooks" || spec.secretRef !== undefined,
  },
];

export const headerRules: SpecRule<RuledHeader>[] = [
  {
    rule: "has(self.value) != has(self.valueFrom)",
    message: "a header takes exactly one of value and valueFrom",
    holds: (header) => (header.value !== undefined) !== (header.valueFrom !== undefined),
  },
  {
    rule:
      `!(self.name in [${celObjectNames}]) && !(self.name.lowerAscii() in [${celNames}]) && ` +
      `![${celPrefixes}].exists(p, self.name.lowerAscii().startsWith(p))`,
    message: `a header may not be one the request sets itself or one of ours (${refusedNamesText})`,
    holds: (header) => !isReservedHeaderName(header.name),
  },
  {
    rule: `!has(self.value) || self.value.matches(r'${headerValuePattern}')`,
    message: "a header value must be printable ASCII: no line breaks or other control characters",
    holds: (header) => header.value === undefined || validHeaderValue(header.value),
  },
];

export const headerListRules: SpecRule<RuledHeader[]>[] = [
  {
    rule: "self.all(h, self.exists_one(g, g.name.lowerAscii() == h.name.lowerAscii()))",
    message: "header names must be unique (ignoring case)",
    holds: (headers) => new Set(headers.map((header) => header.name.toLowerCase())).size === headers.length,
  },
];

/** A Secret's value given as a header value: the same rule as an inline value. */
export const validHeaderValue = (value: string) => new RegExp(headerValuePattern).test(value);

/** The rules as the CRD carries them. */
export const celRules = (rules: SpecRule<never>[]) => rules.map(({ rule, message }) => ({ rule, message }));

/** The messages of the rules `value` breaks. */
export function brokenRules<T>(rules: SpecRule<T>[], value: T): string[] {
  return rules.filter((rule) => !rule.holds(value)).map((rule) => rule.message);
}
