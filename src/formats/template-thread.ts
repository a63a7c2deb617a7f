import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { parseTemplate, renderInThread } from "./template-engine.js";
import type { TemplateAnswer, TemplateTask } from "./template-task.js";
import { RenderError, TemplateSyntaxError } from "./types.js";

// The entry of a template thread (template-pool.ts): one task at a time, each answered with a message.
// Errors travel as data: an Error crossing threads keeps its message but not its class.

/**
 * A template thread yields the CPU to the event loop's thread: on Linux a thread has a nice value of
 * its own, set through its thread id. Raising it needs no privilege; where it is not possible (another
 * system), the thread runs at the process's priority.
 */
function lowerThisThreadsPriority(): void {
  try {
    const threadId = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, 10);
  } catch {}
}

function answer(task: TemplateTask): TemplateAnswer {
  try {
    if (task.kind === "check") {
      parseTemplate(task.template);
      return { ok: true };
    }
    const rendered = renderInThread(task.template, task.envelope, task.contentType, task.rollout);
    return { ok: true, rendered };
  } catch (error) {
    if (error instanceof TemplateSyntaxError)
      return { ok: false, kind: "syntax", message: error.message, line: error.line };
    if (error instanceof RenderError)
      return { ok: false, kind: "render", message: error.message, line: null };
    throw error; // a fault of ours, not of the template: the thread's 'error', logged by the pool
  }
}

lowerThisThreadsPriority();

const port = parentPort;
if (port === null) throw new Error("template-thread.ts runs as a worker thread (template-pool.ts)");
port.on("message", (task: TemplateTask) => port.postMessage(answer(task)));
port.postMessage({ ready: true });
