import { createHash } from "node:crypto";

// API keys are `wo_` + base64url (or, configured, any string without dots); Kubernetes ServiceAccount
// tokens are JWTs: three base64url parts whose first decodes to a JSON header naming its algorithm.
// Telling them apart by shape means an API key is never sent to the API server.
const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function decodePart(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

export function looksLikeKubernetesToken(credential: string): boolean {
  if (credential.startsWith("wo_") || !jwtShape.test(credential)) return false;
  const header = decodePart(credential.slice(0, credential.indexOf(".")));
  return (
    typeof header === "object" && header !== null && typeof (header as { alg?: unknown }).alg === "string"
  );
}

/**
 * The `exp` claim in epoch milliseconds, read without verifying the signature: it is used only after
 * the API server has accepted the token, to keep cached reviews from outliving it.
 */
export function tokenExpiry(token: string): number | undefined {
  const claims = decodePart(token.split(".")[1] ?? "");
  const exp = typeof claims === "object" && claims !== null ? (claims as { exp?: unknown }).exp : undefined;
  return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined;
}

/** What caches are keyed by: the token itself is never kept. */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64url");
}
