import { LiquidError } from "liquidjs";
import { templateLimits } from "./template-limits.js";
import { TemplateSyntaxError } from "./types.js";

export { TemplateSyntaxError };

// liquidjs's messages for its own limits and for the tags we removed, said in our words.
const limitMessages: [RegExp, string][] = [
  [/render limit exceeded/, `it took longer than the ${templateLimits.renderMs} ms a render may take`],
  [/memory alloc limit exceeded/, "it allocated more memory than a render may use"],
  [/parse length limit exceeded/, `it has more than ${templateLimits.sourceChars} characters`],
  [
    /tag "?(include|render|layout|block)"? not found/,
    "include, render, layout and block are not available: a webhook's template is one self-contained text",
  ],
];

/** A liquidjs error as a message for the webhook's owner, and the template line it points at. */
export function describeLiquidError(error: unknown): { message: string; line: number | null } {
  if (!(error instanceof Error)) return { message: String(error), line: null };
  const position = error instanceof LiquidError ? error.token?.getPosition?.() : undefined;
  const raw = error.message.replace(/, line:\d+, col:\d+$/, "");
  const known = limitMessages.find(([pattern]) => pattern.test(raw));
  const message = known === undefined ? raw : known[1];
  return { message, line: position?.[0] ?? null };
}

/** liquidjs's renderLimit was reached: the render took longer than `templateLimits.renderMs`. */
export function isRenderTimeLimit(error: unknown): boolean {
  return error instanceof Error && /render limit exceeded/.test(error.message); // a LiquidError or its own AssertionError
}
