import { createHmac, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from "node:net";
import { setImmediate } from "node:timers/promises";
import type { Agent } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDeliveryAgent } from "../../src/delivery-engine/destination-policy.js";
import {
  connectionFailedMessage,
  createSender,
  destinationRefusedMessage,
  httpErrorMessage,
  type OutboundDelivery,
  signPayload,
  timeoutMessage,
} from "../../src/delivery-engine/sender.js";
import { testSecretBox } from "../support/secret-keys.js";

type Received = { method: string; url: string; headers: IncomingMessage["headers"]; body: Buffer };
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A real HTTP receiver on loopback that records every request and counts TCP connections. */
async function startReceiver(handler: Handler) {
  const received: Received[] = [];
  let connections = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks),
    });
    handler(req, res);
  });
  server.on("connection", () => connections++);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  receivers.push(server);
  return { url: `http://127.0.0.1:${port}/hooks`, received, connections: () => connections, port };
}

/**
 * A receiver written at the socket level, for answers node's http server cannot give (1xx it was not
 * asked for): `answer` runs once the request's bytes start arriving, once per request.
 */
async function startRawReceiver(answer: (socket: Socket) => void) {
  const server = createNetServer((socket) => {
    socket.on("data", () => answer(socket));
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  rawReceivers.push(server);
  return { url: `http://127.0.0.1:${port}/hooks` };
}

const receivers: ReturnType<typeof createServer>[] = [];
const rawReceivers: NetServer[] = [];
let agent: Agent;

const box = testSecretBox();

beforeAll(() => {
  agent = createDeliveryAgent({ policy: { allowPrivateNetworks: true } });
});
afterEach(() => {
  for (const server of rawReceivers.splice(0)) server.close();
  for (const server of receivers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});
afterAll(() => agent.close());

const body = JSON.stringify({ id: "5f0c", event_type: "deployment.succeeded", payload: { name: "café ☕" } });
const delivery = (url: string, over: Partial<OutboundDelivery> = {}): OutboundDelivery => ({
  url,
  body,
  eventType: "deployment.succeeded",
  deliveryId: 42,
  secret: box.seal("whsec_test"),
  ...over,
});
const sender = (timeoutMs = 5_000, responseBodyLimitBytes = 4096) =>
  createSender({
    dispatcher: agent,
    timeoutMs,
    responseBodyLimitBytes,
    openSecret: (sealed) => box.open(sealed),
  });

describe("signPayload", () => {
  it("is sha256= and the hex HMAC of <timestamp>.<body> (vector computed with openssl)", () => {
    expect(signPayload("whsec_test", "1700000000", '{"id":"e1","event_type":"deployment.succeeded"}')).toBe(
      "sha256=f987a945d4e1e1369ab0e7133db8d066717be699767f9b6e55d5ee5db8dfd3a0",
    );
  });
});

describe("createSender", () => {
  it("POSTs the body byte for byte with exactly the spec headers and a verifiable signature", async () => {
    const receiver = await startReceiver((_req, res) => res.end("thanks"));
    const before = Math.floor(Date.now() / 1000);
    const outcome = await sender()(delivery(receiver.url));

    expect(outcome).toMatchObject({
      success: true,
      statusCode: 200,
      responseBody: "thanks",
      errorMessage: null,
    });
    expect(receiver.received).toHaveLength(1);
    const [got] = receiver.received;
    if (!got) throw new Error("no request received");
    expect(got.method).toBe("POST");
    expect(got.url).toBe("/hooks");
    expect(got.body.equals(Buffer.from(body, "utf8"))).toBe(true);
    expect(Object.keys(got.headers).sort()).toEqual(
      [
        "connection",
        "content-length",
        "content-type",
        "host",
        "user-agent",
        "x-webhook-delivery",
        "x-webhook-event",
        "x-webhook-signature",
        "x-webhook-timestamp",
      ].sort(),
    );
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["x-webhook-event"]).toBe("deployment.succeeded");
    expect(got.headers["x-webhook-delivery"]).toBe("42");
    const timestamp = String(got.headers["x-webhook-timestamp"]);
    expect(timestamp).toMatch(/^\d+$/);
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

    // Verify as a receiver would: HMAC over the raw bytes received, constant-time comparison.
    const expected = Buffer.from(
      `sha256=${createHmac("sha256", "whsec_test").update(`${timestamp}.`).update(got.body).digest("hex")}`,
    );
    const signature = Buffer.from(String(got.headers["x-webhook-signature"]));
    expect(signature.length).toBe(expected.length);
    expect(timingSafeEqual(signature, expected)).toBe(true);
  });

  it("sends no signature header when the webhook has no secret", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    const outcome = await sender()(delivery(receiver.url, { secret: null, deliveryId: "7" }));
    expect(outcome.success).toBe(true);
    expect(receiver.received[0]?.headers).not.toHaveProperty("x-webhook-signature");
    expect(receiver.received[0]?.headers["x-webhook-delivery"]).toBe("7");
  });

  it.each([
    [404, "HTTP 404 error from URL: Not Found. The endpoint rejected the request."],
    [500, "HTTP 500 error from URL: Internal Server Error. The endpoint rejected the request."],
    [599, "HTTP 599 error from URL: Unknown Status. The endpoint rejected the request."],
  ])("records HTTP %i as a failure with the exact message", async (status, message) => {
    const receiver = await startReceiver((_req, res) => {
      res.statusCode = status;
      res.end(`nope ${status}`);
    });
    const outcome = await sender()(delivery(receiver.url));
    expect(outcome).toMatchObject({
      success: false,
      statusCode: status,
      responseBody: `nope ${status}`,
      errorMessage: message.replace("URL", receiver.url),
    });
    expect(outcome.errorMessage).toBe(httpErrorMessage(receiver.url, status));
    expect(outcome.errorMessage).not.toContain("whsec_test");
  });

  it("does not follow redirects: a 302 is a failure and the receiver sees one request", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(302, { Location: "/elsewhere" });
      res.end();
    });
    const outcome = await sender()(delivery(receiver.url));
    expect(outcome.success).toBe(false);
    expect(outcome.statusCode).toBe(302);
    expect(outcome.errorMessage).toBe(
      `HTTP 302 error from ${receiver.url}: Found. The endpoint rejected the request.`,
    );
    expect(receiver.received.map((r) => r.url)).toEqual(["/hooks"]);
  });

  it("reports a refused port with the exact connection message", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address() as AddressInfo;
    closed.close();
    await once(closed, "close");

    const url = `http://127.0.0.1:${port}/hooks`;
    const outcome = await sender()(delivery(url));
    expect(outcome).toMatchObject({ success: false, statusCode: 0, responseBody: "" });
    expect(outcome.errorMessage).toBe(
      `Connection failed to ${url}. The receiver may not be running, the URL may be wrong, or the endpoint may not be listening on the right port.`,
    );
    expect(outcome.errorMessage).toBe(connectionFailedMessage(url));
  });

  it("reports a connection reset before any response as a connection failure", async () => {
    const receiver = await startReceiver((req) => req.socket.destroy());
    const outcome = await sender()(delivery(receiver.url));
    expect(outcome).toMatchObject({
      success: false,
      statusCode: 0,
      errorMessage: connectionFailedMessage(receiver.url),
    });
  });

  it("times out a receiver that never answers, after about timeoutMs", async () => {
    const receiver = await startReceiver(() => {});
    const outcome = await sender(300)(delivery(receiver.url));
    expect(outcome).toMatchObject({ success: false, statusCode: 0, responseBody: "" });
    expect(outcome.errorMessage).toBe(
      `Request timeout after 0.3 seconds. The endpoint ${receiver.url} did not respond in time; check that the receiver responds quickly.`,
    );
    // Not before the deadline (undici's timer ticks about every half second, so it fires within about
    // a second after it; how much after depends on the machine's load, so that is not asserted).
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
    expect(receiver.received).toHaveLength(1);
  });

  it("times out a body that never ends, keeping the status received", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200);
      res.write("partial");
    });
    const outcome = await sender(300)(delivery(receiver.url));
    expect(outcome).toMatchObject({
      success: false,
      statusCode: 200,
      responseBody: "partial",
      errorMessage: timeoutMessage(receiver.url, 300),
    });
  });

  it("ends a send at its deadline while the receiver streams 102 Processing, with the timeout message", async () => {
    // A raw receiver: node's http server cannot send a 1xx without a request asking for one. It answers
    // `102 Processing` every 50 ms and gives up after 3 s; undici's own header timer restarts on each
    // 1xx, so without a deadline of its own the send would last until then and end as a connection
    // failure.
    let receiverGaveUp = false;
    const receiver = await startRawReceiver((socket) => {
      const processing = setInterval(() => socket.write("HTTP/1.1 102 Processing\r\n\r\n"), 50);
      const giveUp = setTimeout(() => {
        receiverGaveUp = true;
        socket.destroy();
      }, 3_000);
      socket.on("close", () => {
        clearInterval(processing);
        clearTimeout(giveUp);
      });
    });
    const outcome = await sender(300)(delivery(receiver.url));
    expect(outcome).toMatchObject({ success: false, statusCode: 0, failure: "timeout" });
    expect(outcome.errorMessage).toBe(timeoutMessage(receiver.url, 300));
    expect(receiverGaveUp).toBe(false);
  });

  it("records an unsolicited 100 Continue followed by a 200 as the 200", async () => {
    const receiver = await startRawReceiver((socket) => {
      socket.write("HTTP/1.1 100 Continue\r\n\r\n");
      setTimeout(() => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nreceived"), 20);
    });
    const send = sender();
    expect(await send(delivery(receiver.url))).toMatchObject({
      success: true,
      statusCode: 200,
      responseBody: "received",
      errorMessage: null,
    });
    // The connection stays usable: the next delivery on it is answered the same way.
    expect(await send(delivery(receiver.url))).toMatchObject({ success: true, statusCode: 200 });
  });

  it("records a 100 Continue arriving in one packet with the 200 after it as the 200", async () => {
    const receiver = await startRawReceiver((socket) => {
      socket.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nreceived");
    });
    const send = sender();
    for (let i = 0; i < 2; i++)
      expect(await send(delivery(receiver.url))).toMatchObject({
        success: true,
        statusCode: 200,
        responseBody: "received",
      });
  });

  it("formats the production timeout as whole seconds", () => {
    expect(timeoutMessage("https://example.com/h", 30_000)).toMatch(/^Request timeout after 30 seconds\. /);
  });

  it("truncates a response body over the limit without cutting a character, and stays usable", async () => {
    const receiver = await startReceiver((_req, res) =>
      res.end(`${"a".repeat(1023)}é${"b".repeat(100_000)}`),
    );
    const send = sender(5_000, 1024); // byte 1024 is the first half of "é"
    const outcome = await send(delivery(receiver.url));
    expect(outcome.success).toBe(true);
    expect(outcome.responseBody).toBe("a".repeat(1023));

    const again = await send(delivery(receiver.url));
    expect(again.responseBody).toBe("a".repeat(1023));
    expect(receiver.received).toHaveLength(2);
  });

  it("reuses one keep-alive connection for consecutive deliveries", async () => {
    const receiver = await startReceiver((_req, res) => res.end("ok"));
    const send = sender();
    for (let i = 0; i < 3; i++) {
      expect((await send(delivery(receiver.url))).success).toBe(true);
      // undici's Pool learns that a connection is free again one turn after the response body ended;
      // a request dispatched in that same turn opens a second socket. Workers always do I/O between
      // two deliveries, so one event-loop turn here reflects real use.
      await setImmediate();
    }
    expect(receiver.received).toHaveLength(3);
    expect(receiver.connections()).toBe(1);
  });

  it("reports a destination refused by the policy, without connecting", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    const strictAgent = createDeliveryAgent({ policy: { allowPrivateNetworks: false } });
    try {
      const send = createSender({
        dispatcher: strictAgent,
        timeoutMs: 5_000,
        responseBodyLimitBytes: 1024,
        openSecret: (sealed) => box.open(sealed),
      });
      const outcome = await send(delivery(receiver.url));
      const reason = `127.0.0.1 is a loopback address and private destinations are not allowed (an admin can allow them with DELIVERY_ALLOWED_DESTINATIONS or DELIVERY_ALLOW_PRIVATE_NETWORKS=true)`;
      expect(outcome).toMatchObject({
        success: false,
        statusCode: 0,
        errorMessage: `Destination refused for ${receiver.url}: ${reason}.`,
      });
      expect(outcome.errorMessage).toBe(destinationRefusedMessage(receiver.url, reason));
      expect(receiver.connections()).toBe(0);

      const metadata = await send(delivery("http://169.254.169.254/latest/meta-data/"));
      expect(metadata.errorMessage).toBe(
        "Destination refused for http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local/cloud metadata address.",
      );
    } finally {
      await strictAgent.close();
    }
  });
});
