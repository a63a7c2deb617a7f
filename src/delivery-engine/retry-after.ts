// A receiver that answers 429 Too Many Requests or 503 Service Unavailable with a Retry-After header
// asks for a pause (RFC 9110, 10.2.3): in seconds, or until an HTTP date. Such an answer pauses its
// webhook's sends (pace.ts) instead of failing the delivery. Without Retry-After, or with one that is
// neither form, it is an ordinary failure. Two bounds keep a receiver from turning pauses into a loop
// (docs/deliveries.md, "Pace"): a pause lasts at least minPauseMs, and a run of pauses with no other
// answer between them ends after pausesBeforeAttempts: the answers after it are failed attempts.

/** The statuses whose Retry-After pauses a webhook. */
export const pausingStatuses = new Set([429, 503]);

/**
 * The shortest pause: `Retry-After: 0`, or a date already past, would otherwise send the delivery
 * again at once, as often as the receiver answers (2,588 requests in 20 s for 30 deliveries).
 */
export const minPauseMs = 1_000;

/** Pauses of a webhook in a row, with no other answer between them, before its receiver's pausing answers count as attempts. */
export const pausesBeforeAttempts = 5;

/**
 * When the pause a throttling answer asks for ends, in ms since the epoch: at least minPauseMs and at
 * most `maxMs` from `nowMs` (a cap of 0 asks for no pause longer than the minimum); undefined when the
 * outcome asks for none.
 */
export function pauseUntil(
  outcome: { statusCode: number; retryAfter?: string },
  nowMs: number,
  maxMs: number,
): number | undefined {
  const header = outcome.retryAfter;
  if (header === undefined || !pausingStatuses.has(outcome.statusCode)) return undefined;
  const value = header.trim();
  let waitMs: number;
  if (/^\d+$/.test(value)) waitMs = Number(value) * 1000;
  else {
    // An HTTP date (IMF-fixdate, or the obsolete forms Date.parse also reads); must name a day and a time.
    const at = /\d{1,2}:\d{2}:\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    waitMs = at - nowMs;
  }
  return nowMs + Math.max(minPauseMs, Math.min(maxMs, waitMs));
}

/**
 * Each webhook's run of pauses on this replica: how many its receiver asked for in a row. Any other
 * outcome of a send (a success, another status, a failure to connect) ends the run.
 */
export class PauseRuns {
  private readonly runs = new Map<number, number>();

  /**
   * The receiver asked for a pause: whether to grant it (true) or record the answer as a failed
   * attempt, the run being too long. `alreadyPaused`: a pause it asked for is still in force here
   * (sends that were open when it began), which makes the run no longer.
   */
  grant(webhookId: number, alreadyPaused: boolean): boolean {
    const run = this.runs.get(webhookId) ?? 0;
    if (run >= pausesBeforeAttempts) return false;
    if (!alreadyPaused) this.runs.set(webhookId, run + 1);
    return true;
  }

  /** The receiver answered without asking for a pause: its run is over. */
  ended(webhookId: number): void {
    this.runs.delete(webhookId);
  }
}

/** What the webhook's status says while it is paused (no receiver text in it: the header is a number or date). */
export const pauseReason = (statusCode: number, untilMs: number): string =>
  `Paused by the receiver: it answered ${statusCode} with Retry-After; sends resume at ${new Date(untilMs).toISOString()}.`;
