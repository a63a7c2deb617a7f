import type pg from "pg";
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
  let client: pg.PoolClient | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (delayMs: number) => {
    try {
      const connected = await pool.connect();
      connected.on("notification", (message) => {
        if (message.channel !== webhooksDisabledChannel) return;
        onDisabled((message.payload ?? "").split(",").map(Number).filter(Number.isSafeInteger));
      });
      connected.on("error", (error) => {
        logger.warn({ err: error }, "listening for disabled webhooks failed; reconnecting");
        connected.release(error);
        if (client === connected) client = undefined;
        schedule(1_000);
      });
      await connected.query(`LISTEN ${webhooksDisabledChannel}`);
      if (stopped) {
        connected.release(true);
        return;
      }
      client = connected;
    } catch (error) {
      logger.warn({ err: error }, "listening for disabled webhooks failed; retrying");
      schedule(Math.min(delayMs * 2, 30_000));
    }
  };
  const schedule = (delayMs: number) => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect(delayMs);
    }, delayMs);
    retry.unref();
  };
  void connect(1_000);

  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      // Released as broken: the pool closes it, and with it the LISTEN, rather than lending it out.
      client?.release(true);
      client = undefined;
    },
  };
}
