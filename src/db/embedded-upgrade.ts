import pg from "pg";
import type { Logger } from "../logger.js";
import { pendingPassword, requireScram, superuser } from "./embedded-access.js";

/** The password every data directory had before passwords were random. */
const formerPassword = "postgres";

export type ServerWith = (flags: Record<string, string>) => {
  start(): Promise<void>;
  stop(): Promise<void>;
};

/**
 * A data directory made by an earlier version has the fixed password `postgres` and accepts clear-text
 * passwords: its password becomes a random one (stored as for a new directory) and its authentication
 * SCRAM. Done once, on a server that listens on no TCP port, only on a socket inside the data
 * directory (enterable by the server's user alone), so the former password is never usable meanwhile.
 */
export async function upgradeAccess(
  databaseDir: string,
  port: number,
  dataDir: string,
  serverWith: ServerWith,
  logger: Logger,
): Promise<string> {
  logger.warn(
    { databaseDir },
    "the embedded Postgres data directory was made by an earlier version (fixed password, clear-text authentication): giving it a random password and SCRAM authentication",
  );
  await requireScram(databaseDir);
  const server = serverWith({ listen_addresses: "", unix_socket_directories: databaseDir });
  await server.start();
  try {
    const pending = await pendingPassword(dataDir);
    const connect = async (password: string) => {
      const client = new pg.Client({
        host: databaseDir,
        port,
        user: superuser,
        password,
        database: "postgres",
      });
      await client.connect();
      return client;
    };
    const client = await connect(formerPassword).catch((error: unknown) => {
      // An earlier attempt changed the password and stopped before storing it.
      if (pending.earlier) return connect(pending.earlier);
      throw error;
    });
    try {
      await client.query("SET password_encryption = 'scram-sha-256'");
      await client.query(`ALTER ROLE ${superuser} PASSWORD ${client.escapeLiteral(pending.password)}`);
    } finally {
      await client.end();
    }
    await pending.commit();
    return pending.password;
  } finally {
    await server.stop();
  }
}
