// The Webhook spec's rules that span fields, written twice side by side: as CEL for the API server
// (refused at `kubectl apply`, with the message and never the value) and as a check for the operator
// (validate-spec.ts), which also sees objects that came through an older CRD or a server without CEL.

// The parts of the spec the rules read, spelled here: webhook-v1alpha1.ts imports these rules.
interface RuledSpec {
  url?: string;
  urlSecretRef?: unknown;
  format?: string;
  template?: string;
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

/**
 * Header names that would break the request or pass for ours: framing, hop-by-hop, our own
 * `X-Webhook-*` and the Standard Webhooks signature headers, and `Content-Type`, which the format sets.
 */
export const reservedHeaderNames = [
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
] as const;
export const reservedHeaderPrefix = "x-webhook-";

const isReserved = (name: string) => {
  const lower = name.toLowerCase();
  return (reservedHeaderNames as readonly string[]).includes(lower) || lower.startsWith(reservedHeaderPrefix);
};
const celList = reservedHeaderNames.map((name) => `'${name}'`).join(", ");
/** Control characters other than tab, which no header value may carry (a line break would split it). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose
const controlCharacters = /[\u0000-\u0008\u000a-\u001f\u007f]/;

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
];

export const headerRules: SpecRule<RuledHeader>[] = [
  {
    rule: "has(self.value) != has(self.valueFrom)",
    message: "a header takes exactly one of value and valueFrom",
    holds: (header) => (header.value !== undefined) !== (header.valueFrom !== undefined),
  },
  {
    rule: `!(self.name.lowerAscii() in [${celList}]) && !self.name.lowerAscii().startsWith('${reservedHeaderPrefix}')`,
    message: `a header may not be one the request sets itself or one of ours (${reservedHeaderNames.join(", ")}, ${reservedHeaderPrefix}*)`,
    holds: (header) => !isReserved(header.name),
  },
  {
    rule: `!has(self.value) || !self.value.matches(r'${controlCharacters.source.replace(/\\u00/g, "\\x")}')`,
    message: "a header value may not contain line breaks or other control characters",
    holds: (header) => header.value === undefined || !controlCharacters.test(header.value),
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
export const validHeaderValue = (value: string) => !controlCharacters.test(value);

/** The rules as the CRD carries them. */
export const celRules = (rules: SpecRule<never>[]) => rules.map(({ rule, message }) => ({ rule, message }));

/** The messages of the rules `value` breaks. */
export function brokenRules<T>(rules: SpecRule<T>[], value: T): string[] {
  return rules.filter((rule) => !rule.holds(value)).map((rule) => rule.message);
}
