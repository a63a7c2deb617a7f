import { bootstrapApiKey } from "../api-keys/bootstrap.js";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../db/embedded.js";
import { migrate } from "../db/migrate.js";
import { createPool, type Pool } from "../db/pool.js";
import type { Logger } from "../logger.js";
import { reencryptSecrets } from "../secrets/reencrypt.js";
import type { SecretBox } from "../secrets/secret-box.js";
import type { Config } from "./config.js";

// The first part of a start (service.ts): the database (the embedded one when no DATABASE_URL is set)
// migrated, the configured API key in place and clear-text secrets sealed, before anything serves.

export interface OpenedDatabase {
  embedded: EmbeddedDatabase | undefined;
  databaseUrl: string;
  /** The API's pool. */
  pool: Pool;
}

/** On failure everything opened so far is closed again, so a failed start leaves nothing running. */
export async function openDatabase(config: Config, box: SecretBox, logger: Logger): Promise<OpenedDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.database.url;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.database.dataDir,
      port: config.database.embeddedPort,
      logger,
    });
    databaseUrl = embedded.url;
  }
  const { timeouts } = config.database;
  const pool = createPool(databaseUrl, config.database.poolSize, {}, { role: "api", timeouts, logger });
  try {
    const applied = await migrateWithin(databaseUrl, config.database, logger);
    if (applied.length > 0) logger.info({ migrations: applied }, "database migrated");
    await bootstrapApiKey(pool, config.apiKey, logger);
    const sealed = await reencryptSecrets(pool, box, { rotate: false });
    if (sealed > 0)
      logger.info({ webhooks: sealed, keyId: box.currentKeyId }, "clear-text webhook secrets encrypted");
  } catch (error) {
    await pool.end();
    await embedded?.stop();
    throw error;
  }

  return { embedded, databaseUrl, pool };
}

/**
 * The migrations on a connection of their own, named for them, with the longer statement and lock
 * timeout they may need (a large table rewritten or indexed, another replica's migration waited for).
 */
async function migrateWithin(databaseUrl: string, database: Config["database"], logger: Logger) {
  const { timeouts, migrationStatementTimeoutMs: longer } = database;
  const pool = createPool(
    databaseUrl,
    1,
    {},
    {
      role: "migrations",
      timeouts: { ...timeouts, statementTimeoutMs: longer, lockTimeoutMs: longer },
      logger,
    },
  );
  try {
    return await migrate(pool);
  } finally {
    await pool.end();
  }
}
