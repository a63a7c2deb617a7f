import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countAcquires } from "../support/pool-acquires.js";
import { startTestService, type TestService } from "../support/service.js";

// What a peer without a key can hold of the HTTP server: connections that send nothing or trickle
// their head, bodies sent after a refused key, room a client with a key needs, and key guesses.

let service: TestService;

beforeAll(async () => {
  service = await startTestService({
    HTTP_HEADERS_TIMEOUT_MS: "1000",
    HTTP_MAX_CONNECTIONS: "20",
    AUTH_FAILURES_PER_MINUTE: "5",
    // Nothing else takes connections from the pool while the guesses are counted.
    DELIVERY_WORKERS: "false",
  });
});
afterAll(() => service?.close());

/** A raw connection that records what it receives and when it is closed. */
async function rawConnection(): Promise<{
  socket: Socket;
  received: () => string;
  closed: Promise<unknown>;
}> {
  const { hostname, port } = new URL(service.baseUrl);
  const socket = connect(Number(port), hostname);
  let received = "";
  socket.on("data", (chunk) => (received += chunk));
  socket.on("error", () => {});
  const closed = once(socket, "close");
  await once(socket, "connect");
  return { socket, received: () => received, closed };
}

describe("connections without a complete request", () => {
  it("closes one that sends nothing at the header timeout (it was held for ever)", async () => {
    const silent = await rawConnection();
    await silent.closed;
    // Closed by the socket's own timeout (nothing said) or, when Node's once-a-second check of the
    // header timeout comes first (a busy event loop runs both in one turn), with its 408: never
    // anything else, and never held.
    expect(silent.received()).toMatch(/^(HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*)?$/);
  });

  it("closes one that trickles its head with 408 at the header timeout (it was held 60–90 s)", async () => {
    const trickling = await rawConnection();
    trickling.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    const ticking = setInterval(() => trickling.socket.write("X-Slow: 1\r\n"), 200);
    await trickling.closed;
    clearInterval(ticking);
    expect(trickling.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("past the connection limit closes the oldest that serve nothing, and a client with a key gets in", async () => {
    const idle = [];
    for (let i = 0; i < 40; i++) idle.push(await rawConnection());
    const response = await service.api("GET", "/projects");
    expect(response.status).toBe(200);
    // The first twenty were closed to make room for the last twenty and the request.
    await Promise.all(idle.slice(0, 20).map((connection) => connection.closed));
    expect(idle.slice(-19).filter((connection) => connection.socket.destroyed)).toEqual([]);
    for (const connection of idle) connection.socket.destroy();
  });
});

describe("a request whose credentials are refused", () => {
  it("is answered 401 and closed without reading the body it still trickles (it was read for 316 s)", async () => {
    const post = await rawConnection();
    post.socket.write(
      "POST /api/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{",
    );
    let sent = 1;
    const ticking = setInterval(() => {
      if (!post.socket.destroyed) post.socket.write(" ");
      sent += 1;
    }, 50);
    await post.closed;
    clearInterval(ticking);
    expect(post.received()).toMatch(/^HTTP\/1\.1 401 [\s\S]*\r\nConnection: close\r\n/i);
    expect(sent).toBeLessThan(60_000);
  });
});

describe("failed authentications", () => {
  it("paces a source after AUTH_FAILURES_PER_MINUTE refused keys: 429 with Retry-After, and a valid key still passes (it was 429 too)", async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await service.api("GET", "/projects", { key: `wrong-key-${i}` })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const paced = await service.api("GET", "/projects", { key: "wrong-key-5" });
    expect(paced.status).toBe(429);
    expect(paced.body).toEqual({
      error: { code: "too_many_requests", message: expect.stringMatching(/try again in \d+ s/) },
    });
    expect(Number(paced.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(paced.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // Behind an ingress the guesser and every API user share one address: the valid key is checked.
    expect((await service.api("GET", "/projects")).status).toBe(200);
    const scoped = await service.api("POST", "/api-keys", { body: { name: "new while paced" } });
    expect((await service.api("GET", "/projects", { key: scoped.body.key })).status).toBe(200);
    expect((await service.api("GET", "/projects", { key: "wrong-key-6" })).status).toBe(429);
  });

  it("costs a paced source's guesses no database query", async () => {
    const acquired = countAcquires(service);
    const statuses = new Set();
    for (let i = 0; i < 20; i++)
      statuses.add((await service.api("GET", "/service-info", { key: `guess-${i}` })).status);
    expect(statuses).toEqual(new Set([429]));
    // At most one reading of the keys' digests (they are read again at most once a second).
    expect(acquired.stop()).toBeLessThanOrEqual(3);
  });

  it("ignores X-Forwarded-For without TRUSTED_PROXIES: naming another address does not escape pacing", async () => {
    const response = await fetch(`${service.baseUrl}/api/projects`, {
      headers: { authorization: "Bearer wrong-key-7", "x-forwarded-for": "198.51.100.9" },
    });
    expect(response.status).toBe(429);
  });
});

/** Counts the connections the service takes from its pool from now until `stop`. */
