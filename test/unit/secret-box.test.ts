import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseKeys, SecretBox, SecretDecryptionError } from "../../src/secrets/secret-box.js";

const keyA = randomBytes(32);
const keyB = randomBytes(32);

describe("SecretBox", () => {
  it("seals to the wo1 form, without the secret, and opens it again", () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal("whsec_ünïcode ☕");
    expect(sealed).toMatch(/^wo1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain("whsec");
    expect(box.open(sealed)).toBe("whsec_ünïcode ☕");
  });

  it("seals the same secret under the same key to the same value, and different secrets differently", () => {
    const box = new SecretBox([keyA]);
    expect(box.seal("one")).toBe(box.seal("one"));
    const [, , nonceOne] = box.seal("one").split(".");
    const [, , nonceTwo] = box.seal("two").split(".");
    expect(nonceOne).not.toBe(nonceTwo);
    expect(new SecretBox([keyB]).seal("one")).not.toBe(box.seal("one"));
  });

  it("encrypts with the first key and decrypts with any listed one", () => {
    const old = new SecretBox([keyA]).seal("rotated");
    const both = new SecretBox([keyB, keyA]);
    expect(both.open(old)).toBe("rotated");
    expect(both.isCurrent(old)).toBe(false);
    expect(both.isCurrent(both.seal("rotated"))).toBe(true);
    expect(() => new SecretBox([keyB]).open(old)).toThrow(/not among the configured keys/);
  });

  it("refuses a tampered value, clear text, and a key of the wrong size", () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal("integrity");
    const last = sealed.at(-2) === "A" ? "B" : "A";
    const tampered = `${sealed.slice(0, -2)}${last}${sealed.at(-1)}`;
    expect(() => box.open(tampered)).toThrow(SecretDecryptionError);
    expect(() => box.open("integrity")).toThrow("the stored secret is not in the encrypted form");
    expect(() => new SecretBox([randomBytes(16)])).toThrow("a secret encryption key must be 32 bytes");
  });
});

describe("parseKeys", () => {
  it("reads base64 keys separated by commas or lines, in order", () => {
    const text = `${keyA.toString("base64")},\n ${keyB.toString("base64")}\n`;
    expect(parseKeys(text)).toEqual([keyA, keyB]);
  });

  it.each(["", "  ", "c2hvcnQ=", "not base64 at all!"])("refuses %j, saying how to make a key", (text) => {
    expect(() => parseKeys(text)).toThrow(/openssl rand -base64 32/);
  });
});
