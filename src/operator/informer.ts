import {
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  ListWatch,
  type ObjectCache,
  Watch,
} from "@kubernetes/client-node";
import { type Logger, logRetry } from "../logger.js";
import { metrics } from "../metrics.js";
import { type CacheTransform, slimObject } from "./cache-transforms.js";
import { retryAfterMs } from "./kube-errors.js";

export interface ResilientInformer<T extends KubernetesObject> {
  informer: Informer<T> & ObjectCache<T>;
  /** Resolves after the first list, so the cache is complete when controllers start. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A full re-list now; the cache is diffed and add/update/delete callbacks fire for what changed. */
  relist(): Promise<void>;
  /**
   * True while an add/update/delete callback runs for an event of the watch, false for one of a list
   * (the first, a re-list): a controller queues the live ones ahead of the backlog (work-queue.ts).
   */
  fromWatch(): boolean;
}

/**
 * Passes every object a watch delivers through `transform` before ListWatch caches it (client-node
 * has no transform hook of its own), and says while it hands one over.
 */
function transformingWatch<T extends KubernetesObject>(kubeConfig: KubeConfig, transform: CacheTransform<T>) {
  const watch = new Watch(kubeConfig);
  let delivering = false;
  const wrapped = {
    watch(...[path, query, callback, done]: Parameters<Watch["watch"]>) {
      return watch.watch(
        path,
        query,
        (phase, object, raw) => {
          // ERROR carries a Status and BOOKMARK only a resourceVersion: nothing to slim.
          const cached = phase === "ADDED" || phase === "MODIFIED" || phase === "DELETED";
          delivering = true;
          try {
            callback(phase, cached ? transform(object) : object, raw);
          } finally {
            delivering = false;
          }
        },
        done,
      );
    },
  } as Watch;
  return { watch: wrapped, delivering: () => delivering };
}

/**
 * client-node's informer re-lists by itself on 410 Gone and resumes a watch that ended cleanly, but it
 * stops for good after any other error. This wrapper restarts it with capped exponential backoff (or
 * the Retry-After of a 429, when longer), and re-lists periodically so a watch that silently stalled
 * (open connection, no events) cannot leave the cache stale for long.
 */
export function resilientInformer<T extends KubernetesObject>(options: {
  kubeConfig: KubeConfig;
  path: string;
  list: ListPromise<T>;
  resource: string;
  relistIntervalMs: number;
  logger: Logger;
  labelSelector?: string;
  /** What the cache keeps of each object (cache-transforms.ts); by default all but managedFields and last-applied. */
  transform?: CacheTransform<T>;
}): ResilientInformer<T> {
  let stopped = true;
  let failures = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let relistTimer: NodeJS.Timeout | undefined;

  // The backoff starts over only when a list has succeeded. (client-node's "connect" event fires
  // before every list attempt, failed or not: resetting there kept the delay at 500 ms for ever.)
  const transform = options.transform ?? slimObject;
  const list: ListPromise<T> = async () => {
    const result = await options.list();
    failures = 0;
    return { ...result, items: result.items.map(transform) };
  };
  const watch = transformingWatch(options.kubeConfig, transform);
  const informer = new ListWatch<T>(options.path, watch.watch, list, false, options.labelSelector);
  informer.on("error", (error: unknown) => {
    // An AbortError is ListWatch ending its own watch (stop, re-list): no failure to retry.
    if (stopped || (error as { name?: string } | null)?.name === "AbortError") return;
    failures += 1;
    // At least what a 429 (or 503) asks for in Retry-After.
    const delay = Math.max(Math.min(30_000, 500 * 2 ** (failures - 1)), retryAfterMs(error));
    metrics.watchRestarts.inc({ resource: options.resource, reason: "error" });
    logRetry(
      options.logger,
      error,
      { resource: options.resource, retryInMs: delay },
      "watch failed; restarting",
    );
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      if (!stopped) informer.start().catch(() => {});
    }, delay);
  });

  async function relist(): Promise<void> {
    // ListWatch lists only when it holds no resourceVersion; clearing it (a plain field of the
    // ListWatch object) before a restart forces the full list, which it diffs against its cache.
    (informer as unknown as { resourceVersion: string }).resourceVersion = "";
    await informer.stop();
    if (!stopped) await informer.start();
  }

  return {
    informer,
    relist,
    fromWatch: watch.delivering,
    async start() {
      stopped = false;
      await informer.start();
      relistTimer = setInterval(() => {
        metrics.watchRestarts.inc({ resource: options.resource, reason: "relist" });
        relist().catch((error: unknown) =>
          logRetry(options.logger, error, { resource: options.resource }, "re-list failed"),
        );
      }, options.relistIntervalMs);
      relistTimer.unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(restartTimer);
      clearInterval(relistTimer);
      await informer.stop();
    },
  };
}
