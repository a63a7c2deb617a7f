import type { Template } from "liquidjs";
import { Liquid, LiquidError } from "liquidjs";
import { LRUCache } from "lru-cache";
import { nestingDepth } from "./template-nesting.js";
import { type FormatInput, RenderError, type RenderedBody } from "./types.js";

/**
 * The bounds of a webhook's template. The source is checked where it is accepted (API, resource) and
 * again where it runs; the render is bounded by liquidjs's own time and memory limits and its output
 * measured before anything is sent. A template is a project's untrusted input: none of these bounds
 * can be raised by it.
 */
export const templateLimits = {
  /** Characters of template source. */
  sourceChars: 64 * 1024,
  /** Levels of nested block tags (`if`, `for`, `case`, `capture` …). */
  nestingDepth: 32,
  /**
   * liquidjs `renderLimit`: the time one render may take, in milliseconds. A render holds the event
   * loop, so this is small; a real template renders in well under a millisecond.
   */
  renderMs: 100,
  /** liquidjs `memoryLimit`: what the memory-sensitive filters and ranges may allocate, in its units. */
  memory: 4_000_000,
  /** Bytes (UTF-8) of rendered output. */
  outputBytes: 256 * 1024,
} as const;

/** A template that does not parse, or breaks a bound of its source; `line` is 1-based when known. */
export class TemplateSyntaxError extends Error {
  override name = "TemplateSyntaxError";
  constructor(
    message: string,
    readonly line: number | null,
  ) {
    super(message);
  }
}

// A template is one file: no include, render or layout (which would read other templates), and no
// file system behind the engine (`templates: {}`) whatever a later version adds.
const engine = new Liquid({
  templates: {},
  strictFilters: true,
  ownPropertyOnly: true,
  timezoneOffset: 0,
  parseLimit: templateLimits.sourceChars,
  renderLimit: templateLimits.renderMs,
  memoryLimit: templateLimits.memory,
});
for (const tag of ["include", "render", "layout", "block"]) delete engine.tags[tag];

/**
 * Parsed templates by their source: every delivery of a webhook renders the same template, and the
 * parse (with the nesting check) costs more than the render. Parsed templates hold no render state, so
 * concurrent renders share them. Bounded by the total length of the sources kept.
 */
const parsed = new LRUCache<string, Template[]>({
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (_templates, source) => Math.max(1, source.length),
});

/** Throws TemplateSyntaxError when the template would not render: too big, too deep, or not Liquid. */
export function parseTemplate(source: string): void {
  parse(source);
}

function parse(source: string): Template[] {
  const cached = parsed.get(source);
  if (cached !== undefined) return cached;
  const templates = parseUncached(source);
  parsed.set(source, templates);
  return templates;
}

function parseUncached(source: string): Template[] {
  if (source.length > templateLimits.sourceChars) {
    throw new TemplateSyntaxError(
      `The template has ${source.length} characters; at most ${templateLimits.sourceChars} are allowed.`,
      null,
    );
  }
  try {
    const depth = nestingDepth(source);
    if (depth > templateLimits.nestingDepth) {
      throw new TemplateSyntaxError(
        `The template nests block tags ${depth} deep; at most ${templateLimits.nestingDepth} levels are allowed.`,
        null,
      );
    }
    return engine.parse(source);
  } catch (error) {
    if (error instanceof TemplateSyntaxError) throw error;
    const { message, line } = describe(error);
    throw new TemplateSyntaxError(line === null ? message : `Line ${line}: ${message}`, line);
  }
}

/**
 * Renders the webhook's template with `event` (the envelope without its payload) and `payload`. The
 * output is the body as sent, with the webhook's declared content type; when that type is JSON the
 * output must parse as JSON, so a broken template records a failed delivery with a clear message
 * instead of sending a body the receiver would reject.
 */
export async function renderTemplate(input: FormatInput): Promise<RenderedBody> {
  if (input.template === null)
    throw new RenderError("The webhook's format is template, but it has no template.");
  let templates: Template[];
  try {
    templates = parse(input.template);
  } catch (error) {
    throw new RenderError(`The template does not parse: ${(error as Error).message}`);
  }
  const { payload, ...event } = input.envelope;
  let output: string;
  try {
    output = String(await engine.render(templates, { event, payload }));
  } catch (error) {
    const { message, line } = describe(error);
    throw new RenderError(
      `The template failed to render${line === null ? "" : ` at line ${line}`}: ${message}`,
    );
  }
  // UTF-8 is never shorter than the string's length, so a long output is refused before it is measured
  // (measuring flattens the string, which can be a rope of many megabytes built in one render).
  const limit = templateLimits.outputBytes;
  if (output.length > limit || Buffer.byteLength(output) > limit) {
    throw new RenderError(
      `The template rendered more than ${limit} bytes, the most that is sent. Nothing was sent.`,
    );
  }
  const contentType = input.templateContentType ?? "application/json";
  // Checked where it is accepted too; here so a stored value can never split the request's headers.
  if (!/^[\x21-\x7e][\x20-\x7e]*$/.test(contentType)) {
    throw new RenderError(
      "The webhook's template content type is not a valid header value. Nothing was sent.",
    );
  }
  if (isJsonType(contentType)) checkJson(output, contentType);
  return { contentType, body: output };
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

const limitMessages: [RegExp, string][] = [
  [/render limit exceeded/, `it took longer than the ${templateLimits.renderMs} ms a render may take`],
  [/memory alloc limit exceeded/, "it allocated more memory than a render may use"],
  [/parse length limit exceeded/, `it has more than ${templateLimits.sourceChars} characters`],
  [
    /tag "?(include|render|layout|block)"? not found/,
    "include, render, layout and block are not available: a webhook's template is one self-contained text",
  ],
];

function describe(error: unknown): { message: string; line: number | null } {
  if (!(error instanceof Error)) return { message: String(error), line: null };
  const position = error instanceof LiquidError ? error.token?.getPosition?.() : undefined;
  const raw = error.message.replace(/, line:\d+, col:\d+$/, "");
  const known = limitMessages.find(([pattern]) => pattern.test(raw));
  const message = known === undefined ? raw : known[1];
  return { message, line: position?.[0] ?? null };
}
