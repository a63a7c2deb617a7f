import { loadavg } from "node:os";

/** The 1, 5 and 15 minute load averages, printed before and after a benchmark. */
export const formatLoad = (): string =>
  loadavg()
    .map((load) => load.toFixed(2))
    .join(" ");

/** Runs a benchmark's main: exit 0 when it finished, 1 with the error when something crashed. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
