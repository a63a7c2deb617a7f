import type { Worker } from "node:worker_threads";

// When a template thread's task is a runaway: once it has used its share of processor time, counted on
// the thread (worker.cpuUsage), not of the clock. A thread runs at a lower priority than the event loop
// (template-thread.ts), so on a busy machine a cheap render can wait for a processor far longer than
// it computes; counted by the clock it would be stopped for the machine's load. The clock still bounds
// it, at `wallMs`, so that a caller never waits longer than that.

export interface TaskLimit {
  /** Processor time the task may use on its thread. */
  cpuMs: number;
  /** Time the task may take in all, however little of it on a processor. */
  wallMs: number;
}

/** Calls `stop` once the task has used `cpuMs` on the thread, or `wallMs` passed; returns a cancel. */
export function watchTask(worker: Worker, limit: TaskLimit, stop: () => void): () => void {
  const started = performance.now();
  const baseline = cpuMicros(worker);
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const check = async () => {
    const now = await cpuMicros(worker);
    const before = await baseline;
    if (done) return;
    const wall = performance.now() - started;
    // Without the thread's own count (a Node before 24.6), the clock is all there is.
    const used = now === undefined || before === undefined ? wall : (now - before) / 1000;
    if (used >= limit.cpuMs || wall >= limit.wallMs) {
      done = true;
      stop();
      return;
    }
    timer = setTimeout(check, Math.max(10, Math.min(limit.cpuMs - used, limit.wallMs - wall)));
  };
  timer = setTimeout(check, limit.cpuMs);
  return () => {
    done = true;
    clearTimeout(timer);
  };
}

/** The thread's processor time so far, in microseconds; undefined when it cannot be told. */
async function cpuMicros(worker: Worker): Promise<number | undefined> {
  if (typeof worker.cpuUsage !== "function") return undefined;
  try {
    const { user, system } = await worker.cpuUsage();
    return user + system;
  } catch {
    return undefined; // the thread ended meanwhile
  }
}
