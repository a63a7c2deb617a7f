import { apiKey, sleep } from "./harness.js";
import { call, percentile, readsOfB } from "./tenant-storm.js";

// What the template scenarios share: two tenants made through the API, and tenant B's reads timed in
// rounds of quiet and attack, alternated so that what the machine's other load does falls on both.

/** Below this, a request's time on two shared cores measures the scheduler (as in slowloris). */
const quietFloorMs = 10;

export interface Tenant {
  project: number;
  key: string;
}

/** A project and a key limited to it. */
export async function tenant(base: string, slug: string): Promise<Tenant> {
  const project = await call(base, apiKey, "POST", "/projects", { name: slug, slug });
  const { key } = await call(base, apiKey, "POST", "/api-keys", { name: slug, project_ids: [project.id] });
  return { project: project.id, key };
}

export interface Rounds<T> {
  quietP99: number;
  attackP99: number;
  /** attackP99 / max(quietP99, 10 ms). */
  ratio: number;
  failed: number;
  attacks: T[];
  summary: string;
}

/**
 * `rounds` times: B reads for `quietMs`, then `attack()` starts and B reads until it ends (from 1 s
 * into it, so that the attack is under way).
 */
export async function alternate<T>(
  base: string,
  b: Tenant,
  rounds: number,
  quietMs: number,
  attack: (round: number) => Promise<T>,
): Promise<Rounds<T>> {
  await readsOfB(base, b, 1_000); // warm up
  const quiet: number[] = [];
  const during: number[] = [];
  const attacks: T[] = [];
  let failed = 0;
  for (let round = 0; round < rounds; round++) {
    quiet.push(...(await readsOfB(base, b, quietMs)).latencies);
    let done = false;
    const running = attack(round).finally(() => {
      done = true;
    });
    await sleep(1_000);
    while (!done) {
      const reads = await readsOfB(base, b, 500);
      during.push(...reads.latencies);
      failed += reads.failed;
    }
    attacks.push(await running);
  }
  const quietP99 = percentile(quiet, 0.99);
  const attackP99 = percentile(during, 0.99);
  const summary =
    `B quiet p50 ${percentile(quiet, 0.5).toFixed(1)} p99 ${quietP99.toFixed(1)} ms (${quiet.length}), ` +
    `attack p50 ${percentile(during, 0.5).toFixed(1)} p99 ${attackP99.toFixed(1)} ms (${during.length})`;
  return {
    quietP99,
    attackP99,
    ratio: attackP99 / Math.max(quietP99, quietFloorMs),
    failed,
    attacks,
    summary,
  };
}
