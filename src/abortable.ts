/**
 * Settles as `work` does, unless `signal` aborts first: then rejects with the signal's reason (a
 * TimeoutError for `AbortSignal.timeout(ms)`). `work` itself goes on: hand it the signal too where it
 * takes one. The timer is the signal's, so there is none to clear and none keeps the process alive.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** `work`, or an error that says `what` did not answer within `ms` (the request itself goes on). */
export function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  const deadline = AbortSignal.timeout(ms);
  return abortable(work, deadline).catch((error: unknown) => {
    throw error === deadline.reason ? new Error(`${what} did not answer within ${ms} ms`) : error;
  });
}
