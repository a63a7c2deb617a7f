import { SecretBox } from "../../src/secrets/secret-box.js";

/** A fixed key for tests (base64 of 32 bytes), so no test writes a generated key file into DATA_DIR. */
export const testSecretKey = Buffer.alloc(32, 7).toString("base64");

/** The secret keys of the test key, as the service holds them: to seal and open secrets as it does. */
export function testSecretBox(): SecretBox {
  return new SecretBox([Buffer.from(testSecretKey, "base64")]);
}
