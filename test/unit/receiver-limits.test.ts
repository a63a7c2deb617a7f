import { describe, expect, it } from "vitest";
import { ReceiverLimits } from "../../src/delivery-engine/receiver-limits.js";
import type { DeliveryOutcome } from "../../src/delivery-engine/sender.js";

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

function limits(slowAfterMs = 60_000) {
  return new ReceiverLimits({ initial: 2, max: 16, restrictedBudget: 4, slowAfterMs });
}

/** Starts a send and finishes it with `kind`. */
function deliver(
  receivers: ReceiverLimits,
  webhookId: number,
  kind: Parameters<typeof outcome>[0],
  id = Math.random(),
) {
  receivers.started(webhookId, id);
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
    for (const id of [11, 12, 13]) receivers.started(1, id);
    expect(receivers.plan()).toMatchObject({ restrictedBudget: 1 });
    expect(receivers.plan().allowances.get(1)).toEqual({ allowance: 0, restricted: true });
    receivers.finished(1, 11, outcome("success"));
    // Its two sends still open leave the budget with it.
    expect(receivers.plan()).toMatchObject({ restrictedBudget: 4 });
    expect(receivers.plan().allowances.get(1)).toEqual({ allowance: 0, restricted: false });
  });

  it("restricts a webhook whose send stays open past slowAfterMs, before any timeout", async () => {
    const receivers = limits(20);
    receivers.started(7, 1);
    expect(receivers.plan().allowances.get(7)?.restricted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(receivers.plan().allowances.get(7)?.restricted).toBe(true);
    expect(receivers.plan().restrictedBudget).toBe(3);
    expect(receivers.mayHoldBack()).toBe(false);
  });
});
