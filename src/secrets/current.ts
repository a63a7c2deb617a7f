import type { SecretBox } from "./secret-box.js";

// The process's secret keys, set once at start-up before anything reads or writes a webhook. Held here
// rather than passed down because every writer of webhooks (API, operator) and the sender need them.
let current: SecretBox | undefined;

export function useSecretBox(box: SecretBox): void {
  current = box;
}

export function secretBox(): SecretBox {
  if (!current) throw new Error("webhook secrets used before the secret encryption keys were loaded");
  return current;
}
