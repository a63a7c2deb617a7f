import type { Queryable } from "../db/pool.js";

export interface ApiKeyRow {
  id: number;
  name: string;
  key_hash: Buffer;
  project_ids: number[] | null;
  created_at: Date;
  last_used_at: Date | null;
}

const columns = "id, name, key_hash, project_ids, created_at, last_used_at";

export async function findApiKeyByHash(db: Queryable, keyHash: Buffer): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>(`SELECT ${columns} FROM api_keys WHERE key_hash = $1`, [
    keyHash,
  ]);
  return rows[0];
}

/** Every key's digest (asked at most once a second, and only while a source is paced). */
export async function listApiKeyHashes(db: Queryable): Promise<Buffer[]> {
  const { rows } = await db.query<{ key_hash: Buffer }>("SELECT key_hash FROM api_keys");
  return rows.map((row) => row.key_hash);
}

export async function insertApiKey(
  db: Queryable,
  key: { name: string; keyHash: Buffer; projectIds: number[] | null },
): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (name, key_hash, project_ids) VALUES ($1, $2, $3) RETURNING ${columns}`,
    [key.name, key.keyHash, key.projectIds],
  );
  return rows[0] as ApiKeyRow;
}

/**
 * Idempotent: a configured key is registered on every start; the second replica's insert is a no-op.
 * A key revoked through the API is not registered again: its revocation time is returned instead.
 */
export async function ensureApiKey(
  db: Queryable,
  key: { name: string; keyHash: Buffer },
): Promise<{ revokedAt: Date } | undefined> {
  const { rows } = await db.query<{ revoked_at: Date | null }>(
    `WITH revoked AS (SELECT revoked_at FROM revoked_api_keys WHERE key_hash = $2),
          registered AS (
            INSERT INTO api_keys (name, key_hash, project_ids)
            SELECT $1, $2, NULL WHERE NOT EXISTS (SELECT 1 FROM revoked)
            ON CONFLICT (key_hash) DO NOTHING
          )
     SELECT (SELECT revoked_at FROM revoked) AS revoked_at`,
    [key.name, key.keyHash],
  );
  const revokedAt = rows[0]?.revoked_at;
  return revokedAt ? { revokedAt } : undefined;
}

export async function countApiKeys(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM api_keys");
  return rows[0]?.count ?? 0;
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(`SELECT ${columns} FROM api_keys ORDER BY id DESC`);
  return rows;
}

/** Revokes a key: its row goes, and its digest is remembered so that configuration cannot bring it back. */
export async function deleteApiKey(db: Queryable, id: number): Promise<boolean> {
  const { rows } = await db.query<{ deleted: number }>(
    `WITH gone AS (DELETE FROM api_keys WHERE id = $1 RETURNING key_hash),
          remembered AS (INSERT INTO revoked_api_keys (key_hash) SELECT key_hash FROM gone ON CONFLICT DO NOTHING)
     SELECT count(*)::int AS deleted FROM gone`,
    [id],
  );
  return rows[0]?.deleted === 1;
}

/** Coarse on purpose (one write a minute per key at most) so authentication stays a read. */
export async function touchApiKey(db: Queryable, id: number): Promise<void> {
  await db.query(
    `UPDATE api_keys SET last_used_at = clock_timestamp()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < clock_timestamp() - interval '1 minute')`,
    [id],
  );
}
