import { afterEach, describe, expect, it, vi } from "vitest";
import { ReceiverLimits } from "../../src/delivery-engine/receiver-limits.js";
import type { DeliveryOutcome } from "../../src/delivery-engine/sender.js";

afterEach(() => {
  vi.useRealTimers();
});

const outcome = (kind: "success" | "timeout" | "connection" | "http"): DeliveryOutcome => ({
  success: kind === "success",
  statusCode: kind === "success" ? 200 : kind === "http" ? 503 : 0,
  responseBody: "",
  errorMessage: kind === "success" ? null : kind,
  failure: kind === "success" ? null : kind,
  durationMs: 1,
  requestTimestamp: null,
  signature: null,
});

function limits(slowAfterMs = 60_000, ahead = 0) {
  return new ReceiverLimits({ initial: 2, max: 16, restrictedBudget: 4, slowAfterMs, ahead });
}

/** The worker's bounds with a 10 s DELIVERY_TIMEOUT_MS: 500 ms before a first answer, at most 5 s after. */
const workerBounds = () =>
  new ReceiverLimits({
    initial: 2,
    max: 16,
    restrictedBudget: 4,
    slowAfterMs: 5_000,
    unansweredSlowAfterMs: 500,
  });

/** Claims a row and starts its send. */
function start(receivers: ReceiverLimits, webhookId: number, id = Math.random()) {
  receivers.claimed(webhookId);
  receivers.started(webhookId, id);
}

/** Claims a row, sends it and finishes it with `kind`. */
function deliver(
  receivers: ReceiverLimits,
  webhookId: number,
  kind: Parameters<typeof outcome>[0],
  id = Math.random(),
) {
  start(receivers, webhookId, id);
  receivers.finished(webhookId, id, outcome(kind));
}

describe("ReceiverLimits", () => {
  it("starts a new webhook at two, doubles it per success up to the maximum", () => {
    const receivers = limits();
    expect(receivers.plan().defaultAllowance).toBe(2);
    deliver(receivers, 1, "success");
    expect(receivers.limitOf(1)).toBe(4);
    for (let i = 0; i < 5; i++) deliver(receivers, 1, "success");
    expect(receivers.limitOf(1)).toBe(16);
  });

  it("halves the limit on a timeout or a connection failure, keeps it on an HTTP error", () => {
    const receivers = limits();
    for (let i = 0; i < 14; i++) deliver(receivers, 1, "success");
    deliver(receivers, 1, "http");
    expect(receivers.limitOf(1)).toBe(16);
    deliver(receivers, 1, "timeout");
    expect(receivers.limitOf(1)).toBe(8);
    deliver(receivers, 1, "connection");
    deliver(receivers, 1, "connection");
    deliver(receivers, 1, "connection");
    deliver(receivers, 1, "connection");
    expect(receivers.limitOf(1)).toBe(1);
  });

  it("gives failing webhooks one shared budget, and a success takes a webhook out of it", () => {
    const receivers = limits();
    deliver(receivers, 1, "timeout");
    deliver(receivers, 2, "connection");
    for (const id of [11, 12, 13]) start(receivers, 1, id);
    expect(receivers.plan()).toMatchObject({ restrictedBudget: 1 });
    expect(receivers.plan().allowances.get(1)).toEqual({ allowance: 0, restricted: true });
    receivers.finished(1, 11, outcome("success"));
    // Its two sends still open leave the budget with it.
    expect(receivers.plan()).toMatchObject({ restrictedBudget: 4 });
    expect(receivers.plan().allowances.get(1)).toEqual({ allowance: 0, restricted: false });
  });

  it("restricts a webhook whose send stays open past slowAfterMs, before any timeout", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const receivers = limits(20);
    start(receivers, 7, 1);
    expect(receivers.plan().allowances.get(7)?.restricted).toBe(false);
    vi.advanceTimersByTime(30);
    expect(receivers.plan().allowances.get(7)?.restricted).toBe(true);
    expect(receivers.plan().restrictedBudget).toBe(3);
    expect(receivers.mayHoldBack()).toBe(false);
  });

  it("lets a webhook whose receiver answers hold rows ahead of its limit, never sending past it", () => {
    const receivers = limits(60_000, 8);
    // Not seen yet, or never answered: its limit, nothing ahead.
    start(receivers, 1, 1);
    expect(receivers.plan().allowances.get(1)).toEqual({ allowance: 1, restricted: false });
    receivers.finished(1, 1, outcome("success"));
    // Limit 4 after a success: up to 4 more claimed rows, waiting.
    for (let i = 0; i < 8; i++) receivers.claimed(1);
    expect(receivers.plan().allowances.get(1)).toEqual({ allowance: 0, restricted: false });
    expect(receivers.mayHoldBack()).toBe(true);
    for (let id = 10; id < 14; id++) {
      expect(receivers.canStart(1)).toBe(true);
      receivers.started(1, id);
    }
    expect(receivers.canStart(1)).toBe(false);
    receivers.finished(1, 10, outcome("success"));
    // Limit 8: a fifth send may start, and the one finished leaves room for one more row.
    expect(receivers.canStart(1)).toBe(true);
    expect(receivers.plan().allowances.get(1)?.allowance).toBe(16 - 7);
    // A timeout restricts it: nothing ahead, and what it holds counts against the shared budget.
    receivers.finished(1, 11, outcome("timeout"));
    expect(receivers.plan().allowances.get(1)).toEqual({ allowance: 0, restricted: true });
    expect(receivers.plan().restrictedBudget).toBe(0);
    receivers.released(1);
    receivers.released(1);
    receivers.released(1);
    receivers.released(1);
    expect(receivers.plan().restrictedBudget).toBe(2);
  });

  it("restricts a webhook whose receiver never answered sooner than one that did", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const receivers = new ReceiverLimits({
      initial: 2,
      max: 16,
      restrictedBudget: 4,
      slowAfterMs: 60_000,
      unansweredSlowAfterMs: 20,
    });
    // Answered, with an error status, in 10 ms: it counts as answered, and has 4 × 10 ms.
    start(receivers, 1, 9);
    receivers.finished(1, 9, { ...outcome("http"), durationMs: 10 });
    start(receivers, 1, 10);
    start(receivers, 2, 20); // never answered: new, or any webhook after a restart
    vi.advanceTimersByTime(30);
    expect(receivers.restrictSlowReceivers()).toBe(true);
    expect(receivers.plan().allowances.get(2)?.restricted).toBe(true);
    expect(receivers.plan().allowances.get(1)?.restricted).toBe(false);
    expect(receivers.restrictSlowReceivers()).toBe(false);
  });

  it("gives a receiver four times its slowest recent answer, within the unanswered bound and slowAfterMs", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const receivers = workerBounds();
    const answer = (webhook: number, durationMs: number) => {
      start(receivers, webhook, -webhook);
      receivers.finished(webhook, -webhook, { ...outcome("success"), durationMs });
    };
    // 1 answers in 2 ms, then hangs: caught after 500 ms, as if it had never answered.
    // 2 answers in 300 ms: 1.2 s. 3 answers in 4 s: no more than slowAfterMs, 5 s.
    answer(1, 2);
    answer(2, 300);
    answer(3, 4_000);
    for (const webhook of [1, 2, 3]) start(receivers, webhook, webhook);
    const restricted = () =>
      [1, 2, 3].filter((webhook) => receivers.plan().allowances.get(webhook)?.restricted);
    vi.advanceTimersByTime(501);
    expect(restricted()).toEqual([1]);
    vi.advanceTimersByTime(1_201 - 501);
    expect(restricted()).toEqual([1, 2]);
    vi.advanceTimersByTime(4_999 - 1_201);
    expect(restricted()).toEqual([1, 2]);
    vi.advanceTimersByTime(2);
    expect(restricted()).toEqual([1, 2, 3]);
  });

  it("forgets a slow answer a little with each answer after it", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const receivers = workerBounds();
    // One answer of 1 s, then 30 of 5 ms: 1 s × 0.9^30 ≈ 42 ms, so the bound is back at 500 ms.
    for (let i = 0; i <= 30; i++) {
      start(receivers, 1, i);
      receivers.finished(1, i, { ...outcome("success"), durationMs: i === 0 ? 1_000 : 5 });
    }
    start(receivers, 1, 99);
    vi.advanceTimersByTime(501);
    expect(receivers.restrictSlowReceivers()).toBe(true);
  });

  it("stops counting a slow receiver's sends beyond the budget against the worker's slots", () => {
    const receivers = limits(60_000);
    // Ten webhooks each with a send open, then all found slow (a timeout of another send of each).
    for (let webhook = 1; webhook <= 10; webhook++) {
      start(receivers, webhook, webhook);
      expect(receivers.overflowSends()).toBe(0);
    }
    for (let webhook = 1; webhook <= 10; webhook++) deliver(receivers, webhook, "timeout");
    // Ten open sends of restricted webhooks against a budget of four: six hold no slot.
    expect(receivers.overflowSends()).toBe(6);
    expect(receivers.plan().restrictedBudget).toBe(0);
    for (let webhook = 1; webhook <= 7; webhook++) receivers.finished(webhook, webhook, outcome("timeout"));
    expect(receivers.overflowSends()).toBe(0);
    expect(receivers.plan().restrictedBudget).toBe(1);
  });

  it("keeps a hanging send written off when its webhook answers another: the slots stay with the others", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const receivers = limits(1_000);
    // Six sends of one webhook hang; found slow, the two beyond the budget of four are written off.
    for (let id = 1; id <= 6; id++) {
      start(receivers, 1, id);
      vi.advanceTimersByTime(10);
    }
    vi.advanceTimersByTime(2_000);
    expect(receivers.restrictSlowReceivers()).toBe(true);
    expect(receivers.overflowSends()).toBe(2);
    // Its receiver answers the newest one: no longer restricted (until the next look finds the others
    // still open), but the two oldest still hang and still hold no slot.
    receivers.finished(1, 6, outcome("success"));
    expect(receivers.overflowSends()).toBe(2);
    expect(receivers.restrictSlowReceivers()).toBe(true);
    expect(receivers.overflowSends()).toBe(2);
    // A written-off send that ends gives nothing back twice; one that counted is simply done.
    receivers.finished(1, 1, outcome("timeout"));
    expect(receivers.overflowSends()).toBe(1);
    receivers.finished(1, 5, outcome("timeout"));
    expect(receivers.overflowSends()).toBe(1);
    receivers.finished(1, 2, outcome("timeout"));
    expect(receivers.overflowSends()).toBe(0);
  });
});
