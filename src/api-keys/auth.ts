import type { RequestHandler } from "express";
import type { Pool } from "../db/pool.js";
import { ForbiddenError, NotFoundError, UnauthorizedError } from "../http/errors.js";
import { hashApiKey, hashesEqual } from "./keys.js";
import { findApiKeyByHash, touchApiKey } from "./store.js";

export interface AuthContext {
  keyId: number;
  /** null for an admin key (every project). */
  projectIds: number[] | null;
}

const bearer = /^Bearer\s+(\S+)\s*$/i;

/** Resolves `Authorization: Bearer <key>` into res.locals.auth, or answers 401. */
export function requireApiKey(pool: Pool): RequestHandler {
  return async (req, res, next) => {
    const header = req.headers.authorization;
    if (!header)
      throw new UnauthorizedError("Missing API key. Send it as 'Authorization: Bearer <API_KEY>'.");
    const match = bearer.exec(header);
    if (!match?.[1])
      throw new UnauthorizedError("Malformed Authorization header. Expected 'Bearer <API_KEY>'.");
    const presented = hashApiKey(match[1]);
    const row = await findApiKeyByHash(pool, presented);
    // The lookup is by digest; the constant-time comparison guards the final decision anyway.
    if (!row || !hashesEqual(row.key_hash, presented)) throw new UnauthorizedError("Invalid API key.");
    void touchApiKey(pool, row.id).catch(() => {});
    res.locals.auth = { keyId: row.id, projectIds: row.project_ids } satisfies AuthContext;
    next();
  };
}

export function isAdmin(auth: AuthContext): boolean {
  return auth.projectIds === null;
}

export function requireAdmin(auth: AuthContext, action: string): void {
  if (!isAdmin(auth)) throw new ForbiddenError(`Only an admin API key may ${action}.`);
}

/** A key limited to other projects sees this project as nonexistent: 404, never 403, so ids don't leak. */
export function assertProjectAccess(auth: AuthContext, projectId: number): void {
  if (auth.projectIds !== null && !auth.projectIds.includes(projectId)) {
    throw new NotFoundError(`Project ${projectId} not found.`);
  }
}
