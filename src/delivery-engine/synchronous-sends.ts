import type { DeliveryOutcome } from "./sender.js";
import { TokenBuckets } from "./token-buckets.js";

/** The SYNC_SENDS_* settings (app/config.ts): a project's share of the synchronous sends. */
export interface SynchronousSendSettings {
  /** Test events and replays of one project in flight per replica at most. */
  perProjectConcurrency: number;
  /** Token bucket per project and replica: this many, refilled over a minute; 0: no pace. */
  perProjectPerMinute: number;
  /** The same over a day (it bounds what a project can store); 0: no bound. */
  perProjectPerDay: number;
}

/** What a synchronous send needs of the worker's accounting (worker.ts): the slots all sends share. */
export interface SendAccounting {
  /** Sends of the webhook in flight on this replica, whatever started them. */
  sendsInFlightOf(webhookId: number): number;
  synchronousStarted(webhookId: number, sendId: number): void;
  synchronousFinished(webhookId: number, sendId: number, outcome: DeliveryOutcome | undefined): void;
}

/** A reserved place for one synchronous send: released once, with the outcome when it was sent. */
export interface SendSlot {
  release(outcome?: DeliveryOutcome): void;
}

/** Why a synchronous send may not start now, and when asking again makes sense. */
export interface SendRefusal {
  refused: "project" | "webhook" | "replica" | "per-minute" | "per-day";
  limit: number;
  retryAfterMs: number;
}

/** A slot frees as soon as one of the sends holding it ends: ask again in a second. */
const inFlightRetryAfterMs = 1_000;

/**
 * The bounds of replays and test events, which are sent while the API request waits: they take the
 * same slots as the worker's sends (counted in its limits, per replica and per webhook), and a project
 * gets a share of them and a pace. A send that would go over any of them is refused before anything is
 * recorded. Synchronous sends together take at most `replicaLimit` (half of DELIVERY_CONCURRENCY): they
 * do not wait for the worker's slots to free, and the worker claims only what they leave.
 */
export class SynchronousSends {
  private readonly byProject = new Map<number, number>();
  private inFlight = 0;
  /** Negative: never a delivery id, in the limits' map of sends by id. */
  private nextSendId = -1;
  private readonly perMinute: TokenBuckets | undefined;
  private readonly perDay: TokenBuckets | undefined;

  constructor(
    private readonly accounting: SendAccounting,
    private readonly limits: { replica: number; perWebhook: number } & SynchronousSendSettings,
  ) {
    const { perProjectPerMinute, perProjectPerDay } = limits;
    this.perMinute = perProjectPerMinute > 0 ? new TokenBuckets(perProjectPerMinute, 60_000) : undefined;
    this.perDay = perProjectPerDay > 0 ? new TokenBuckets(perProjectPerDay, 86_400_000) : undefined;
  }

  reserve(projectId: number, webhookId: number): SendSlot | SendRefusal {
    const refusal = this.refusal(projectId, webhookId);
    if (refusal) return refusal;
    this.perMinute?.take(projectId);
    this.perDay?.take(projectId);
    const sendId = this.nextSendId--;
    this.inFlight += 1;
    this.byProject.set(projectId, (this.byProject.get(projectId) ?? 0) + 1);
    this.accounting.synchronousStarted(webhookId, sendId);
    let released = false;
    return {
      release: (outcome) => {
        if (released) return;
        released = true;
        this.inFlight -= 1;
        const left = (this.byProject.get(projectId) ?? 1) - 1;
        if (left === 0) this.byProject.delete(projectId);
        else this.byProject.set(projectId, left);
        this.accounting.synchronousFinished(webhookId, sendId, outcome);
      },
    };
  }

  /**
   * Whether the project is over its share or its pace now, whichever webhook it asks for: a peek that
   * takes nothing, so a storm of its requests can be answered before they cost a query.
   */
  projectRefusal(projectId: number): SendRefusal | undefined {
    const { perProjectConcurrency } = this.limits;
    if ((this.byProject.get(projectId) ?? 0) >= perProjectConcurrency)
      return { refused: "project", limit: perProjectConcurrency, retryAfterMs: inFlightRetryAfterMs };
    const minuteWait = this.perMinute?.waitMs(projectId) ?? 0;
    if (minuteWait > 0)
      return { refused: "per-minute", limit: this.limits.perProjectPerMinute, retryAfterMs: minuteWait };
    const dayWait = this.perDay?.waitMs(projectId) ?? 0;
    if (dayWait > 0)
      return { refused: "per-day", limit: this.limits.perProjectPerDay, retryAfterMs: dayWait };
    return undefined;
  }

  /** The first bound the send would go over: the project's own first, then the shared ones. */
  private refusal(projectId: number, webhookId: number): SendRefusal | undefined {
    const project = this.projectRefusal(projectId);
    if (project?.refused === "project") return project;
    const { perWebhook, replica } = this.limits;
    if (this.accounting.sendsInFlightOf(webhookId) >= perWebhook)
      return { refused: "webhook", limit: perWebhook, retryAfterMs: inFlightRetryAfterMs };
    if (this.inFlight >= replica)
      return { refused: "replica", limit: replica, retryAfterMs: inFlightRetryAfterMs };
    return project;
  }
}

export function isSendRefusal(reserved: SendSlot | SendRefusal): reserved is SendRefusal {
  return "refused" in reserved;
}
