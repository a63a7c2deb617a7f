import type { ReceivedRequest } from "../test/support/receiver.js";

// What the rollout storm checks at the receivers (rollout-storm.ts), from the requests as they arrived.

const positions = ["deployment.created", "deployment.ready", "deployment.succeeded"];

/**
 * Requests that reached the receiver before an earlier event of their rollout had reached it once:
 * each rollout's events must arrive created, then ready, then succeeded (re-sends of an earlier event
 * after a later one are allowed: a lease taken over sends again what a killed replica may have sent).
 */
export function checkOrder(requests: ReceivedRequest[]): number {
  const seen = new Map<number, Set<number>>();
  let violations = 0;
  for (const request of [...requests].sort((a, b) => a.receivedAt - b.receivedAt)) {
    const envelope = JSON.parse(request.body) as { event_type: string; payload: { deployment_id: number } };
    const position = positions.indexOf(envelope.event_type);
    const rollout = envelope.payload.deployment_id;
    const earlier = seen.get(rollout) ?? new Set<number>();
    for (let p = 0; p < position; p++) if (!earlier.has(p)) violations += 1;
    earlier.add(position);
    seen.set(rollout, earlier);
  }
  return violations;
}

/**
 * The most requests any window of arrivals held beyond what the rate limit allows in it (the burst plus
 * the rate times the window's length); 0 when no window went beyond.
 */
export function checkRate(requests: ReceivedRequest[], limit: { per_second: number; burst: number }): number {
  const times = requests.map((r) => r.receivedAt).sort((a, b) => a - b);
  let worst = 0;
  for (let i = 0; i < times.length; i++) {
    for (let j = i + 1; j < times.length; j++) {
      const allowed = limit.burst + (limit.per_second * ((times[j] as number) - (times[i] as number))) / 1000;
      worst = Math.max(worst, j - i + 1 - allowed);
    }
  }
  return worst;
}

/** Requests that arrived while their webhook was paused (more than `graceMs` after the 429 was answered). */
export function pauseViolations(
  requests: ReceivedRequest[],
  pauses: { path: string; answeredAt: number; untilMs: number }[],
  graceMs = 100,
): number {
  return requests.filter((r) =>
    pauses.some(
      (p) => p.path === r.path && r.receivedAt > p.answeredAt + graceMs && r.receivedAt < p.untilMs,
    ),
  ).length;
}

export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * q)] ?? Number.POSITIVE_INFINITY;
}
