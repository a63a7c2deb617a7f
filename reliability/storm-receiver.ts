import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

// The rollout storm's receivers (rollout-storm.ts), in a process of their own: arrival times taken in
// the process that records the storm would be late by whatever that process was doing, and bunched
// arrivals would read as a broken rate limit. One server, one path per webhook:
// - /throttled-*: every THROTTLE_EVERY-th request is answered 429 with Retry-After: 1;
// - /gone: 410 Gone;
// - anything else: 200.
// GET /__log answers every request so far (path, arrival, status, the envelope's id, type and rollout).

const throttleEvery = Number(process.env.THROTTLE_EVERY ?? "150");
interface Arrival {
  path: string;
  at: number;
  status: number;
  id: string;
  type: string;
  rollout: number;
}
const log: Arrival[] = [];
const seen = new Map<string, number>();

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/__log") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(log));
    return;
  }
  const at = Date.now();
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const path = req.url ?? "";
    const count = (seen.get(path) ?? 0) + 1;
    seen.set(path, count);
    let status = 200;
    if (path === "/gone") status = 410;
    else if (path.startsWith("/throttled-") && count % throttleEvery === 0) status = 429;
    const envelope = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id: string;
      event_type: string;
      payload: { deployment_id: number };
    };
    log.push({
      path,
      at,
      status,
      id: envelope.id,
      type: envelope.event_type,
      rollout: envelope.payload.deployment_id,
    });
    res.writeHead(status, status === 429 ? { "retry-after": "1" } : {}).end();
  });
});
server.listen(0, "127.0.0.1");
await once(server, "listening");
process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
