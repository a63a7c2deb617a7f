import { createPool, withTransaction } from "../src/db/pool.js";
import { emitEvents } from "../src/delivery-engine/emit.js";
import { wallClockMs } from "./clock.js";
import type { BenchDatabase } from "./database.js";
import type { DeliverySystem } from "./driver.js";
import { createProjectWithWebhooks } from "./fixtures.js";
import { type ServiceProcess, startServiceProcess } from "./service-process.js";

/** `replicas` service processes sharing one database, as replicas of a Deployment share one Postgres. */
export interface Replicas extends DeliverySystem {
  pids: number[];
}

/**
 * Starts the built service `replicas` times against `database` (each with `settings`), with one project
 * whose `fanOut` webhooks point at the receiver. Events are emitted through a small pool of this
 * process, as the application recording rollouts would; every replica is woken by the emit's NOTIFY.
 */
export async function startReplicas(
  database: BenchDatabase,
  receiverUrl: string,
  fanOut: number,
  replicas: number,
  settings: Record<string, string>,
): Promise<Replicas> {
  const project = await createProjectWithWebhooks(database.url, receiverUrl, fanOut);
  const services: ServiceProcess[] = [];
  const emitter = createPool(database.url, 4);
  const observer = createPool(database.url, 1);
  const close = async () => {
    await Promise.all(services.map((service) => service.stop()));
    await emitter.end();
    await observer.end();
  };
  try {
    // One after the other: the first runs the migrations (already applied) while the others wait.
    for (let i = 0; i < replicas; i++) services.push(await startServiceProcess(database.url, settings));
  } catch (error) {
    await close();
    throw error;
  }
  return {
    project,
    fanOut,
    observer,
    pids: services.map((service) => service.pid),
    async emit(events) {
      let emittedAt = 0;
      const { emitted } = await withTransaction(emitter, (client) => {
        emittedAt = wallClockMs();
        return emitEvents(client, events);
      });
      const committedAt = wallClockMs();
      return emitted.map(({ envelope }) => ({ id: envelope.id, emittedAt, committedAt }));
    },
    close,
  };
}
