import type { Queryable } from "../db/pool.js";
import {
  listStoredHeaders,
  listStoredSecrets,
  replaceStoredHeaders,
  replaceStoredSecret,
} from "../webhooks/store.js";
import type { SecretBox } from "./secret-box.js";

/**
 * Seals stored secrets with the newest key: clear text left by a version before encryption
 * (secret_encrypted false, sealed at every start-up), and with `rotate` also values sealed with an older
 * key (`webhook-operator secrets reencrypt`). Each row is rewritten only if it still holds what was read,
 * so a secret changed meanwhile is not overwritten. Custom request headers, sealed the same way (never
 * stored in clear), move to the newest key with `rotate` too. Returns how many values changed.
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
  if (!opts.rotate) return changed;
  for (const row of await listStoredHeaders(db)) {
    if (box.isCurrent(row.headers)) continue;
    const sealed = box.seal(box.open(row.headers));
    if (await replaceStoredHeaders(db, row.id, { read: row.headers, sealed })) changed += 1;
  }
  return changed;
}
