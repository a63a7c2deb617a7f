import { loadConfig } from "../src/app/config.js";
import { startService } from "../src/app/service.js";
import { createPool, withTransaction } from "../src/db/pool.js";
import { emitEvents } from "../src/delivery-engine/emit.js";
import { createLogger } from "../src/logger.js";
import { wallClockMs } from "./clock.js";
import type { BenchDatabase } from "./database.js";
import type { DeliverySystem } from "./driver.js";
import { benchServiceEnv, createProjectWithWebhooks } from "./fixtures.js";

/** Connections of the pool the benchmark emits through (the application's, not the engine's). */
export const emitterConnections = 4;

/** The engine settings the benchmark runs with (environment variable names of src/app/config.ts). */
export interface EngineSettings {
  DELIVERY_CONCURRENCY: string;
  DELIVERY_PER_WEBHOOK_CONCURRENCY: string;
  DATABASE_POOL_SIZE: string;
}

/**
 * The real service (startService: migrations, API, delivery workers) in this process, against `database`.
 * Events are emitted through a separate small pool, as the application recording rollouts would, so
 * emitting does not borrow the engine's connections; deliveries the worker has free slots for are
 * handed to it (emit.ts), the others wake the workers by the emit's NOTIFY.
 */
export async function startEngineSystem(
  database: BenchDatabase,
  receiverUrl: string,
  fanOut: number,
  settings: EngineSettings,
): Promise<DeliverySystem> {
  const project = await createProjectWithWebhooks(database.url, receiverUrl, fanOut);
  const config = loadConfig({
    DATABASE_URL: database.url,
    ...benchServiceEnv,
    // API and delivery workers only, even where a kubeconfig exists.
    KUBERNETES: "false",
    ...settings,
  });
  const service = await startService(config, createLogger(config.logLevel));
  const emitter = createPool(database.url, emitterConnections);
  const observer = createPool(database.url, 1);
  return {
    project,
    fanOut,
    observer,
    async emit(events) {
      // Emitted when emitEvents is called, as the envelope's timestamp says, to a fraction of a ms.
      // As the rollout recording does: deliveries the local worker has slots for are handed to it.
      let emittedAt = 0;
      const { emitted, handedOver } = await withTransaction(emitter, (client) => {
        emittedAt = wallClockMs();
        return emitEvents(client, events, service.engine.handOverLease());
      });
      const committedAt = wallClockMs();
      service.engine.handOver(handedOver);
      return emitted.map(({ envelope }) => ({ id: envelope.id, emittedAt, committedAt }));
    },
    async close() {
      await service.close();
      await emitter.end();
      await observer.end();
    },
  };
}
