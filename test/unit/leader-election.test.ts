import { type CoordinationV1Api, type V1Lease, V1MicroTime } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { LeaderElector } from "../../src/operator/leader-election.js";
import { waitUntil } from "../support/wait.js";

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
  /** Takes the elector's next call of `method`, once it makes one. */
  const next = (method: string): Promise<PendingCall> =>
    waitUntil(
      `a ${method} call`,
      async (saw) => {
        saw(calls.map((c) => c.method));
        const index = calls.findIndex((c) => c.method === method);
        return index >= 0 ? (calls.splice(index, 1)[0] as PendingCall) : undefined;
      },
      { intervalMs: 5 },
    );
  /** The method of the elector's next call, once it makes one (left for `next` to take). */
  const upcoming = () =>
    waitUntil("the elector's next call", async () => calls[0]?.method, { intervalMs: 5 });
  return { api, next, upcoming };
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
    await waitUntil("it starts leading", async () => (events.length > 0 ? true : undefined));
    expect(events).toEqual(["started"]);
    const acquiredAt = Date.now();
    while (!events.includes("stopped")) (await next("read")).fail(new Error("API server unreachable"));
    // Not before the renew deadline (two thirds of 300 ms): a lower bound, which load cannot break.
    expect(Date.now() - acquiredAt).toBeGreaterThanOrEqual(150);
    await leader.stop();
  });

  it("steps down when a renewal hangs instead of waiting on it forever", async () => {
    const { api, next } = heldLeaseApi();
    const { elector: leader, events } = elector(api, { leaseDurationMs: 300, retryPeriodMs: 50 });
    leader.start();
    (await next("read")).fail(notFound);
    const create = await next("create");
    create.answer(create.lease);
    await next("read"); // the renewal's read, never answered
    await waitUntil(
      'events.includes("stopped")',
      async () => (events.includes("stopped") ? true : undefined),
      { timeoutMs: 5_000 },
    );
    expect(leader.isLeader).toBe(false);
    await leader.stop();
  });

  it("judges another holder's lease by when it saw it change, not by the holder's clock", async () => {
    const { api, next, upcoming } = heldLeaseApi();
    const { elector: candidate, events } = elector(api, { leaseDurationMs: 300, retryPeriodMs: 20 });
    // The holder's clock is an hour behind: by renewTime its lease expired long ago, yet it renews.
    const lease = (version: number): V1Lease => ({
      metadata: { name: "lease", resourceVersion: String(version) },
      spec: {
        holderIdentity: "other",
        leaseDurationSeconds: 1,
        renewTime: new V1MicroTime(Date.now() - 3_600_000),
      },
    });
    candidate.start();
    // Taken before the candidate is shown the last change, so the candidate saw it at this time or later.
    let lastChange = 0;
    for (let version = 1; version <= 20; version++) {
      const read = await next("read");
      lastChange = Date.now();
      read.answer(lease(version));
      // It reads again a retry period later: it does not try to take a lease it just saw change.
      expect(await upcoming()).toBe("read");
    }
    expect(events).toEqual([]);
    // The holder stops renewing: after a lease duration (1 s, its leaseDurationSeconds) it is taken over.
    let replace: Awaited<ReturnType<typeof next>> | undefined;
    while (!replace) {
      (await next("read")).answer(lease(20));
      if ((await upcoming()) === "replace") replace = await next("replace");
    }
    expect(Date.now() - lastChange).toBeGreaterThanOrEqual(1_000);
    expect(replace.lease?.spec?.holderIdentity).toBe("me");
    replace.answer(replace.lease);
    await waitUntil(
      'events.includes("started")',
      async () => (events.includes("started") ? true : undefined),
      { timeoutMs: 5_000 },
    );
    await candidate.stop().catch(() => {});
  });
});
