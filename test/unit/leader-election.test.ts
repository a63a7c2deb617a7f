import type { CoordinationV1Api, V1Lease } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { LeaderElector } from "../../src/operator/leader-election.js";

// The LeaderElector's own logic with a hand-held lease API: each call waits until the test answers it,
// so the interleavings that matter (a renewal still in flight when stop() is called) are exact.

interface PendingCall {
  method: string;
  lease?: V1Lease;
  answer(value: unknown): void;
  fail(error: unknown): void;
}

function heldLeaseApi() {
  const calls: PendingCall[] = [];
  const call = (method: string) => (request: { body?: V1Lease }) =>
    new Promise((resolve, reject) =>
      calls.push({ method, lease: request.body, answer: resolve, fail: reject }),
    );
  const api = {
    readNamespacedLease: call("read"),
    createNamespacedLease: call("create"),
    replaceNamespacedLease: call("replace"),
  } as unknown as CoordinationV1Api;
  const next = async (method: string): Promise<PendingCall> => {
    for (let i = 0; i < 100; i++) {
      const index = calls.findIndex((c) => c.method === method);
      if (index >= 0) return calls.splice(index, 1)[0] as PendingCall;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`no ${method} call`);
  };
  return { api, next };
}

const notFound = Object.assign(new Error("not found"), { code: 404 });

function elector(api: CoordinationV1Api, timing: { leaseDurationMs: number; retryPeriodMs: number }) {
  const events: string[] = [];
  const leaderElector = new LeaderElector({
    api,
    namespace: "default",
    name: "lease",
    identity: "me",
    ...timing,
    logger: createLogger("silent"),
    onStartedLeading: () => events.push("started"),
    onStoppedLeading: () => events.push("stopped"),
  });
  return { elector: leaderElector, events };
}

describe("LeaderElector", () => {
  it("does not lead again when a renewal in flight completes after stop(), and releases the lease", async () => {
    const { api, next } = heldLeaseApi();
    const { elector: leader, events } = elector(api, { leaseDurationMs: 1_000, retryPeriodMs: 60_000 });
    leader.start();
    (await next("read")).fail(notFound);
    const create = await next("create");

    // stop() is called while the create (this instance's first acquisition) is still in flight.
    const stopping = leader.stop();
    create.answer(create.lease);
    const release = await next("read");
    release.answer({ metadata: { name: "lease", resourceVersion: "2" }, spec: { holderIdentity: "me" } });
    const written = await next("replace");
    written.answer(written.lease);
    await stopping;

    expect(leader.isLeader).toBe(false);
    expect(written.lease?.spec?.holderIdentity).toBeUndefined();
    // It never ran the controllers after stop() began.
    expect(events).toEqual([]);
  });

  it("gives up leading when renewals keep failing, before the lease could expire for others", async () => {
    const { api, next } = heldLeaseApi();
    const { elector: leader, events } = elector(api, { leaseDurationMs: 300, retryPeriodMs: 50 });
    leader.start();
    (await next("read")).fail(notFound);
    const create = await next("create");
    create.answer(create.lease);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toEqual(["started"]);
    const acquiredAt = Date.now();
    while (!events.includes("stopped")) (await next("read")).fail(new Error("API server unreachable"));
    const gaveUpAfter = Date.now() - acquiredAt;
    expect(gaveUpAfter).toBeGreaterThanOrEqual(150);
    expect(gaveUpAfter).toBeLessThan(300);
    await leader.stop();
  });
});
