import type { Request, RequestHandler } from "express";
import { ServiceUnavailableError, UnauthorizedError } from "../errors.js";
import type { ApiKeyAuth, KubernetesTokenAuth } from "../http/auth-context.js";
import { requiredAccess } from "../kube-auth/request-access.js";
import type { KubernetesTokenReviewer } from "../kube-auth/reviewer.js";
import { looksLikeKubernetesToken } from "../kube-auth/token-shape.js";
import { metrics } from "../metrics.js";
import type { AuthenticationPacedError, AuthPacer } from "./auth-pacing.js";
import { hashApiKey } from "./keys.js";
import type { KnownDigests } from "./known-digests.js";
import type { VerifiedKeys } from "./verified-keys.js";

const bearer = /^Bearer\s+(\S+)\s*$/i;

/** How API keys are checked: the keys verified lately, and every key's digest for paced sources. */
export interface ApiKeyChecks {
  verified: VerifiedKeys;
  known: KnownDigests;
}

/**
 * A key from a paced source is looked up only when its digest is one of the keys' (from memory), so a
 * valid key passes and a guess costs no query; any other refused credential of a paced source is
 * answered 429 (auth-pacing.ts).
 */
async function authenticateKey(
  keys: ApiKeyChecks,
  key: string,
  paced: AuthenticationPacedError | undefined,
): Promise<ApiKeyAuth> {
  const digest = hashApiKey(key);
  if (paced && !keys.verified.remembers(digest) && !(await keys.known.has(digest))) throw paced;
  const auth = await keys.verified.verify(digest);
  if (!auth) throw paced ?? new UnauthorizedError("Invalid API key.");
  return auth;
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
 * too many refused credentials has its failures answered 429 (auth-pacing.ts); its valid API keys still
 * pass. A Kubernetes token from it is answered 429 unchecked: its check is a call to the API server.
 */
export function authenticate(
  keys: ApiKeyChecks,
  reviewer: KubernetesTokenReviewer | undefined,
  pacer?: AuthPacer,
): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.auth = await credentialOf(keys, reviewer, req, pacer);
    } catch (error) {
      // The body of a request that failed authentication is never read: the connection closes once
      // the answer is sent, so a client trickling a body holds nothing.
      res.set("Connection", "close");
      throw error;
    }
    next();
  };
}

async function credentialOf(
  keys: ApiKeyChecks,
  reviewer: KubernetesTokenReviewer | undefined,
  req: Request,
  pacer: AuthPacer | undefined,
): Promise<ApiKeyAuth | KubernetesTokenAuth> {
  // req.ip: the peer, or the client a trusted proxy names (TRUSTED_PROXIES).
  const paced = pacer?.refusal(req.ip);
  const header = req.headers.authorization;
  // A request without a credential is not counted as a failure, but a paced source is answered 429.
  if (!header)
    throw (
      paced ??
      new UnauthorizedError(
        "Missing credentials. Send an API key or a Kubernetes token as 'Authorization: Bearer <credential>'.",
      )
    );
  const match = bearer.exec(header);
  if (!match?.[1])
    throw paced ?? new UnauthorizedError("Malformed Authorization header. Expected 'Bearer <credential>'.");
  const credential = match[1];
  const method = looksLikeKubernetesToken(credential) ? "kubernetes_token" : "api_key";
  try {
    if (paced && method === "kubernetes_token") throw paced;
    const auth =
      method === "api_key"
        ? await authenticateKey(keys, credential, paced)
        : await authenticateToken(reviewer, credential, req);
    metrics.authentications.inc({ method, outcome: "success" });
    return auth;
  } catch (error) {
    metrics.authentications.inc({ method, outcome: outcomeOf(error) });
    if (error instanceof UnauthorizedError) {
      pacer?.failed(req.ip, error.message);
      throw paced ?? error;
    }
    throw error;
  }
}
