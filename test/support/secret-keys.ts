import { useSecretBox } from "../../src/secrets/current.js";
import { SecretBox } from "../../src/secrets/secret-box.js";

/** A fixed key for tests (base64 of 32 bytes), so no test writes a generated key file into DATA_DIR. */
export const testSecretKey = Buffer.alloc(32, 7).toString("base64");

/** The process's secret keys set to the test key; returns the box, to seal secrets as the store does. */
export function useTestSecretKeys(): SecretBox {
  const box = new SecretBox([Buffer.from(testSecretKey, "base64")]);
  useSecretBox(box);
  return box;
}
