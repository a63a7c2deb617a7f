import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

// The rollout storm's receivers (storm-receiver.ts, a process of their own) and what the storm checks
// at them (rollout-storm.ts), from the requests as they arrived.

export interface Arrival {
  path: string;
  at: number;
  status: number;
  id: string;
  type: string;
  rollout: number;
}

export interface StormReceiver {
  url: string;
  arrivals(): Promise<Arrival[]>;
  close(): Promise<void>;
}

export async function startStormReceiver(throttleEvery: number): Promise<StormReceiver> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "reliability/storm-receiver.ts"], {
    env: { PATH: process.env.PATH, THROTTLE_EVERY: String(throttleEvery) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  const url = `http://127.0.0.1:${line.toString().trim()}`;
  return {
    url,
    arrivals: async () => (await (await fetch(`${url}/__log`)).json()) as Arrival[],
    async close() {
      child.kill("SIGTERM");
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}

const positions = ["deployment.created", "deployment.ready", "deployment.succeeded"];

/**
 * Requests that reached the receiver before an earlier event of their rollout had reached it once:
 * each rollout's events must arrive created, then ready, then succeeded (re-sends of an earlier event
 * after a later one are allowed: a lease taken over sends again what a killed replica may have sent).
 */
export function checkOrder(arrivals: Arrival[]): number {
  const seen = new Map<number, Set<number>>();
  let violations = 0;
  for (const arrival of arrivals) {
    const position = positions.indexOf(arrival.type);
    const earlier = seen.get(arrival.rollout) ?? new Set<number>();
    for (let p = 0; p < position; p++) if (!earlier.has(p)) violations += 1;
    earlier.add(position);
    seen.set(arrival.rollout, earlier);
  }
  return violations;
}

/**
 * The most requests any window of arrivals held beyond what the rate limit allows in it: the burst plus
 * the rate times the window's length and `jitterMs`. The limit holds where the rows are claimed; a send
 * reaches the receiver a little later, by however long two busy cores (Postgres, two replicas, the
 * storm's recorder) take to run it: 0 when no window went beyond.
 */
export function checkRate(
  arrivals: Arrival[],
  limit: { per_second: number; burst: number },
  jitterMs = 100,
): number {
  const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
  let worst = 0;
  for (let i = 0; i < times.length; i++) {
    for (let j = i + 1; j < times.length; j++) {
      const window = (times[j] as number) - (times[i] as number) + jitterMs;
      const allowed = limit.burst + (limit.per_second * window) / 1000;
      worst = Math.max(worst, j - i + 1 - allowed);
    }
  }
  return worst;
}

/**
 * Requests that arrived while their webhook was paused: more than `graceMs` after a 429 was answered
 * (sends already under way then may still arrive) and before the second it asked for ran out.
 */
export function pauseViolations(arrivals: Arrival[], graceMs: number): number {
  const pauses = arrivals.filter((a) => a.status === 429);
  return arrivals.filter((a) =>
    pauses.some((p) => p.path === a.path && a.at > p.at + graceMs && a.at < p.at + 1_000),
  ).length;
}

export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * q)] ?? Number.POSITIVE_INFINITY;
}
