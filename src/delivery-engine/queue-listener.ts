import pg from "pg";
import { closeWithin } from "../db/observed-pool.js";
import type { Logger } from "../logger.js";
import { deliveriesChannel } from "./emit.js";

/**
 * The worker's LISTEN connection (outside the pool): every NOTIFY on the deliveries channel, sent by a
 * committed event, a queued retry or a replay, calls `onNotify`. Lost, it reconnects with backoff
 * (1 s doubling to 30 s) and calls `onNotify` once back, for what was sent meanwhile; the worker's slow
 * poll covers the gap.
 */
/** A connection string, or pg's options with it (the listener's name and timeouts, engine.ts). */
export type ListenerConnection = string | pg.ClientConfig;

export class QueueListener {
  private client: pg.Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly connection: ListenerConnection,
    private readonly onNotify: () => void,
    private readonly logger: Logger,
  ) {}

  /** Listens; a first failure is logged and retried like a lost connection. */
  async start(): Promise<void> {
    await this.listen().catch((error: unknown) => {
      this.logger.warn({ err: error }, "LISTEN failed; relying on polling until it reconnects");
      this.scheduleReconnect(1_000);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    if (this.client) closeWithin(this.client, 1_000); // its goodbye may go unanswered (a silent network)
    await this.client?.end().catch(() => {});
  }

  private async listen(): Promise<void> {
    const client = new pg.Client(this.connection);
    client.on("notification", () => this.onNotify());
    client.on("error", (error) => {
      this.logger.warn({ err: error }, "LISTEN connection lost");
      this.scheduleReconnect(1_000);
    });
    await client.connect();
    await client.query(`LISTEN ${deliveriesChannel}`);
    // Stopped while connecting: the connection is not kept.
    if (this.stopped) await client.end();
    else this.client = client;
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.stopped || this.reconnectTimer) return;
    this.client?.end().catch(() => {});
    this.client = undefined;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.listen().then(
        () => this.onNotify(),
        () => this.scheduleReconnect(Math.min(delayMs * 2, 30_000)),
      );
    }, delayMs);
  }
}
