import { ConfigError, loadConfig } from "../config.js";

/** `webhook-operator serve`: runs until SIGTERM/SIGINT, then shuts down in order. */
export async function serve(options: { kubernetes?: boolean } = {}): Promise<void> {
  try {
    if (options.kubernetes === false) process.env.KUBERNETES = "false";
    // Loaded here, not at the top: the client commands start without the whole server behind them.
    const [{ createLogger }, { startService }] = await Promise.all([
      import("../logger.js"),
      import("../service.js"),
    ]);
    const config = loadConfig();
    const logger = createLogger(config.logLevel);
    const service = await startService(config, logger);
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, "signal received");
      service.close().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(
        `webhook-operator failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
      );
    }
    // Exit now: a half-started service (database pool, embedded Postgres) would keep the process alive.
    process.exit(1);
  }
}
