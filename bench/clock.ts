/**
 * Wall-clock time in ms, to a fraction of a millisecond. Date.now() counts whole milliseconds, and at a
 * p99 of 5 ms one millisecond is 20%: the latencies compared against each other need finer readings.
 * The sender and the receiver (another process) read the same system clock, so their readings compare.
 */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();
