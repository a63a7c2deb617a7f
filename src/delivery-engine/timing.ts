/**
 * How long connecting to a receiver may take before the attempt counts as a connection failure:
 * undici's 10 s, or the whole timeout when that is shorter. A send ends by DELIVERY_TIMEOUT_MS (one
 * deadline over connect, request and response: sender.ts); the lease a send must fit in keeps the
 * connect bound and a second on top of it as margin, as it always had, so existing settings stay valid.
 */
export const deliveryConnectTimeoutMs = (timeoutMs: number) => Math.min(10_000, timeoutMs);

/** The longest a send can take: what a claim's lease must cover, and what shutdown waits for. */
export const longestSendMs = (timeoutMs: number) => timeoutMs + deliveryConnectTimeoutMs(timeoutMs) + 1_000;
