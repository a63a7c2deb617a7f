import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { watchTask } from "../../../src/formats/template-deadline.js";

// A template thread's task is stopped for the processor time it used, not for the time it waited: a
// thread blocked without computing (standing for one a busy machine does not schedule) runs on.

const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.terminate()));
});

/** A thread that, asked, blocks for `ms` without computing, or computes for `ms`; answers when done. */
function thread(kind: "waits" | "computes", ms: number): Worker {
  const body =
    kind === "waits"
      ? `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});`
      : `const until = Date.now() + ${ms}; while (Date.now() < until) {}`;
  const worker = new Worker(
    `require("node:worker_threads").parentPort.on("message", () => { ${body} require("node:worker_threads").parentPort.postMessage("done"); });`,
    { eval: true },
  );
  workers.push(worker);
  return worker;
}

/** Which comes first: the thread's answer, or the watch's stop. */
async function outcome(worker: Worker, limit: { cpuMs: number; wallMs: number }): Promise<string> {
  await once(worker, "online");
  let unwatch = () => {};
  const stopped = new Promise<string>((resolve) => {
    unwatch = watchTask(worker, limit, () => resolve("stopped"));
  });
  worker.postMessage("go");
  const answered = once(worker, "message").then(() => "answered");
  const first = await Promise.race([stopped, answered]);
  unwatch();
  return first;
}

describe("a template task's time", { timeout: 20_000 }, () => {
  it("is the processor time it used: a thread that waits past cpuMs is not stopped", async () => {
    expect(await outcome(thread("waits", 1_200), { cpuMs: 300, wallMs: 10_000 })).toBe("answered");
  });

  it("stops a thread that computes past cpuMs", async () => {
    expect(await outcome(thread("computes", 10_000), { cpuMs: 300, wallMs: 10_000 })).toBe("stopped");
  });

  it("stops a thread that waits past wallMs, however little it computed", async () => {
    expect(await outcome(thread("waits", 10_000), { cpuMs: 300, wallMs: 1_000 })).toBe("stopped");
  });
});
