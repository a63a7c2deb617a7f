import pg from "pg";
import { ReconnectingListener } from "../db/listener.js";
import { closeWithin } from "../db/observed-pool.js";
import type { Logger } from "../logger.js";
import { deliveriesChannel } from "./emit.js";

/**
 * The worker's LISTEN connection (outside the pool): every NOTIFY on the deliveries channel, sent by a
 * committed event, a queued retry or a replay, calls `onNotify`. Lost, it reconnects (db/listener.ts)
 * and calls `onNotify` once back, for what was sent meanwhile; the worker's slow poll covers the gap.
 */
/** A connection string, or pg's options with it (the listener's name and timeouts, engine.ts). */
export type ListenerConnection = string | pg.ClientConfig;

export class QueueListener extends ReconnectingListener {
  constructor(connection: ListenerConnection, onNotify: () => void, logger: Logger) {
    super({
      channel: deliveriesChannel,
      name: "the delivery worker's queue listener",
      connect: async () => {
        const client = new pg.Client(connection);
        await client.connect();
        return {
          client,
          close: () => {
            closeWithin(client, 1_000); // its goodbye may go unanswered (a silent network)
            return client.end();
          },
        };
      },
      onNotification: onNotify,
      onReconnected: onNotify,
      logger,
    });
  }
}
