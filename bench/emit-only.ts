import { createPool, withTransaction } from "../src/db/pool.js";
import { emitEvents } from "../src/delivery-engine/emit.js";
import { cpuSample, postmasterOf } from "./cpu.js";
import type { BenchServer } from "./database.js";
import { emitPaced } from "./driver.js";
import { benchEvents, createProjectWithWebhooks } from "./fixtures.js";

/**
 * Postgres CPU per event of the emits alone, one event per transaction at `ratePerSecond`, with no
 * engine running (nothing claims, sends or records): the callers' own transactions, which a paced
 * scenario's Postgres CPU includes and no engine can share out as a burst's 500-event transactions do.
 */
export async function emitOnlyPostgresUs(
  server: BenchServer,
  ratePerSecond: number,
  seconds: number,
): Promise<number | undefined> {
  const database = await server.freshDatabase("emit_only");
  const emitter = createPool(database.url, 4);
  try {
    // A receiver that is never called: no worker runs.
    const project = await createProjectWithWebhooks(database.url, "http://127.0.0.1:9", 1);
    const system = {
      async emit(events: Parameters<typeof emitEvents>[1]) {
        const emittedAt = Date.now();
        const { emitted } = await withTransaction(emitter, (client) => emitEvents(client, events));
        return emitted.map(({ envelope }) => ({ id: envelope.id, emittedAt, committedAt: Date.now() }));
      },
    };
    await emitPaced(system, benchEvents(project, ratePerSecond), ratePerSecond);
    const count = Math.round(ratePerSecond * seconds);
    const postmaster = await postmasterOf(emitter);
    const before = cpuSample(undefined, postmaster);
    await emitPaced(system, benchEvents(project, count), ratePerSecond);
    const after = cpuSample(undefined, postmaster);
    return before && after ? ((after.postgres - before.postgres) * 1000) / count : undefined;
  } finally {
    await emitter.end();
    await database.drop();
  }
}
