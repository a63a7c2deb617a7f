import { loadavg } from "node:os";

/** The 1, 5 and 15 minute load averages, printed before and after a benchmark. */
export const formatLoad = (): string =>
  loadavg()
    .map((load) => load.toFixed(2))
    .join(" ");

/**
 * Runs a benchmark's main: exit 0 when it finished, 1 with the error when something crashed. Node's
 * process warnings (a TimeoutNegativeWarning, say: a timer given a negative delay) are collected with
 * their stack and printed at the end, so that none goes unnoticed among the figures.
 */
export function runBench(main: () => Promise<void>): void {
  const warnings: Error[] = [];
  process.on("warning", (warning) => warnings.push(warning));
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
