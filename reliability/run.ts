import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { blackholedDatabase } from "./blackhole.js";
import { hostileAfterRestart, hostileNewWebhook } from "./hostile-scenarios.js";
import { previewFlood } from "./preview-flood.js";
import { rolloutStorm } from "./rollout-storm.js";
import {
  databaseOutage,
  type Figure,
  failingReceivers,
  hangingReceivers,
  rollingRestart,
  sigkillMidBurst,
  twoReplicasOneKilled,
} from "./scenarios.js";
import { slowloris } from "./slowloris.js";
import { templateBomb } from "./template-bomb.js";
import { tenantStorm } from "./tenant-storm.js";

// `npm run reliability`: the real service (built), real Postgres, real receivers on loopback; prints
// one table and exits 1 when a figure misses its bound.
//
// Scenarios whose bounds are counts (nothing lost, duplicates at most the sends in flight, claims
// retaken, records as documented) or generous times run together, each with a Postgres, a
// receiver and services of its own: most of their time is waiting (an outage, a receiver's 20 s, a
// lease), and sharing the cores only slows them. The rest run one after another, alone: their bounds
// are latencies and p99 ratios, which another scenario's burst would move.
type Scenario = [key: string, run: () => Promise<Figure[]>];

const together: Scenario[] = [
  ["sigkill", () => sigkillMidBurst()],
  ["two-replicas", () => twoReplicasOneKilled()],
  // One outage, long enough to hold: a 5 s one checked the same four figures (nothing lost or sent
  // twice, not ready during it, ready after without a restart), in the first 5 s of this one.
  ["outage-30s", () => databaseOutage(30_000)],
  // Its bound is a latency, but one that only starved slots reach: a healthy receiver waiting behind
  // the hanging ones waits for their timeout (30 s), far past 1 s (12 ms measured alone).
  ["hanging", hangingReceivers],
  ["failing", failingReceivers],
  ["rolling", rollingRestart],
];
const alone: Scenario[] = [
  ["blackhole", () => blackholedDatabase()],
  ["hostile-new", hostileNewWebhook],
  ["hostile-restart", hostileAfterRestart],
  ["slowloris", slowloris],
  ["tenant-storm", tenantStorm],
  ["rollout-storm", rolloutStorm],
  ["template-bomb", templateBomb],
  ["preview-flood", previewFlood],
];

// Arguments: scenarios' keys, or `together` or `alone` for a group (.ci/run runs `together` beside
// other suites, `alone` last); none runs every scenario.
const only = process.argv.slice(2);
const chosen = ([key]: Scenario) =>
  only.length === 0 ||
  only.includes(key) ||
  (only.includes("together") && together.some(([k]) => k === key)) ||
  (only.includes("alone") && alone.some(([k]) => k === key));

/** One scenario's figures; an error is a figure that missed its bound. */
async function runOne([key, run]: Scenario): Promise<Figure[]> {
  const started = Date.now();
  process.stderr.write(`${key}…\n`);
  let figures: Figure[];
  try {
    figures = await run();
  } catch (error) {
    figures = [
      { scenario: key, figure: "ran to the end", value: String(error), bound: "no error", ok: false },
    ];
  }
  process.stderr.write(`${key} took ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return figures;
}

const figures: Figure[] = [];
if (together.some(chosen)) {
  const started = Date.now();
  for (const result of await Promise.all(together.filter(chosen).map(runOne))) figures.push(...result);
  process.stderr.write(`together, they took ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}
for (const scenario of alone.filter(chosen)) figures.push(...(await runOne(scenario)));

const rows = figures.map((f) => [f.scenario, f.figure, f.value, f.bound, f.ok ? "ok" : "MISSED"]);
const header = ["scenario", "figure", "value", "bound", ""];
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
// Under .ci/run each figure counts as a test in the run's closing tally (scripts/ci-tally.ts), and a
// missed one is listed by name with its value, as vitest's JSON reports list a failed test.
if (process.env.TEST_RESULTS_DIR) {
  const passed = figures.filter((f) => f.ok).length;
  const counts = {
    numPassedTests: passed,
    numFailedTests: figures.length - passed,
    numPendingTests: 0,
    testResults: [
      {
        name: fileURLToPath(import.meta.url),
        assertionResults: figures.map((f) => ({
          fullName: `${f.scenario}: ${f.figure}`,
          status: f.ok ? "passed" : "failed",
          failureMessages: f.ok ? [] : [`${f.value}, against a bound of ${f.bound}`],
        })),
      },
    ],
  };
  const file = `reliability${only.length > 0 ? `-${only.join("-")}` : ""}.json`;
  writeFileSync(join(process.env.TEST_RESULTS_DIR, file), JSON.stringify(counts));
}
process.exit(figures.every((f) => f.ok) ? 0 : 1);
