import { metrics } from "../../metrics.js";

/**
 * Runs one reconcile and counts it by controller and result, with its time: `success`, `error` when it
 * throws, or what `run` reports (the Webhook controller's `config_error`).
 */
export async function measuredReconcile<T>(
  controller: "rollout" | "webhook",
  run: (report: (result: string) => void) => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let result = "success";
  try {
    return await run((reported) => {
      result = reported;
    });
  } catch (error) {
    result = "error";
    throw error;
  } finally {
    metrics.reconciles.inc({ controller, result });
    metrics.reconcileDuration.observe({ controller }, (performance.now() - started) / 1000);
  }
}
