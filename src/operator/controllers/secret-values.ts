import type { V1Secret } from "@kubernetes/client-node";
import type { SecretKeyRef } from "../api/webhook-v1alpha1.js";
import { ConfigurationProblem } from "./configuration-problem.js";

/** The Secret of a Webhook's namespace by name (undefined: it does not exist), read and then watched. */
export type SecretGetter = (name: string) => Promise<V1Secret | undefined>;

/**
 * The bytes under `ref.key` of the Secret `ref.name`. A missing Secret or key (an empty value counts
 * as missing) is Ready=False naming the Secret, the key and, when given, the field that references it.
 */
export async function secretBytes(
  getSecret: SecretGetter,
  namespace: string,
  ref: SecretKeyRef,
  field?: string,
): Promise<Buffer> {
  const secret = await getSecret(ref.name);
  const where = field === undefined ? "" : ` (${field})`;
  if (!secret) {
    throw new ConfigurationProblem(
      "SecretNotFound",
      `Secret ${namespace}/${ref.name} does not exist${where}.`,
    );
  }
  const encoded = secret.data?.[ref.key];
  const bytes =
    encoded !== undefined ? Buffer.from(encoded, "base64") : Buffer.from(secret.stringData?.[ref.key] ?? "");
  if (bytes.length === 0) {
    throw new ConfigurationProblem(
      "SecretKeyNotFound",
      `Secret ${namespace}/${ref.name} has no key '${ref.key}'${where}.`,
    );
  }
  return bytes;
}

/**
 * The value under `ref.key` as text, without the whitespace around it (a value written from a file
 * usually ends in a newline). A value that is not UTF-8 is Ready=False; the message never quotes it.
 */
export async function secretText(
  getSecret: SecretGetter,
  namespace: string,
  ref: SecretKeyRef,
  field: string,
): Promise<string> {
  const bytes = await secretBytes(getSecret, namespace, ref, field);
  const text = bytes.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(bytes) || text.trim() === "") {
    throw new ConfigurationProblem(
      "InvalidSecretValue",
      `Secret ${namespace}/${ref.name} key '${ref.key}' (${field}) does not hold text (UTF-8, not blank).`,
    );
  }
  return text.trim();
}
