import { spawn } from "node:child_process";
import { once } from "node:events";
import type { Figure } from "./scenarios.js";

// Tenant A's burst: 3,000 test events at once from a process of its own (the burst: 8 admitted,
// 2,992 answered 429 took B's read p99 from 7–12 ms quiet to 314–344 ms, and to 3,277 ms before the
// bounds). A refusal must cost less than the work it refuses, so B's reads must not notice.

export const burstSize = 3_000;
/**
 * B's quiet p99 is counted as at least this: below it a request's time on two shared cores is mostly
 * scheduling, and a ratio of two such figures measures the scheduler (as in slowloris.ts).
 */
export const quietFloorMs = 10;

/**
 * Sends `count` test events at once, Retry-After unheeded. `refused` settles, with the time it took, once
 * all but `share` are answered (the refusals: B's reads are measured while they are being answered, not while the few
 * admitted sends wait for their silent receiver); `statuses` once every one is answered.
 */
export function burstOfA(url: string, key: string, share: number, count = burstSize) {
  const script = `
    const statuses = {};
    let answered = 0;
    const started = performance.now();
    const count = (status) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (++answered === ${count - share}) console.log("refusals answered in " + Math.round(performance.now() - started) + " ms");
    };
    const send = () => fetch(${JSON.stringify(url)}, { method: "POST", headers: { authorization: "Bearer ${key}" } })
      .then(async (res) => { await res.arrayBuffer(); count(String(res.status)); }, () => count("error"));
    Promise.all(Array.from({ length: ${count} }, send)).then(() => console.log(JSON.stringify(statuses)));
  `;
  // At a lower priority: A's client stands for another machine, its own CPU is not the service's load.
  const child = spawn("nice", ["-n", "10", process.execPath, "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let markRefused: (ms: number) => void = () => {};
  const refused = new Promise<number>((resolve) => {
    markRefused = resolve;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    const ms = /refusals answered in (\d+) ms/.exec(out)?.[1];
    if (ms !== undefined) markRefused(Number(ms));
  });
  const statuses = once(child, "exit").then(() => {
    markRefused(Number.NaN);
    return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Record<string, number>;
  });
  return { refused, statuses };
}

/** The burst's figures: B's p99 during A's bursts against its quiet p99 (with the floor), and A's answers. */
export function burstFigures(
  quietP99: number,
  burstP99: number,
  reads: number,
  failed: number,
  statuses: Record<string, number>,
): Figure[] {
  const scenario = `tenant A sends ${burstSize.toLocaleString("en")} test events at once (a receiver that never answers)`;
  const ratio = burstP99 / Math.max(quietP99, quietFloorMs);
  const serverErrors = Object.entries(statuses)
    .filter(([status]) => !/^[24]\d\d$/.test(status))
    .reduce((sum, [, n]) => sum + n, 0);
  return [
    {
      scenario,
      figure: `B's read p99 during A's bursts (${reads} reads) ÷ quiet (${quietP99.toFixed(1)} ms, at least ${quietFloorMs})`,
      value: `${burstP99.toFixed(1)} ms, ${ratio.toFixed(2)}×`,
      bound: "≤ 3×",
      ok: ratio <= 3,
    },
    {
      scenario,
      figure: "B's reads that failed during A's bursts",
      value: String(failed),
      bound: "≤ 0",
      ok: failed === 0,
    },
    {
      scenario,
      figure: `A's requests answered 5xx or not at all (${JSON.stringify(statuses)})`,
      value: String(serverErrors),
      bound: "≤ 0",
      ok: serverErrors === 0,
    },
  ];
}
