import type { Condition } from "./webhook-v1alpha1.js";

/**
 * Sets a condition like apimachinery's meta.SetStatusCondition: lastTransitionTime changes only when
 * the status does; reason, message and observedGeneration always follow the latest reconcile.
 */
export function setCondition(
  conditions: Condition[] | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: Date = new Date(),
): Condition[] {
  const existing = conditions?.find((condition) => condition.type === next.type);
  const lastTransitionTime =
    existing && existing.status === next.status ? existing.lastTransitionTime : now.toISOString();
  const updated = { ...next, lastTransitionTime };
  // In its place, as apimachinery does: a list that keeps its order is a status that compares equal.
  if (!existing) return [...(conditions ?? []), updated];
  return (conditions ?? []).map((condition) => (condition === existing ? updated : condition));
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}
