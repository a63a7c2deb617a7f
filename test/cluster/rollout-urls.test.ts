import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { V1Service } from "@kubernetes/client-node";
import { NetworkingV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { type Cluster, uniqueName } from "../support/cluster.js";
import { operatorRules, serviceAccountIdentity } from "../support/cluster-identities.js";
import {
  deploymentManifest,
  operatorEnv,
  type RolloutTestBed,
  rolloutLedger,
  rolloutTestBed,
} from "../support/cluster-rollouts.js";
import { installGatewayApi } from "../support/gateway-api.js";
import { type OperatorProcess, startOperatorProcess, waitForLog } from "../support/operator-process.js";
import type { Receiver } from "../support/receiver.js";
import { testSecretKey } from "../support/secret-keys.js";
import { waitForReady } from "../support/webhook-resources.js";

// deployment.succeeded carries a url even when the Deployment has none in its annotations: the one
// the cluster routes to its pods (an Ingress, else an HTTPRoute, else a Service), else the
// Deployment's own API URL. The operator runs as a process with the operator's RBAC, on a cluster
// without the Gateway API at first, which it must take quietly, and then with it.

let cluster: Cluster;
let receiver: Receiver;
let bed: RolloutTestBed | undefined;
let operator: OperatorProcess;
let observer: Pool;
let workDir: string;
let ledger: ReturnType<typeof rolloutLedger>;
let identity: Awaited<ReturnType<typeof serviceAccountIdentity>> | undefined;
let gatewayApi: { remove(): Promise<void> } | undefined;
const label = uniqueName("urls");
const namespace = uniqueName("store");
const full = ["deployment.created:pending", "deployment.ready:ready", "deployment.succeeded:succeeded"];

beforeAll(async () => {
  bed = await rolloutTestBed(label, namespace);
  ({ cluster, receiver, observer } = bed);
  ledger = rolloutLedger(observer, receiver);
  workDir = await mkdtemp(path.join(tmpdir(), "wo-urls-"));
  identity = await serviceAccountIdentity(cluster, { namespace, name: "operator", rules: operatorRules });
  const kubeconfig = path.join(workDir, "operator.kubeconfig");
  await writeFile(kubeconfig, identity.kubeConfig().exportConfig(), { mode: 0o600 });
  operator = await startOperatorProcess({
    ...operatorEnv(label),
    DATABASE_URL: bed.database.url,
    API_KEY: "urls-admin-key-0123456789",
    SECRET_ENCRYPTION_KEYS: testSecretKey,
    KUBECONFIG: kubeconfig,
    // Looks for the Gateway API again this often (once a re-list interval).
    INFORMER_RELIST_INTERVAL_MS: "2000",
  });
  await waitForReady(cluster, namespace, "all-deploys", "True");
});
afterAll(async () => {
  await operator?.stop();
  await gatewayApi?.remove();
  await identity?.remove();
  await bed?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const service = (name: string): V1Service => ({
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ name: "http", port: 8080 }] },
});
const createService = (name: string) =>
  cluster.core.createNamespacedService({ namespace, body: service(name) });
const networking = () => cluster.kubeConfig().makeApiClient(NetworkingV1Api);

/** Rolls out a Deployment without a url annotation and returns the url of its succeeded (and ready). */
async function rolledOutUrl(name: string): Promise<string> {
  await cluster.apps.createNamespacedDeployment({ namespace, body: deploymentManifest(name) });
  await ledger.waitFor(name, full);
  const { rows } = await observer.query("SELECT id FROM deployments WHERE name = $1", [name]);
  const payloads = receiver.requests
    .map((request) => JSON.parse(request.body).payload)
    .filter((payload) => payload.deployment_id === rows[0].id);
  const url = (status: string) => payloads.find((payload) => payload.status === status)?.url;
  expect(url("pending")).toBeNull();
  expect(url("ready")).toBe(url("succeeded"));
  return url("succeeded");
}

describe("the url of a rollout without a url annotation", () => {
  it("is the Deployment's API URL when nothing routes to its pods", async () => {
    expect(await rolledOutUrl("lonely")).toBe(
      `https://kubernetes.default.svc/apis/apps/v1/namespaces/${namespace}/deployments/lonely`,
    );
  });

  it("is a Service's cluster DNS name when a Service selects its pods", async () => {
    await createService("catalog");
    expect(await rolledOutUrl("catalog")).toBe(`http://catalog.${namespace}.svc.cluster.local:8080`);
  });

  it("is an Ingress's host and path when an Ingress routes to that Service, https under its TLS", async () => {
    await createService("shop");
    await networking().createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: "shop" },
        spec: {
          tls: [{ hosts: ["shop.example.com"], secretName: "shop-tls" }],
          rules: [
            {
              host: "shop.example.com",
              http: {
                paths: [
                  {
                    path: "/store",
                    pathType: "Prefix",
                    backend: { service: { name: "shop", port: { name: "http" } } },
                  },
                ],
              },
            },
          ],
        },
      },
    });
    expect(await rolledOutUrl("shop")).toBe("https://shop.example.com/store");
  });

  it("does without the Gateway API quietly, and reads HTTPRoutes once it is installed", async () => {
    const complaints = operator
      .log()
      .split("\n")
      .filter((line) => /httproute|gateway/i.test(line) && /"level":(40|50|60)/.test(line));
    expect(complaints).toEqual([]);
    expect(operator.forbidden()).toEqual([]);

    gatewayApi = await installGatewayApi(cluster);
    await waitForLog(operator, "the Gateway API is served: rollout URLs include HTTPRoutes");
    await cluster.customObjects.createNamespacedCustomObject({
      group: "gateway.networking.k8s.io",
      version: "v1",
      namespace,
      plural: "gateways",
      body: {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: "public" },
        spec: {
          gatewayClassName: "example",
          listeners: [
            {
              name: "https",
              port: 443,
              protocol: "HTTPS",
              tls: { mode: "Terminate", certificateRefs: [{ name: "public-tls" }] },
            },
          ],
        },
      },
    });
    await createService("api");
    await cluster.customObjects.createNamespacedCustomObject({
      group: "gateway.networking.k8s.io",
      version: "v1",
      namespace,
      plural: "httproutes",
      body: {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "api" },
        spec: {
          parentRefs: [{ name: "public" }],
          hostnames: ["api.example.com"],
          rules: [
            {
              matches: [{ path: { type: "PathPrefix", value: "/v1" } }],
              backendRefs: [{ name: "api", port: 8080 }],
            },
          ],
        },
      },
    });
    expect(await rolledOutUrl("api")).toBe("https://api.example.com/v1");
    expect(operator.forbidden()).toEqual([]);
  });
});
