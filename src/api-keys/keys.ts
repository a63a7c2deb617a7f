import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

// Keys carry 256 bits of randomness, so one SHA-256 is enough to store them safely (a slow password
// hash protects guessable secrets, which these are not).
const keyPrefix = "wo_";

export function generateApiKey(): string {
  return keyPrefix + randomBytes(32).toString("base64url");
}

export function hashApiKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
