import type pg from "pg";
import type { Logger } from "../logger.js";

/** A connection LISTEN runs on, and how to let it go for good. */
export interface ListenConnection {
  client: pg.ClientBase;
  /** Closes it (a pooled one is released as broken, so the pool never lends it out still listening). */
  close(): Promise<void>;
}

export interface ListenerOptions {
  channel: string;
  /** What listens, for the logs. */
  name: string;
  connect(): Promise<ListenConnection>;
  onNotification(payload: string): void;
  /** LISTEN is back after it was lost (or never started): notifications sent meanwhile were missed. */
  onReconnected?(): void;
  logger: Logger;
}

const firstRetryMs = 1_000;
const maxRetryMs = 30_000;

/**
 * LISTEN on one channel that comes back by itself: a lost connection (a Postgres restart, a failover,
 * an administrator ending it) is made again with backoff (1 s doubling to 30 s), and `onReconnected`
 * is told, for what was notified meanwhile. Both places that listen (the delivery worker's queue and
 * the leader's disabled webhooks) use this one.
 */
export class ReconnectingListener {
  private connection: ListenConnection | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: ListenerOptions) {}

  /** Listens; a first failure is logged and retried like a lost connection. */
  async start(): Promise<void> {
    await this.listen().catch((error: unknown) => this.lost(error, firstRetryMs));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const connection = this.connection;
    this.connection = undefined;
    await connection?.close().catch(() => {});
  }

  private async listen(): Promise<void> {
    const connection = await this.options.connect();
    const { client } = connection;
    client.on("notification", (message) => {
      if (message.channel === this.options.channel) this.options.onNotification(message.payload ?? "");
    });
    client.on("error", (error) => {
      if (this.connection === connection) this.connection = undefined;
      void connection.close().catch(() => {});
      this.lost(error, firstRetryMs);
    });
    try {
      await client.query(`LISTEN ${this.options.channel}`);
    } catch (error) {
      await connection.close().catch(() => {});
      throw error;
    }
    // Stopped while connecting: the connection is not kept.
    if (this.stopped) await connection.close().catch(() => {});
    else this.connection = connection;
  }

  private lost(error: unknown, retryInMs: number): void {
    if (this.stopped || this.retryTimer) return;
    this.options.logger.warn(
      { err: error, retryInMs },
      `${this.options.name}: LISTEN ${this.options.channel} lost; reconnecting`,
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.listen().then(
        () => this.options.onReconnected?.(),
        (next: unknown) => this.lost(next, Math.min(retryInMs * 2, maxRetryMs)),
      );
    }, retryInMs);
    this.retryTimer.unref();
  }
}
