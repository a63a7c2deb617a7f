import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { generatedKeyFileName, loadSecretBox } from "../../src/secrets/keys.js";

// Where the keys come from when neither SECRET_ENCRYPTION_KEYS nor SECRET_ENCRYPTION_KEYS_FILE is set:
// a key generated into DATA_DIR, or (a read-only container) one clear line saying what to set.
const logger = createLogger("silent");
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "wo-secret-keys-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loadSecretBox without configured keys", () => {
  it("generates one key into DATA_DIR, readable by its owner only, and reuses it", async () => {
    const dataDir = path.join(dir, "data");
    const first = await loadSecretBox({ value: undefined, file: undefined, dataDir }, logger);
    const file = path.join(dataDir, generatedKeyFileName);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = await loadSecretBox({ value: undefined, file: undefined, dataDir }, logger);
    expect(again.currentKeyId).toBe(first.currentKeyId);
    expect((await readFile(file, "utf8")).trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it("names the settings in one line when DATA_DIR cannot be created", async () => {
    // Root may write anywhere, so the unwritable directory is one below a regular file (ENOTDIR).
    const notADirectory = path.join(dir, "file");
    await writeFile(notADirectory, "");
    const dataDir = path.join(notADirectory, ".data");
    const error = await loadSecretBox({ value: undefined, file: undefined, dataDir }, logger).then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).toBe(
      `no SECRET_ENCRYPTION_KEYS or SECRET_ENCRYPTION_KEYS_FILE is set, and no key can be generated into ${dataDir}/${generatedKeyFileName} (ENOTDIR): set SECRET_ENCRYPTION_KEYS_FILE to a file holding a key (openssl rand -base64 32), or DATA_DIR to a writable directory kept with the database`,
    );
  });

  it("resolves a relative DATA_DIR in the message, so the reader knows which directory", async () => {
    const error = await loadSecretBox(
      {
        value: undefined,
        file: undefined,
        dataDir: path.relative(process.cwd(), path.join(dir, "file", "x")),
      },
      logger,
    ).catch((caught: Error) => caught);
    expect((error as Error).message).toContain(`into ${path.join(dir, "file", "x", generatedKeyFileName)} (`);
  });
});
