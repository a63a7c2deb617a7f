import { readFile } from "node:fs/promises";
import type { Pool } from "../db/pool.js";
import { withTransaction } from "../db/pool.js";
import { looksLikeKubernetesToken } from "../kube-auth/token-shape.js";
import type { Logger } from "../logger.js";
import { keyWeakness } from "./key-strength.js";
import { generateApiKey, hashApiKey } from "./keys.js";
import { countApiKeys, ensureApiKey, insertApiKey } from "./store.js";

// Arbitrary constant naming the "first key" critical section for pg_advisory_xact_lock.
const firstKeyLock = 7_346_001;

/**
 * Makes sure an admin key exists. A key from configuration (API_KEY, or API_KEY_FILE as a mounted
 * Kubernetes Secret) is registered by its digest. With nothing configured and no key in the database,
 * one key is generated and printed once on stdout: it is not stored in clear anywhere.
 */
export async function bootstrapApiKey(
  pool: Pool,
  config: { value: string | undefined; file: string | undefined },
  logger: Logger,
  print: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<void> {
  const configured = config.value ?? (config.file ? (await readFile(config.file, "utf8")).trim() : undefined);
  if (configured !== undefined) {
    const weakness = keyWeakness(
      configured,
      config.value ? "API_KEY" : `the key in API_KEY_FILE (${config.file})`,
    );
    if (weakness) throw new Error(weakness);
    if (looksLikeKubernetesToken(configured)) {
      throw new Error(
        "The configured API key has the shape of a JWT, which /api reads as a Kubernetes token. Choose a key without dots.",
      );
    }
    const source = config.value ? "API_KEY" : "API_KEY_FILE";
    const revoked = await ensureApiKey(pool, { name: "configured", keyHash: hashApiKey(configured) });
    if (revoked) {
      // Revoked means revoked: a restart does not bring a key back. The service still starts (its
      // other keys and the deliveries do not depend on this one).
      logger.error(
        { source, revokedAt: revoked.revokedAt.toISOString() },
        `the configured admin API key (${source}) was revoked through the API and is not accepted; configure a new key and restart`,
      );
      return;
    }
    logger.info({ source }, "admin API key from configuration");
    return;
  }
  const generated = await withTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1)", [firstKeyLock]);
    if ((await countApiKeys(client)) > 0) return undefined;
    const key = generateApiKey();
    await insertApiKey(client, { name: "generated", keyHash: hashApiKey(key), projectIds: null });
    return key;
  });
  if (generated) {
    print("");
    print("  No API key was configured, so an admin key was generated. It is shown only this once:");
    print(`    ${generated}`);
    print("  Use it as: Authorization: Bearer <key>. Set API_KEY or API_KEY_FILE to choose your own.");
    print("");
  }
}
