import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signPayload } from "../../src/delivery-engine/sender.js";
import { hmacKey, signingKeyFromSecretValue } from "../../src/formats/signing-key.js";

describe("signing keys from Kubernetes Secret values", () => {
  it("keeps a UTF-8 value as its text", () => {
    const key = signingKeyFromSecretValue(Buffer.from("s3crét", "utf8"));
    expect(key).toBe("s3crét");
    expect(hmacKey(key)).toBe("s3crét");
  });

  it("signs with the raw bytes of a value that is not UTF-8", () => {
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x41, 0xc3]);
    const key = signingKeyFromSecretValue(bytes);
    expect(hmacKey(key)).toEqual(bytes);
    const expected = `sha256=${createHmac("sha256", bytes).update("1700000000.{}").digest("hex")}`;
    expect(signPayload(key, "1700000000", "{}")).toBe(expected);
    // What a UTF-8 decoding would have signed with is another key.
    const decoded = `sha256=${createHmac("sha256", bytes.toString("utf8")).update("1700000000.{}").digest("hex")}`;
    expect(expected).not.toBe(decoded);
  });
});
