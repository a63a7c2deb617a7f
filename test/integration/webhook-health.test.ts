import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.js";
import {
  connectionFailedMessage,
  httpErrorMessage,
  timeoutMessage,
} from "../../src/delivery-engine/sender.js";
import { createLogger } from "../../src/logger.js";
import { findCondition } from "../../src/operator/api/conditions.js";
import type { WebhookResource, WebhookStatus } from "../../src/operator/api/webhook-v1alpha1.js";
import { attemptsRead, withDeliveryHealth } from "../../src/operator/controllers/webhook-health.js";
import { publishStatus } from "../../src/operator/controllers/webhook-status.js";
import type { KubeGateway } from "../../src/operator/kube-gateway.js";
import { onNewDatabase, resetToOneWebhook } from "../support/new-database.js";

// A Webhook's delivery health (webhook-health.ts, health-store.ts, webhook-status.ts) against a model,
// with random sequences of attempts (successes, HTTP errors, timeouts, connection failures) recorded in
// a real Postgres, time passing, and status refreshes as the controller does them. The status is kept
// as the API server keeps it: each write is applied as a JSON merge patch. After every refresh the
// `Healthy` condition and the counts are what the model says; its lastTransitionTime moves only when its
// status does; an Event is recorded exactly when its status or reason changed (never for Unknown); and a
// second refresh with nothing new writes nothing. No status ever holds the receiver's URL.

const secretUrl = "https://hooks.example/services/T0KEN-s3cr3t?key=k3y-s3cr3t";
const hourMs = 60 * 60 * 1000;
const failures = {
  "500": { statusCode: 500, message: httpErrorMessage(secretUrl, 500) },
  timeout: { statusCode: 0, message: timeoutMessage(secretUrl, 30_000) },
  connection: { statusCode: 0, message: connectionFailedMessage(secretUrl) },
} as const;

type Command =
  | { kind: "attempt"; outcome: "200" | keyof typeof failures }
  | { kind: "advance"; minutes: number }
  | { kind: "refresh" };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant("attempt" as const),
    outcome: fc.constantFrom("200" as const, "500" as const, "timeout" as const, "connection" as const),
  }),
  fc.record({ kind: fc.constant("advance" as const), minutes: fc.integer({ min: 1, max: 90 }) }),
  fc.constant({ kind: "refresh" as const }),
);

/** RFC 7386, as the API server applies a status written with Content-Type merge-patch+json. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (value !== undefined) result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * The Kubernetes side as the API server keeps it: the resource (a new object after each write, as an
 * informer sees it) and its Events.
 */
function cluster() {
  let resource: WebhookResource = {
    apiVersion: "webhook-operator.io/v1alpha1",
    kind: "Webhook",
    metadata: { namespace: "shop", name: "deploys", generation: 1 },
    spec: { url: secretUrl, events: ["deployment.created"], enabled: true },
    status: { observedGeneration: 1, webhookId },
  };
  const events: Array<{ type: string; reason: string }> = [];
  let writes = 0;
  const kube = {
    async patchWebhookStatus(_target: WebhookResource, status: WebhookStatus) {
      writes++;
      // Through JSON, as on the wire: undefined fields are not sent.
      const patch = JSON.parse(JSON.stringify(status));
      resource = { ...resource, status: mergePatch(resource.status, patch) as WebhookStatus };
    },
    async recordEvent(_target: WebhookResource, type: string, reason: string) {
      events.push({ type, reason });
    },
  } as unknown as KubeGateway;
  return { kube, events, writes: () => writes, resource: () => resource };
}

let pool: Pool;
let webhookId: number;
onNewDatabase((created) => (pool = created));
beforeAll(async () => {
  ({ webhookId } = await resetToOneWebhook(pool));
});

async function recordAttempt(
  outcome: Command & { kind: "attempt" },
  at: Date,
  eventType = "deployment.created",
) {
  const failure = outcome.outcome === "200" ? null : failures[outcome.outcome];
  await pool.query(
    `INSERT INTO deliveries (webhook_id, event_id, event_type, state, success, status_code, response_body,
                             error_message, created_at, delivered_at)
     VALUES ($1, gen_random_uuid(), $2, 'done', $3, $4, '', $5, $6, $6)`,
    [webhookId, eventType, failure === null, failure?.statusCode ?? 200, failure?.message ?? null, at],
  );
}

const deps = (kube: KubeGateway) => ({
  kube,
  namespaces: { isTerminating: () => false } as never,
  logger: createLogger("silent"),
});

/** One status refresh of the Webhook controller's reconcile, for its delivery health. */
async function refresh(record: ReturnType<typeof cluster>, now: Date) {
  const resource = record.resource();
  const status = await withDeliveryHealth(pool, webhookId, resource, { ...resource.status }, now);
  await publishStatus(deps(record.kube), resource, status);
}

describe("a Webhook's delivery health", () => {
  it("keeps its last failure when more successes followed than a refresh reads, and drops it for a new webhook", async () => {
    await pool.query("DELETE FROM deliveries");
    const record = cluster();
    const start = Date.parse("2026-06-01T00:00:00.000Z");
    await recordAttempt({ kind: "attempt", outcome: "500" }, new Date(start), "deployment.failed");
    await refresh(record, new Date(start + 1000));
    const failure = record.resource().status?.lastFailure;
    expect(failure).toMatchObject({ eventType: "deployment.failed", statusCode: 500, success: false });
    expect(failure?.reason).toBe("HTTP 500 Internal Server Error");
    for (let second = 1; second <= attemptsRead; second++) {
      await recordAttempt({ kind: "attempt", outcome: "200" }, new Date(start + second * 1000));
    }
    await refresh(record, new Date(start + (attemptsRead + 1) * 1000));
    const status = record.resource().status;
    expect(status?.lastFailure).toEqual(failure);
    expect(status?.lastSuccess).toMatchObject({ statusCode: 200, reason: "HTTP 200 OK" });
    expect(status?.deliveriesLastHour).toEqual({ succeeded: attemptsRead, failed: 1 });
    expect(findCondition(status?.conditions, "Healthy")).toMatchObject({
      status: "True",
      reason: "Delivering",
    });

    // The resource now names another service webhook (its row was recreated): nothing of the old one stays.
    await pool.query("DELETE FROM deliveries");
    const moved = record.resource();
    moved.status = { ...moved.status, webhookId: webhookId + 1 };
    await refresh(record, new Date(start + hourMs));
    expect(record.resource().status).not.toHaveProperty("lastFailure");
    expect(record.resource().status).not.toHaveProperty("lastSuccess");
    expect(record.resource().status).not.toHaveProperty("recentDeliveries");
    expect(findCondition(record.resource().status?.conditions, "Healthy")).toMatchObject({
      status: "Unknown",
    });
  });

  it("follows the model under random attempts, time and refreshes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 30 }), async (commands) => {
        await pool.query("DELETE FROM deliveries");
        const record = cluster();
        let now = Date.parse("2026-06-01T00:00:00.000Z");
        const attempts: Array<{ at: number; success: boolean }> = [];
        let shown: { status: string; reason: string } | undefined;
        for (const step of [...commands, { kind: "refresh" } as const]) {
          if (step.kind === "attempt") {
            now += 1000;
            await recordAttempt(step, new Date(now));
            attempts.push({ at: now, success: step.outcome === "200" });
            continue;
          }
          if (step.kind === "advance") {
            now += step.minutes * 60_000;
            continue;
          }
          const before = findCondition(record.resource().status?.conditions, "Healthy");
          const eventsBefore = record.events.length;
          await refresh(record, new Date(now));
          const status = record.resource().status;

          // The model: the latest attempt decides; the last hour's successes tell Degraded from Failing.
          const inWindow = attempts.filter((attempt) => attempt.at >= now - hourMs);
          const succeeded = inWindow.filter((attempt) => attempt.success).length;
          const latest = attempts.at(-1);
          const expected = !latest
            ? { status: "Unknown", reason: "NoDeliveries" }
            : latest.success
              ? { status: "True", reason: "Delivering" }
              : { status: "False", reason: succeeded > 0 ? "Degraded" : "Failing" };
          const after = findCondition(status?.conditions, "Healthy");
          expect(after).toMatchObject(expected);
          expect(status?.deliveriesLastHour).toEqual({
            succeeded,
            failed: inWindow.length - succeeded,
          });
          expect(status?.recentDeliveries?.length ?? 0).toBe(Math.min(attempts.length, 5));
          if (before && before.status === after?.status) {
            expect(after?.lastTransitionTime).toBe(before.lastTransitionTime);
          } else {
            expect(after?.lastTransitionTime).toBe(new Date(now).toISOString());
          }
          const changed = shown?.status !== expected.status || shown?.reason !== expected.reason;
          const newEvents = record.events.slice(eventsBefore);
          expect(newEvents).toEqual(
            changed && expected.status !== "Unknown"
              ? [{ type: expected.status === "True" ? "Normal" : "Warning", reason: expected.reason }]
              : [],
          );
          shown = expected;

          // Nothing new: nothing written, nothing recorded.
          const writes = record.writes();
          await refresh(record, new Date(now));
          expect(record.writes()).toBe(writes);
          expect(record.events.length).toBe(eventsBefore + newEvents.length);
        }
        expect(JSON.stringify(record.resource().status)).not.toMatch(/s3cr3t|hooks\.example/);
      }),
      { numRuns: Number(process.env.HEALTH_MODEL_RUNS ?? 40) },
    );
  });
});
