// The physical limit: the same bodies and headers POSTed by a bare undici loop (keep-alive Agent, the
// engine's concurrency), with no database at all. Latency is request start → arrival at the receiver.
import { Agent, request } from "undici";
import { deliveryHeaders } from "../src/delivery-engine/delivery-headers.js";
import { signPayload } from "../src/delivery-engine/sender.js";
import { exampleDeploymentPayload } from "../src/deployments/example-payload.js";
import { createEnvelope } from "../src/formats/envelope.js";
import type { ProjectRow } from "../src/projects/store.js";
import { wallClockMs } from "./clock.js";
import { cpuPerDelivery, cpuSample } from "./cpu.js";
import { benchEventType, benchSecret } from "./fixtures.js";
import type { ReceiverProcess } from "./receiver-process.js";
import { latencies, type ScenarioResult, summarize } from "./stats.js";

const project: ProjectRow = {
  id: 1,
  name: "Bench",
  slug: "bench",
  repo_url: null,
  created_at: new Date(),
  updated_at: new Date(),
};

function bodies(count: number): Array<{ id: string; body: string }> {
  const payload = exampleDeploymentPayload(benchEventType, project);
  return Array.from({ length: count }, () => {
    const envelope = createEnvelope(benchEventType, project.id, payload);
    return { id: envelope.id, body: JSON.stringify(envelope) };
  });
}

async function postAll(
  agent: Agent,
  url: string,
  items: Array<{ id: string; body: string }>,
  concurrency: number,
  startedAt: Map<string, number>,
): Promise<void> {
  let next = 0;
  const loop = async () => {
    while (next < items.length) {
      const index = next++;
      const { id, body } = items[index] as { id: string; body: string };
      const timestamp = String(Math.floor(Date.now() / 1000));
      startedAt.set(id, wallClockMs());
      const response = await request(url, {
        method: "POST",
        dispatcher: agent,
        body,
        headers: {
          ...deliveryHeaders({
            eventType: benchEventType,
            deliveryId: index + 1,
            timestamp,
            signature: signPayload(benchSecret, timestamp, body),
          }),
          "User-Agent": "webhook-operator",
        },
      });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`receiver answered ${response.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
}

export async function runLimit(
  receiver: ReceiverProcess,
  options: { deliveries: number; warmup: number; concurrency: number },
): Promise<ScenarioResult> {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const url = `${receiver.url}/hooks/1`;
  try {
    await postAll(agent, url, bodies(options.warmup), options.concurrency, new Map());
    await receiver.collect();
    const items = bodies(options.deliveries);
    const startedAt = new Map<string, number>();
    const cpuBefore = cpuSample(receiver.pid);
    const started = Date.now();
    await postAll(agent, url, items, options.concurrency, startedAt);
    const elapsed = Date.now() - started;
    const cpu = cpuPerDelivery(cpuBefore, cpuSample(receiver.pid), options.deliveries);
    const sorted = latencies(await receiver.collect(), startedAt, options.deliveries);
    return summarize(
      "limit: bare undici loop",
      options.deliveries,
      elapsed,
      sorted,
      [
        `${options.deliveries} POSTs, ${options.concurrency} concurrent, keep-alive undici Agent, same bodies and headers (signed), after a warm-up of ${options.warmup}; no database`,
      ],
      cpu,
    );
  } finally {
    await agent.close();
  }
}
