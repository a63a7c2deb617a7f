import { type Logger, logRetry } from "../logger.js";

export type ReconcileResult = { requeueAfterMs?: number } | undefined;

/**
 * `live`: a change the watch just delivered; `backlog`: what a list (the first after start or a
 * leadership change, a re-list) or a bulk re-queue brings. Live keys are taken before any backlog key,
 * so a rollout that starts while thousands of listed ones are recorded waits for none of them.
 */
export type Priority = "live" | "backlog";

/**
 * A keyed reconcile queue, like client-go's workqueue: a key is processed by one handler at a time,
 * a key added while it is being processed runs once more afterwards, keys added several times while
 * waiting run once. Failures requeue with capped exponential backoff per key; success resets it. A key
 * asked for later several times runs once, at the earliest time asked: a retry is never held back by a
 * recheck scheduled further off.
 * Two tiers (Priority): live keys first, each tier in the order added; a backlog key added live moves up.
 */
export class WorkQueue {
  private readonly live = new Set<string>();
  private readonly waiting = new Set<string>();
  private readonly active = new Map<string, Priority>();
  private readonly dirty = new Map<string, Priority>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; atMs: number }>();
  private running = 0;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly handler: (key: string) => Promise<ReconcileResult>,
    private readonly options: {
      concurrency: number;
      baseDelayMs: number;
      maxDelayMs: number;
      logger: Logger;
    },
  ) {}

  add(key: string, priority: Priority = "live"): void {
    if (this.stopped) return;
    if (this.active.has(key)) {
      if (this.dirty.get(key) !== "live") this.dirty.set(key, priority);
      return;
    }
    this.enqueue(key, priority);
    this.pump();
  }

  addAfter(key: string, delayMs: number, priority: Priority = "live"): void {
    if (this.stopped) return;
    const atMs = Date.now() + delayMs;
    const scheduled = this.timers.get(key);
    if (scheduled && scheduled.atMs <= atMs) return;
    if (scheduled) clearTimeout(scheduled.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key, priority);
    }, delayMs);
    timer.unref();
    this.timers.set(key, { timer, atMs });
  }

  /** Resolves when nothing is waiting or running (tests and graceful shutdown). */
  async idle(): Promise<void> {
    if (this.size() === 0 && this.running === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.live.clear();
    this.waiting.clear();
    await this.idle();
  }

  private size(): number {
    return this.live.size + this.waiting.size;
  }

  private enqueue(key: string, priority: Priority): void {
    if (this.live.has(key)) return;
    if (priority === "live") {
      this.waiting.delete(key);
      this.live.add(key);
    } else {
      this.waiting.add(key);
    }
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.size() > 0) {
      const tier = this.live.size > 0 ? this.live : this.waiting;
      const key = tier.values().next().value as string;
      tier.delete(key);
      this.active.set(key, tier === this.live ? "live" : "backlog");
      this.running += 1;
      void this.process(key);
    }
    if (this.running === 0 && this.size() === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async process(key: string): Promise<void> {
    try {
      const result = await this.handler(key);
      this.failures.delete(key);
      if (result?.requeueAfterMs !== undefined)
        this.addAfter(key, result.requeueAfterMs, this.active.get(key));
    } catch (error) {
      const failures = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, failures);
      const delay = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (failures - 1));
      logRetry(this.options.logger, error, { key, retryInMs: delay }, "reconcile failed; requeued");
      this.addAfter(key, delay, this.active.get(key));
    } finally {
      this.active.delete(key);
      this.running -= 1;
      // After stop() nothing new starts: a key changed while it ran is dropped like the waiting ones.
      const again = this.dirty.get(key);
      this.dirty.delete(key);
      if (again && !this.stopped) this.enqueue(key, again);
      this.pump();
    }
  }
}
