// The big-cluster benchmark's table: each figure of this build, of the baseline beside it, their ratio
// (baseline ÷ this build: how many times longer or larger the baseline was), and the targets met.
import type { Build } from "./big-cluster-operator.js";
import type { BuildFigures, Live, Memory, Phase } from "./big-cluster-phases.js";

type Figure = { value?: number; text: string };

const time = (ms: number | undefined, phase: Phase | undefined, workloads: number): Figure =>
  ms === undefined
    ? {
        text: phase
          ? `not within the cap (${phase.reconciled} of ${workloads} reconciled)`
          : "not within the cap",
      }
    : { value: ms, text: ms < 10_000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(1)} s` };
const mib = (value: number): Figure => ({ value, text: `${value.toFixed(0)} MiB` });

function rows(figures: BuildFigures, idle: Memory, workloads: number): [string, Figure][] {
  const liveRows = (name: string, live: Live, when: string): [string, Figure][] => [
    [`${name}: live rollout ${when}, made at`, { text: `${live.reconciledAt} of ${workloads} reconciled` }],
    [`${name}: … its created delivered`, time(live.createdMs, undefined, workloads)],
    [`${name}: … its succeeded delivered`, time(live.succeededMs, undefined, workloads)],
  ];
  const phaseRows = (name: string, phase: Phase, what: string): [string, Figure][] => [
    [`${name}: ${what}`, time(phase.catchUpMs, phase, workloads)],
    ...liveRows(name, phase.first, "as it began"),
    ...liveRows(name, phase.during, "during catch-up"),
  ];
  return [
    ["idle: RSS", mib(idle.rssMiB)],
    ["idle: V8 heap used", mib(idle.heapMiB)],
    ...phaseRows("start", figures.start, "every rollout recorded"),
    ["with the workloads: RSS", mib(figures.withWorkloads.rssMiB)],
    ["with the workloads: peak RSS (VmHWM)", mib(figures.withWorkloads.peakRssMiB)],
    ["with the workloads: V8 heap used", mib(figures.withWorkloads.heapMiB)],
    [
      "with the workloads: RSS ÷ idle RSS",
      {
        value: figures.withWorkloads.rssMiB / idle.rssMiB,
        text: `${(figures.withWorkloads.rssMiB / idle.rssMiB).toFixed(2)}×`,
      },
    ],
    ...phaseRows("restart", figures.restart, "every workload reconciled"),
    ...phaseRows("leader change", figures.leaderChange, "every workload reconciled"),
  ];
}

function targets(figures: BuildFigures, idle: Memory): [string, boolean][] {
  const within = (ms: number | undefined, limit: number) => ms !== undefined && ms <= limit;
  return [
    ["every rollout recorded within 60 s of start", within(figures.start.catchUpMs, 60_000)],
    [
      "a live rollout during catch-up delivered within 5 s (created)",
      within(figures.start.during.createdMs, 5_000),
    ],
    [
      "after a restart the first live rollout delivered within 5 s",
      within(figures.restart.first.createdMs, 5_000),
    ],
    [
      "after a leader change the first live rollout delivered within 5 s",
      within(figures.leaderChange.first.createdMs, 5_000),
    ],
    ["RSS with the workloads at most 2× idle", figures.withWorkloads.rssMiB <= 2 * idle.rssMiB],
  ];
}

export function printFigures(options: {
  /** How many workloads a build watches (the baseline: the Deployments only). */
  workloadsOf: (build: Build) => number;
  builds: Build[];
  idle: Map<string, Memory>;
  figures: Map<string, BuildFigures>;
  baselineCommit: string;
}): void {
  const [current, baseline] = options.builds.map((build) => {
    const figures = options.figures.get(build.name);
    const idle = options.idle.get(build.name);
    return figures && idle
      ? { figures, idle, rows: rows(figures, idle, options.workloadsOf(build)) }
      : undefined;
  });
  if (!current) return;
  const width = Math.max(...current.rows.map(([label]) => label.length)) + 2;
  const [first, second] = options.builds;
  if (baseline && first && second && options.workloadsOf(first) !== options.workloadsOf(second))
    console.log(
      `\n  ${options.baselineCommit} watches Deployments only: its figures are for the ${options.workloadsOf(second)} Deployments among the ${options.workloadsOf(first)} workloads.`,
    );
  console.log(
    `\n  ${"".padEnd(width)}${"this build".padEnd(40)}${baseline ? `${`${options.baselineCommit}`.padEnd(40)}ratio` : ""}`,
  );
  current.rows.forEach(([label, figure], index) => {
    const before = baseline?.rows[index]?.[1];
    const ratio =
      before?.value !== undefined && figure.value !== undefined && figure.value > 0
        ? `${(before.value / figure.value).toFixed(2)}×`
        : before && figure.value !== undefined && before.value === undefined && before.text.startsWith("not")
          ? "beyond the cap"
          : "";
    console.log(
      `  ${label.padEnd(width)}${figure.text.padEnd(40)}${before ? before.text.padEnd(40) + ratio : ""}`,
    );
  });
  console.log("\n  Targets (this build):");
  for (const [what, met] of targets(current.figures, current.idle))
    console.log(`    ${met ? "PASS" : "MISS"} ${what}`);
}
