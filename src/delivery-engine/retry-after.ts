// A receiver that answers 429 Too Many Requests or 503 Service Unavailable with a Retry-After header
// asks for a pause (RFC 9110, 10.2.3): in seconds, or until an HTTP date. Such an answer pauses its
// webhook's sends (pace.ts) instead of failing the delivery. Without Retry-After, or with one that is
// neither form, it is an ordinary failure.

/** The statuses whose Retry-After pauses a webhook. */
export const pausingStatuses = new Set([429, 503]);

/**
 * When the pause a throttling answer asks for ends, in ms since the epoch, at most `maxMs` from `nowMs`;
 * undefined when the outcome asks for none. A date in the past, or 0 seconds, pauses for nothing but
 * still sends the delivery again rather than failing it.
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
  return nowMs + Math.min(maxMs, Math.max(0, waitMs));
}

/** What the webhook's status says while it is paused (no receiver text in it: the header is a number or date). */
export const pauseReason = (statusCode: number, untilMs: number): string =>
  `Paused by the receiver: it answered ${statusCode} with Retry-After; sends resume at ${new Date(untilMs).toISOString()}.`;
