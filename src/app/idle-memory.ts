import v8 from "node:v8";
import type { Logger } from "../logger.js";

/**
 * V8 keeps its heap at the size the busiest moment grew it to: the young generation stays at two
 * 4 MiB semi-spaces once start-up or a burst has grown it, and the old generation keeps start-up's
 * garbage until the next collection, which an idle process never reaches. A memory-reducing
 * collection (V8's "last resort", the one it runs itself when memory runs out) shrinks both: about
 * 10 MiB less resident once the service is up (docs/operating.md, Memory).
 *
 * It needs `gc`, which Node's `--expose-gc` gives; `npm start`, the CLI and the image run with it
 * (test/unit/node-flags.test.ts). Without it nothing is released and nothing else changes.
 */

/** `gc` as `--expose-gc` defines it (V8's gc extension); "last-resort" is its memory-reducing kind. */
type Collect = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

export interface IdleMemorySettings {
  /** How often the process's CPU use is looked at. */
  checkEveryMs: number;
  /** Idle: the process used less than this share of one core since the last look. */
  idleCpuShare: number;
  /** Released again once the heap has grown by this much since the last release. */
  grownBytes: number;
}

const defaultIdleMemorySettings: IdleMemorySettings = {
  checkEveryMs: 30_000,
  idleCpuShare: 0.02,
  grownBytes: 4 * 1024 * 1024,
};

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

/**
 * Releases memory once now (after start-up) and again whenever the process has gone idle after the
 * heap grew (after a burst). A release is one full collection, about 50 ms of one thread at idle
 * heap sizes, so it runs only when nothing else does. Returns a stop function.
 */
export function releaseMemoryWhenIdle(
  logger: Logger,
  settings: IdleMemorySettings = defaultIdleMemorySettings,
): () => void {
  const collect = (globalThis as { gc?: Collect }).gc;
  if (typeof collect !== "function") {
    logger.debug("node runs without --expose-gc: the heap is not shrunk when idle");
    return () => {};
  }
  let heapAfterRelease = 0;
  const release = (when: string) => {
    const before = process.memoryUsage.rss();
    collect({ type: "major", execution: "sync", flavor: "last-resort" });
    heapAfterRelease = v8.getHeapStatistics().total_heap_size;
    logger.debug(
      { rssBeforeMiB: mib(before), rssAfterMiB: mib(process.memoryUsage.rss()) },
      `${when}: memory released`,
    );
  };
  release("started");

  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  let lookedAt = { cpu: cpuMs(), at: performance.now() };
  const timer = setInterval(() => {
    const now = { cpu: cpuMs(), at: performance.now() };
    const share = (now.cpu - lookedAt.cpu) / (now.at - lookedAt.at);
    lookedAt = now;
    const grown = v8.getHeapStatistics().total_heap_size - heapAfterRelease;
    if (share < settings.idleCpuShare && grown >= settings.grownBytes) release("idle");
  }, settings.checkEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
