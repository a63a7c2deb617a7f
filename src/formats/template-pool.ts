import { Worker } from "node:worker_threads";
import { type TaskLimit, watchTask } from "./template-deadline.js";
import type { TemplateAnswer, TemplateTask } from "./template-task.js";

// Threads that parse and render templates, so that no template holds the process's event loop, and a
// deadline that ends (terminates) a thread whose task runs past it: liquidjs checks its own time limit
// only between a template's pieces, and one filter (a `where_exp` over a long range) can run for hours.
// Hand-written on node:worker_threads rather than a pool library: the deadline must count from when a
// thread starts the task, not from when it was queued (piscina's abort signal counts the wait too, so
// templates queued behind a runaway would be stopped without having run), and it is one small class.

export interface TemplatePoolSettings {
  /** Threads at most; each starts on first use. */
  threads: number;
  /** A thread idle this long ends, and its memory with it. */
  idleMs: number;
  /** When a task is stopped, its thread terminated: a render, and a parse alone (check). */
  limits: Record<TemplateTask["kind"], TaskLimit>;
}

/** How a task ended that its thread could not answer. */
export type ThreadFailure = "stopped" | "memory";

export class TemplateThreadFailure extends Error {
  override name = "TemplateThreadFailure";
  constructor(readonly failure: ThreadFailure) {
    super(failure === "stopped" ? "the template's thread was stopped at its deadline" : "out of memory");
  }
}

interface Job {
  task: TemplateTask;
  resolve(answer: TemplateAnswer): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  /** Terminated, or about to be: no longer counted or given work. */
  ending: boolean;
  job: Job | undefined;
  /** Cancels the watch on its task's time (template-deadline.ts). */
  unwatch: (() => void) | undefined;
  idle: NodeJS.Timeout | undefined;
}

/** What a thread's heap may grow to: a render bounded by liquidjs's memory limit needs far less. */
const resourceLimits = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8 };

export class TemplatePool {
  private readonly threads = new Set<Thread>();
  private readonly waiting: Job[] = [];

  constructor(
    private readonly settings: TemplatePoolSettings,
    private readonly entry: { url: URL; execArgv: string[] } = threadEntry(),
  ) {}

  /** The thread's answer; rejects with TemplateThreadFailure when the thread had to be ended. */
  run(task: TemplateTask): Promise<TemplateAnswer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  /** Threads running now (started and not ended). */
  get size(): number {
    return this.threads.size;
  }

  /** Ends every thread; tasks still waiting are refused. */
  async close(): Promise<void> {
    for (const job of this.waiting.splice(0)) job.reject(new Error("the template threads are closing"));
    const ending = [...this.threads].map((thread) => thread.worker);
    for (const thread of [...this.threads])
      this.end(thread)?.reject(new Error("the template threads are closing"));
    await Promise.all(ending.map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const thread = this.freeThread() ?? this.startThread();
      if (thread === undefined) return;
      thread.job = this.waiting.shift();
      clearTimeout(thread.idle);
      if (thread.ready) this.post(thread);
    }
  }

  private freeThread(): Thread | undefined {
    for (const thread of this.threads) if (thread.job === undefined) return thread;
    return undefined;
  }

  private startThread(): Thread | undefined {
    if (this.threads.size >= this.settings.threads) return undefined;
    const { url, execArgv } = this.entry;
    const worker = new Worker(url, { execArgv, resourceLimits });
    // A thread never keeps the process alive: a task's deadline timer does while it runs.
    worker.unref();
    const thread: Thread = {
      worker,
      ready: false,
      ending: false,
      job: undefined,
      unwatch: undefined,
      idle: undefined,
    };
    this.threads.add(thread);
    worker.on("message", (message: TemplateAnswer | { ready: true }) => {
      if (thread.ending) return; // an answer after its deadline: its caller was told already
      if ("ready" in message) {
        thread.ready = true;
        if (thread.job) this.post(thread);
        else this.idleLater(thread);
      } else this.answered(thread, message);
    });
    worker.on("error", (error: Error & { code?: string }) => {
      const job = this.end(thread);
      if (error.code === "ERR_WORKER_OUT_OF_MEMORY") job?.reject(new TemplateThreadFailure("memory"));
      else job?.reject(error);
    });
    worker.on("exit", () => {
      this.release(thread)?.reject(new Error("a template thread ended while rendering"));
      this.threads.delete(thread);
      this.dispatch();
    });
    return thread;
  }

  /** Sends the thread its job; its time counts from here, once the thread has started. */
  private post(thread: Thread): void {
    const job = thread.job as Job;
    thread.unwatch = watchTask(thread.worker, this.settings.limits[job.task.kind], () => {
      this.end(thread)?.reject(new TemplateThreadFailure("stopped"));
      if (job.task.kind === "render") this.stopQueuedRenders(job.task.template);
      // Its replacement starts now rather than with the next task (a new thread takes some 100 ms to
      // load the engine): the caller of a stopped template, a preview, usually asks again at once.
      if (this.waiting.length === 0) this.startThread();
      this.dispatch();
    });
    thread.worker.postMessage(job.task);
  }

  /**
   * Renders of a template just stopped, still queued, are stopped unrun: they would each hold the thread
   * to the same deadline (template.ts refuses the template for a while once stopped, but only renders
   * asked for after the stop), and whatever is queued behind them would wait for every one of them.
   */
  private stopQueuedRenders(template: string): void {
    for (let i = this.waiting.length - 1; i >= 0; i -= 1) {
      const job = this.waiting[i] as Job;
      if (job.task.kind !== "render" || job.task.template !== template) continue;
      this.waiting.splice(i, 1);
      job.reject(new TemplateThreadFailure("stopped"));
    }
  }

  private answered(thread: Thread, answer: TemplateAnswer): void {
    this.release(thread)?.resolve(answer);
    this.dispatch();
    if (thread.job === undefined) this.idleLater(thread);
  }

  /** The thread's job, taken from it (once), its deadline cleared. */
  private release(thread: Thread): Job | undefined {
    thread.unwatch?.();
    thread.unwatch = undefined;
    const { job } = thread;
    thread.job = undefined;
    return job;
  }

  /** Takes the thread out of the pool and terminates it; its job, if it had one, is returned. */
  private end(thread: Thread): Job | undefined {
    thread.ending = true;
    clearTimeout(thread.idle);
    this.threads.delete(thread);
    void thread.worker.terminate();
    return this.release(thread);
  }

  private idleLater(thread: Thread): void {
    clearTimeout(thread.idle);
    thread.idle = setTimeout(() => this.end(thread), this.settings.idleMs);
    thread.idle.unref();
  }
}

/**
 * The thread's entry beside this module: the built `.js` (in the bundle, dist/server/template-thread.js,
 * an entry of its own), or, when this module runs from source (tests, tsx), the `.ts` through tsx.
 */
function threadEntry(): { url: URL; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith(".ts");
  return fromSource
    ? { url: new URL("./template-thread.ts", import.meta.url), execArgv: ["--import", "tsx"] }
    : { url: new URL("./template-thread.js", import.meta.url), execArgv: [] };
}
