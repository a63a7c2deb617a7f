import type pg from "pg";
import type { EventToEmit } from "../src/delivery-engine/emit.js";
import type { ProjectRow } from "../src/projects/store.js";
import { cpuPerDelivery, cpuSample, postgresCpuByConnection, postmasterOf } from "./cpu.js";
import { asRollouts, benchEvents, chunk, sleep, waitUntilAllDone } from "./fixtures.js";
import type { ReceiverProcess } from "./receiver-process.js";
import { latencies, latencySplit, type ScenarioResult, summarize } from "./stats.js";

/** An event recorded by a system under test: its id, and when (ms since the epoch, bench/clock.ts) the
 * emit began and when the caller's transaction had committed. */
export interface EmittedRecord {
  id: string;
  emittedAt: number;
  committedAt: number;
}

/** A delivery system under test (the engine, or the pg-boss baseline), running against one database. */
export interface DeliverySystem {
  project: ProjectRow;
  /** Webhooks subscribed to the bench event: deliveries per event. */
  fanOut: number;
  /** For the benchmark's own queries (completion checks); not the system's pool. */
  observer: pg.Pool;
  /** Records `events` in one transaction; returns each event's id, emit and commit times. */
  emit(events: EventToEmit[]): Promise<EmittedRecord[]>;
  close(): Promise<void>;
}

const doneTimeoutMs = 180_000;

/**
 * Emits `events` in transactions of `perTransaction`, `concurrent` transactions at a time, and waits
 * until every delivery is done.
 */
async function emitAndDrain(
  system: DeliverySystem,
  events: EventToEmit[],
  perTransaction: number,
  concurrent: number,
  expectedTotal: number,
): Promise<{ emittedAt: Map<string, number>; startedAt: number; doneAt: number }> {
  const emittedAt = new Map<string, number>();
  const startedAt = Date.now();
  const batches = chunk(events, perTransaction);
  let next = 0;
  const lane = async () => {
    while (next < batches.length) {
      const batch = batches[next++] as EventToEmit[];
      for (const { id, emittedAt: at } of await system.emit(batch)) emittedAt.set(id, at);
    }
  };
  await Promise.all(Array.from({ length: concurrent }, lane));
  const doneAt = await waitUntilAllDone(system.observer, system.project.id, expectedTotal, doneTimeoutMs);
  return { emittedAt, startedAt, doneAt };
}

/**
 * Throughput: after a warm-up, emits `events` back to back in batched transactions while the
 * system delivers; deliveries/s = deliveries / (first emit → last outcome recorded as done).
 * Latencies include the time spent queued behind the backlog.
 */
export async function runThroughput(
  name: string,
  system: DeliverySystem,
  receiver: ReceiverProcess,
  options: {
    events: number;
    perTransaction: number;
    /** Emit transactions at a time (1 unless given): several callers each emitting their own events. */
    concurrentTransactions?: number;
    /** Every this many consecutive events are one rollout's, in order (fixtures.ts, asRollouts). */
    rolloutEvents?: number;
    warmupEvents: number;
    notes: string[];
  },
): Promise<ScenarioResult> {
  const concurrent = options.concurrentTransactions ?? 1;
  const eventsOf = (count: number) => {
    const events = benchEvents(system.project, count);
    return options.rolloutEvents ? asRollouts(events, options.rolloutEvents) : events;
  };
  const warmup = eventsOf(options.warmupEvents);
  await emitAndDrain(system, warmup, options.perTransaction, concurrent, warmup.length * system.fanOut);
  await receiver.collect();

  const events = eventsOf(options.events);
  const deliveries = events.length * system.fanOut;
  const postmaster = await postmasterOf(system.observer);
  const cpuBefore = cpuSample(receiver.pid, postmaster);
  const run = await emitAndDrain(
    system,
    events,
    options.perTransaction,
    concurrent,
    (warmup.length + events.length) * system.fanOut,
  );
  const cpuAfter = cpuSample(receiver.pid, postmaster);
  const cpu = cpuPerDelivery(cpuBefore, cpuAfter, deliveries);
  const byConnection = await postgresCpuByConnection(system.observer, cpuBefore, cpuAfter, deliveries);
  const sorted = latencies(await receiver.collect(), run.emittedAt, deliveries);
  const result = summarize(
    name,
    deliveries,
    run.doneAt - run.startedAt,
    sorted,
    [
      `${options.events} events × fan-out ${system.fanOut}, ${options.perTransaction} events per transaction${concurrent > 1 ? `, ${concurrent} transactions at a time` : ""}${options.rolloutEvents ? `, every ${options.rolloutEvents} one rollout's in order` : ""}, after a warm-up of ${options.warmupEvents} events`,
      ...options.notes,
    ],
    cpu,
  );
  if (byConnection) result.notes.push(byConnection);
  return result;
}

/**
 * Emits `events` one per transaction at `ratePerSecond`, on a fixed schedule (an emit that falls behind
 * is caught up at once, up to `maxOutstanding` transactions at a time); returns each event's emit and
 * commit times and how long emitting took.
 */
export async function emitPaced(
  system: Pick<DeliverySystem, "emit">,
  events: EventToEmit[],
  ratePerSecond: number,
): Promise<{ emitted: Map<string, EmittedRecord>; emittedForMs: number }> {
  const emittedRecords = new Map<string, EmittedRecord>();
  const outstanding = new Set<Promise<void>>();
  const maxOutstanding = 8;
  const intervalMs = 1000 / ratePerSecond;
  const startedAt = Date.now();
  for (const [i, event] of events.entries()) {
    const due = startedAt + i * intervalMs;
    const wait = due - Date.now();
    if (wait >= 1) await sleep(wait);
    while (outstanding.size >= maxOutstanding) await Promise.race(outstanding);
    const emitting = system.emit([event]).then(([emitted]) => {
      if (emitted) emittedRecords.set(emitted.id, emitted);
    });
    const tracked = emitting.finally(() => outstanding.delete(tracked));
    outstanding.add(tracked);
  }
  await Promise.all(outstanding);
  return { emitted: emittedRecords, emittedForMs: Date.now() - startedAt };
}

/**
 * Steady load: one event per transaction at `ratePerSecond` for `seconds`, after a warm-up of one
 * second at the same rate that is not measured: a system just started meets its first events with
 * connections still to open and statements still to prepare (measured: the first ten events of a run
 * at 500/s took 10–38 ms against a p99 of 4–6 ms, enough to move the p99 of 5,000). `beforeMeasuring`
 * runs between the two (resetting statement statistics, say).
 */
export async function runPaced(
  name: string,
  system: DeliverySystem,
  receiver: ReceiverProcess,
  options: {
    ratePerSecond: number;
    seconds: number;
    notes: string[];
    beforeMeasuring?: () => Promise<void>;
  },
): Promise<ScenarioResult & { achievedRate: number }> {
  const warmup = benchEvents(system.project, Math.round(options.ratePerSecond));
  await emitPaced(system, warmup, options.ratePerSecond);
  await waitUntilAllDone(system.observer, system.project.id, warmup.length * system.fanOut, doneTimeoutMs);
  await receiver.collect();
  await options.beforeMeasuring?.();

  const count = Math.round(options.ratePerSecond * options.seconds);
  const events = benchEvents(system.project, count);
  const postmaster = await postmasterOf(system.observer);
  const cpuBefore = cpuSample(receiver.pid, postmaster);
  const startedAt = Date.now();
  const { emitted, emittedForMs } = await emitPaced(system, events, options.ratePerSecond);
  const doneAt = await waitUntilAllDone(
    system.observer,
    system.project.id,
    (warmup.length + count) * system.fanOut,
    doneTimeoutMs,
  );
  const cpuAfter = cpuSample(receiver.pid, postmaster);
  const cpu = cpuPerDelivery(cpuBefore, cpuAfter, count * system.fanOut);
  const byConnection = await postgresCpuByConnection(
    system.observer,
    cpuBefore,
    cpuAfter,
    count * system.fanOut,
  );
  const arrivals = await receiver.collect();
  const emittedAt = new Map([...emitted].map(([id, record]) => [id, record.emittedAt]));
  const sorted = latencies(arrivals, emittedAt, count * system.fanOut);
  const achievedRate = count / (emittedForMs / 1000);
  const result = summarize(
    name,
    count * system.fanOut,
    doneAt - startedAt,
    sorted,
    [
      `${count} events, fan-out ${system.fanOut}, one event per transaction, paced at ${options.ratePerSecond}/s (achieved ${achievedRate.toFixed(0)}/s), after a warm-up of ${warmup.length} at that rate`,
      ...options.notes,
    ],
    cpu,
  );
  if (byConnection) result.notes.push(byConnection);
  return { ...result, split: latencySplit(arrivals, emitted), achievedRate };
}
