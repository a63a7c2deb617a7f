import { once } from "node:events";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Agent, createServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { Cluster } from "./cluster.js";

// A TLS proxy on loopback in front of the real API server, making on demand the faults a real server
// makes only now and then: failed and slow lists, 410 Gone and 429 answers, watches that stall or
// drop. Clients reach it with the cluster's CA (it serves the API server's own certificate, issued
// for 127.0.0.1) and no credentials; it calls the API server as the cluster's admin.

export interface ProxiedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  watch: boolean;
  status: number;
}

type Fault = (request: IncomingMessage, response: ServerResponse) => boolean;

export interface FaultProxy {
  url: string;
  /** A KubeConfig for the proxy (a new one each call). */
  kubeConfig(): KubeConfig;
  /** Every request answered, in order, with the status it got. */
  requests: ProxiedRequest[];
  /** TLS connections clients opened (handshakes completed). */
  tlsConnections(): number;
  /** Lists of `path` (not watches) answer `status` (a Kubernetes Status body) the next `count` times. */
  failNextLists(path: string, count: number, status?: number): void;
  /** Lists of `path` answer 429 Too Many Requests with Retry-After the next `count` times. */
  throttleNextLists(path: string, count: number, retryAfterSeconds: number): void;
  /** Watches of `path` answer 410 Gone (an expired resourceVersion) the next `count` times. */
  expireNextWatches(path: string, count: number): void;
  /** Lists of `path` wait `delayMs` before they are forwarded, until cleared with 0. */
  slowLists(path: string, delayMs: number): void;
  /** Open watches forward nothing more, and new ones answer their headers and then nothing. */
  stallWatches(stalled: boolean): void;
  /** Ends every open watch connection abruptly (a network cut). */
  dropWatches(): void;
  /**
   * While `prefix` is set, requests whose path starts with it get no answer at all (a network that drops
   * packets, not one that refuses); undefined ends the cut and closes the requests it held.
   */
  cutOff(prefix: string | undefined): void;
  close(): Promise<void>;
}

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
  });

export async function startFaultProxy(cluster: Cluster): Promise<FaultProxy> {
  const pki = path.join(cluster.dir, "pki");
  const file = (name: string) => readFileSync(path.join(pki, name));
  const upstream = new URL(cluster.kubeConfig().getCurrentCluster()?.server ?? "");
  const agent = new Agent({
    ca: file("ca.crt"),
    cert: file("admin.crt"),
    key: file("admin.key"),
    keepAlive: true,
  });
  const requests: ProxiedRequest[] = [];
  const faults: Fault[] = [];
  const openWatches = new Set<ServerResponse>();
  const delays = new Map<string, number>();
  let stalled = false;
  let connections = 0;
  let cutPrefix: string | undefined;
  const held = new Set<ServerResponse>();

  const isWatch = (req: IncomingMessage) =>
    new URL(req.url ?? "", "https://x").searchParams.get("watch") === "true";
  const pathOf = (req: IncomingMessage) => new URL(req.url ?? "", "https://x").pathname;
  const answer = (req: IncomingMessage, res: ServerResponse, code: number, body: string, headers = {}) => {
    requests.push({ method: req.method ?? "", path: pathOf(req), watch: isWatch(req), status: code });
    res.writeHead(code, { "content-type": "application/json", ...headers }).end(body);
  };
  /** A fault that answers the next `count` matching requests, then removes itself. */
  const nextRequests = (
    match: (req: IncomingMessage) => boolean,
    count: number,
    respond: (req: IncomingMessage, res: ServerResponse) => void,
  ) => {
    let left = count;
    const fault: Fault = (req, res) => {
      if (left <= 0 || !match(req)) return false;
      left -= 1;
      if (left === 0) faults.splice(faults.indexOf(fault), 1);
      respond(req, res);
      return true;
    };
    faults.push(fault);
  };
  const listOf = (p: string) => (req: IncomingMessage) =>
    req.method === "GET" && pathOf(req) === p && !isWatch(req);
  const watchOf = (p: string) => (req: IncomingMessage) => pathOf(req) === p && isWatch(req);

  async function forward(req: IncomingMessage, res: ServerResponse) {
    if (cutPrefix !== undefined && pathOf(req).startsWith(cutPrefix)) {
      held.add(res);
      res.once("close", () => held.delete(res));
      return;
    }
    if (faults.some((fault) => fault(req, res))) return;
    const watch = isWatch(req);
    const delay = watch ? 0 : (delays.get(pathOf(req)) ?? 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const { authorization: _ignored, ...headers } = req.headers;
    const upstreamRequest = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
      (upstreamResponse) => {
        const code = upstreamResponse.statusCode ?? 502;
        requests.push({ method: req.method ?? "", path: pathOf(req), watch, status: code });
        res.writeHead(code, upstreamResponse.headers);
        if (!watch) {
          upstreamResponse.pipe(res);
          return;
        }
        // As the API server does: the watch's headers now, its events as they come.
        res.flushHeaders();
        openWatches.add(res);
        res.once("close", () => {
          openWatches.delete(res);
          upstreamResponse.destroy();
        });
        upstreamResponse.on("data", (chunk: Buffer) => {
          if (!stalled) res.write(chunk);
        });
        upstreamResponse.on("end", () => res.end());
      },
    );
    upstreamRequest.on("error", () => res.destroy());
    req.pipe(upstreamRequest);
  }

  const server = createServer({ cert: file("apiserver.crt"), key: file("apiserver.key") }, (req, res) => {
    void forward(req, res);
  });
  server.on("secureConnection", () => (connections += 1));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    kubeConfig() {
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: [{ name: "proxy", server: url, caFile: path.join(pki, "ca.crt") }],
        users: [{ name: "anonymous" }],
        contexts: [{ name: "proxy", cluster: "proxy", user: "anonymous" }],
        currentContext: "proxy",
      });
      return config;
    },
    tlsConnections: () => connections,
    failNextLists(p, count, code = 500) {
      nextRequests(listOf(p), count, (req, res) =>
        answer(req, res, code, status(code, "InternalError", "injected by the fault proxy")),
      );
    },
    throttleNextLists(p, count, retryAfterSeconds) {
      nextRequests(listOf(p), count, (req, res) =>
        answer(req, res, 429, status(429, "TooManyRequests", "injected by the fault proxy"), {
          "retry-after": String(retryAfterSeconds),
        }),
      );
    },
    expireNextWatches(p, count) {
      nextRequests(watchOf(p), count, (req, res) =>
        answer(
          req,
          res,
          410,
          status(410, "Expired", "too old resource version (injected by the fault proxy)"),
        ),
      );
    },
    slowLists(p, delayMs) {
      delays.set(p, delayMs);
    },
    stallWatches(value) {
      stalled = value;
    },
    dropWatches() {
      for (const res of openWatches) res.destroy();
    },
    cutOff(prefix) {
      cutPrefix = prefix;
      if (prefix !== undefined) return;
      for (const res of held) res.destroy();
    },
    async close() {
      for (const res of held) res.destroy();
      for (const res of openWatches) res.destroy();
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
}
