import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../support/service.js";

// The client's address behind a trusted proxy (TRUSTED_PROXIES): failed authentications are paced per
// client, not per proxy, and guesses of the metrics token are paced like refused API keys.

const token = "metrics-token-0123456789";
let service: TestService;

beforeAll(async () => {
  service = await startTestService({
    AUTH_FAILURES_PER_MINUTE: "3",
    METRICS_TOKEN: token,
    // The tests' own connections stand for an ingress controller on loopback.
    TRUSTED_PROXIES: "127.0.0.0/8, ::1",
    DELIVERY_WORKERS: "false",
  });
});
afterAll(() => service?.close());

/** GET `path` as the client `client` behind the proxy (X-Forwarded-For as an ingress writes it). */
async function asClient(client: string, path: string, credential: string) {
  const response = await fetch(`${service.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${credential}`, "x-forwarded-for": client },
  });
  await response.arrayBuffer();
  return response;
}

describe("behind a trusted proxy", () => {
  it("paces the client X-Forwarded-For names, not the proxy every client shares", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await asClient("198.51.100.1", "/api/projects", `guess-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Another client behind the same proxy is not paced: its wrong key is a plain 401.
    expect((await asClient("198.51.100.2", "/api/projects", "typo")).status).toBe(401);
    // Only the address the trusted proxy appended counts: one the client wrote in front is not believed.
    expect((await asClient("203.0.113.5, 198.51.100.1", "/api/projects", "guess-4")).status).toBe(429);
    expect((await asClient("198.51.100.1, 203.0.113.5", "/api/projects", "guess-5")).status).toBe(401);
  });
});

describe("the metrics token", () => {
  it("paces wrong tokens like refused API keys (80 were 80 × 401), and lets the right one through", async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await asClient("192.0.2.50", "/metrics", `${token}${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const paced = await asClient("192.0.2.50", "/metrics", "wrong");
    expect(Number(paced.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await asClient("192.0.2.50", "/metrics", token)).status).toBe(200);
  });
});
