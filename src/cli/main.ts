#!/usr/bin/env node
import { Command } from "commander";
import { ConfigError, loadConfig } from "../config.js";
import { createLogger } from "../logger.js";
import { startService } from "../service.js";
import { version } from "../version.js";

async function serve(): Promise<void> {
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
}

const program = new Command()
  .name("webhook-operator")
  .description("Kubernetes operator and service for outbound deployment webhooks")
  .version(version);

program
  .command("serve")
  .description("run the operator: API, delivery workers, and (in a cluster) the controller")
  .action(serve);

program.parseAsync().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `webhook-operator failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
  process.exit(1);
});
