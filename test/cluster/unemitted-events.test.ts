import { afterAll, beforeAll, expect, it } from "vitest";
import { eventTypes } from "../../src/event-types.js";
import { createNamespaces, namespaceGone, uniqueName } from "../support/cluster.js";
import {
  deploymentManifest,
  operatorEnv,
  type RolloutTestBed,
  rolloutLedger,
  rolloutTestBed,
} from "../support/cluster-rollouts.js";
import { startTestService, type TestService } from "../support/service.js";
import { waitUntil } from "../support/wait.js";
import { clusterPatience, createWebhook, waitForReady } from "../support/webhook-resources.js";

// The contract of the names that are accepted in subscriptions but never emitted in this release
// (project.*, domain.*, email.*): a webhook subscribed only to them gets no delivery, whatever happens
// in the cluster. Here rollouts run, and projects come and go with their namespaces.

const label = uniqueName("unemitted");
const namespace = uniqueName("shop");
const neverEmitted = eventTypes.filter((type) => !type.emitted).map((type) => type.event_type);
const full = ["deployment.created:pending", "deployment.ready:ready", "deployment.succeeded:succeeded"];

let bed: RolloutTestBed;
let service: TestService | undefined;

beforeAll(async () => {
  bed = await rolloutTestBed(label, namespace);
  await createWebhook(bed.cluster, namespace, "never-emitted", {
    url: `${bed.receiver.url}/never`,
    events: neverEmitted,
  });
  service = await startTestService(operatorEnv(label), {
    kubeConfig: bed.cluster.kubeConfig(),
    database: bed.database,
  });
  await waitForReady(bed.cluster, namespace, "all-deploys", "True");
  await waitForReady(bed.cluster, namespace, "never-emitted", "True");
});
afterAll(async () => {
  await service?.close();
  await bed?.close();
});

async function projectSlugs(): Promise<string[]> {
  const listed = await service?.api("GET", "/projects?per_page=100");
  return ((listed?.body.projects ?? []) as { slug: string }[]).map((project) => project.slug);
}

const projectListed = (slug: string, listed: boolean) =>
  waitUntil(
    `project ${slug} to be ${listed ? "listed" : "gone"}`,
    async (saw) => {
      const slugs = await projectSlugs();
      saw(slugs);
      return slugs.includes(slug) === listed ? true : undefined;
    },
    { timeoutMs: clusterPatience },
  );

it("a webhook subscribed only to names never emitted gets nothing while rollouts run and projects come and go", async () => {
  expect(neverEmitted).toEqual(
    expect.arrayContaining(["project.created", "domain.created", "email.bounced"]),
  );
  const { cluster, observer, receiver } = bed;
  const ledger = rolloutLedger(observer, receiver);

  // A project comes (a selected namespace) and goes (its namespace deleted).
  const passing = uniqueName("passing");
  await createNamespaces(cluster, label, passing);
  await projectListed(passing, true);
  // Rollouts run: one to its end, one deleted before it finished.
  await cluster.apps.createNamespacedDeployment({ namespace, body: deploymentManifest("web") });
  await cluster.apps.createNamespacedDeployment({
    namespace,
    body: deploymentManifest("dropped", { gate: uniqueName("never-open") }),
  });
  await ledger.waitFor("dropped", ["deployment.created:pending"]);
  await cluster.apps.deleteNamespacedDeployment({ namespace, name: "dropped" });
  await cluster.core.deleteNamespace({ name: passing });
  await ledger.waitFor("web", full);
  await ledger.waitFor("dropped", ["deployment.created:pending", "deployment.cancelled:cancelled"]);
  // The project goes when the namespace object does, which the namespace controller removes only after
  // deleting everything in it: wait for that at its own pace, then for the operator's clean-up.
  await namespaceGone(cluster, passing);
  await projectListed(passing, false);

  // Every event recorded has been delivered (waitFor waits until none of a rollout's is unsent), and an
  // event's deliveries are queued with it: none for the other webhook then means none ever.
  const { rows } = await observer.query<{ event_type: string; webhook: string; deliveries: number }>(
    `SELECT e.event_type, w.owner AS webhook, count(d.id)::int AS deliveries
       FROM events e CROSS JOIN webhooks w LEFT JOIN deliveries d ON d.event_id = e.id AND d.webhook_id = w.id
      GROUP BY e.event_type, w.owner ORDER BY e.event_type, w.owner`,
  );
  const owner = (name: string) => `${namespace}/${name}`;
  expect(rows).toEqual([
    { event_type: "deployment.cancelled", webhook: owner("all-deploys"), deliveries: 1 },
    { event_type: "deployment.cancelled", webhook: owner("never-emitted"), deliveries: 0 },
    { event_type: "deployment.created", webhook: owner("all-deploys"), deliveries: 2 },
    { event_type: "deployment.created", webhook: owner("never-emitted"), deliveries: 0 },
    { event_type: "deployment.ready", webhook: owner("all-deploys"), deliveries: 1 },
    { event_type: "deployment.ready", webhook: owner("never-emitted"), deliveries: 0 },
    { event_type: "deployment.succeeded", webhook: owner("all-deploys"), deliveries: 1 },
    { event_type: "deployment.succeeded", webhook: owner("never-emitted"), deliveries: 0 },
  ]);
  expect(receiver.requests.filter((request) => request.path === "/never")).toEqual([]);
});
