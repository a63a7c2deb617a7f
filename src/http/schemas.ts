import { z } from "./openapi.js";

// Building blocks shared by every feature's schemas.

const decimalDigits = /^\d+$/;

/** A positive integer id as a JSON number (request bodies). */
export const positiveId = (name: string) =>
  z
    .number({ error: `${name} must be a positive integer` })
    .int(`${name} must be a positive integer`)
    .min(1, `${name} must be a positive integer`)
    .max(Number.MAX_SAFE_INTEGER, `${name} is out of range (at most ${Number.MAX_SAFE_INTEGER})`);

/**
 * A positive integer id in the path. Path values are text and only decimal digits count: "1e2", "0x10",
 * " 1" or "1.5" are a 400, never a number JavaScript would read into them.
 */
export const idParam = (name: string) =>
  z
    .preprocess(
      (value) => (typeof value === "string" && decimalDigits.test(value) ? Number(value) : value),
      positiveId(name),
    )
    .openapi({
      param: { name, in: "path" },
      type: "integer",
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      example: 1,
    });

export const projectParams = z.object({ project_id: idParam("project_id") });

// What String.prototype.trim removes (ECMAScript's WhiteSpace and LineTerminator), spelled out for the
// published pattern: a `\s` there would mean other things to other regex dialects (Python's takes
// \x1c–\x1f, and not \ufeff).
const trimmed = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
const edge = `[^${trimmed}\\u0000]`;
/** 1–100 characters (code points) once surrounding whitespace is removed, none of them NUL. */
const displayNamePattern = new RegExp(`^[${trimmed}]*${edge}([^\\u0000]{0,98}${edge})?[${trimmed}]*$`, "u");

/**
 * A name people give a thing (a project, an API key): 1–100 characters once trimmed, no NUL (Postgres
 * text cannot hold it: the insert would fail with a 500 instead of this 400). Checked before trimming by
 * one pattern, which the OpenAPI document publishes, so it describes exactly what is accepted.
 */
export const displayName = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .regex(displayNamePattern, {
      error: (issue) => {
        const value = String(issue.input);
        if (value.includes("\u0000")) return `${field} must not contain NUL characters`;
        if (value.trim() === "") return `${field} must not be empty`;
        return `${field} must be at most 100 characters`;
      },
    })
    // The generator would print the flag into the pattern ("…$/u"); JSON Schema patterns are read with
    // Unicode semantics anyway, counting code points as this one does.
    .openapi({
      pattern: displayNamePattern.source,
      description: "1–100 characters, no NUL; surrounding whitespace is removed first (and not stored)",
    })
    .transform((value) => value.trim());

// The form an accepted URL takes, also published as the schema's `pattern` so the OpenAPI document
// describes exactly what is accepted: http(s); a host name whose last label starts with a letter, a
// dotted IPv4 address or a bracketed IPv6 one (the forms URL parsing agrees with); an optional port;
// printable ASCII after it; no credentials (user:password@ would be shown by every read of the webhook
// and in error messages; a receiver authenticates deliveries by their signature instead); no fragment
// (#…: never sent, so the URL would not name what is used). The same rules hold for Webhook
// resources: the CRD's CEL rules match this pattern (operator/api/webhook-v1alpha1.ts).
const octet = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const ipv4 = `(${octet}\\.){3}${octet}`;
const h16 = "[0-9A-Fa-f]{1,4}";
// RFC 3986's IPv6address, alternative by alternative: the last 32 bits may be a dotted IPv4 address
// (ls32), and "::" stands for at least one group, so no form has more than eight groups in all.
const ls32 = `(${h16}:${h16}|${ipv4})`;
const ipv6 = [
  `(${h16}:){6}${ls32}`,
  `::(${h16}:){5}${ls32}`,
  `(${h16})?::(${h16}:){4}${ls32}`,
  `((${h16}:)?${h16})?::(${h16}:){3}${ls32}`,
  `((${h16}:){0,2}${h16})?::(${h16}:){2}${ls32}`,
  `((${h16}:){0,3}${h16})?::${h16}:${ls32}`,
  `((${h16}:){0,4}${h16})?::${ls32}`,
  `((${h16}:){0,5}${h16})?::${h16}`,
  `((${h16}:){0,6}${h16})?::`,
].join("|");
const hostName = "([A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*\\.?";
const port = "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";
export const httpUrlPattern = new RegExp(
  `^[Hh][Tt][Tt][Pp][Ss]?://(${hostName}|${ipv4}|\\[(${ipv6})\\])(:${port})?([/?][!-"$-~]*)?$`,
);

export const fragmentMessage = (field: string) =>
  `${field} must not have a fragment (#…): a fragment is never sent to the receiver`;
export const httpUrlMessage = (field: string) =>
  `${field} must be an absolute http:// or https:// URL without credentials (user:password@) or spaces`;

/** `ifEmpty`: the message for "" (a required field left empty in a form says "is required"). */
export const httpUrl = (field: string, ifEmpty = `${field} is required`) =>
  z
    .string({
      error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`),
    })
    .min(1, { error: ifEmpty, abort: true })
    .max(2048, { error: `${field} must be at most 2048 characters`, abort: true })
    .refine((value) => !value.includes("#"), { error: fragmentMessage(field), abort: true })
    .regex(httpUrlPattern, {
      error: httpUrlMessage(field),
      abort: true,
    })
    .refine((value) => URL.canParse(value), `${field} is not a valid URL`);

/** A number field's type error that tells a missing field from one of the wrong type. */
export const numberError = (field: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? `${field} is required` : `${field} must be a number`;

export const isoTimestamp = z.string().openapi({ format: "date-time", example: "2026-11-21T05:29:33.123Z" });

/** Timestamps leave the API as ISO 8601 UTC with milliseconds. */
export function iso(date: Date): string;
export function iso(date: Date | null): string | null;
export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
