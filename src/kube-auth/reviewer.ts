import {
  ApiException,
  AuthenticationV1Api,
  AuthorizationV1Api,
  type KubeConfig,
} from "@kubernetes/client-node";
import { within } from "../abortable.js";
import { ServiceUnavailableError, UnauthorizedError } from "../errors.js";
import type { AccessReviewer, KubernetesIdentity } from "../http/auth-context.js";
import type { Logger } from "../logger.js";
import { createReviewCache } from "./review-cache.js";
import { tokenDigest, tokenExpiry } from "./token-shape.js";

export interface TokenAuthSettings {
  /** The audience a token must be issued for (`kubectl create token --audience`). */
  audience: string;
  /** How long a TokenReview or SubjectAccessReview answer is reused; 0 disables the cache. */
  cacheTtlMs: number;
  /** At most this many answers are kept (least recently used go first). */
  cacheSize: number;
}

export interface KubernetesTokenReviewer extends AccessReviewer {
  audience: string;
  /** Throws 401 for a token the API server rejects, 503 when it cannot answer. */
  authenticate(token: string): Promise<KubernetesIdentity>;
}

export const webhookResource = { group: "webhook-operator.io", resource: "webhooks" } as const;
// A review that takes longer than this is treated as the API server being unreachable.
const reviewTimeoutMs = 5_000;

function unavailable(error: unknown, review: string, logger: Logger): ServiceUnavailableError {
  const status = error instanceof ApiException ? error.code : undefined;
  // An API error is logged by its status only: its message quotes the response, which we do not vet.
  const cause = status === undefined ? (error instanceof Error ? error.message : String(error)) : undefined;
  logger.warn({ review, status, cause }, "Kubernetes review failed");
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

export function createKubernetesTokenReviewer(
  kubeConfig: KubeConfig,
  settings: TokenAuthSettings,
  logger: Logger,
): KubernetesTokenReviewer {
  const authentication = kubeConfig.makeApiClient(AuthenticationV1Api);
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  const cacheSettings = { ttlMs: settings.cacheTtlMs, size: settings.cacheSize };
  const identities = createReviewCache<KubernetesIdentity | "rejected">(cacheSettings);
  const decisions = createReviewCache<boolean>(cacheSettings);

  return {
    audience: settings.audience,
    async authenticate(token) {
      const digest = tokenDigest(token);
      const identity = await identities.answer(digest, async () => {
        const review = await within(
          authentication.createTokenReview({ body: { spec: { token, audiences: [settings.audience] } } }),
          reviewTimeoutMs,
          "the TokenReview",
        ).catch((error: unknown) => {
          throw unavailable(error, "TokenReview", logger);
        });
        const status = review.status;
        const forUs = !status?.audiences || status.audiences.includes(settings.audience);
        if (!status?.authenticated || !forUs || !status.user?.username) {
          return { value: "rejected" as const, expiresAt: undefined };
        }
        const expiresAt = tokenExpiry(token);
        const { username, uid, groups = [], extra } = status.user;
        return { value: { username, uid, groups, extra, digest, expiresAt }, expiresAt };
      });
      if (identity === "rejected") {
        throw new UnauthorizedError(
          "Invalid Kubernetes token: the API server does not accept it for the audience " +
            `'${settings.audience}' (expired, revoked, or issued for another audience). Create one with: ` +
            `kubectl create token <serviceaccount> --audience ${settings.audience}`,
        );
      }
      return identity;
    },

    async isAllowed(identity, access) {
      const key = `${identity.digest} ${access.namespace} ${access.verb} ${access.subresource ?? ""}`;
      return decisions.answer(key, async () => {
        const review = await within(
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
          reviewTimeoutMs,
          "the SubjectAccessReview",
        ).catch((error: unknown) => {
          throw unavailable(error, "SubjectAccessReview", logger);
        });
        const allowed = review.status?.allowed === true && review.status.denied !== true;
        return { value: allowed, expiresAt: identity.expiresAt };
      });
    },
  };
}
