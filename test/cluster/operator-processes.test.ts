import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import { type Cluster, uniqueName } from "../support/cluster.js";
import { operatorRules, serviceAccountIdentity } from "../support/cluster-identities.js";
import {
  deploymentManifest,
  openGate,
  operatorEnv,
  type RolloutTestBed,
  rolloutLedger,
  rolloutTestBed,
} from "../support/cluster-rollouts.js";
import type { TestDatabase } from "../support/database.js";
import { type OperatorProcess, startOperatorProcess, waitForLog } from "../support/operator-process.js";
import type { Receiver } from "../support/receiver.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience } from "../support/webhook-resources.js";

// The operator as users run it (`webhook-operator serve` from dist/, one process per replica), so that
// a replica can be SIGKILLed and its log read.

let cluster: Cluster;
let database: TestDatabase;
let observer: Pool;
let receiver: Receiver;
const processes: OperatorProcess[] = [];
const label = uniqueName("processes");
const namespace = uniqueName("shop");

let bed: RolloutTestBed | undefined;
beforeAll(async () => {
  bed = await rolloutTestBed(label, namespace);
  ({ cluster, database, observer, receiver } = bed);
});
afterAll(async () => {
  for (const operator of processes) await operator.kill("SIGKILL");
  await bed?.close();
});

async function replica(kubeconfig: string, extra: Record<string, string> = {}): Promise<OperatorProcess> {
  const operator = await startOperatorProcess({
    ...operatorEnv(label),
    DATABASE_URL: database.url,
    KUBECONFIG: kubeconfig,
    KUBERNETES: "true",
    API_KEY: "process-test-key-0123456789",
    DELIVERY_ALLOW_PRIVATE_NETWORKS: "true",
    LOG_LEVEL: "info",
    ...extra,
  });
  processes.push(operator);
  return operator;
}

describe("operator processes on a real cluster", () => {
  it("a leader SIGKILLed mid-rollout: the other replica takes over, and each event is recorded and delivered once", async () => {
    const ledger = rolloutLedger(observer, receiver);
    const first = await replica(cluster.kubeconfigPath);
    await waitForLog(first, "became leader");
    const second = await replica(cluster.kubeconfigPath);

    const gate = uniqueName("failover");
    await cluster.apps.createNamespacedDeployment({ namespace, body: deploymentManifest("web", { gate }) });
    await ledger.waitFor("web", ["deployment.created:pending"]);
    await first.kill("SIGKILL");
    await openGate(cluster, gate);
    await waitForLog(second, "became leader");
    await ledger.waitFor("web", [
      "deployment.created:pending",
      "deployment.ready:ready",
      "deployment.succeeded:succeeded",
    ]);
    const { rows } = await observer.query(
      `SELECT e.event_type, count(*)::int AS n FROM events e
        WHERE (e.envelope::jsonb->'payload'->>'deployment_id')::bigint = (SELECT id FROM deployments WHERE name = 'web')
        GROUP BY e.event_type ORDER BY e.event_type`,
    );
    expect(rows).toEqual([
      { event_type: "deployment.created", n: 1 },
      { event_type: "deployment.ready", n: 1 },
      { event_type: "deployment.succeeded", n: 1 },
    ]);
    expect(first.logged("became leader")).toHaveLength(1);
    await second.stop();
  });

  it("backs off a failing watch exponentially and logs each retry as one line without a stack", async () => {
    // This identity may not list Webhooks: the Webhook informer's list answers 403 until granted.
    const withoutWebhooks = operatorRules.filter((rule) => !rule.apiGroups?.includes("webhook-operator.io"));
    const identity = await serviceAccountIdentity(cluster, {
      namespace,
      name: "no-webhooks",
      rules: withoutWebhooks,
    });
    try {
      const kubeconfig = path.join(tmpdir(), `${uniqueName("kubeconfig")}.json`);
      await writeFile(kubeconfig, identity.kubeConfig().exportConfig(), { mode: 0o600 });
      const operator = await replica(kubeconfig);
      await waitForLog(operator, "became leader");
      await waitForLog(operator, "watch failed; restarting", 4, clusterPatience);
      const retries = operator
        .logged("watch failed; restarting")
        .filter((line) => line.resource === "webhooks");
      const delays = retries.map((line) => line.retryInMs as number);
      expect(delays.slice(0, 4)).toEqual([500, 1_000, 2_000, 4_000]);
      for (const line of retries) {
        expect(line).not.toHaveProperty("err");
        expect(line.error).toMatch(/403|forbidden/i);
      }
      // Once allowed, it lists and reconciles.
      await identity.setRules(operatorRules);
      await waitUntil(
        "rows[0].n === 1",
        async () => {
          const { rows } = await observer.query("SELECT count(*)::int AS n FROM webhooks WHERE owner = $1", [
            `${namespace}/all-deploys`,
          ]);
          return rows[0].n === 1 ? true : undefined;
        },
        { timeoutMs: clusterPatience },
      );
      await operator.stop();
    } finally {
      await identity.remove();
    }
  });
});
