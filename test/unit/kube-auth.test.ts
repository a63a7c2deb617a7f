import { describe, expect, it } from "vitest";
import { requiredAccess } from "../../src/kube-auth/request-access.js";
import { looksLikeKubernetesToken, tokenDigest, tokenExpiry } from "../../src/kube-auth/token-shape.js";

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const token = (claims: unknown) => `${part({ alg: "RS256" })}.${part(claims)}.c2ln`;

describe("telling a Kubernetes token from an API key", () => {
  it("takes a JWT for a token, and keys (wo_ or configured) for keys", () => {
    expect(looksLikeKubernetesToken(token({ exp: 1 }))).toBe(true);
    expect(looksLikeKubernetesToken(`wo_${token({})}`)).toBe(false);
    expect(looksLikeKubernetesToken("wo_Zm9vYmFyYmF6cXV4")).toBe(false);
    expect(looksLikeKubernetesToken("my-configured-admin-key")).toBe(false);
    // Three dotted parts whose header is not a JSON object naming an algorithm: a key.
    expect(looksLikeKubernetesToken("abc.def.ghi")).toBe(false);
    expect(looksLikeKubernetesToken(`${part({ typ: "JWT" })}.${part({})}.c2ln`)).toBe(false);
  });

  it("reads the expiry in milliseconds, and nothing from a token without one", () => {
    expect(tokenExpiry(token({ exp: 1_700_000_000 }))).toBe(1_700_000_000_000);
    expect(tokenExpiry(token({ sub: "x" }))).toBeUndefined();
    expect(tokenExpiry(token({ exp: "soon" }))).toBeUndefined();
  });

  it("keys caches by a digest that does not contain the token", () => {
    const t = token({ exp: 1 });
    expect(tokenDigest(t)).toBe(tokenDigest(t));
    expect(tokenDigest(t)).not.toContain(t.split(".")[1]);
    expect(tokenDigest(t)).not.toBe(tokenDigest(token({ exp: 2 })));
  });
});

describe("the RBAC verb an /api request needs (the README's table)", () => {
  it.each([
    ["GET", "/projects", { verb: "list" }],
    ["GET", "/projects/3/webhooks", { verb: "list" }],
    ["GET", "/projects/3/webhooks/5", { verb: "get" }],
    ["GET", "/projects/3/webhooks/5/deliveries", { verb: "list" }],
    ["GET", "/projects/3/webhooks/5/deliveries/7", { verb: "get" }],
    ["GET", "/projects/3/deployments", { verb: "list" }],
    ["POST", "/projects/3/webhooks", { verb: "create" }],
    ["PUT", "/projects/3/webhooks/5", { verb: "update" }],
    ["PATCH", "/projects/3/webhooks/5", { verb: "update" }],
    ["DELETE", "/projects/3/webhooks/5", { verb: "delete" }],
    ["POST", "/projects/3/webhooks/5/deliveries/7/retry", { verb: "create", subresource: "replay" }],
    ["POST", "/projects/3/webhooks/5/recover", { verb: "create", subresource: "replay" }],
    ["POST", "/projects/3/webhooks/5/test", { verb: "create", subresource: "test" }],
  ])("%s %s", (method, path, expected) => {
    expect(requiredAccess(method, path)).toEqual(expected);
  });
});
