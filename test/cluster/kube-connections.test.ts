import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shareConnections } from "../../src/operator/kube-connections.js";
import { useCluster } from "../support/cluster.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";

// Why src/operator/kube-connections.ts exists, measured against the real TLS API server (through the
// fault proxy, which counts the TLS handshakes clients make): client-node opens a new connection for
// every call; the operator's KubeConfig reuses one. Should client-node start reusing connections
// itself, the first test fails, and kube-connections.ts can go.

let proxy: FaultProxy;
beforeAll(async () => {
  proxy = await startFaultProxy(useCluster());
});
afterAll(() => proxy?.close());

async function handshakesFor(calls: number, core: CoreV1Api): Promise<number> {
  const before = proxy.tlsConnections();
  for (let i = 0; i < calls; i++) await core.listNamespace({ limit: 1 });
  return proxy.tlsConnections() - before;
}

describe("API connections", () => {
  it("client-node's own KubeConfig does a TLS handshake for every call", async () => {
    expect(await handshakesFor(20, proxy.kubeConfig().makeApiClient(CoreV1Api))).toBe(20);
  });

  // Once warm, no call opens a connection. (Through this proxy the pool opens a second connection
  // during its first calls; straight to the API server, `ss` counted 1 socket for 50 calls, against
  // 50 with client-node's own KubeConfig.)
  it("the operator's connection-sharing KubeConfig reuses its connections", async () => {
    const core = shareConnections(proxy.kubeConfig()).makeApiClient(CoreV1Api);
    expect(await handshakesFor(5, core)).toBeLessThanOrEqual(2);
    expect(await handshakesFor(20, core)).toBe(0);
  });

  it("keeps a pool per cluster and user: another user's calls do not reuse the first user's connections", async () => {
    const config = shareConnections(proxy.kubeConfig());
    const core = config.makeApiClient(CoreV1Api);
    await handshakesFor(5, core);
    config.addUser({ name: "other" });
    config.addContext({ name: "other", cluster: "proxy", user: "other" });
    config.setCurrentContext("other");
    expect(await handshakesFor(5, core)).toBeGreaterThan(0);
    expect(await handshakesFor(20, core)).toBe(0);
  });
});
