import { createCipheriv, createDecipheriv, createHash, createHmac } from "node:crypto";

// Webhook signing secrets at rest: AES-256-GCM with node's crypto. A stored value names the key that
// sealed it, so several keys can be held for decryption while the newest (the first) encrypts:
//   wo1.<key id: 16 hex>.<nonce: base64url>.<ciphertext and 16-byte tag: base64url>
// The nonce is an HMAC of the secret under the key (a synthetic IV): the same secret under the same key
// seals to the same value, so an unchanged secret compares equal (the operator's upsert writes nothing),
// and two different secrets never share a nonce. It reveals only whether two webhooks share a secret.

export const keyBytes = 32;
const sealed = /^wo1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{22,})$/;

export class SecretDecryptionError extends Error {}

interface Key {
  id: string;
  key: Buffer;
  nonceKey: Buffer;
}

function keyOf(key: Buffer): Key {
  const derive = (purpose: string) => createHmac("sha256", key).update(purpose).digest();
  return {
    id: createHash("sha256").update(key).digest("hex").slice(0, 16),
    key: derive("webhook-secret-encryption"),
    nonceKey: derive("webhook-secret-nonce"),
  };
}

export class SecretBox {
  private readonly keys: Key[];

  /** `keys`: 32-byte keys, the newest (the one that encrypts) first. */
  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new Error("at least one secret encryption key is needed");
    for (const key of keys) {
      if (key.length !== keyBytes) throw new Error(`a secret encryption key must be ${keyBytes} bytes`);
    }
    this.keys = keys.map(keyOf);
  }

  get currentKeyId(): string {
    return (this.keys[0] as Key).id;
  }

  seal(secret: string): string {
    const { id, key, nonceKey } = this.keys[0] as Key;
    const nonce = createHmac("sha256", nonceKey).update(secret).digest().subarray(0, 12);
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `wo1.${id}.${nonce.toString("base64url")}.${ciphertext.toString("base64url")}`;
  }

  open(stored: string): string {
    const match = sealed.exec(stored);
    if (!match) throw new SecretDecryptionError("the stored secret is not in the encrypted form");
    const [, id, nonce = "", data = ""] = match;
    const found = this.keys.find((candidate) => candidate.id === id);
    if (!found) {
      throw new SecretDecryptionError(
        `the secret was encrypted with key ${id}, which is not among the configured keys ` +
          `(SECRET_ENCRYPTION_KEYS / SECRET_ENCRYPTION_KEYS_FILE); add it back to decrypt`,
      );
    }
    const bytes = Buffer.from(data, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", found.key, Buffer.from(nonce, "base64url"));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(0, bytes.length - 16)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new SecretDecryptionError(`the secret sealed with key ${id} failed its integrity check`);
    }
  }

  /** True when `stored` is sealed with the newest key (nothing to re-encrypt). */
  isCurrent(stored: string): boolean {
    return sealed.exec(stored)?.[1] === this.currentKeyId;
  }
}

/** Keys as written in SECRET_ENCRYPTION_KEYS or its file: base64 of 32 bytes, comma- or line-separated. */
export function parseKeys(text: string): Buffer[] {
  const entries = text
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0)
    throw new Error("no key found; write base64 of 32 random bytes (openssl rand -base64 32)");
  return entries.map((entry, i) => {
    const key = Buffer.from(entry, "base64");
    if (key.length !== keyBytes || !/^[A-Za-z0-9+/]+={0,2}$/.test(entry)) {
      throw new Error(
        `key ${i + 1} is not base64 of ${keyBytes} bytes (generate one with: openssl rand -base64 32)`,
      );
    }
    return key;
  });
}
