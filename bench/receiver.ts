// The loopback webhook receiver of the delivery benchmark, run as a child process (bench/receiver-process.ts
// forks it) so that it does not share an event loop with the sender being measured. It answers every
// POST with 200 "ok" and records, per request, the event id of the body and the time of arrival (bench/clock.ts). The
// parent asks for the arrivals over IPC ({ type: "collect" }) and they are handed over and cleared.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { wallClockMs } from "./clock.js";

export type ReceiverRequest = { type: "collect" } | { type: "close" };
export type ReceiverMessage =
  | { type: "listening"; port: number }
  | { type: "arrivals"; ids: string[]; times: number[]; unparsable: number };

let ids: string[] = [];
let times: number[] = [];
let unparsable = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const arrivedAt = wallClockMs();
    try {
      const { id } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string };
      ids.push(id);
      times.push(arrivedAt);
    } catch {
      unparsable += 1;
    }
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("ok");
  });
});
// Senders keep their connections open for the whole run.
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;

function send(message: ReceiverMessage): void {
  process.send?.(message);
}

process.on("message", (message: ReceiverRequest) => {
  if (message.type === "collect") {
    send({ type: "arrivals", ids, times, unparsable });
    ids = [];
    times = [];
    unparsable = 0;
  } else if (message.type === "close") {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
// The parent died: do not linger.
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  send({ type: "listening", port: (server.address() as AddressInfo).port });
});
