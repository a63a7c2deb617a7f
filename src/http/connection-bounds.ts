import { readFileSync } from "node:fs";
import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../logger.js";

// What a peer without a key can hold of the HTTP server: a connection for at most the header timeout
// before its request is complete, a request for at most the request timeout (its body included), an
// idle keep-alive connection for the keep-alive timeout, and never the last connection a client with
// a key needs: past the connection limit the connections that are not serving a request are closed,
// those that never sent a complete request first (oldest first), then idle keep-alive ones (least
// recently used first). Only when every connection is serving a request is a new one refused.

export interface HttpBounds {
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** createServer's options: Node's own timeouts, checked every second (Node's default is 30 s). */
export function boundedServerOptions(bounds: HttpBounds): ServerOptions {
  return {
    headersTimeout: bounds.headersTimeoutMs,
    requestTimeout: bounds.requestTimeoutMs,
    keepAliveTimeout: bounds.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1_000,
  };
}

/**
 * Keeps at most HTTP_MAX_CONNECTIONS open (fewer when the process's file handles would not allow it),
 * closing the ones that serve nothing to make room, and closes silent connections at the header timeout.
 */
export function boundConnections(server: Server, bounds: HttpBounds, logger: Logger): void {
  const limit = connectionLimitWithin(bounds.maxConnections);
  if (limit < bounds.maxConnections) {
    logger.warn(
      { configured: bounds.maxConnections, limit },
      "HTTP_MAX_CONNECTIONS lowered to leave file handles for the database and deliveries (raise the limit of open files to allow more)",
    );
  }
  const waiting = new Set<Socket>(); // no request yet, oldest first
  const idle = new Set<Socket>(); // between keep-alive requests, least recently used first
  const serving = new Map<Socket, number>(); // requests in progress (pipelined ones included)
  let open = 0;
  let warnedAt = Number.NEGATIVE_INFINITY;
  server.on("connection", (socket: Socket) => {
    open += 1;
    socket.once("close", () => {
      open -= 1;
      waiting.delete(socket);
      idle.delete(socket);
      serving.delete(socket);
    });
    if (open > limit) {
      const victim = first(waiting) ?? first(idle) ?? socket;
      victim.destroy();
      if (Date.now() - warnedAt > 60_000) {
        warnedAt = Date.now();
        logger.warn(
          { limit, closed: victim === socket ? "the new connection" : "an older one serving nothing" },
          "HTTP connection limit reached (HTTP_MAX_CONNECTIONS): connections not serving a request are closed to make room",
        );
      }
      if (victim === socket) return;
    }
    // Node's header timeout starts at a request's first byte: a connection that sends nothing at all
    // would be held for ever without this.
    socket.setTimeout(bounds.headersTimeoutMs);
    waiting.add(socket);
  });
  server.on("request", (req, res) => {
    const socket = req.socket;
    if (waiting.delete(socket)) socket.setTimeout(0);
    idle.delete(socket);
    serving.set(socket, (serving.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const left = (serving.get(socket) ?? 1) - 1;
      if (left > 0) serving.set(socket, left);
      else if (serving.delete(socket) && !socket.destroyed) idle.add(socket);
    });
  });
}

const first = (sockets: Set<Socket>): Socket | undefined => sockets.values().next().value;

/**
 * The connection limit this process can keep: HTTP_MAX_CONNECTIONS, lowered to leave file handles for
 * the database pool, the deliveries and files (1,024, or half the limit when it is small).
 */
export function connectionLimitWithin(configured: number, fileHandles = openFilesLimit()): number {
  if (fileHandles === undefined) return configured;
  return Math.max(1, Math.min(configured, fileHandles - Math.min(1_024, Math.floor(fileHandles / 2))));
}

/** This process's limit of open files (Node raises it to the hard limit at start), where Linux says. */
function openFilesLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}
