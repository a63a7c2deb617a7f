import { describe, expect, it } from "vitest";
import { metrics } from "../../src/metrics.js";
import { measuredReconcile } from "../../src/operator/controllers/reconcile-metrics.js";

async function count(controller: string, result: string): Promise<number> {
  const { values } = await metrics.reconciles.get();
  return values.find((v) => v.labels.controller === controller && v.labels.result === result)?.value ?? 0;
}

describe("measuredReconcile", () => {
  it("counts a reconcile by its result: success, what it reports, or error when it throws", async () => {
    const before = {
      success: await count("webhook", "success"),
      config: await count("webhook", "config_error"),
      error: await count("webhook", "error"),
    };
    await expect(measuredReconcile("webhook", async () => 7)).resolves.toBe(7);
    await measuredReconcile("webhook", async (report) => report("config_error"));
    await expect(
      measuredReconcile("webhook", async () => {
        throw new Error("apiserver said no");
      }),
    ).rejects.toThrow("apiserver said no");
    expect(await count("webhook", "success")).toBe(before.success + 1);
    expect(await count("webhook", "config_error")).toBe(before.config + 1);
    expect(await count("webhook", "error")).toBe(before.error + 1);
    const { values } = await metrics.reconcileDuration.get();
    expect(
      values.find((v) => v.metricName?.endsWith("_count") && v.labels.controller === "webhook")?.value,
    ).toBeGreaterThanOrEqual(3);
  });
});
