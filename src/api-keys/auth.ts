import type { Request, RequestHandler } from "express";
import type { Pool } from "../db/pool.js";
import { ServiceUnavailableError, UnauthorizedError } from "../errors.js";
import type { ApiKeyAuth, KubernetesTokenAuth } from "../http/auth-context.js";
import { requiredAccess } from "../kube-auth/request-access.js";
import type { KubernetesTokenReviewer } from "../kube-auth/reviewer.js";
import { looksLikeKubernetesToken } from "../kube-auth/token-shape.js";
import { metrics } from "../metrics.js";
import { AuthenticationPacedError, type AuthPacer } from "./auth-pacing.js";
import { hashApiKey, hashesEqual } from "./keys.js";
import { findApiKeyByHash, touchApiKey } from "./store.js";

const bearer = /^Bearer\s+(\S+)\s*$/i;

async function authenticateKey(pool: Pool, key: string): Promise<ApiKeyAuth> {
  const presented = hashApiKey(key);
  const row = await findApiKeyByHash(pool, presented);
  // The lookup is by digest; the constant-time comparison guards the final decision anyway.
  if (!row || !hashesEqual(row.key_hash, presented)) throw new UnauthorizedError("Invalid API key.");
  void touchApiKey(pool, row.id).catch(() => {});
  return { method: "api_key", keyId: row.id, projectIds: row.project_ids };
}

async function authenticateToken(
  reviewer: KubernetesTokenReviewer | undefined,
  token: string,
  request: { method: string; path: string },
): Promise<KubernetesTokenAuth> {
  if (!reviewer) {
    throw new UnauthorizedError(
      "Kubernetes token authentication is off: this operator runs without a Kubernetes cluster " +
        "(or with KUBERNETES_TOKEN_AUTH=false). Use an API key.",
    );
  }
  const identity = await reviewer.authenticate(token);
  return {
    method: "kubernetes_token",
    identity,
    reviewer,
    access: requiredAccess(request.method, request.path),
  };
}

function outcomeOf(error: unknown): "rejected" | "unavailable" {
  return error instanceof ServiceUnavailableError ? "unavailable" : "rejected";
}

/**
 * Resolves `Authorization: Bearer <credential>` into res.locals.auth, or answers 401 (503 when the
 * Kubernetes API server cannot review a token). A JWT-shaped credential is a Kubernetes token, anything
 * else an API key: keys are never sent to the API server, tokens never looked up as keys. A source with
 * too many refused credentials is answered 429 without its credential being checked (auth-pacing.ts).
 */
export function authenticate(
  pool: Pool,
  reviewer: KubernetesTokenReviewer | undefined,
  pacer?: AuthPacer,
): RequestHandler {
  return async (req, res, next) => {
    try {
      pacer?.check(req.socket.remoteAddress);
      res.locals.auth = await credentialOf(pool, reviewer, req, pacer);
    } catch (error) {
      // The body of a request that failed authentication is never read: the connection closes once
      // the answer is sent, so a client trickling a body holds nothing.
      res.set("Connection", "close");
      if (error instanceof AuthenticationPacedError) res.set("Retry-After", String(error.retryAfterSeconds));
      throw error;
    }
    next();
  };
}

async function credentialOf(
  pool: Pool,
  reviewer: KubernetesTokenReviewer | undefined,
  req: Request,
  pacer: AuthPacer | undefined,
): Promise<ApiKeyAuth | KubernetesTokenAuth> {
  const header = req.headers.authorization;
  if (!header)
    throw new UnauthorizedError(
      "Missing credentials. Send an API key or a Kubernetes token as 'Authorization: Bearer <credential>'.",
    );
  const match = bearer.exec(header);
  if (!match?.[1])
    throw new UnauthorizedError("Malformed Authorization header. Expected 'Bearer <credential>'.");
  const credential = match[1];
  const method = looksLikeKubernetesToken(credential) ? "kubernetes_token" : "api_key";
  try {
    const auth =
      method === "api_key"
        ? await authenticateKey(pool, credential)
        : await authenticateToken(reviewer, credential, req);
    metrics.authentications.inc({ method, outcome: "success" });
    return auth;
  } catch (error) {
    metrics.authentications.inc({ method, outcome: outcomeOf(error) });
    if (error instanceof UnauthorizedError) pacer?.failed(req.socket.remoteAddress, error.message);
    throw error;
  }
}
