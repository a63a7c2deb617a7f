import {
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  ListWatch,
  type ObjectCache,
  Watch,
} from "@kubernetes/client-node";
import type { Logger } from "../logger.js";
import { metrics } from "../metrics.js";
import { describeKubeError, retryAfterMs } from "./kube-errors.js";

export interface ResilientInformer<T extends KubernetesObject> {
  informer: Informer<T> & ObjectCache<T>;
  /** Resolves after the first list, so the cache is complete when controllers start. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A full re-list now; the cache is diffed and add/update/delete callbacks fire for what changed. */
  relist(): Promise<void>;
}

const baseDelayMs = 500;
const maxDelayMs = 30_000;

/**
 * client-node's informer re-lists by itself on 410 Gone and resumes a watch that ended cleanly, but it
 * stops for good after any other error. This wrapper restarts it with capped exponential backoff (at
 * least what a 429's Retry-After asks), and re-lists periodically so a watch that silently stalled
 * (open connection, no events) cannot leave the cache stale for long.
 *
 * The backoff grows until list and watch work again, which only the watch can tell: client-node's
 * "connect" event fires before every list attempt, failed ones included, so it is no sign of health.
 */
export function resilientInformer<T extends KubernetesObject>(options: {
  kubeConfig: KubeConfig;
  path: string;
  list: ListPromise<T>;
  resource: string;
  relistIntervalMs: number;
  logger: Logger;
  labelSelector?: string;
}): ResilientInformer<T> {
  let stopped = true;
  let failures = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let relistTimer: NodeJS.Timeout | undefined;
  const watch = new HealthReportingWatch(options.kubeConfig, () => {
    failures = 0;
  });
  const informer = new ListWatch<T>(options.path, watch, options.list, false, options.labelSelector);

  informer.on("error", (error: unknown) => {
    if (stopped) return;
    failures += 1;
    const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (failures - 1));
    const delay = Math.min(2 * maxDelayMs, Math.max(backoff, retryAfterMs(error)));
    metrics.watchRestarts.inc({ resource: options.resource, reason: "error" });
    // One line per attempt; the stack and client-node's dump of the response only at debug.
    options.logger.warn(
      { resource: options.resource, failures, retryInMs: delay, error: describeKubeError(error) },
      "list/watch failed; retrying",
    );
    options.logger.debug({ err: error, resource: options.resource }, "list/watch failure");
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
    async start() {
      stopped = false;
      await informer.start();
      relistTimer = setInterval(() => {
        metrics.watchRestarts.inc({ resource: options.resource, reason: "relist" });
        relist().catch((error: unknown) =>
          options.logger.warn(
            { resource: options.resource, error: describeKubeError(error) },
            "re-list failed",
          ),
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

/**
 * client-node's Watch, telling `onHealthy` when a watch proves list and watch work: it delivered an
 * event, or it ended without an error (the server's or the client's timeout on a quiet resource).
 * A subclass, not a patch: ListWatch takes any Watch.
 */
class HealthReportingWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly onHealthy: () => void,
  ) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: Parameters<Watch["watch"]>[1],
    callback: Parameters<Watch["watch"]>[2],
    done: Parameters<Watch["watch"]>[3],
  ): Promise<AbortController> {
    return super.watch(
      path,
      queryParams,
      (phase, object, watchObject) => {
        if (phase !== "ERROR") this.onHealthy();
        callback(phase, object, watchObject);
      },
      (error: unknown) => {
        const name = (error as { name?: string } | null)?.name;
        // An abort is ListWatch stopping the watch itself (stop, re-list): no failure to report.
        if (name === "AbortError") return;
        if (!error || name === "TimeoutError") this.onHealthy();
        done(error);
      },
    );
  }
}
