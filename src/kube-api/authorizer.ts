import { createHash } from "node:crypto";
import { AuthorizationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { within } from "../abortable.js";
import { createReviewCache } from "../kube-auth/review-cache.js";
import type { Logger } from "../logger.js";
import type { Caller } from "./front-proxy.js";
import { group as apiGroup } from "./resources.js";
import { KubeStatusError } from "./status.js";

/** What a request asks to do, in the terms of RBAC. */
export interface Attributes {
  verb: string;
  resource: string;
  namespace: string | undefined;
  name?: string | undefined;
}

export interface AccessDecider {
  isAllowed(caller: Caller, attributes: Attributes): Promise<boolean>;
}

// A review that takes longer than this is treated as the API server being unreachable.
const reviewTimeoutMs = 5_000;

/**
 * Delegated authorisation: each request is allowed or not by the API server's own authorisers (RBAC)
 * through a SubjectAccessReview for the caller the front proxy named. Answers are kept briefly (the
 * same TTL as /api's token reviews), keyed by a digest of caller and attributes.
 */
export function createAccessDecider(
  kubeConfig: KubeConfig,
  cache: { ttlMs: number; size: number },
  logger: Logger,
): AccessDecider {
  const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
  const decisions = createReviewCache<boolean>(cache);
  return {
    isAllowed(caller, attributes) {
      const key = createHash("sha256")
        .update(JSON.stringify([caller, attributes]))
        .digest("base64url");
      return decisions.answer(key, async () => {
        const spec = {
          user: caller.user,
          groups: caller.groups,
          extra: caller.extra,
          resourceAttributes: { ...attributes, group: apiGroup, version: "v1alpha1" },
        };
        const review = await within(
          authorization.createSubjectAccessReview({ body: { spec } }),
          reviewTimeoutMs,
          "the SubjectAccessReview",
        ).catch((error: unknown) => {
          logger.warn({ err: error }, "aggregated API: SubjectAccessReview failed");
          throw new KubeStatusError(
            "ServiceUnavailable",
            "the operator could not ask the API server whether this request is allowed (SubjectAccessReview); its ServiceAccount needs the ClusterRole system:auth-delegator",
          );
        });
        const allowed = review.status?.allowed === true && review.status.denied !== true;
        return { value: allowed, expiresAt: undefined };
      });
    },
  };
}
