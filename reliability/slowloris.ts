import { fork } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { get } from "node:http";
import { setPriority } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { apiKey, createWebhooks, sleep, startDatabase, startService } from "./harness.js";
import type { Figure } from "./scenarios.js";
import { type Kind, openAnonymous } from "./slowloris-connection.js";

// Tenant B lists its webhooks, one request after another, each on a connection of its own, with a key
// limited to its project: four rounds of 8 s quiet, then 12 s while a peer without any key holds 7,000
// connections that trickle a request head (more than HTTP_MAX_CONNECTIONS, 4,096, and than the
// service's 6,000 file handles) and 200 that trickle a body after the 401.

const idleConnections = 7_000;
const tricklingPosts = 200;
const rounds = 4;
const quietMs = 8_000;
// This machine's limit (20,000) is beyond one attacker process; the service's is lowered below the
// attack so that it is reached, as in the issue (7,000 connections held the process at its limit).
const openFiles = 6_000;
const attackMs = 12_000;
// B's quiet p99 counts as at least this in the ratio (below).
const quietFloorMs = 20;

interface Attack {
  opened: number;
  peakOpen: number;
}

/**
 * How long the service holds connections like the attacker's, measured here, where nothing starves
 * the measurement: 10 of each kind opened 2 s into an attack, each waited for at most 60 s.
 */
async function probeHolds(port: number): Promise<Record<Kind, number[]>> {
  await sleep(2_000);
  const holds = (kind: Kind) =>
    Array.from({ length: 10 }, () => {
      const { socket, held } = openAnonymous(port, kind);
      const limit = setTimeout(() => socket.destroy(), 60_000);
      return held.finally(() => clearTimeout(limit));
    });
  const [idle, post] = await Promise.all([Promise.all(holds("idle")), Promise.all(holds("post"))]);
  return { idle, post };
}

/** One GET on a connection of its own (as each CLI or CI call makes): its status, or 0 when it failed. */
function getOnce(url: string, key: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get(
      url,
      { agent: false, headers: { authorization: `Bearer ${key}` }, timeout: 10_000 },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(0));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

/** B's requests for `ms`: latencies of those answered 200, and how many were not. */
async function tenantB(
  url: string,
  key: string,
  ms: number,
): Promise<{ latencies: number[]; failed: number }> {
  const latencies: number[] = [];
  let failed = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const started = performance.now();
    if ((await getOnce(url, key)) === 200) latencies.push(performance.now() - started);
    else failed += 1;
    await sleep(5);
  }
  return { latencies, failed };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

const p99 = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.99)] ?? Number.POSITIVE_INFINITY;

const rssMiB = (pid: number | undefined) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

export async function slowloris(): Promise<Figure[]> {
  const name = `${idleConnections} idle + ${tricklingPosts} trickling POSTs without a key`;
  const db = await startDatabase();
  try {
    const service = await startService(db.url, {}, openFiles);
    const project = await createWebhooks(service, ["https://b.example/1", "https://b.example/2"]);
    const issued = await fetch(`${service.url}/api/api-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "tenant B", project_ids: [project] }),
    });
    const keyOfB = ((await issued.json()) as { key: string }).key;
    const listOfB = `${service.url}/api/projects/${project}/webhooks`;
    const port = Number(new URL(service.url).port);

    const attacker = fork(path.join(path.dirname(fileURLToPath(import.meta.url)), "slowloris-attacker.ts"), [
      String(port),
      String(idleConnections),
      String(tricklingPosts),
    ]);
    // A real attacker brings its own CPU; on this one machine it runs at the lowest priority, so what
    // B sees is the service's doing and not two processes sharing the same cores.
    if (attacker.pid) setPriority(attacker.pid, 19);
    let peakRss = 0;
    const sampling = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(service.child.pid))), 1_000);
    // Quiet and attack alternate, so the machine's other load weighs on both figures alike.
    const quiet = { latencies: [] as number[], failed: 0 };
    const during = { latencies: [] as number[], failed: 0 };
    const holds: Record<Kind, number[]> = { idle: [], post: [] };
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const calm = await tenantB(listOfB, keyOfB, quietMs);
      attacker.send("attack");
      const probed = probeHolds(port);
      const attacked = await tenantB(listOfB, keyOfB, attackMs);
      attacker.send("pause");
      const { idle, post } = await probed;
      holds.idle.push(...idle);
      holds.post.push(...post);
      const ratio = p99(attacked.latencies) / Math.max(p99(calm.latencies), quietFloorMs);
      ratios.push(ratio);
      process.stderr.write(
        `slowloris round ${round + 1}: B's p99 quiet ${p99(calm.latencies).toFixed(1)} ms (${calm.latencies.length}), under attack ${p99(attacked.latencies).toFixed(1)} ms (${attacked.latencies.length}), ${ratio.toFixed(2)}×\n`,
      );
      for (const [total, part] of [
        [quiet, calm],
        [during, attacked],
      ] as const) {
        total.latencies.push(...part.latencies);
        total.failed += part.failed;
      }
    }
    clearInterval(sampling);
    attacker.send("report");
    const [attack] = (await once(attacker, "message")) as [Attack];
    attacker.kill();
    service.child.kill("SIGTERM");
    await service.exited;

    // Each round's attack p99 over the quiet p99 just before it, and the bound on the median of the
    // rounds' ratios, so that a slow spell of the machine in one round does not decide it. The quiet
    // p99 counts as at least 20 ms: on a quiet machine it is 5–9 ms, mostly the two cores' scheduling,
    // while the attack's reconnects (up to 1,000 a second, accepted in bursts) put B's own accept
    // behind a burst now and then: 15–47 ms at the p99 under attack on unchanged code (2026-12-07),
    // which a 10 ms floor turned into ratios of 1.5–4.7×. What the scenario guards against, B's
    // requests failing or held until a timeout, is seconds, far beyond 3 × 20 ms.
    const ratio = median(ratios);
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    return [
      { scenario: name, figure: "B's p99, quiet", value: ms(p99(quiet.latencies)), bound: "—", ok: true },
      {
        scenario: name,
        figure: `B's p99 during (${during.latencies.length} requests), all rounds`,
        value: ms(p99(during.latencies)),
        bound: "—",
        ok: true,
      },
      {
        scenario: name,
        figure: `B's p99 during ÷ quiet (at least ${quietFloorMs} ms), the median of ${rounds} rounds`,
        value: `${ratio.toFixed(2)}× (${ratios.map((r) => r.toFixed(2)).join(", ")})`,
        bound: "< 3×",
        ok: ratio < 3,
      },
      figure(name, "B's requests failed, quiet and during", quiet.failed + during.failed, 0),
      // The header timeout (10 s), checked every second, plus room for a busy event loop: the bound is
      // that such a connection goes within seconds of the timeout, not at 60 s or never.
      figure(name, "longest hold of a connection trickling its head", Math.max(...holds.idle), 16_000, " ms"),
      figure(
        name,
        "longest hold of a POST trickling its body, after its 401",
        Math.max(...holds.post),
        5_000,
        " ms",
      ),
      figure(
        name,
        `attack connections opened (peak open ${attack.peakOpen})`,
        attack.opened,
        Number.POSITIVE_INFINITY,
      ),
      figure(name, "service's peak resident memory", Math.round(peakRss), 512, " MiB"),
    ];
  } finally {
    await db.close();
  }
}

const figure = (scenario: string, name: string, value: number, max: number, unit = ""): Figure => ({
  scenario,
  figure: name,
  value: `${Math.round(value)}${unit}`,
  bound: max === Number.POSITIVE_INFINITY ? "—" : `≤ ${max}${unit}`,
  ok: value <= max,
});
