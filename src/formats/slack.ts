import { type FormatInput, RenderError, type RenderedBody } from "./types.js";

// A placeholder so the dispatcher compiles on formats-core's branch; formats-render's module replaces it.
export function renderSlack(_input: FormatInput): RenderedBody {
  throw new RenderError("not built yet");
}
