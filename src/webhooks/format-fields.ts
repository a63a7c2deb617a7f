import { ConflictError, ValidationError } from "../errors.js";
import {
  customHeadersProblems,
  headerNamePattern,
  headerValuePattern,
  maxCustomHeaders,
  maxHeaderNameLength,
  maxHeaderValueLength,
} from "../formats/custom-header-rules.js";
import { checkTemplate, TemplateSyntaxError } from "../formats/template.js";
import { templateLimits } from "../formats/template-limits.js";
import { type DeliveryFormat, deliveryFormats } from "../formats/types.js";
import { z } from "../http/openapi.js";

// The webhook fields that choose what a delivery looks like (docs/formats.md): all optional, each
// defaulting to today's envelope and X-Webhook-Signature. Checks that need more than one field, or the
// stored webhook (a template for the template format only), are in resolveFormatSettings.

export const signatureSchemes = ["hmac-sha256", "standard-webhooks"] as const;
export type SignatureScheme = (typeof signatureSchemes)[number];
export const cloudEventsModes = ["structured", "binary"] as const;
export type CloudEventsMode = (typeof cloudEventsModes)[number];
export const defaultTemplateContentType = "application/json";
/** The template module's bound, checked here too so the answer names the field. */
const maxTemplateLength = templateLimits.sourceChars;

const format = z
  .enum(deliveryFormats, { error: `format must be one of: ${deliveryFormats.join(", ")}` })
  .openapi({ description: "The body's format; envelope (the default) is the event's own JSON body" });
const cloudeventsMode = z
  .enum(cloudEventsModes, { error: 'cloudevents_mode must be "structured" or "binary"' })
  .openapi({ description: "CloudEvents HTTP binding mode (format cloudevents only); default structured" });
const template = z
  .string({ error: "template must be a string or null" })
  .min(1, "template must not be empty")
  .max(maxTemplateLength, `template must be at most ${maxTemplateLength} characters`)
  .openapi({
    description: "The Liquid template of the body; required for format template, refused otherwise",
  });
const templateContentType = z
  .string({ error: "template_content_type must be a string" })
  .max(255, "template_content_type must be at most 255 characters")
  .regex(
    /^[A-Za-z0-9][\w.+-]*\/[A-Za-z0-9][\w.+-]*(\s*;\s*[\w.+-]+=("[\x20-\x7e]*"|[\w.+-]+))*$/,
    'template_content_type must be a media type such as "application/json" or "text/plain; charset=utf-8"',
  )
  .openapi({ description: `The Content-Type of a template's body; default ${defaultTemplateContentType}` });
const signatureScheme = z
  .enum(signatureSchemes, { error: 'signature_scheme must be "hmac-sha256" or "standard-webhooks"' })
  .openapi({ description: "hmac-sha256 (X-Webhook-Signature, the default) or standard-webhooks" });
// Passed as a value: propertyNames (OpenAPI 3.1) is not in the metadata type the library declares.
const headersDocument = {
  writeOnly: true,
  description:
    `Custom request headers {"Name": "value"}, at most ${maxCustomHeaders}; write-only (read back as ` +
    "header_names), stored encrypted. null or {} removes them. Refused: Host, Content-Length, " +
    "Transfer-Encoding, Content-Type, Content-Encoding, User-Agent, Expect, hop-by-hop headers, and names " +
    "starting with X-Webhook-, webhook- or ce-, and names every JavaScript object holds itself " +
    "(__proto__, constructor, toString, …); names are unique ignoring case.",
  example: { Authorization: "Bearer <token>" },
  // What the checks accept, published so the document describes it (the reserved names aside).
  maxProperties: maxCustomHeaders,
  propertyNames: {
    type: "string" as const,
    pattern: headerNamePattern,
    maxLength: maxHeaderNameLength,
  },
  additionalProperties: {
    type: "string" as const,
    pattern: headerValuePattern,
    maxLength: maxHeaderValueLength,
  },
};
// The names are checked on the object as the JSON parser made it: zod's record skips a `__proto__` key
// (it copies into a plain object), so checked after it such a header would vanish without a word.
const headers = z
  .preprocess(
    (value, ctx) => {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
      for (const message of customHeadersProblems(value as Record<string, unknown>))
        ctx.addIssue({ code: "custom", message });
      return value;
    },
    z.record(z.string(), z.string({ error: "each header value must be a string" }), {
      error: "headers must be an object of header names and string values, or null",
    }),
  )
  .openapi(headersDocument);

/** The fields as create and update accept them (all optional; update keeps what is omitted). */
export const formatFields = {
  format: format.optional(),
  cloudevents_mode: cloudeventsMode.optional(),
  template: template.nullable().optional(),
  template_content_type: templateContentType.nullable().optional(),
  signature_scheme: signatureScheme.optional(),
  headers: headers.nullable().optional(),
};

/**
 * The template rule within one request, in JSON Schema for the OpenAPI document: a template goes with
 * the template format. `create`: format template has a template, other formats none. `update`: a
 * format and a template given together agree (a template alone is checked against the stored format).
 * A binary CloudEvents mode goes with format cloudevents (given, in an update, whenever a format is).
 */
const isTemplate = { const: "template" };
// cloudevents_mode "binary" goes with format cloudevents only (resolveCloudEventsMode); "structured", what
// every other format reads back, goes with any.
const structuredOnly = { cloudevents_mode: { const: "structured" } };
const binaryMeansCloudEvents = {
  if: { required: ["cloudevents_mode"], properties: { cloudevents_mode: { const: "binary" } } },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, never awaited
  then: { required: ["format"], properties: { format: { const: "cloudevents" } } },
};
// if/then/else rather than an anyOf (or a `not` of one) of variants: generators make a class per variant
// (openapi-python-client's CreateWebhookType0 and Type1) or fail on them (openapi-generator's Python),
// and leave if/then/else to validators, which is what the rule is.
export const templateRule = {
  create: {
    if: { required: ["format"], properties: { format: isTemplate } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, never awaited
    then: {
      required: ["template"],
      properties: { template: { type: "string" as const }, ...structuredOnly },
    },
    else: { properties: { template: { type: "null" as const } }, ...binaryMeansCloudEvents },
  },
  // Refused only when both are given and disagree: with format template a template (if given) is a
  // string; with another format it (if given) is null. Likewise a binary mode with another format given.
  update: {
    if: { required: ["format"], properties: { format: isTemplate } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, never awaited
    then: { properties: { template: { type: "string" as const }, ...structuredOnly } },
    else: {
      if: { required: ["format"], properties: { format: { type: "string" as const } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, never awaited
      then: { properties: { template: { type: "null" as const } }, ...binaryMeansCloudEvents },
    },
  },
};

/** The fields as a webhook is read. */
export const formatReadFields = {
  format: z.enum(deliveryFormats),
  cloudevents_mode: z.enum(cloudEventsModes),
  template: z.string().nullable(),
  template_content_type: z.string(),
  signature_scheme: z.enum(signatureSchemes),
  header_names: z
    .array(z.string())
    .openapi({ description: "The names of the custom headers, sorted; their values are never returned" }),
};

export interface FormatSettings {
  format: DeliveryFormat;
  cloudeventsMode: CloudEventsMode;
  template: string | null;
  templateContentType: string | null;
  signatureScheme: SignatureScheme;
}

export const defaultFormatSettings: FormatSettings = {
  format: "envelope",
  cloudeventsMode: "structured",
  template: null,
  templateContentType: null,
  signatureScheme: "hmac-sha256",
};

type FormatBody = {
  format?: DeliveryFormat | undefined;
  cloudevents_mode?: CloudEventsMode | undefined;
  template?: string | null | undefined;
  template_content_type?: string | null | undefined;
  signature_scheme?: SignatureScheme | undefined;
};

const invalid = (path: string, message: string) =>
  new ValidationError(`Invalid request: ${path}: ${message}`, [{ path, message }]);

/** A request that is fine by itself but does not fit the stored webhook: 409. */
const conflicting = (message: string) => new ConflictError(`${message}.`);

/**
 * The settings a create (over the defaults) or an update (over the stored ones) leads to, checked as a
 * whole: a template exactly for the template format, and one that parses. Switching away from the
 * template format drops the stored template unless the request names it. In an update, a request that
 * is fine by itself but does not fit the stored webhook (a template for a webhook of another format, the
 * template format for one without a template) is a conflict (409), not bad input. The template is parsed
 * on a template thread (formats/template.ts), never on the event loop.
 */
export async function resolveFormatSettings(
  body: FormatBody,
  stored: FormatSettings,
  options: { updating: boolean } = { updating: false },
): Promise<FormatSettings> {
  const format = body.format ?? stored.format;
  let template = body.template !== undefined ? body.template : stored.template;
  if (format !== "template") {
    if (body.template !== undefined && body.template !== null) {
      const message = `a template is only used with format "template" (format is "${format}")`;
      if (options.updating && body.format === undefined)
        throw conflicting(`The webhook's format is "${format}": ${message}`);
      throw invalid("body.template", message);
    }
    template = null;
  } else if (template === null) {
    const message = 'format "template" needs a template';
    if (options.updating && (body.format === undefined || body.template === undefined)) {
      throw conflicting(`The webhook has no template to keep: ${message}`);
    }
    throw invalid("body.template", message);
  } else {
    try {
      await checkTemplate(template);
    } catch (error) {
      // The parser's message names the line when it knows it ("Line 3: …").
      if (error instanceof TemplateSyntaxError) {
        throw invalid("body.template", error.message);
      }
      throw error;
    }
  }
  return {
    format,
    cloudeventsMode: resolveCloudEventsMode(body, stored, format, options.updating),
    template,
    templateContentType:
      body.template_content_type !== undefined ? body.template_content_type : stored.templateContentType,
    signatureScheme: body.signature_scheme ?? stored.signatureScheme,
  };
}

/**
 * The CloudEvents mode a webhook keeps: binary only with format cloudevents (a Slack webhook does not
 * keep a mode it never uses). "structured", the default every other format reads back, is taken with
 * any format, so that what a client read can be sent back; leaving the format drops a binary mode.
 */
function resolveCloudEventsMode(
  body: FormatBody,
  stored: FormatSettings,
  format: DeliveryFormat,
  updating: boolean,
): CloudEventsMode {
  if (format === "cloudevents") return body.cloudevents_mode ?? stored.cloudeventsMode;
  if (body.cloudevents_mode === "binary") {
    const message = `cloudevents_mode "binary" is only used with format "cloudevents" (format is "${format}")`;
    if (updating && body.format === undefined)
      throw conflicting(`The webhook's format is "${format}": ${message}`);
    throw invalid("body.cloudevents_mode", message);
  }
  return "structured";
}
