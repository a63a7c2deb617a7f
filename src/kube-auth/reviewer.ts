import {
  ApiException,
  AuthenticationV1Api,
  AuthorizationV1Api,
  type KubeConfig,
  type V1ResourceAttributes,
} from "@kubernetes/client-node";
import { LRUCache } from "lru-cache";
import { ServiceUnavailableError, UnauthorizedError } from "../http/errors.js";
import type { Logger } from "../logger.js";
import { tokenDigest, tokenExpiry } from "./token-shape.js";

export interface TokenAuthSettings {
  /** The audience a token must be issued for (`kubectl create token --audience`). */
  audience: string;
  /** How long a TokenReview or SubjectAccessReview answer is reused; 0 disables the cache. */
  cacheTtlMs: number;
  /** At most this many answers are kept (least recently used go first). */
  cacheSize: number;
}

/** Who a token belongs to, as the API server says; `digest` keys the caches instead of the token. */
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
export type WebhookAccess = Pick<V1ResourceAttributes, "verb" | "subresource"> & { namespace: string };

export interface KubernetesTokenReviewer {
  audience: string;
  /** Throws 401 for a token the API server rejects, 503 when it cannot answer. */
  authenticate(token: string): Promise<KubernetesIdentity>;
  /** Throws 503 when the API server cannot answer. */
  isAllowed(identity: KubernetesIdentity, access: WebhookAccess): Promise<boolean>;
}

export const webhookResource = { group: "webhook-operator.io", resource: "webhooks" } as const;
// A review that takes longer than this is treated as the API server being unreachable.
const reviewTimeoutMs = 5_000;

function unavailable(error: unknown, review: string, logger: Logger): ServiceUnavailableError {
  const status = error instanceof ApiException ? error.code : undefined;
  logger.warn(
    { review, status, err: error instanceof Error ? error.message : String(error) },
    "review failed",
  );
  if (status === 401 || status === 403) {
    return new ServiceUnavailableError(
      `Kubernetes token authentication is unavailable: the operator may not create ${review}s. ` +
        "Bind its ServiceAccount to the ClusterRole system:auth-delegator (the chart does).",
    );
  }
  return new ServiceUnavailableError(
    `Kubernetes token authentication is unavailable: the Kubernetes API server did not answer the ${review}. ` +
      "Try again shortly, or use an API key.",
  );
}

async function withTimeout<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${reviewTimeoutMs} ms`)), reviewTimeoutMs);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function createKubernetesTokenReviewer(
  kubeConfig: KubeConfig,
  settings: TokenAuthSettings,
  logger: Logger,
): KubernetesTokenReviewer {
  const authentication = kubeConfig.makeApiClient(AuthenticationV1Api);
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  // Keys are token digests; answers never outlive the token (ttl capped at its expiry).
  const identities = new LRUCache<string, KubernetesIdentity | "rejected">({ max: settings.cacheSize });
  const decisions = new LRUCache<string, boolean>({ max: settings.cacheSize });
  const remember = <V extends {}>(cache: LRUCache<string, V>, key: string, value: V, expiresAt?: number) => {
    const ttl = Math.min(settings.cacheTtlMs, (expiresAt ?? Number.POSITIVE_INFINITY) - Date.now());
    if (ttl >= 1) cache.set(key, value, { ttl: Math.floor(ttl) });
  };

  return {
    audience: settings.audience,
    async authenticate(token) {
      const digest = tokenDigest(token);
      let identity = identities.get(digest);
      if (identity === undefined) {
        const review = await withTimeout(
          authentication.createTokenReview({ body: { spec: { token, audiences: [settings.audience] } } }),
        ).catch((error: unknown) => {
          throw unavailable(error, "TokenReview", logger);
        });
        const status = review.status;
        const forUs = !status?.audiences || status.audiences.includes(settings.audience);
        identity =
          status?.authenticated && forUs && status.user?.username
            ? {
                username: status.user.username,
                uid: status.user.uid,
                groups: status.user.groups ?? [],
                extra: status.user.extra,
                digest,
                expiresAt: tokenExpiry(token),
              }
            : "rejected";
        remember(identities, digest, identity, identity === "rejected" ? undefined : identity.expiresAt);
      }
      if (identity === "rejected") {
        throw new UnauthorizedError(
          `Invalid Kubernetes token: the API server does not accept it for the audience '${settings.audience}' ` +
            `(expired, revoked, or issued for another audience). Create one with: kubectl create token <serviceaccount> --audience ${settings.audience}`,
        );
      }
      return identity;
    },

    async isAllowed(identity, access) {
      const key = `${identity.digest} ${access.namespace} ${access.verb} ${access.subresource ?? ""}`;
      const cached = decisions.get(key);
      if (cached !== undefined) return cached;
      const review = await withTimeout(
        authorization.createSubjectAccessReview({
          body: {
            spec: {
              user: identity.username,
              uid: identity.uid,
              groups: identity.groups,
              extra: identity.extra,
              resourceAttributes: { ...webhookResource, ...access },
            },
          },
        }),
      ).catch((error: unknown) => {
        throw unavailable(error, "SubjectAccessReview", logger);
      });
      const allowed = review.status?.allowed === true && review.status.denied !== true;
      remember(decisions, key, allowed, identity.expiresAt);
      return allowed;
    },
  };
}
