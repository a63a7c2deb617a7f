import type { Template } from "liquidjs";
import { Liquid } from "liquidjs";
import { LRUCache } from "lru-cache";
import { describeLiquidError, isRenderTimeLimit, TemplateSyntaxError } from "./template-errors.js";
import { templateLimits } from "./template-limits.js";
import { nestingDepth } from "./template-nesting.js";
import { checkOutput } from "./template-output.js";
import { RenderError, type RenderedBody } from "./types.js";

// The Liquid engine itself, as it runs on a template thread (template-thread.ts): the main thread never
// loads it, and reaches it only through the thread pool (template-pool.ts), whose deadline stops a render
// that liquidjs's own limits cannot (they are checked between a template's pieces, never inside one).

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
 * parse (with the nesting check) costs more than the render (up to a few hundred milliseconds for 32 KB).
 * Parsed templates hold no render state, so renders share them. Bounded by the total length kept.
 */
const parsed = new LRUCache<string, Template[]>({
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (_templates, source) => Math.max(1, source.length),
});

/** Throws TemplateSyntaxError when the template would not render: too big, too deep, or not Liquid. */
export function parseTemplate(source: string): Template[] {
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
    const { message, line } = describeLiquidError(error);
    throw new TemplateSyntaxError(line === null ? message : `Line ${line}: ${message}`, line);
  }
}

/**
 * Renders `template` with `event` (the envelope without its payload), `payload` and `rollout` (the
 * event's rollout details, or null), in this thread. The output is the body as sent, with the declared
 * content type, checked by checkOutput.
 */
export function renderInThread(
  template: string,
  envelope: { payload?: unknown } & Record<string, unknown>,
  templateContentType: string | null,
  rollout: object | null = null,
): RenderedBody {
  let templates: Template[];
  try {
    templates = parseTemplate(template);
  } catch (error) {
    throw new RenderError(`The template does not parse: ${(error as Error).message}`);
  }
  const { payload, ...event } = envelope;
  let output: string;
  try {
    output = String(renderWithinLimit(templates, { event, payload, rollout }));
  } catch (error) {
    const { message, line } = describeLiquidError(error);
    throw new RenderError(
      `The template failed to render${line === null ? "" : ` at line ${line}`}: ${message}`,
    );
  }
  const contentType = templateContentType ?? "application/json";
  checkOutput(output, contentType);
  return { contentType, body: output };
}

/**
 * liquidjs's time limit is wall-clock time: a cheap render that the thread was paused in (a garbage
 * collection, a busy machine) can run past it without being expensive. One more try tells such a stall
 * from a template that is truly slow, which then fails twice. Rendered synchronously: with include and
 * render gone every tag and filter left is synchronous, and liquidjs's async render only adds a promise
 * per piece.
 */
function renderWithinLimit(templates: Template[], scope: object): unknown {
  try {
    return engine.renderSync(templates, scope);
  } catch (error) {
    if (!isRenderTimeLimit(error)) throw error;
    return engine.renderSync(templates, scope);
  }
}
