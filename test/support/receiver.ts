import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitUntil } from "./wait.js";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** How the receiver answers a request to a path; the default answers 200 "ok". */
export type Responder = (request: ReceivedRequest, res: ServerResponse) => void;

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Sets how requests to `path` are answered. */
  on(path: string, responder: Responder): void;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on loopback that records every request, byte for byte. */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const responders = new Map<string, Responder>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAt: Date.now(),
      };
      requests.push(request);
      const responder = responders.get(request.path);
      if (responder) responder(request, res);
      else res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (path, responder) => responders.set(path, responder),
    async waitFor(count, timeoutMs = 10_000) {
      await waitUntil(
        `${count} requests at the receiver`,
        async (saw) => {
          saw(`${requests.length} requests`);
          return requests.length >= count ? true : undefined;
        },
        { timeoutMs, intervalMs: 10 },
      );
      return requests;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
