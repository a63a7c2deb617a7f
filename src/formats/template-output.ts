import { templateLimits } from "./template-limits.js";
import { RenderError } from "./types.js";

/**
 * Checks a render's output before it is sent: its size, the declared content type as a header value,
 * and, when that type is JSON, that the output parses as JSON (a failed delivery with a clear message
 * rather than a body the receiver would reject).
 */
export function checkOutput(output: string, contentType: string): void {
  // UTF-8 is never shorter than the string's length, so a long output is refused before it is measured
  // (measuring flattens the string, which can be a rope of many megabytes built in one render).
  const limit = templateLimits.outputBytes;
  if (output.length > limit || Buffer.byteLength(output) > limit) {
    throw new RenderError(
      `The template rendered more than ${limit} bytes, the most that is sent. Nothing was sent.`,
    );
  }
  // Checked where it is accepted too; here so a stored value can never split the request's headers.
  if (!/^[\x21-\x7e][\x20-\x7e]*$/.test(contentType)) {
    throw new RenderError(
      "The webhook's template content type is not a valid header value. Nothing was sent.",
    );
  }
  if (isJsonType(contentType)) checkJson(output, contentType);
}

/** `application/json`, `application/cloudevents+json`, `text/json; charset=utf-8` … */
export function isJsonType(contentType: string): boolean {
  const essence = (contentType.split(";")[0] as string).trim().toLowerCase();
  return /^[a-z]+\/([a-z0-9.!#$&^_-]+\+)?json$/.test(essence);
}

function checkJson(output: string, contentType: string): void {
  try {
    JSON.parse(output);
  } catch (error) {
    // V8's message quotes the text around the fault; only where it is, is kept: the output is not echoed.
    const at = /(line \d+ column \d+)|(position \d+)/.exec((error as Error).message)?.[0];
    const where = at === undefined ? (output.trim() === "" ? " (it is empty)" : "") : ` (at ${at})`;
    throw new RenderError(
      `The template's output is not valid JSON${where}, and the webhook declares ${contentType}. Nothing was sent.`,
    );
  }
}
