import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PodReads } from "../../src/operator/rollouts/pod-reads.js";
import { webNewPods } from "../support/recorded-pods.js";

// The diagnosis's reads against an HTTP server on loopback that answers as an API server whose RBAC
// refuses pods and allows events: the refusal is logged once, not per rollout, asked no more, and
// what may be read still is.

const requests: string[] = [];
let server: Server;
let core: CoreV1Api;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.setHeader("content-type", "application/json");
    // A log the kubelet never sends: the request stays open.
    if (req.url?.startsWith("/api/v1/namespaces/stalled/pods")) return;
    if (req.url?.startsWith("/api/v1/namespaces/shop/pods")) {
      res.statusCode = 403;
      res.end(
        JSON.stringify({
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          message:
            'pods is forbidden: User "system:serviceaccount:ops:webhook-operator" cannot list resource "pods"',
          reason: "Forbidden",
          code: 403,
        }),
      );
      return;
    }
    res.end(JSON.stringify({ kind: "EventList", apiVersion: "v1", metadata: {}, items: [] }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const config = new KubeConfig();
  config.loadFromOptions({
    // Plain HTTP on loopback: client-node allows it only with skipTLSVerify.
    clusters: [
      {
        name: "c",
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: "u" }],
    contexts: [{ name: "c", cluster: "c", user: "u" }],
    currentContext: "c",
  });
  core = config.makeApiClient(CoreV1Api);
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("PodReads", () => {
  it("logs a refusal once, asks no more, and still reads what it may", async () => {
    const lines: { level: number; msg: string; resource?: string }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const reads = new PodReads(core, pino({ level: "info" }, sink));
    expect(await reads.pods(webNewPods)).toBeUndefined();
    expect(await reads.pods(webNewPods)).toBeUndefined();
    expect(await reads.events("shop", "web-7c9d8f6b5-pull1")).toEqual([]);
    expect(requests.filter((r) => r.includes("/pods?"))).toHaveLength(1);
    expect(requests.filter((r) => r.includes("/events?"))).toHaveLength(1);
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ resource: "pods" });
    expect(warnings[0]?.msg).toContain("rbac.rolloutDiagnostics");
  });

  it("goes on without a read that is never answered, and may read again", async () => {
    const reads = new PodReads(core, pino({ level: "silent" }), 200);
    const at = { namespace: "stalled", pod: "web-1", container: "app", previous: true };
    expect(await reads.logTail(at, 20)).toBeUndefined();
    expect(await reads.logTail(at, 20)).toBeUndefined();
    expect(reads.requests["pods/log"]).toBe(2);
  });
});
