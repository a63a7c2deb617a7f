import pg from "pg";
import { ReconnectingListener } from "../db/listener.js";
import type { Logger } from "../logger.js";
import { deliveriesChannel } from "./emit.js";

/**
 * The worker's LISTEN connection (outside the pool): every NOTIFY on the deliveries channel, sent by a
 * committed event, a queued retry or a replay, calls `onNotify`. Lost, it reconnects (db/listener.ts)
 * and calls `onNotify` once back, for what was sent meanwhile; the worker's slow poll covers the gap.
 */
export class QueueListener extends ReconnectingListener {
  constructor(databaseUrl: string, onNotify: () => void, logger: Logger) {
    super({
      channel: deliveriesChannel,
      name: "the delivery worker's queue listener",
      connect: async () => {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        return { client, close: () => client.end() };
      },
      onNotification: onNotify,
      onReconnected: onNotify,
      logger,
    });
  }
}
