import { LRUCache } from "lru-cache";
import { templateLimits } from "./template-limits.js";
import { TemplatePool, type TemplatePoolSettings, TemplateThreadFailure } from "./template-pool.js";
import type { TemplateAnswer, TemplateTask } from "./template-task.js";
import { type FormatInput, RenderError, type RenderedBody, TemplateSyntaxError } from "./types.js";

export { templateLimits } from "./template-limits.js";
export { isJsonType } from "./template-output.js";
export { TemplateSyntaxError } from "./types.js";

// A webhook's template, checked and rendered on the template threads (template-pool.ts): previews,
// test events, replays and deliveries all render here, so one bound holds for all of them, and no
// template holds the event loop that every tenant's requests share.

const defaults: TemplatePoolSettings = {
  threads: 1,
  idleMs: 60_000,
  limits: { render: templateLimits.stop, check: templateLimits.parseStop },
};
let pool: TemplatePool | undefined;
let settings = defaults;

/** The service's TEMPLATE_THREADS settings (app/config.ts); before the first template runs. */
export function configureTemplateThreads(given: Pick<TemplatePoolSettings, "threads" | "idleMs">): void {
  settings = { ...settings, ...given };
}

/** Ends the template threads (at shutdown); the next template starts them again. */
export async function closeTemplateThreads(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.close();
}

/** Template threads running now: 0 when idle (they start on first use and end after TEMPLATE_THREAD_IDLE_MS). */
export function templateThreadsRunning(): number {
  return pool?.size ?? 0;
}

/** What a source's check found, by the source: a repeated check (the same form previewed again) is free. */
const checked = new LRUCache<string, { message: string; line: number | null } | true>({
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (_outcome, source) => Math.max(1, source.length),
});

/** Sources stopped at the deadline, for a while: a runaway costs a thread its deadline once a minute. */
const stopped = new LRUCache<string, true>({
  maxSize: 1024 * 1024,
  sizeCalculation: (_value, source) => Math.max(1, source.length),
  ttl: templateLimits.stoppedMemoryMs,
});

const { stop, parseStop } = templateLimits;
/** Why a stopped render failed, as its delivery's record says (docs/formats.md, Limits and errors). */
export const stoppedMessage = `it ran longer than a template may (${stop.cpuMs} ms of processor time, ${stop.wallMs} ms in all), and was stopped`;
const stoppedBeforeMessage = `${stoppedMessage} (it was stopped so within the last minute, and is not run again until that minute has passed)`;
const memoryMessage = "it used more memory than a template may use, and was stopped";

async function run(task: TemplateTask): Promise<TemplateAnswer | "stopped" | "memory"> {
  pool ??= new TemplatePool(settings);
  try {
    return await pool.run(task);
  } catch (error) {
    if (!(error instanceof TemplateThreadFailure)) throw error;
    if (error.failure === "stopped") stopped.set(task.template, true);
    return error.failure;
  }
}

/**
 * Throws TemplateSyntaxError when the template would not render: too big, too deep, or not Liquid.
 * Parsed on a template thread: a unique 32 KB source takes a few hundred milliseconds.
 */
export async function checkTemplate(source: string): Promise<void> {
  let outcome = checked.get(source);
  if (outcome === undefined) {
    if (source.length > templateLimits.sourceChars) {
      const message = `The template has ${source.length} characters; at most ${templateLimits.sourceChars} are allowed.`;
      throw new TemplateSyntaxError(message, null);
    }
    const answer = await run({ kind: "check", template: source });
    if (answer === "stopped" || answer === "memory") {
      // Not remembered: a parse bounded by the size limit ran past the deadline only on a stalled machine.
      const why =
        answer === "stopped"
          ? `took longer than ${parseStop.cpuMs} ms of processor time (or ${parseStop.wallMs} ms in all)`
          : "used too much memory";
      throw new TemplateSyntaxError(`The template ${why} to parse; make it smaller.`, null);
    }
    outcome = answer.ok ? true : { message: answer.message, line: answer.line };
    checked.set(source, outcome);
  }
  if (outcome !== true) throw new TemplateSyntaxError(outcome.message, outcome.line);
}

/**
 * Renders the webhook's template with `event` (the envelope without its payload), `payload` and
 * `rollout` (the event's rollout details, null for none), on a template thread. The output is the body as sent, with the webhook's declared content type. Throws
 * RenderError for every way a template can fail, the thread's deadline and memory bound included.
 */
export async function renderTemplate(input: FormatInput): Promise<RenderedBody> {
  if (input.template === null)
    throw new RenderError("The webhook's format is template, but it has no template.");
  if (stopped.has(input.template))
    throw new RenderError(`The template failed to render: ${stoppedBeforeMessage}`);
  const answer = await run({
    kind: "render",
    template: input.template,
    envelope: input.envelope as unknown as Record<string, unknown>,
    rollout: input.rollout ?? null,
    contentType: input.templateContentType,
  }).catch((error: Error) => {
    // A fault of the thread, not of the template: still only this delivery fails, and its record says so.
    throw new RenderError(`The template could not be rendered: a template thread failed (${error.message}).`);
  });
  if (answer === "stopped") throw new RenderError(`The template failed to render: ${stoppedMessage}`);
  if (answer === "memory") throw new RenderError(`The template failed to render: ${memoryMessage}`);
  if (!answer.ok) throw new RenderError(answer.message);
  return answer.rendered as RenderedBody;
}
