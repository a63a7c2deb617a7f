import type { V1Secret } from "@kubernetes/client-node";
import { ConfigurationProblem } from "./configuration-problem.js";
import type { SecretGetter } from "./secret-values.js";

/**
 * The label by which a Secret lets the Webhooks of its namespace use it. The operator reads Secrets
 * with its own permissions, which are wider than those of whoever writes a Webhook: without this
 * consent a Webhook author could have any Secret of the namespace sent to a receiver of their own.
 * A label rather than an annotation so that `kubectl get secrets -A -l …` lists every Secret that is
 * open to Webhooks.
 */
export const allowWebhooksLabel = "webhook-operator.io/allow-webhooks";

/**
 * Secrets a Webhook may use without the label (WEBHOOK_SECRETS_WITHOUT_LABEL, parsed): `namespace/name`
 * for one Secret, `namespace/*` for every Secret of a namespace, `*` for every Secret (the behaviour
 * before the label existed, for a transition: insecure).
 */
export type SecretsWithoutLabel = readonly string[];

/** Whether the Webhooks of `namespace` may use `secret` (its name is `name`). */
export function openToWebhooks(
  secret: V1Secret,
  namespace: string,
  name: string,
  withoutLabel: SecretsWithoutLabel,
): boolean {
  if (secret.metadata?.labels?.[allowWebhooksLabel] === "true") return true;
  return withoutLabel.some(
    (entry) => entry === "*" || entry === `${namespace}/*` || entry === `${namespace}/${name}`,
  );
}

/**
 * `getSecret` that refuses a Secret which has not opted in, before anything of it is read: Ready=False
 * (reason SecretNotOptedIn) naming the Secret and the label to add. The Secret is still watched, so
 * labelling it reconciles the Webhook at once. A missing Secret stays `undefined` (SecretNotFound):
 * the author learns whether a Secret of that name exists, never anything it holds.
 */
export function optedInSecrets(
  getSecret: SecretGetter,
  namespace: string,
  withoutLabel: SecretsWithoutLabel,
): SecretGetter {
  return async (name) => {
    const secret = await getSecret(name);
    if (secret && !openToWebhooks(secret, namespace, name, withoutLabel)) {
      throw new ConfigurationProblem(
        "SecretNotOptedIn",
        `Secret ${namespace}/${name} is not open to Webhooks, so the operator does not use it: label it ${allowWebhooksLabel}=true (kubectl -n ${namespace} label secret ${name} ${allowWebhooksLabel}=true) if the authors of this namespace's Webhooks may send what it holds.`,
      );
    }
    return secret;
  };
}
