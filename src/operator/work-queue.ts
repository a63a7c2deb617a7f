import { type Logger, logRetry } from "../logger.js";

export type ReconcileResult = { requeueAfterMs?: number } | undefined;

/**
 * A keyed reconcile queue, like client-go's workqueue: a key is processed by one handler at a time,
 * a key added while it is being processed runs once more afterwards, keys added several times while
 * waiting run once. Failures requeue with capped exponential backoff per key; success resets it.
 */
export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
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

  add(key: string): void {
    if (this.stopped) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.waiting.add(key);
    this.pump();
  }

  addAfter(key: string, delayMs: number): void {
    if (this.stopped || this.timers.has(key)) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Resolves when nothing is waiting or running (tests and graceful shutdown). */
  async idle(): Promise<void> {
    if (this.waiting.size === 0 && this.running === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.waiting.clear();
    await this.idle();
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.waiting.size > 0) {
      const key = this.waiting.values().next().value as string;
      this.waiting.delete(key);
      this.active.add(key);
      this.running += 1;
      void this.process(key);
    }
    if (this.running === 0 && this.waiting.size === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async process(key: string): Promise<void> {
    try {
      const result = await this.handler(key);
      this.failures.delete(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (error) {
      const failures = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, failures);
      const delay = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (failures - 1));
      logRetry(this.options.logger, error, { key, retryInMs: delay }, "reconcile failed; requeued");
      this.addAfter(key, delay);
    } finally {
      this.active.delete(key);
      this.running -= 1;
      // After stop() nothing new starts: a key changed while it ran is dropped like the waiting ones.
      if (this.dirty.delete(key) && !this.stopped) this.waiting.add(key);
      this.pump();
    }
  }
}
