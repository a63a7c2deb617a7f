import { join } from "node:path";
import type { Command } from "commander";
import { ConfigError, loadConfig } from "../app/config.js";

/**
 * `webhook-operator secrets reencrypt`: seals every webhook secret with the newest key of
 * SECRET_ENCRYPTION_KEYS(_FILE), after a rotation, against the database of DATABASE_URL. The service does
 * the same at start-up; this command does it without a restart. Needs DATABASE_URL (an embedded Postgres
 * belongs to the running service).
 */
export function registerSecretsCommands(program: Command): void {
  const secrets = program.command("secrets").description("manage the encryption of webhook signing secrets");
  secrets
    .command("reencrypt")
    .description("re-encrypt every webhook secret with the newest key (after adding a key)")
    .action(async () => {
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig();
      } catch (error) {
        if (error instanceof ConfigError) throw new Error(error.message);
        throw error;
      }
      if (!config.database.url) {
        throw new Error(
          "DATABASE_URL is not set; point it at the operator's database (a standalone install re-encrypts at start-up)",
        );
      }
      const [
        { createPool },
        { createLogger },
        { generatedKeyFileName, loadSecretBox },
        { reencryptSecrets },
      ] = await Promise.all([
        import("../db/pool.js"),
        import("../logger.js"),
        import("../secrets/keys.js"),
        import("../secrets/reencrypt.js"),
      ]);
      // Never generate a key here: without configured keys, read the one a standalone service generated.
      const { value, file, dataDir } = config.secretKeys;
      const keys =
        value || file
          ? config.secretKeys
          : { ...config.secretKeys, file: join(dataDir, generatedKeyFileName) };
      const box = await loadSecretBox(keys, createLogger("silent"));
      const pool = createPool(
        config.database.url,
        2,
        {},
        { role: "cli", timeouts: config.database.timeouts },
      );
      try {
        const changed = await reencryptSecrets(pool, box, { rotate: true });
        process.stdout.write(`re-encrypted ${changed} webhook secret(s) with key ${box.currentKeyId}\n`);
      } finally {
        await pool.end();
      }
    });
}
