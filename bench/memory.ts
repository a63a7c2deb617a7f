import { readFile } from "node:fs/promises";
import { createPool, withTransaction } from "../src/db/pool.js";
import { emitEvents } from "../src/delivery-engine/emit.js";
import type { BenchServer } from "./database.js";
import { benchEvents, chunk, createProjectWithWebhooks, sleep, waitUntilAllDone } from "./fixtures.js";
import type { ReceiverProcess } from "./receiver-process.js";
import { type ServiceProcess, startServiceProcess } from "./service-process.js";

export interface ServiceMemory {
  idleRssMiB: number;
  peakRssMiB: number;
  peakHeapMiB: number;
  drainSeconds: number;
  /** Resident set a minute after the drain, once the service has released memory (idle-memory.ts). */
  idleAfterRssMiB: number;
}

const mib = (bytes: number) => bytes / 1024 / 1024;

/** Issue 28's memory targets, each as [what it says, whether it was met]. */
export function memoryTargets(memory: ServiceMemory): [string, boolean][] {
  return [
    [`idle RSS < 75 MiB (${memory.idleRssMiB.toFixed(0)} MiB)`, memory.idleRssMiB < 75],
    [
      `peak RSS < 110 MiB while draining the burst (${memory.peakRssMiB.toFixed(0)} MiB)`,
      memory.peakRssMiB < 110,
    ],
  ];
}

/** One line of what `measureServiceMemory` found. */
export function describeMemory(memory: ServiceMemory, events: number): string {
  const mb = (value: number) => `${value.toFixed(0)} MiB`;
  return `idle RSS ${mb(memory.idleRssMiB)}; draining ${events} events (${memory.drainSeconds.toFixed(1)} s): peak RSS ${mb(memory.peakRssMiB)}, peak heap ${mb(memory.peakHeapMiB)}; idle again a minute later: RSS ${mb(memory.idleAfterRssMiB)}`;
}

/** VmRSS and VmHWM (the peak resident set since start) of a process, from /proc, in bytes. */
async function residentSet(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

async function heapUsed(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? 0);
}

/**
 * The built service (`node … dist/server/main.js serve`, as `npm start` runs it) in a process of its
 * own, without a cluster: its resident set when idle, then its peak resident set (VmHWM) and peak V8
 * heap (from /metrics, every 100 ms) while it drains a burst of `events` events emitted all at once,
 * then its resident set once idle again.
 */
export async function measureServiceMemory(
  server: BenchServer,
  receiver: ReceiverProcess,
  events: number,
): Promise<ServiceMemory> {
  const database = await server.freshDatabase("memory");
  const emitter = createPool(database.url, 2);
  let service: ServiceProcess | undefined;
  try {
    const project = await createProjectWithWebhooks(database.url, receiver.url, 1);
    service = await startServiceProcess(database.url, {
      DELIVERY_CONCURRENCY: "128",
      DELIVERY_PER_WEBHOOK_CONCURRENCY: "128",
      // The heap is sampled every 100 ms: every sample a fresh rendering, not the last one reused.
      METRICS_CACHE_MS: "0",
    });
    const { pid, url } = service;
    await sleep(2_000);
    const idle = await residentSet(pid);

    let peakHeap = await heapUsed(url);
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakHeap = Math.max(peakHeap, await heapUsed(url).catch(() => 0));
        await sleep(100);
      }
    })();
    const startedAt = Date.now();
    for (const batch of chunk(benchEvents(project, events), 500)) {
      await withTransaction(emitter, (client) => emitEvents(client, batch));
    }
    const doneAt = await waitUntilAllDone(emitter, project.id, events, 180_000);
    sampling = false;
    await sampler;
    const after = await residentSet(pid);
    await receiver.collect();
    // The service looks every 30 s: one look may still see the drain's CPU, the next sees it idle.
    await sleep(65_000);
    const idleAfter = await residentSet(pid);
    return {
      idleRssMiB: mib(idle.rss),
      peakRssMiB: mib(after.peak),
      peakHeapMiB: mib(peakHeap),
      drainSeconds: (doneAt - startedAt) / 1000,
      idleAfterRssMiB: mib(idleAfter.rss),
    };
  } finally {
    await service?.stop();
    await emitter.end();
    await database.drop();
  }
}
