// The rules of a webhook's custom request headers (an Authorization or an API key for the receiver),
// one list for every way in: the API checks them here, and the Webhook resource's CRD carries them as
// CEL generated from these lists (operator/api/spec-rules.ts). A header that would change how the
// request is framed or routed, or pass for one of ours, is refused: the receiver must be able to trust
// that X-Webhook-*, webhook-* and ce-* come from us.

export const maxCustomHeaders = 20;
export const maxHeaderNameLength = 64;
export const maxHeaderValueLength = 4096;

// RFC 9110 token characters.
export const headerNamePattern = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
// Visible ASCII, space and tab: no CR, LF or NUL that could split the request, nothing undici refuses.
export const headerValuePattern = "^[\\t\\x20-\\x7e]*$";
const tokenName = new RegExp(headerNamePattern);
const fieldValue = new RegExp(headerValuePattern);

/** Names set by the service or by HTTP itself, refused whatever their case, with the reason why. */
export const reservedHeaderNames: Record<string, string> = {
  host: "the host comes from the webhook's url",
  "content-length": "it is computed from the body",
  "transfer-encoding": "it is set by the HTTP client",
  "content-type": "it is set by the webhook's format (template_content_type for templates)",
  "content-encoding": "the body is sent as it is",
  "user-agent": "it is set by the service",
  expect: "it would change how the request is sent",
};
// Hop-by-hop headers (RFC 9110 §7.6.1) and their common relatives: they concern one connection only.
for (const name of [
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "upgrade",
]) {
  reservedHeaderNames[name] = "it is a hop-by-hop header";
}
export const reservedHeaderPrefixes: [string, string][] = [
  ["x-webhook-", "X-Webhook-* headers are the service's own delivery headers"],
  ["webhook-", "webhook-* headers are the Standard Webhooks signature headers"],
  ["ce-", "ce-* headers are CloudEvents attributes, set by the cloudevents format"],
];

/**
 * Names a plain JavaScript object holds itself (`__proto__`, `constructor`, `toString`, …), exactly as
 * written: `__proto__` is dropped on the way into an object and the others read back as functions
 * where a header map is asked for them, so a header of such a name could be lost or misread. Refused.
 */
export const objectPropertyNames: readonly string[] = Object.getOwnPropertyNames(Object.prototype).sort();

/** Whether a name is one of the refused ones above (the names objects hold themselves included). */
export function isReservedHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    objectPropertyNames.includes(name) ||
    Object.hasOwn(reservedHeaderNames, lower) ||
    reservedHeaderPrefixes.some(([prefix]) => lower.startsWith(prefix))
  );
}

/** Why a header name cannot be used, or null when it can. Names are quoted only once known safe. */
export function customHeaderNameProblem(name: string): string | null {
  if (name.length === 0) return "a header name must not be empty";
  if (name.length > maxHeaderNameLength || !tokenName.test(name)) {
    return `a header name must be 1–${maxHeaderNameLength} letters, digits or !#$%&'*+.^_\`|~- characters`;
  }
  // A token, and quoted safely, but a key no header map may be trusted to keep.
  if (objectPropertyNames.includes(name)) {
    return `header "${name}" cannot be set: it is a name JavaScript objects hold themselves`;
  }
  const lower = name.toLowerCase();
  const reserved = Object.hasOwn(reservedHeaderNames, lower) ? reservedHeaderNames[lower] : undefined;
  if (reserved !== undefined) return `header "${name}" cannot be set: ${reserved}`;
  for (const [prefix, why] of reservedHeaderPrefixes) {
    if (lower.startsWith(prefix)) return `header "${name}" cannot be set: ${why}`;
  }
  return null;
}

/** Why a header's value cannot be used, or null. The value itself is never part of the message. */
export function customHeaderValueProblem(name: string, value: string): string | null {
  if (value.length > maxHeaderValueLength) {
    return `the value of header "${name}" is longer than ${maxHeaderValueLength} characters`;
  }
  if (!fieldValue.test(value)) {
    return `the value of header "${name}" must be printable ASCII (no line breaks or control characters)`;
  }
  return null;
}

/**
 * Every problem of a set of custom headers, duplicates by case included. Give it the object as parsed
 * from JSON, before any copy: a copy into a plain object would already have dropped `__proto__`.
 */
export function customHeadersProblems(headers: Record<string, unknown>): string[] {
  const names = Object.keys(headers);
  if (names.length > maxCustomHeaders) return [`at most ${maxCustomHeaders} custom headers are allowed`];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of names) {
    const nameProblem = customHeaderNameProblem(name);
    if (nameProblem !== null) {
      problems.push(nameProblem);
      continue;
    }
    if (seen.has(name.toLowerCase())) problems.push(`header "${name}" is given twice (names ignore case)`);
    seen.add(name.toLowerCase());
    const value = headers[name];
    const valueProblem = typeof value === "string" ? customHeaderValueProblem(name, value) : null;
    if (valueProblem !== null) problems.push(valueProblem);
  }
  return problems;
}
