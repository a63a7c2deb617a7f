import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Logger } from "../logger.js";
import { keyBytes, parseKeys, SecretBox } from "./secret-box.js";

export interface SecretKeysConfig {
  /** SECRET_ENCRYPTION_KEYS: base64 keys, newest first. */
  value: string | undefined;
  /** SECRET_ENCRYPTION_KEYS_FILE: the same, as a mounted file (the chart's Secret). */
  file: string | undefined;
  /** Where a standalone install keeps the key it generated. */
  dataDir: string;
}

export const generatedKeyFileName = "secret-encryption-keys";

/**
 * The keys webhook secrets are sealed with. From configuration when given; otherwise (a standalone
 * `npm start` on a fresh machine) a key generated once into DATA_DIR, readable by its owner only, and
 * the start-up log says so: replicas sharing a database must share the keys, so set them explicitly there.
 */
export async function loadSecretBox(config: SecretKeysConfig, logger: Logger): Promise<SecretBox> {
  if (config.value !== undefined) return new SecretBox(readKeys(config.value, "SECRET_ENCRYPTION_KEYS"));
  if (config.file !== undefined) {
    const text = await readFile(config.file, "utf8").catch((error: NodeJS.ErrnoException) => {
      throw new Error(
        `SECRET_ENCRYPTION_KEYS_FILE ${config.file} cannot be read (${error.code ?? error.message})`,
      );
    });
    return new SecretBox(readKeys(text, `SECRET_ENCRYPTION_KEYS_FILE ${config.file}`));
  }
  const file = join(resolve(config.dataDir), generatedKeyFileName);
  // A container with a read-only root (the image, the chart) lands here when no key is configured.
  const cannotGenerate = (error: NodeJS.ErrnoException) =>
    new Error(
      `no SECRET_ENCRYPTION_KEYS or SECRET_ENCRYPTION_KEYS_FILE is set, and no key can be generated into ${file} (${error.code ?? error.message}): set SECRET_ENCRYPTION_KEYS_FILE to a file holding a key (openssl rand -base64 32), or DATA_DIR to a writable directory kept with the database`,
    );
  await mkdir(config.dataDir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw cannotGenerate(error);
  });
  const generated = `${randomBytes(keyBytes).toString("base64")}\n`;
  // "wx": never overwrite a key that secrets may already be sealed with.
  const created = await writeFile(file, generated, { mode: 0o600, flag: "wx" }).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return false;
      throw cannotGenerate(error);
    },
  );
  logger.warn(
    { file, newKey: created },
    "webhook secrets are encrypted with a key kept in DATA_DIR (no SECRET_ENCRYPTION_KEYS or " +
      "SECRET_ENCRYPTION_KEYS_FILE set); back it up with the database, and set the keys explicitly " +
      "when several replicas share a database",
  );
  return new SecretBox(readKeys(await readFile(file, "utf8"), file));
}

function readKeys(text: string, source: string): Buffer[] {
  try {
    return parseKeys(text);
  } catch (error) {
    throw new Error(`${source}: ${(error as Error).message}`);
  }
}
