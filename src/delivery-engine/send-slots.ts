import { metrics } from "../metrics.js";
import type { ClaimedDelivery } from "./queue.js";
import type { ReceiverLimits } from "./receiver-limits.js";
import type { DeliveryOutcome } from "./sender.js";

/**
 * A claimed row's states in the worker (worker.ts), and the slots they hold:
 *
 *   claimed or handed over ──▶ waiting ──start──▶ sending ──finish──▶ done (recorded, paused or unsent)
 *                                 │
 *                                 └──giveBack──▶ done (back to the queue unsent)
 *
 * `waiting` holds its webhook's allowance (receiver-limits.ts) and no slot; `sending` holds one slot
 * from `start` until `finish`, whatever ends the send: an answer, a pause, an error, a webhook disabled
 * since the row was queued (it finishes before `start` returns: nothing is sent). `finish` is the one
 * place a slot is given back. Replays and test events (synchronous-sends.ts) hold slots as well.
 */
export type RowState = "waiting" | "sending";

export interface WaitingRow {
  delivery: ClaimedDelivery;
  claimedAtMs: number;
}

interface SendingRow {
  delivery: ClaimedDelivery;
  startedAtMs: number;
  done: Promise<void>;
}

export class SendSlots {
  private readonly waitingRows: WaitingRow[] = [];
  private readonly sendingRows = new Map<number, SendingRow>();
  private synchronous = 0;

  constructor(
    private readonly limits: ReceiverLimits,
    private readonly events: {
      /** A slot was given back (called after the row's state changed). */
      freed: () => void;
      /** `finish` of a send that holds no slot: a bug in the worker, said once per row. */
      unknownSend: (deliveryId: number) => void;
    },
  ) {}

  /** Claimed rows not sent yet, oldest claim first. */
  get waiting(): readonly WaitingRow[] {
    return this.waitingRows;
  }

  stateOf(deliveryId: number): RowState | undefined {
    if (this.sendingRows.has(deliveryId)) return "sending";
    return this.waitingRows.some((row) => row.delivery.id === deliveryId) ? "waiting" : undefined;
  }

  /** → waiting. */
  claimed(delivery: ClaimedDelivery, claimedAtMs: number): void {
    this.limits.claimed(delivery.webhook_id);
    this.waitingRows.push({ delivery, claimedAtMs });
  }

  /** waiting → done: the row at `index` goes back to the queue unsent; the caller releases it. */
  giveBack(index: number): ClaimedDelivery {
    const [row] = this.waitingRows.splice(index, 1) as [WaitingRow];
    this.limits.released(row.delivery.webhook_id);
    return row.delivery;
  }

  /** Every waiting row, given back (the worker is stopping: its claims are released together). */
  giveBackAll(): ClaimedDelivery[] {
    const rows: ClaimedDelivery[] = [];
    while (this.waitingRows.length > 0) rows.push(this.giveBack(0));
    return rows;
  }

  /**
   * waiting → sending: the row at `index` takes a slot and `send` runs in it; `send` must call
   * `finish` once, however it ends.
   */
  start(index: number, send: (delivery: ClaimedDelivery) => Promise<void>): void {
    const [{ delivery }] = this.waitingRows.splice(index, 1) as [WaitingRow];
    const row: SendingRow = { delivery, startedAtMs: Date.now(), done: Promise.resolve() };
    // The slot is taken before the send runs: a send can finish before `send` returns (a disabled
    // webhook's row awaits nothing), and its `finish` must find the slot to give back.
    this.sendingRows.set(delivery.id, row);
    this.limits.started(delivery.webhook_id, delivery.id);
    metrics.inFlight.inc();
    row.done = send(delivery);
  }

  /** sending → done: gives the slot back. The only place one is. */
  finish(deliveryId: number, outcome: DeliveryOutcome | undefined): void {
    const row = this.sendingRows.get(deliveryId);
    if (row === undefined) {
      this.events.unknownSend(deliveryId);
      return;
    }
    this.sendingRows.delete(deliveryId);
    this.limits.finished(row.delivery.webhook_id, deliveryId, outcome);
    metrics.inFlight.dec();
    this.events.freed();
  }

  /** A replay or test event took a slot (`sendId` negative, apart from delivery ids). */
  synchronousStarted(webhookId: number, sendId: number): void {
    this.synchronous += 1;
    this.limits.claimed(webhookId);
    this.limits.started(webhookId, sendId);
  }

  synchronousFinished(webhookId: number, sendId: number, outcome: DeliveryOutcome | undefined): void {
    this.synchronous -= 1;
    this.limits.finished(webhookId, sendId, outcome);
  }

  /** Slots held: every send in flight, synchronous ones included, but those a slow receiver held beyond its budget. */
  inUse(): number {
    return this.sendingRows.size + this.synchronous - this.limits.overflowSends();
  }

  /** Sends in flight now (this worker's, not synchronous ones). */
  get sending(): number {
    return this.sendingRows.size;
  }

  /** Sends started before `beforeMs`: past the longest a send can take, only a lost `finish` holds them. */
  stuck(beforeMs: number): number {
    let stuck = 0;
    for (const row of this.sendingRows.values()) if (row.startedAtMs < beforeMs) stuck += 1;
    return stuck;
  }

  /** Settles once every send in flight now has finished. */
  allSent(): Promise<unknown> {
    return Promise.allSettled([...this.sendingRows.values()].map((row) => row.done));
  }
}
