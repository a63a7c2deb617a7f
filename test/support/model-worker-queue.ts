import type { ClaimedDelivery, ClaimRequest, RecordedOutcome } from "../../src/delivery-engine/queue.js";
import type { WorkerQueue } from "../../src/delivery-engine/worker-queue.js";

/**
 * The delivery queue in memory, doing for the worker what Postgres does (WorkerQueue, worker-queue.ts):
 * claims oldest first within each webhook's allowance, skips paused webhooks, reports a webhook's
 * enabled flag as it is at the claim, records each row's first outcome, schedules retries, disables a
 * webhook with auto-disable on a 410 it records, and takes back released and paused rows. Leases run
 * out only when `expireLeases` says so. For the worker's model test (delivery-worker-model.test.ts).
 */
export class ModelWorkerQueue implements WorkerQueue {
  /** Rows to claim; a row is in exactly one of due, claimed, scheduled, recorded. */
  readonly due: ClaimedDelivery[] = [];
  readonly claimed = new Map<number, ClaimedDelivery>();
  /** When each row held now was claimed or handed over, in order: a counter, the latest claim's. */
  readonly claimedAt = new Map<number, number>();
  private claims = 0;
  private readonly scheduled: Array<{ row: ClaimedDelivery; atMs: number }> = [];
  /** Each recorded row's outcome; `recordedTwice` lists any row given a second one (never, if the worker is right). */
  readonly recorded = new Map<number, RecordedOutcome>();
  readonly recordedTwice: number[] = [];
  /** Deliveries paused by their receiver, in the order the worker stored the pauses. */
  readonly paused: number[] = [];
  readonly webhooks = new Map<number, { enabled: boolean; autoDisable: boolean; pausedUntilMs: number }>();
  private nextId = 1;
  notify: () => void = () => {};

  constructor(
    webhookIds: number[],
    options: { autoDisable: number[]; retryMaxAttempts: Map<number, number> },
  ) {
    for (const id of webhookIds)
      this.webhooks.set(id, {
        enabled: true,
        autoDisable: options.autoDisable.includes(id),
        pausedUntilMs: 0,
      });
    this.retryMaxAttempts = options.retryMaxAttempts;
  }
  private readonly retryMaxAttempts: Map<number, number>;

  /** Queues `count` new rows of the webhook, as an emit would; their ids. */
  add(webhookId: number, count: number): ClaimedDelivery[] {
    const rows = Array.from({ length: count }, () => this.row(webhookId, this.nextId++, 1));
    this.due.push(...rows);
    return rows;
  }

  /** New rows leased to the worker at once, as an emit's hand-over leases them. */
  handOver(webhookId: number, count: number): ClaimedDelivery[] {
    const rows = Array.from({ length: count }, () => this.row(webhookId, this.nextId++, 1));
    for (const row of rows) {
      this.claimed.set(row.id, { ...row, enabled: this.enabled(webhookId) });
      this.claimedAt.set(row.id, this.claims++);
    }
    return rows.map((row) => this.claimed.get(row.id) as ClaimedDelivery);
  }

  /** Claimed rows whose lease ran out go back to the queue (their worker died or lost them). */
  expireLeases(ids: number[]): void {
    for (const id of ids) this.takeBack(id);
  }

  async recordAndClaim(outcomes: RecordedOutcome[], claim: ClaimRequest): Promise<ClaimedDelivery[]> {
    for (const outcome of outcomes) this.record(outcome);
    const nowMs = Date.now();
    const taken = new Map<number, number>();
    const claimed: ClaimedDelivery[] = [];
    // Restricted webhooks (slow receivers, receiver-limits.ts) share what is left of their budget.
    let restrictedBudget = claim.plan.restrictedBudget;
    this.due.sort((a, b) => a.id - b.id);
    for (const row of [...this.due]) {
      if (claimed.length >= claim.limit) break;
      const webhook = this.webhooks.get(row.webhook_id);
      if (webhook === undefined || webhook.pausedUntilMs > nowMs) continue;
      const allowance = claim.plan.allowances.get(row.webhook_id);
      const count = taken.get(row.webhook_id) ?? 0;
      if (count >= (allowance?.allowance ?? claim.plan.defaultAllowance)) continue;
      if (allowance?.restricted) {
        if (restrictedBudget === 0) continue;
        restrictedBudget -= 1;
      }
      taken.set(row.webhook_id, count + 1);
      this.due.splice(this.due.indexOf(row), 1);
      const leased = { ...row, enabled: webhook.enabled };
      this.claimed.set(row.id, leased);
      this.claimedAt.set(row.id, this.claims++);
      claimed.push(leased);
    }
    return claimed;
  }

  async queueDueRetries(limit: number): Promise<number> {
    const nowMs = Date.now();
    const due = this.scheduled.filter((s) => s.atMs <= nowMs).slice(0, limit);
    for (const entry of due) {
      this.scheduled.splice(this.scheduled.indexOf(entry), 1);
      this.due.push(entry.row);
    }
    if (due.length > 0) this.notify();
    return due.length;
  }

  async releaseClaimsOf(ids: number[]): Promise<void> {
    for (const id of ids) this.takeBack(id);
  }

  async pauseWebhook(pause: { webhookId: number; deliveryId: number; untilMs: number }): Promise<void> {
    const webhook = this.webhooks.get(pause.webhookId);
    if (webhook) webhook.pausedUntilMs = Math.max(webhook.pausedUntilMs, pause.untilMs);
    this.paused.push(pause.deliveryId);
    this.takeBack(pause.deliveryId);
  }

  async releaseClaims(): Promise<number> {
    const ids = [...this.claimed.keys()];
    for (const id of ids) this.takeBack(id);
    return ids.length;
  }

  listen(onNotify: () => void) {
    this.notify = onNotify;
    return { start: async () => {}, stop: async () => {} };
  }

  private takeBack(id: number): void {
    const row = this.claimed.get(id);
    if (row === undefined) return;
    this.claimed.delete(id);
    this.due.push(row);
  }

  private record(outcome: RecordedOutcome): void {
    if (this.recorded.has(outcome.id)) {
      this.recordedTwice.push(outcome.id);
      return;
    }
    const row =
      this.claimed.get(outcome.id) ??
      this.due.find((d) => d.id === outcome.id) ??
      this.scheduledRow(outcome.id);
    this.recorded.set(outcome.id, outcome);
    this.claimed.delete(outcome.id);
    const inDue = this.due.findIndex((d) => d.id === outcome.id);
    if (inDue >= 0) this.due.splice(inDue, 1);
    if (row === undefined) return;
    const webhook = this.webhooks.get(row.webhook_id);
    if (webhook?.autoDisable && outcome.countedByPolicy && outcome.outcome.statusCode === 410)
      webhook.enabled = false;
    if (outcome.retryInMs != null) {
      const retry = this.row(row.webhook_id, this.nextId++, row.attempt_number + 1);
      this.scheduled.push({ row: retry, atMs: outcome.deliveredAtMs + outcome.retryInMs });
    }
  }

  private scheduledRow(id: number): ClaimedDelivery | undefined {
    return this.scheduled.find((s) => s.row.id === id)?.row;
  }

  private enabled(webhookId: number): boolean {
    return this.webhooks.get(webhookId)?.enabled ?? false;
  }

  private row(webhookId: number, id: number, attempt: number): ClaimedDelivery {
    const webhook = this.webhooks.get(webhookId);
    return {
      id,
      webhook_id: webhookId,
      event_type: "deployment.created",
      url: "http://127.0.0.1:1/hook",
      secret: null,
      body: "{}",
      queued_at_ms: Date.now(),
      attempt_number: attempt,
      enabled: true,
      retry_max_attempts: this.retryMaxAttempts.get(webhookId) ?? null,
      counted_by_policy: webhook?.autoDisable ?? false,
      more_due: false,
      shape: null,
      rollout_id: null,
      pace_interval_ms: null,
    };
  }
}
