import { ConfigError, loadConfig } from "../app/config.js";
import type { RunningService } from "../app/service.js";

/** `webhook-operator serve`: runs until SIGTERM/SIGINT, then shuts down in order. */
export async function serve(options: { kubernetes?: boolean } = {}): Promise<void> {
  // Signals are handled from the first moment: one that arrives during start-up stops the service as
  // soon as it is up, instead of killing it halfway (an embedded Postgres left running).
  let service: RunningService | undefined;
  let stopRequested: string | undefined;
  let stopReleasing = () => {};
  const stop = (signal: string) => {
    if (stopRequested) return;
    stopRequested = signal;
    if (!service) return;
    const running = service;
    running.logger.info({ signal }, "signal received");
    stopReleasing();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        running.logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  try {
    if (options.kubernetes === false) process.env.KUBERNETES = "false";
    // Loaded here, not at the top: the client commands start without the whole server behind them.
    const [{ createLogger }, { startService }, { releaseMemoryWhenIdle }] = await Promise.all([
      import("../logger.js"),
      import("../app/service.js"),
      import("../app/idle-memory.js"),
    ]);
    const config = loadConfig();
    service = await startService(config, createLogger(config.logLevel, config.logFormat));
    // Start-up's garbage and grown young generation given back now, a burst's once it is over.
    stopReleasing = releaseMemoryWhenIdle(service.logger);
    if (stopRequested) {
      const signal = stopRequested;
      stopRequested = undefined;
      stop(signal);
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      // Never "undefined": some libraries reject with nothing at all.
      const reason =
        error instanceof Error
          ? error.message
          : error === undefined || error === null
            ? "an unknown error (the log above may say more)"
            : String(error);
      process.stderr.write(`webhook-operator failed to start: ${reason}\n`);
    }
    // Exit now: a half-started service (database pool, embedded Postgres) would keep the process alive.
    process.exit(1);
  }
}
