import { type FormatInput, RenderError, type RenderedBody } from "./types.js";

// A placeholder so the dispatcher compiles on formats-core's branch; formats-render's module replaces it.

export class TemplateSyntaxError extends Error {
  override name = "TemplateSyntaxError";
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

export function parseTemplate(_source: string): void {}

export async function renderTemplate(_input: FormatInput): Promise<RenderedBody> {
  throw new RenderError("not built yet");
}
