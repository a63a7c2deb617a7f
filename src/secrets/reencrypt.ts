import type { Queryable } from "../db/pool.js";
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
  const { rows } = await db.query<{ id: number; secret: string; secret_encrypted: boolean }>(
    `SELECT id, secret, secret_encrypted FROM webhooks
      WHERE secret IS NOT NULL ${opts.rotate ? "" : "AND NOT secret_encrypted"} ORDER BY id`,
  );
  let changed = 0;
  for (const row of rows) {
    if (row.secret_encrypted && box.isCurrent(row.secret)) continue;
    const clear = row.secret_encrypted ? box.open(row.secret) : row.secret;
    const { rowCount } = await db.query(
      "UPDATE webhooks SET secret = $2, secret_encrypted = true WHERE id = $1 AND secret = $3",
      [row.id, box.seal(clear), row.secret],
    );
    changed += rowCount ?? 0;
  }
  return changed;
}
