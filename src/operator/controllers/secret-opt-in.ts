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

/** Ready=False for Secrets that have not opted in: names them and the command that labels them. */
function notOptedIn(namespace: string, names: string[]): ConfigurationProblem {
  const command = `kubectl -n ${namespace} label secret ${names.join(" ")} ${allowWebhooksLabel}=true`;
  const [secrets, are, them, they] =
    names.length === 1 ? ["Secret", "is", "it", "it holds"] : ["Secrets", "are", "them", "they hold"];
  return new ConfigurationProblem(
    "SecretNotOptedIn",
    `${secrets} ${names.map((name) => `${namespace}/${name}`).join(", ")} ${are} not open to Webhooks, so the operator does not use ${them}: label ${them} ${allowWebhooksLabel}=true (${command}) if the authors of this namespace's Webhooks may send what ${they}.`,
  );
}

/**
 * Refuses every Secret of `names` that exists and has not opted in, all of them in one message (an
 * upgrade may find several), before any value is read. Each is read, and so watched, either way:
 * labelling one reconciles the Webhook at once.
 */
export async function requireOptIn(
  getSecret: SecretGetter,
  namespace: string,
  names: string[],
  withoutLabel: SecretsWithoutLabel,
): Promise<void> {
  const closed: string[] = [];
  for (const name of new Set(names)) {
    const secret = await getSecret(name);
    if (secret && !openToWebhooks(secret, namespace, name, withoutLabel)) closed.push(name);
  }
  if (closed.length > 0) throw notOptedIn(namespace, closed);
}

/**
 * `getSecret` that refuses a Secret which has not opted in, before anything of it is read: the guard
 * on every read of a value, whatever field it is for. A missing Secret stays `undefined`
 * (SecretNotFound): the author learns whether a Secret of that name exists, never what it holds.
 */
export function optedInSecrets(
  getSecret: SecretGetter,
  namespace: string,
  withoutLabel: SecretsWithoutLabel,
): SecretGetter {
  return async (name) => {
    const secret = await getSecret(name);
    if (secret && !openToWebhooks(secret, namespace, name, withoutLabel)) throw notOptedIn(namespace, [name]);
    return secret;
  };
}
