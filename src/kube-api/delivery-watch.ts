import type { Queryable } from "../db/pool.js";
import { type AttemptQuery, attemptsSince, type DeliveryAttemptRow } from "./delivery-store.js";

/** How often a watch looks for attempts recorded since its last turn. */
export const watchTurnMs = 1_000;
/**
 * Ids are taken when a row is inserted and become visible when its transaction commits, so a row can
 * appear below an id already seen. Each turn therefore reads again above the highest id seen this long
 * ago (rows seen since are skipped by id): an insert that takes longer to commit is missed.
 */
const lateCommitMs = 10_000;

/**
 * The attempts recorded after a resourceVersion, turn by turn: rows above the mark that are finished
 * are new attempts; rows seen unfinished (queued, in flight) are kept and read again each turn until
 * they are recorded. Attempts never change once recorded, so every one is ADDED exactly once.
 */
export class DeliveryWatchCursor {
  private readonly pending = new Set<number>();
  /** Ids above `rescanFrom` already handled (sent, or pending). */
  private readonly seen = new Set<number>();
  private readonly marks: { at: number; id: number }[] = [];
  private rescanFrom: number;
  private highest: number;
  private firstTurn = true;

  constructor(
    private readonly db: Queryable,
    private readonly query: AttemptQuery,
    from: number,
  ) {
    this.rescanFrom = from;
    this.highest = from;
  }

  /** One turn: the attempts recorded since the last one, in id order. */
  async next(now = Date.now()): Promise<DeliveryAttemptRow[]> {
    const rows = await attemptsSince(this.db, this.query, {
      after: this.rescanFrom,
      pending: [...this.pending],
      firstTurn: this.firstTurn,
    });
    this.firstTurn = false;
    // A pending row that is not read again was removed, or was recorded with an outcome the selectors
    // do not select: either way it is done with.
    const returned = new Set(rows.map((row) => row.id));
    for (const id of this.pending) if (!returned.has(id)) this.pending.delete(id);
    const recorded: DeliveryAttemptRow[] = [];
    for (const row of rows) {
      const finished = row.delivered_at !== null;
      if (finished && (this.pending.has(row.id) || !this.seen.has(row.id))) recorded.push(row);
      if (finished) this.pending.delete(row.id);
      else this.pending.add(row.id);
      if (row.id > this.rescanFrom) this.seen.add(row.id);
      this.highest = Math.max(this.highest, row.id);
    }
    this.advance(now);
    return recorded;
  }

  private advance(now: number): void {
    this.marks.push({ at: now, id: this.highest });
    for (let mark = this.marks[0]; mark && mark.at <= now - lateCommitMs; mark = this.marks[0]) {
      this.rescanFrom = Math.max(this.rescanFrom, mark.id);
      this.marks.shift();
    }
    for (const id of this.seen) if (id <= this.rescanFrom) this.seen.delete(id);
  }
}
