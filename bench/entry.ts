import { spawn } from "node:child_process";
import { loadavg } from "node:os";

/** The 1, 5 and 15 minute load averages, printed before and after a benchmark. */
export const formatLoad = (): string =>
  loadavg()
    .map((load) => load.toFixed(2))
    .join(" ");

/**
 * BENCH_BUSY_CORES=N: N processes spin on a core each for the whole benchmark, a busy machine that stays
 * the same from run to run (other work, a test suite say, comes and goes within a run). Stopped on exit.
 */
function startBusyLoad(): void {
  const cores = Number(process.env.BENCH_BUSY_CORES ?? 0);
  if (!Number.isInteger(cores) || cores < 0) throw new Error("BENCH_BUSY_CORES must be a whole number ≥ 0");
  if (cores === 0) return;
  console.log(
    `BENCH_BUSY_CORES=${cores}: ${cores} process${cores === 1 ? "" : "es"} spinning on a core beside the benchmark`,
  );
  const spinners = Array.from({ length: cores }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
  process.on("exit", () => {
    for (const spinner of spinners) spinner.kill("SIGKILL");
  });
}

/**
 * Runs a benchmark's main: exit 0 when it finished, 1 with the error when something crashed. Node's
 * process warnings (a TimeoutNegativeWarning, say: a timer given a negative delay) are collected with
 * their stack and printed at the end, so that none goes unnoticed among the figures.
 */
export function runBench(main: () => Promise<void>): void {
  const warnings: Error[] = [];
  process.on("warning", (warning) => warnings.push(warning));
  startBusyLoad();
  const printWarnings = () => {
    console.log(warnings.length === 0 ? "  Node warnings: none" : `  Node warnings: ${warnings.length}`);
    for (const warning of warnings)
      console.log(`    ${warning.stack ?? `${warning.name}: ${warning.message}`}`);
  };
  main().then(
    () => {
      printWarnings();
      process.exit(0);
    },
    (error: unknown) => {
      printWarnings();
      console.error(error);
      process.exit(1);
    },
  );
}
