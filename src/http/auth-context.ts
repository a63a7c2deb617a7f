import { ForbiddenError } from "../errors.js";

// Who is calling /api, as every route's handler receives it. Defined here, with the route kit, so that
// the authenticators (api-keys, kube-auth) and the guards that read it (projects/access.ts) agree on
// one shape without importing each other.

export interface ApiKeyAuth {
  method: "api_key";
  keyId: number;
  /** null for an admin key (every project). */
  projectIds: number[] | null;
}

/** Who a Kubernetes token belongs to, as the API server says; `digest` keys caches instead of the token. */
export interface KubernetesIdentity {
  username: string;
  uid: string | undefined;
  groups: string[];
  extra: Record<string, string[]> | undefined;
  digest: string;
  /** Epoch ms of the token's `exp`, when it has one. */
  expiresAt: number | undefined;
}

/** What a request asks to do to Webhook resources in one namespace ("" = cluster-wide). */
export interface WebhookAccess {
  namespace: string;
  verb: string;
  subresource?: string;
}

/** Answers RBAC questions for a token's identity (kube-auth/reviewer.ts). */
export interface AccessReviewer {
  /** Throws 503 when the API server cannot answer. */
  isAllowed(identity: KubernetesIdentity, access: WebhookAccess): Promise<boolean>;
}

/** A ServiceAccount (or other Kubernetes) token: RBAC in each project's namespace decides. */
export interface KubernetesTokenAuth {
  method: "kubernetes_token";
  identity: KubernetesIdentity;
  reviewer: AccessReviewer;
  /** What this request needs on Webhook resources, in whichever namespace it touches. */
  access: Omit<WebhookAccess, "namespace">;
}

export type AuthContext = ApiKeyAuth | KubernetesTokenAuth;

export function isAdmin(auth: AuthContext): boolean {
  return auth.method === "api_key" && auth.projectIds === null;
}

export function requireAdmin(auth: AuthContext, action: string): void {
  if (!isAdmin(auth)) throw new ForbiddenError(`Only an admin API key may ${action}.`);
}
