import { ReconnectingListener } from "../db/listener.js";
import type { Pool } from "../db/pool.js";
import type { Logger } from "../logger.js";
import { webhooksDisabledChannel } from "../webhooks/auto-disable.js";

/**
 * Tells the leader at once which webhooks a delivery worker (any replica) disabled automatically, so
 * their Webhook resources get Ready=False/AutoDisabled and a Warning Event within moments. A missed
 * notification (connection lost meanwhile) is caught by the periodic status resync instead.
 */
export function listenForDisabledWebhooks(
  pool: Pool,
  onDisabled: (webhookIds: number[]) => void,
  logger: Logger,
): { stop(): Promise<void> } {
  const listener = new ReconnectingListener({
    channel: webhooksDisabledChannel,
    name: "the leader's disabled-webhooks listener",
    connect: async () => {
      const client = await pool.connect();
      // Released as broken: the pool closes it, and with it the LISTEN, rather than lending it out.
      return { client, close: async () => client.release(true) };
    },
    onNotification: (payload) => onDisabled(payload.split(",").map(Number).filter(Number.isSafeInteger)),
    logger,
  });
  void listener.start();
  return listener;
}
