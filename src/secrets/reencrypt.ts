import type { Queryable } from "../db/pool.js";
import { listStoredSecrets, replaceStoredSecret } from "../webhooks/store.js";
import type { SecretBox } from "./secret-box.js";

/**
 * Seals stored secrets with the newest key: clear text left by a version before encryption
 * (secret_encrypted false, sealed at every start-up), and with `rotate` also values sealed with an older
 * key (`webhook-operator secrets reencrypt`). Each row is rewritten only if it still holds what was read,
 * so a secret changed meanwhile is not overwritten. Returns how many rows changed.
 */
export async function reencryptSecrets(
  db: Queryable,
  box: SecretBox,
  opts: { rotate: boolean },
): Promise<number> {
  let changed = 0;
  for (const row of await listStoredSecrets(db, { sealedToo: opts.rotate })) {
    if (row.secret_encrypted && box.isCurrent(row.secret)) continue;
    const clear = row.secret_encrypted ? box.open(row.secret) : row.secret;
    if (await replaceStoredSecret(db, row.id, { read: row.secret, sealed: box.seal(clear) })) changed += 1;
  }
  return changed;
}
